// The browser tests' way into the dashboard: load it (again, when its modules failed to load),
// wait for its watch to go live, and when it does not, say what the page saw (its errors, failed or
// refused requests, the watch sockets' fate), so a failure in CI names its cause instead of a bare
// timeout. Test support only.
import type { Page, Response } from 'playwright-core';

/** PageLog: what a page reported since `recordPage`; lines are short and in arrival order. */
export interface PageLog {
  /** Uncaught errors (`pageerror`). */
  errors: string[];
  /** Console errors and warnings, failed requests, answers ≥ 400, WebSocket opens, errors and closes. */
  lines: string[];
}

/** recordPage starts recording `page`'s errors, refused requests and WebSocket lifecycle. */
export function recordPage(page: Page): PageLog {
  const log: PageLog = { errors: [], lines: [] };
  const at = () => new Date().toISOString().slice(11, 23);
  const add = (line: string) => {
    if (log.lines.length < 200) log.lines.push(`${at()} ${line}`);
  };
  page.on('pageerror', (err) => {
    log.errors.push(err.message);
    add(`pageerror ${err.message}`);
  });
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') add(`console.${msg.type()} ${msg.text()}`);
  });
  page.on('requestfailed', (req) => add(`requestfailed ${req.method()} ${req.url()}: ${req.failure()?.errorText ?? '?'}`));
  page.on('response', (res) => {
    if (res.status() >= 400) add(`response ${res.status()} ${res.request().method()} ${res.url()}`);
  });
  page.on('websocket', (ws) => {
    add(`websocket created ${ws.url()}`);
    let frames = 0;
    ws.on('framereceived', () => {
      if (frames++ === 0) add(`websocket first frame ${ws.url()}`);
    });
    ws.on('socketerror', (err) => add(`websocket error ${ws.url()}: ${err}`));
    ws.on('close', () => add(`websocket closed ${ws.url()} after ${frames} frames`));
  });
  return log;
}

/**
 * waitForLive waits (up to `timeoutMs`, milliseconds) until `page`'s header says the watch is live.
 * @throws Error naming the status line, whether the page's modules ran, and the page log.
 */
export async function waitForLive(page: Page, log: PageLog, timeoutMs = 60_000): Promise<void> {
  await page
    .locator('#conn[data-state="live"]')
    .waitFor({ timeout: timeoutMs })
    .catch(async (err: unknown) => {
      const conn = await page
        .locator('#conn')
        .textContent()
        .catch(() => '?');
      const ran = await page.evaluate(() => typeof (window as { kubeletTsDashboard?: unknown }).kubeletTsDashboard).catch(() => '?');
      throw new Error(
        `the dashboard's watch never went live (status line: ${JSON.stringify(conn)}; app.js ran: ${ran === 'object'}; page log:\n${log.lines.join('\n') || '(empty)'})`,
        { cause: err },
      );
    });
}

/** How many times loadDashboard loads the page before it gives up on its modules. */
const kLoadAttempts = 6;
/** How long (milliseconds) loadDashboard waits for the modules after a load, and before the next load (doubling). */
const kModulesWaitMs = 2_000;
const kReloadPauseMs = 500;

/**
 * loadDashboard loads `url` in `page` until the page's modules ran (app.js sets
 * window.kubeletTsDashboard), at most kLoadAttempts times, and returns the last navigation's
 * response. Chromium aborts requests in flight with net::ERR_NETWORK_CHANGED when an interface
 * comes or goes — other test files create and delete CNI bridges and veths beside this one, dozens
 * in a burst — and a module that failed to load leaves the page without its script (a user would
 * reload; so does this, after a pause that doubles, so that a burst of interface changes is waited
 * out rather than met again at once). We found no Chromium switch that turns that reaction off
 * (no such name among the strings of Debian's chromium 156 binary).
 * @throws Error when the modules never ran, with the page log (the failed requests and answers ≥ 400,
 *   e.g. a 503 for a missing dist/ file): a test then fails here, naming the cause, and not later on
 *   a control of the page that never appears.
 */
export async function loadDashboard(page: Page, url: string, log: PageLog): Promise<Response | null> {
  let response: Response | null = null;
  const note = (line: string) => log.lines.push(`${new Date().toISOString().slice(11, 23)} ${line}`);
  for (let attempt = 1, pauseMs = kReloadPauseMs; attempt <= kLoadAttempts; attempt++, pauseMs *= 2) {
    try {
      response = await page.goto(url);
      // Module scripts run before the load event; waiting a little more costs nothing when they did.
      const ran = await page
        .waitForFunction(() => typeof (window as { kubeletTsDashboard?: unknown }).kubeletTsDashboard === 'object', undefined, {
          timeout: kModulesWaitMs,
        })
        .then(
          () => true,
          () => false,
        );
      if (ran) return response;
      note(`load ${attempt}: the page's modules did not run`);
    } catch (err) {
      // The navigation itself can fail the same way (net::ERR_NETWORK_CHANGED), or time out on a loaded machine.
      note(`load ${attempt}: ${(err as Error).message.split('\n')[0]}`);
    }
    if (attempt < kLoadAttempts) await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error(`the dashboard's modules never ran in ${kLoadAttempts} loads of ${url}; page log:\n${log.lines.join('\n')}`);
}

/** openDashboard loads `url` in `page` ({@link loadDashboard}) and waits for the watch to go live ({@link waitForLive}). */
export async function openDashboard(page: Page, url: string, log: PageLog, timeoutMs = 60_000): Promise<void> {
  await loadDashboard(page, url, log);
  await waitForLive(page, log, timeoutMs);
}

/**
 * signInBeforeLoad stores `token` in the page's sessionStorage before every load, as a tab that
 * has answered the dashboard's token prompt once (session.js): anonymous reads are off by default
 * (issue #38), so a page that is not about the prompt starts signed in.
 */
export async function signInBeforeLoad(page: Page, token: string): Promise<void> {
  await page.addInitScript(storeTokenScript, token);
}

/**
 * storeTokenScript: the init script of signInBeforeLoad. An init script runs in every document the
 * page loads, also one whose origin is opaque (about:blank, data:, Chromium's error page after a load that
 * failed under load), where reading `sessionStorage` throws "Access is denied for this document" —
 * an uncaught error in that document, which recordPage counted as the dashboard's (CI, 2026-12-08).
 * Only the dashboard's own origin gets the token.
 */
export function storeTokenScript(token: string): void {
  if (location.protocol !== 'https:' && location.protocol !== 'http:') return;
  sessionStorage.setItem('kubelet-ts.token', token);
}

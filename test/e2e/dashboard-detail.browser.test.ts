// End-to-end: the dashboard as a place to act (issue #14 part 5), in Debian's chromium driven by
// playwright-core against the real dockerd: the Status column says CrashLoopBackOff for a
// crash-looping pod (kubectl's printPod, src/shared/pod-printer.ts), a row opens the pod's detail
// (containers, this UID's events only, YAML, the log line the container wrote), the Terminal tab
// runs a command in the container through xterm.js over WS /exec, the cells stay whole at 1,400 px and a
// pod's detail has a URL (issue #41 item 6), and the page's screenshot with
// the detail and the terminal open is written to docs/dashboard.png (when KUBELET_TS_SCREENSHOT=1).
// The role of the Kubernetes Dashboard's e2e (cypress) tests, for one node.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { openDashboard, recordPage, type PageLog, signInBeforeLoad } from '../support/dashboard-page.js';

const kChromium = '/usr/bin/chromium';
// tools/test installs chromium and sets KUBELET_TS_REQUIRE_DOCKER=1: there a missing browser fails the suite.
const runnable = inject('dockerAvailable') && (existsSync(kChromium) || process.env.KUBELET_TS_REQUIRE_DOCKER === '1');

function pod(name: string, script: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'dash-detail' } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', script] }],
      ...extra,
    },
  };
}

describe.skipIf(!runnable)('dashboard detail, terminal and status in chromium', () => {
  let node: TestNode;
  let browser: Browser;
  let page: Page;
  let log: PageLog;

  const create = async (manifest: object) => {
    const res = await node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(manifest),
    });
    expect(res.status).toBe(201);
  };
  const remove = async (name: string) => {
    const res = await node.api(`/pods/default/${name}?gracePeriodSeconds=0`, { method: 'DELETE' });
    expect(res.ok).toBe(true);
  };
  const row = (name: string) => page.locator('#pod-rows tr', { has: page.locator('td.col-name', { hasText: new RegExp(`^${name}$`) }) });

  beforeAll(async () => {
    // Stats every second, so that the rows get CPU and memory figures within the test.
    // The page sends a token only over https (session.js): --tls-port, and the browser takes its self-signed certificate.
    node = await startTestNode({ housekeepingIntervalMs: 1000, tlsPort: 0 });
    browser = await chromium.launch({
      executablePath: kChromium,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1600, height: 860 }, ignoreHTTPSErrors: true });
    await signInBeforeLoad(page, node.adminToken());
    log = recordPage(page);
    // Up to 60 s (a loaded CI machine starts Chromium slowly); on failure, say what the page saw.
    await openDashboard(page, `https://127.0.0.1:${node.agent.tlsPort}/`, log);
    if (process.env.KUBELET_TS_SCREENSHOT === '1') {
      // A fuller table for the picture: two more pods, one holding some memory.
      await create(pod('dash-web', 'exec sleep 3600'));
      await create(pod('dash-cache', 'head -c 30000000 /dev/zero > /dev/shm/fill; exec sleep 3600'));
    }
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await node?.cleanup();
  }, 120_000);

  it('shows CrashLoopBackOff (not a green Running) for a container that keeps exiting, with its restarts', async () => {
    await create(pod('dash-crash', 'echo crashing; exit 3'));
    const r = row('dash-crash');
    await r.waitFor({ timeout: 30_000 });
    await expect
      .poll(() => r.locator('td.col-status').getAttribute('data-status'), { timeout: 90_000, interval: 250 })
      .toBe('CrashLoopBackOff');
    expect(await r.locator('td.col-status .status').getAttribute('data-tone')).toBe('bad');
    expect(await r.locator('td.col-ready').textContent()).toBe('0/1');
    expect(Number((await r.locator('td.col-restarts').textContent())?.split(' ')[0])).toBeGreaterThanOrEqual(1);

    // Its detail: the container waits in CrashLoopBackOff; the last termination's exit code is 3.
    await r.locator('td.col-name').click();
    const container = page.locator('#detail-containers tr[data-container="main"]');
    await expect
      .poll(() => container.locator('td').allTextContents(), { timeout: 30_000 })
      .toEqual(expect.arrayContaining(['Waiting', 'CrashLoopBackOff', 'Error (exit 3)']));
    await expect.poll(() => page.locator('#detail-status').textContent(), { timeout: 30_000 }).toBe('CrashLoopBackOff');
    await page.click('#detail-close');
    expect(await page.locator('#detail').isHidden()).toBe(true);

    // Sort by restarts puts it above a quiet pod that comes first by name; by name again, below.
    await create(pod('dash-aaa', 'exec sleep 3600'));
    await expect
      .poll(() => row('dash-aaa').locator('td.col-status').getAttribute('data-status'), { timeout: 90_000, interval: 250 })
      .toBe('Running');
    const names = () => page.locator('#pod-rows tr td.col-name').allTextContents();
    expect((await names()).indexOf('dash-aaa')).toBeLessThan((await names()).indexOf('dash-crash'));
    await page.selectOption('#sort', 'restarts');
    expect((await names())[0]).toBe('dash-crash');
    await page.selectOption('#sort', 'name');
    expect((await names()).indexOf('dash-aaa')).toBeLessThan((await names()).indexOf('dash-crash'));
  }, 120_000);

  it("at 1,400 px shows STATUS, RESTARTS and the drawer's cells whole; counts a crash-looping pod as Failing, not Running; opens a pod's detail by its URL", async () => {
    // dash-crash loops and dash-aaa runs (the test above).
    await page.setViewportSize({ width: 1400, height: 860 });
    const cut = (locator: ReturnType<Page['locator']>) =>
      locator.evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
    try {
      const running = async () =>
        await page
          .locator('#pod-rows td.col-status')
          .evaluateAll((els) => els.filter((e) => e.getAttribute('data-status') === 'Running').length);
      await expect
        .poll(async () => Number(await page.locator('#count-Running').textContent()) === (await running()), { timeout: 30_000 })
        .toBe(true);
      expect(Number(await page.locator('#count-Failing').textContent())).toBeGreaterThanOrEqual(1);

      const crash = row('dash-crash');
      expect(await cut(crash.locator('td.col-status .status, td.col-restarts'))).toEqual([]);
      await crash.locator('td.col-name').click();
      await page.locator('#detail').waitFor({ state: 'visible', timeout: 10_000 });
      expect(page.url()).toMatch(/#pod\/default\/dash-crash$/);
      await expect
        .poll(() => page.locator('#detail-containers tr[data-container="main"] td').allTextContents(), { timeout: 30_000 })
        .toContain('CrashLoopBackOff');
      expect(await cut(crash.locator('td.col-status .status, td.col-restarts'))).toEqual([]);
      expect(await cut(page.locator('#detail-containers td'))).toEqual([]);
      if (process.env.KUBELET_TS_SCREENSHOT === '1') await page.screenshot({ path: join(tmpdir(), 'dashboard-1400.png') });
      await page.click('#detail-close');
      expect(page.url()).not.toContain('#');

      // A link to a pod's detail: on a hash change, and when the page is loaded with it.
      await page.evaluate(() => {
        location.hash = '#pod/default/dash-aaa';
      });
      await expect.poll(() => page.locator('#detail-title').textContent(), { timeout: 10_000 }).toBe('default/dash-aaa');
      await page.click('#detail-close');
      await openDashboard(page, `https://127.0.0.1:${node.agent.tlsPort}/#pod/default/dash-crash`, log);
      await page.locator('#detail').waitFor({ state: 'visible', timeout: 30_000 });
      expect(await page.locator('#detail-title').textContent()).toBe('default/dash-crash');
      await page.click('#detail-close');
      expect(log.errors).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1600, height: 860 });
    }
  }, 120_000);

  it("opens the detail of a row: the container, only this UID's events, the YAML and the log line the container wrote", async () => {
    // An earlier pod of the same name: its events must not appear in the detail of the new one.
    await create(pod('dash-detail', 'echo first-life; exec sleep 3600'));
    const r = row('dash-detail');
    await expect.poll(() => r.locator('td.col-status').getAttribute('data-status'), { timeout: 90_000, interval: 250 }).toBe('Running');
    const first = await node.pods().then((ps) => ps.find((p) => p.metadata?.name === 'dash-detail')?.metadata?.uid);
    await remove('dash-detail');
    await expect.poll(() => r.count(), { timeout: 60_000, interval: 250 }).toBe(0);
    // A line at start, then one every second (so the log tail can be seen following).
    await create(pod('dash-detail', 'echo detail-log-marker-42; i=0; while sleep 1; do i=$((i+1)); echo tick-$i; done'));
    await expect.poll(() => r.locator('td.col-status').getAttribute('data-status'), { timeout: 90_000, interval: 250 }).toBe('Running');
    const second = await node.pods().then((ps) => ps.find((p) => p.metadata?.name === 'dash-detail')?.metadata?.uid);
    expect(second).not.toBe(first);

    await r.locator('td.col-name').click();
    await page.locator('#detail').waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.locator('#detail-title').textContent()).toBe('default/dash-detail');
    expect(await r.getAttribute('class')).toContain('selected');
    const container = page.locator('#detail-containers tr[data-container="main"]');
    await expect.poll(() => container.getAttribute('data-state'), { timeout: 30_000 }).toBe('Running');
    expect(await container.textContent()).toContain(BUSYBOX_IMAGE);
    expect(await page.locator('#detail-conditions').textContent()).toContain('Ready');
    // The events poll (3 s) brings this UID's Started event; the first pod's Started/Killing are not shown.
    await expect.poll(() => page.locator('#detail-events').textContent(), { timeout: 30_000 }).toContain('Started');
    const reasons = await page.locator('#detail-events tr td:nth-child(2)').allTextContents();
    expect(reasons.filter((x) => x === 'Started')).toHaveLength(1);
    expect(reasons).not.toContain('Killing');

    await page.click('#detail .tabs button[data-tab="yaml"]');
    await expect.poll(() => page.locator('#detail-yaml').textContent(), { timeout: 10_000 }).toContain('kind: Pod');
    expect(await page.locator('#detail-yaml').textContent()).toContain(`uid: ${second}`);
    if (process.env.KUBELET_TS_SCREENSHOT === '1') await page.screenshot({ path: join(tmpdir(), 'dashboard-yaml.png') });

    await page.click('#detail .tabs button[data-tab="logs"]');
    await expect.poll(() => page.locator('#detail-logs').textContent(), { timeout: 30_000 }).toContain('detail-log-marker-42');
    const lastTick = async () =>
      Math.max(0, ...[...((await page.locator('#detail-logs').textContent()) ?? '').matchAll(/^tick-(\d+)$/gm)].map((m) => Number(m[1])));
    const seen = await lastTick();
    await expect.poll(lastTick, { timeout: 30_000 }).toBeGreaterThanOrEqual(seen + 2);
    expect(await page.locator('#detail-logs').textContent()).not.toContain('first-life');
    expect(await page.locator('#logs-state').textContent()).toBe('following');
    if (process.env.KUBELET_TS_SCREENSHOT === '1') await page.screenshot({ path: join(tmpdir(), 'dashboard-logs.png') });
    expect(log.errors).toEqual([]);
  }, 240_000);

  it('runs a command in the container through the Terminal tab (xterm.js over WS /exec, a TTY)', async () => {
    // Exec is a write: the token the tab signed in with (anonymous reads are off, issue #38) serves it too, with no second prompt.
    await page.click('#detail .tabs button[data-tab="terminal"]');
    expect(await page.locator('#token-form').isHidden()).toBe(true);
    await page.click('#term-connect');
    await expect.poll(() => page.locator('#term-state').textContent(), { timeout: 30_000 }).toBe('connected');
    // The shell's prompt, then a line whose output differs from what was typed: only sh computes 6*7.
    const buffer = () =>
      page.evaluate(() => {
        const term = (
          document.getElementById('terminal') as HTMLElement & {
            terminal: {
              buffer: { active: { length: number; getLine(i: number): { translateToString(trim: boolean): string } | undefined } };
            };
          }
        ).terminal;
        const b = term.buffer.active;
        const lines: string[] = [];
        for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
        return lines.join('\n');
      });
    await expect.poll(buffer, { timeout: 30_000 }).toMatch(/[#$] ?$/m);
    await page.locator('#terminal .xterm').click();
    await page.keyboard.type('echo hello-$((6*7))-marker-$(hostname | wc -c)\n');
    await expect.poll(buffer, { timeout: 30_000 }).toMatch(/^hello-42-marker-\d+$/m);
    // The TTY got the fit addon's size (channel 4): stty reports the terminal's columns.
    const cols = await page.evaluate(
      () => (document.getElementById('terminal') as HTMLElement & { terminal: { cols: number } }).terminal.cols,
    );
    await page.keyboard.type('echo cols=$(stty size | cut -d" " -f2)\n');
    await expect.poll(buffer, { timeout: 30_000 }).toContain(`cols=${cols}\n`);

    if (process.env.KUBELET_TS_SCREENSHOT === '1') {
      // Wait for two stats polls (10 s apart) so the sparklines have a line, then take the picture.
      await expect.poll(() => page.locator('#pod-rows td.col-memory .figure').first().textContent(), { timeout: 30_000 }).toMatch(/Mi$/);
      const uid = await node.pods().then((ps) => ps.find((p) => p.metadata?.name === 'dash-detail')?.metadata?.uid);
      await page.waitForFunction(
        (u) => (window as unknown as { kubeletTsDashboard: { samples(uid: string): number } }).kubeletTsDashboard.samples(u!) >= 4,
        uid,
        { timeout: 60_000, polling: 500 },
      );
      await page.screenshot({ path: 'docs/dashboard.png' });
      await page.click('#detail .tabs button[data-tab="overview"]');
      await page.screenshot({ path: join(tmpdir(), 'dashboard-overview.png') });
      await page.click('#detail .tabs button[data-tab="terminal"]');
      await page.locator('#terminal .xterm').click();
    }
    await page.keyboard.type('exit\n');
    await expect.poll(() => page.locator('#term-state').textContent(), { timeout: 30_000 }).toBe('exited (0)');
    expect(log.errors).toEqual([]);
  }, 180_000);

  it('deletes the open pod after the confirmation, and the panel says so', async () => {
    await page.click('#detail-delete');
    await page.locator('#confirm-dialog[open]').waitFor({ timeout: 10_000 });
    expect(await page.locator('#confirm-name').textContent()).toBe('default/dash-detail');
    if (process.env.KUBELET_TS_SCREENSHOT === '1') await page.screenshot({ path: join(tmpdir(), 'dashboard-confirm.png') });
    await page.click('#confirm-delete');
    await expect.poll(() => row('dash-detail').count(), { timeout: 90_000, interval: 250 }).toBe(0);
    expect(await page.locator('#detail-status').textContent()).toBe('Deleted');
    await page.click('#detail-close');
    expect(await page.locator('#detail').isHidden()).toBe(true);
    for (const name of ['dash-crash', 'dash-aaa', ...(process.env.KUBELET_TS_SCREENSHOT === '1' ? ['dash-web', 'dash-cache'] : [])]) {
      await remove(name);
      await expect.poll(() => row(name).count(), { timeout: 90_000, interval: 250 }).toBe(0);
    }
    expect(log.errors).toEqual([]);
  }, 180_000);
});

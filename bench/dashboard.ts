// bench dashboard: does the page stay fast at 300 pods (issue 14 part 5: "one frame per change
// batch, keyed row updates, no full re-render")? A fake agent (node:http + ws, no Docker) serves
// the real page (src/server/dashboard via serve.ts), GET /node, /events, /stats/summary and a
// WS /watch/pods it drives: N pods ADDED, a BOOKMARK, then R bursts of N MODIFIED events sent in
// one go (each pod's restart count and container state change; every 3rd burst flips it to
// CrashLoopBackOff). Debian's chromium (playwright-core) loads the page; per burst the bench reads
// in the page: the time from the burst's first message to the end of the frame that applied the
// last change (ms), how many animation frames applied it, and their DOM work (ms, summed); and
// checks that the rows were updated in place (the same <tr> elements). Prints a table, writes
// bench/results/dashboard-*.json. A figure, not a test: it asserts nothing about speed.
//
//   npm run bench -- dashboard [--pods 300] [--bursts 20] [--sort name|cpu|memory|restarts] [--screenshot FILE.png]
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Pod } from '../src/shared/api.js';
import { dashboardAssetHandler, dashboardIndexHandler } from '../src/server/dashboard/serve.js';
import type { RouteContext } from '../src/server/routes/router.js';
import { percentile, positiveInt, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '300' },
    bursts: { type: 'string', default: '20' },
    sort: { type: 'string', default: 'name' },
    screenshot: { type: 'string' },
  },
});
const N = positiveInt('pods', args.pods);
const R = positiveInt('bursts', args.bursts);
const sort = args.sort ?? 'name';
if (!['name', 'cpu', 'memory', 'restarts'].includes(sort)) throw new Error(`--sort must be name, cpu, memory or restarts, got ${sort}`);
const kChromium = '/usr/bin/chromium';
if (!existsSync(kChromium)) throw new Error(`${kChromium} is missing (tools/lib/chromium.sh installs it)`);

let rv = 1;
const now = () => new Date().toISOString();
function makePod(i: number, round: number): Pod {
  const crash = round % 3 === 2 && i % 2 === 0;
  const container = (name: string) => ({
    name,
    image: 'busybox',
    imageID: '',
    containerID: `docker://${i}-${name}`,
    ready: !crash,
    restartCount: round,
    started: !crash,
    state: crash ? { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } } : { running: { startedAt: now() } },
    ...(round > 0 ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: now() } } } : {}),
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `bench-${String(i).padStart(4, '0')}`,
      namespace: i % 5 === 0 ? 'kube-system' : 'default',
      uid: `uid-${i}`,
      resourceVersion: String(rv++),
      creationTimestamp: now(),
      labels: { app: `app-${i % 10}` },
    },
    spec: {
      nodeName: 'bench-node',
      containers: [
        { name: 'main', image: 'busybox' },
        { name: 'side', image: 'busybox' },
      ],
    },
    status: {
      phase: 'Running',
      startTime: now(),
      podIP: `10.0.${i >> 8}.${i & 255}`,
      conditions: [{ type: 'Ready', status: crash ? 'False' : 'True' }],
      containerStatuses: [container('main'), container('side')],
    },
  } as Pod;
}

const summary = () => ({
  node: {
    nodeName: 'bench-node',
    startTime: now(),
    cpu: { time: now(), usageNanoCores: 5e8 },
    memory: { time: now(), workingSetBytes: 2 ** 31, availableBytes: 2 ** 32 },
  },
  pods: Array.from({ length: N }, (_, i) => ({
    podRef: { name: `bench-${i}`, namespace: 'default', uid: `uid-${i}` },
    startTime: now(),
    containers: [],
    cpu: { time: now(), usageNanoCores: ((i * 7919) % 500) * 1e6 },
    memory: { time: now(), workingSetBytes: ((i * 104729) % 200) * 2 ** 20 },
  })),
});

function reply(res: ServerResponse, status: number, type: string, body: string) {
  res.writeHead(status, { 'Content-Type': type });
  res.end(body);
}
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/' || path.startsWith('/dashboard/')) {
    const ctx = { params: { file: path.slice('/dashboard/'.length) } } as unknown as RouteContext;
    const r = (path === '/' ? dashboardIndexHandler(ctx) : dashboardAssetHandler(ctx)) as {
      status: number;
      contentType: string;
      body: string;
    };
    return reply(res, r.status, r.contentType, r.body);
  }
  if (path === '/node')
    return reply(
      res,
      200,
      'application/json',
      JSON.stringify({ kind: 'Node', metadata: { name: 'bench-node' }, status: { capacity: { cpu: '4', memory: '8Gi' } } }),
    );
  if (path === '/events') return reply(res, 200, 'application/json', JSON.stringify({ kind: 'EventList', items: [] }));
  if (path === '/stats/summary') return reply(res, 200, 'application/json', JSON.stringify(summary()));
  reply(res, 404, 'application/json', JSON.stringify({ kind: 'Status', code: 404 }));
});
const wss = new WebSocketServer({ server, path: '/watch/pods' });
let client: WebSocket | undefined;
wss.on('connection', (ws) => {
  client = ws;
  for (let i = 0; i < N; i++) ws.send(JSON.stringify({ type: 'ADDED', object: makePod(i, 0) }));
  ws.send(JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', metadata: { resourceVersion: String(rv) } } }));
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as { port: number }).port;

const browser = await chromium.launch({
  executablePath: kChromium,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // Time each watch message as it arrives (before the page's own onmessage runs).
  await page.addInitScript(() => {
    type Ctor = new (url: string | URL, protocols?: string | string[]) => EventTarget;
    const w = window as unknown as { benchFirstMessageMs: number; WebSocket: Ctor };
    const Native = w.WebSocket;
    w.benchFirstMessageMs = 0;
    w.WebSocket = class extends Native {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols);
        this.addEventListener('message', () => {
          if (w.benchFirstMessageMs === 0) w.benchFirstMessageMs = performance.now();
        });
      }
    };
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  await page.locator('#conn[data-state="live"]').waitFor({ timeout: 30_000 });
  await page.waitForFunction((n) => document.querySelectorAll('#pod-rows tr').length === n, N);
  await page.selectOption('#sort', sort);
  // Tag every row: after the bursts the same elements must still be there (keyed updates, no re-render).
  await page.evaluate(() =>
    document.querySelectorAll('#pod-rows tr').forEach((tr, i) => ((tr as HTMLElement & { benchTag: number }).benchTag = i)),
  );
  type Read = { batches: number; changes: number; end: number; work: number; total: number; first: number };
  const read = () =>
    page.evaluate(() => {
      const d = (
        window as unknown as {
          kubeletTsDashboard: { batches: number; changes: number; lastApplyEndMs: number; lastApplyWorkMs: number; applyWorkMs: number };
        }
      ).kubeletTsDashboard;
      const w = window as unknown as { benchFirstMessageMs: number };
      return {
        batches: d.batches,
        changes: d.changes,
        end: d.lastApplyEndMs,
        work: d.lastApplyWorkMs,
        total: d.applyWorkMs,
        first: w.benchFirstMessageMs,
      };
    }) as Promise<Read>;
  const rows: { burst: number; applyMs: number; frames: number; domWorkMs: number; maxFrameWorkMs: number }[] = [];
  for (let round = 1; round <= R; round++) {
    const before = await read();
    await page.evaluate(() => ((window as unknown as { benchFirstMessageMs: number }).benchFirstMessageMs = 0));
    const frames = Array.from({ length: N }, (_, i) => JSON.stringify({ type: 'MODIFIED', object: makePod(i, round) }));
    for (const f of frames) client!.send(f);
    await page.waitForFunction(
      (target) => (window as unknown as { kubeletTsDashboard: { changes: number } }).kubeletTsDashboard.changes >= target,
      before.changes + N,
      { polling: 50 },
    );
    const after = await read();
    rows.push({
      burst: round,
      applyMs: after.end - after.first,
      frames: after.batches - before.batches,
      domWorkMs: after.total - before.total,
      maxFrameWorkMs: after.work,
    });
  }
  if (args.screenshot) await page.screenshot({ path: args.screenshot });
  const kept = await page.evaluate(
    () =>
      [...document.querySelectorAll('#pod-rows tr')].filter((tr) => (tr as HTMLElement & { benchTag?: number }).benchTag !== undefined)
        .length,
  );
  const crash = await page.locator('#pod-rows td.col-status[data-status="CrashLoopBackOff"]').count();
  const apply = rows.map((r) => r.applyMs);
  const work = rows.map((r) => r.domWorkMs);
  const frameCounts = rows.map((r) => r.frames);
  process.stdout.write(
    `${table([
      [
        'pods',
        'bursts',
        'sort',
        'burst applied p50 ms',
        'p99 ms',
        'DOM work per burst p50 ms',
        'max ms',
        'frames per burst (min-max)',
        'rows kept',
        'load avg',
      ],
      [
        N,
        R,
        sort,
        percentile(apply, 50),
        percentile(apply, 99),
        percentile(work, 50),
        Math.max(...work),
        `${Math.min(...frameCounts)}-${Math.max(...frameCounts)}`,
        `${kept}/${N}`,
        os.loadavg()[0].toFixed(1),
      ],
    ])}\n`,
  );
  if (errors.length) process.stdout.write(`page errors: ${errors.join('; ')}\n`);
  const file = writeResult('dashboard', {
    date: now(),
    node: process.version,
    cpus: os.cpus().length,
    loadavg: os.loadavg(),
    args: { pods: N, bursts: R, sort },
    crashLoopRowsAtEnd: crash,
    rowsKept: kept,
    pageErrors: errors,
    bursts: rows,
  });
  process.stdout.write(`wrote ${file}\n`);
} finally {
  await browser.close();
  wss.close();
  server.close();
}

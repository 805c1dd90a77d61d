// bench api: the agent's HTTP API and WebSocket watch under load, with the fake runtime (no Docker).
// The agent runs in a child process (so the load generators do not share its event loop):
//   1. GET /pods with 500 pods known (autocannon), quiet and under churn (--churn status changes per
//      second, spread over 10 ticks a second: the list is re-serialized only for the pods that
//      changed), and the same for the Kubernetes API's GET /api/v1/pods;
//   2. POST /pods, one new pod per request, persisted by the intake (autocannon);
//   3. WS /watch/pods fan-out: 200 `ws` clients watching while the agent publishes a burst of 500
//      status changes; latency = client receive time − the status manager's publish time (same host clock).
// Each phase reports requests/s, p50/p99 latency, the agent process's CPU per request (at 1,000
// pods the autocannon client, parsing 1.8 MB answers, is the limit of requests/s, not the agent)
// and the agent's event-loop delay p99 (read from
// /metrics, kubelet_ts_event_loop_delay_seconds, which resets at every scrape). Prints a table and
// writes bench/results/api-*.json.
//
//   npm run bench -- api [--pods 500] [--churn 100] [--clients 200] [--burst 500] [--duration 10] [--posts 1000] [--connections 10]
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { percentile, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    serve: { type: 'boolean', default: false },
    pods: { type: 'string', default: '500' },
    clients: { type: 'string', default: '200' },
    burst: { type: 'string', default: '500' },
    duration: { type: 'string', default: '10' },
    posts: { type: 'string', default: '1000' },
    connections: { type: 'string', default: '10' },
    workers: { type: 'string', default: '2' },
    churn: { type: 'string', default: '100' },
  },
});
const int = (name: keyof typeof args) => {
  const n = Number(args[name]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be an integer >= 1, got ${String(args[name])}`);
  return n;
};

type ToChild = { type: 'burst'; n: number } | { type: 'churn'; perSecond: number } | { type: 'cpu' } | { type: 'stop' };
type ToParent =
  | { type: 'ready'; port: number; /** the admin token, for the writes (never printed) */ token: string }
  | { type: 'burst-done'; published: Record<string, number> }
  | { type: 'cpu'; /** the agent process's CPU so far, microseconds */ micros: number };

const nowMs = () => performance.timeOrigin + performance.now();

/** The child: one agent with the fake runtime and its server, steered over IPC. */
async function serve(): Promise<void> {
  const { newAgent } = await import('../src/main/agent.js');
  const { resolveAgentOptions } = await import('../src/main/options/agent-options.js');
  const { newLogger } = await import('../src/shared/logging.js');
  const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-api-'));
  const options = resolveAgentOptions({
    nodeName: 'bench-api',
    rootDir: join(base, 'root'),
    port: 0,
    runtime: 'fake',
    workers: int('workers'),
    maxPods: 1_000_000,
    relistPeriodMs: 1000,
    syncFrequencyMs: 600_000,
    logLevel: 'silent',
    // Every fan-out client is the one anonymous user: room for all of them (--max-watches-per-user, --max-watches).
    maxWatchesPerUser: int('clients'),
    maxWatches: Math.max(500, int('clients')),
    // The bench measures the read path without a token (autocannon GET /pods, the watch): its own agent serves anonymous reads.
    anonymousAuth: true,
  });
  const agent = newAgent(options, { logger: newLogger('silent') });
  await agent.start();
  const send = (m: ToParent) => process.send!(m);
  let churn: NodeJS.Timeout | undefined;
  let churned = 0;
  process.on('message', (m: ToChild) => {
    if (m.type === 'cpu') {
      const c = process.cpuUsage();
      send({ type: 'cpu', micros: c.user + c.system });
      return;
    }
    if (m.type === 'churn') {
      // perSecond status changes a second, in 10 ticks, round-robin over the pods (0: stop).
      clearInterval(churn);
      if (m.perSecond > 0) {
        churn = setInterval(() => {
          const pods = agent.listPods();
          for (let i = 0; i < Math.ceil(m.perSecond / 10) && pods.length > 0; i++) {
            const pod = pods[churned++ % pods.length]!;
            agent.statusManager.setPodStatus(pod, { ...pod.status, message: `churn ${churned}` });
          }
        }, 100);
      }
      return;
    }
    if (m.type === 'stop') {
      clearInterval(churn);
      void agent
        .stop()
        .then(() => rm(base, { recursive: true, force: true }))
        .then(() => process.exit(0));
      return;
    }
    // A burst of status changes on the pods the agent knows, in one tick (the worst case for fan-out).
    const published: Record<string, number> = {};
    const unsubscribe = agent.statusManager.subscribe((c) => {
      published[c.resourceVersion] = nowMs();
    });
    const pods = agent.listPods().slice(0, m.n);
    pods.forEach((pod, i) => agent.statusManager.setPodStatus(pod, { ...pod.status, message: `burst ${Date.now()}-${i}` }));
    unsubscribe();
    send({ type: 'burst-done', published });
  });
  send({ type: 'ready', port: agent.port, token: (await readFile(join(options.rootDir, 'admin.token'), 'utf8')).trim() });
}

const podJson = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'bench', labels: { app: 'bench' } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35', command: ['sleep', '3600'] }] },
});

async function eventLoopP99Ms(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const m = /^kubelet_ts_event_loop_delay_seconds\{quantile="0\.99"\} (\S+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : NaN;
}

interface PhaseResult {
  phase: string;
  requests: number;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  eventLoopP99Ms: number;
  /** The agent process's CPU per request (all its threads; the churn's own status changes included), milliseconds. */
  agentCpuMsPerRequest?: number;
  note?: string;
}

async function cannon(
  base: string,
  phase: string,
  opts: Omit<autocannon.Options, 'url'>,
  agentCpuMicros: () => Promise<number>,
): Promise<PhaseResult> {
  await eventLoopP99Ms(base); // reset the window
  const cpu0 = await agentCpuMicros();
  const r = await autocannon({ connections: int('connections'), ...opts, url: base });
  const cpu1 = await agentCpuMicros();
  const el = await eventLoopP99Ms(base);
  return {
    agentCpuMsPerRequest: r.requests.total > 0 ? Math.round(((cpu1 - cpu0) / 1000 / r.requests.total) * 100) / 100 : undefined,
    phase,
    requests: r.requests.total,
    requestsPerSec: Math.round(r.requests.average),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    eventLoopP99Ms: Math.round(el * 10) / 10,
  };
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', '--workers', String(int('workers'))], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: ToParent[] = [];
  const waiters: (() => void)[] = [];
  child.on('message', (m: ToParent) => {
    messages.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const next = async <T extends ToParent['type']>(type: T): Promise<Extract<ToParent, { type: T }>> => {
    for (;;) {
      const i = messages.findIndex((m) => m.type === type);
      if (i >= 0) return messages.splice(i, 1)[0] as Extract<ToParent, { type: T }>;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  try {
    const loadavgAtStart = (await import('node:os')).loadavg();
    const { port, token } = await next('ready');
    const authorization = `Bearer ${token}`;
    const base = `http://127.0.0.1:${port}`;
    const results: PhaseResult[] = [];
    const agentCpu = async () => {
      child.send({ type: 'cpu' } satisfies ToChild);
      return (await next('cpu')).micros;
    };

    // 0. Load the pods through the intake in batches (List bodies), wait until they all run.
    const N = int('pods');
    let intake = true;
    for (let i = 0; i < N; i += 100) {
      const items = Array.from({ length: Math.min(100, N - i) }, (_, j) => podJson(`known-${i + j}`));
      const res = await fetch(`${base}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: authorization },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
      });
      if (res.status === 404 || res.status === 405) {
        intake = false;
        break;
      }
      if (res.status !== 201) throw new Error(`POST /pods (List of ${items.length}) answered ${res.status}: ${await res.text()}`);
    }
    if (!intake) throw new Error('POST /pods is not available in this build: the API bench needs the intake to load pods');
    for (const started = Date.now(); ;) {
      const list = (await (await fetch(`${base}/pods`)).json()) as { items: { status?: { phase?: string } }[] };
      if (list.items.filter((p) => p.status?.phase === 'Running').length >= N) break;
      if (Date.now() - started > 120_000) throw new Error(`only ${list.items.length} pods known after 120 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    process.stderr.write(`${N} pods running (fake runtime)\n`);

    // 1. GET /pods and GET /api/v1/pods with N pods known, quiet and under churn.
    const churnPerSecond = Number(args.churn);
    if (!Number.isInteger(churnPerSecond) || churnPerSecond < 0) throw new Error(`--churn must be an integer >= 0, got ${args.churn}`);
    for (const path of ['/pods', '/api/v1/pods']) {
      const request = { method: 'GET' as const, path, headers: { authorization } };
      results.push(await cannon(base, `GET ${path} (${N} pods)`, { requests: [request], duration: int('duration') }, agentCpu));
      if (churnPerSecond === 0) continue;
      child.send({ type: 'churn', perSecond: churnPerSecond } satisfies ToChild);
      results.push(
        await cannon(
          base,
          `GET ${path} (${N} pods, ${churnPerSecond} changes/s)`,
          { requests: [request], duration: int('duration') },
          agentCpu,
        ),
      );
      child.send({ type: 'churn', perSecond: 0 } satisfies ToChild);
    }

    // 2. POST /pods: one new pod per request.
    let seq = 0;
    results.push(
      await cannon(
        base,
        'POST /pods (1 pod each)',
        {
          amount: int('posts'),
          requests: [
            {
              method: 'POST',
              path: '/pods',
              headers: { 'content-type': 'application/json', authorization },
              setupRequest: (req) => ({ ...req, body: JSON.stringify(podJson(`posted-${seq++}`)) }),
            },
          ],
        },
        agentCpu,
      ),
    );

    // 3. WebSocket fan-out to `clients` watchers during a burst of status changes.
    const clients = int('clients');
    const burst = int('burst');
    const received = new Map<number, number[]>(); // rv → receive times (epoch ms)
    let bookmarks = 0;
    const sockets: WebSocket[] = [];
    await Promise.all(
      Array.from(
        { length: clients },
        () =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(`ws://127.0.0.1:${port}/watch/pods`);
            sockets.push(ws);
            let live = false;
            ws.on('message', (data) => {
              const t = nowMs();
              const text = String(data);
              if (!live) {
                if (text.startsWith('{"type":"BOOKMARK"')) {
                  live = true;
                  bookmarks++;
                  resolve();
                }
                return;
              }
              const m = /"resourceVersion":"(\d+)"/.exec(text);
              if (!m) return;
              const rv = Number(m[1]);
              let list = received.get(rv);
              if (!list) received.set(rv, (list = []));
              list.push(t);
            });
            ws.on('error', reject);
          }),
      ),
    );
    process.stderr.write(`${bookmarks} watch clients live\n`);
    await eventLoopP99Ms(base);
    const burstStart = nowMs();
    child.send({ type: 'burst', n: burst } satisfies ToChild);
    const { published } = await next('burst-done');
    const expected = Object.keys(published).length * clients;
    for (const started = Date.now(); ;) {
      let got = 0;
      for (const rv of Object.keys(published)) got += received.get(Number(rv))?.length ?? 0;
      if (got >= expected || Date.now() - started > 60_000) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const el = await eventLoopP99Ms(base);
    const latencies: number[] = [];
    let lastArrival = burstStart;
    for (const [rv, t0] of Object.entries(published)) {
      for (const t of received.get(Number(rv)) ?? []) {
        latencies.push(t - t0);
        lastArrival = Math.max(lastArrival, t);
      }
    }
    for (const ws of sockets) ws.terminate();
    results.push({
      phase: `WS fan-out (${clients} clients × ${Object.keys(published).length} changes)`,
      requests: latencies.length,
      requestsPerSec: Math.round(latencies.length / Math.max(0.001, (lastArrival - burstStart) / 1000)),
      p50Ms: Math.round(percentile(latencies, 50) * 10) / 10,
      p99Ms: Math.round(percentile(latencies, 99) * 10) / 10,
      errors: expected - latencies.length,
      non2xx: 0,
      eventLoopP99Ms: Math.round(el * 10) / 10,
      note: 'requests = frames received, requests/s = frames/s until the last arrival, errors = frames missing',
    });

    process.stdout.write(
      `${table([
        ['phase', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'event loop p99 ms', 'agent CPU ms/request'],
        ...results.map((r) => [
          r.phase,
          r.requests,
          r.requestsPerSec,
          r.p50Ms,
          r.p99Ms,
          r.errors,
          r.non2xx,
          r.eventLoopP99Ms,
          r.agentCpuMsPerRequest ?? '-',
        ]),
      ])}\n`,
    );
    const os = await import('node:os');
    // The load average says whether the figures were taken on a quiet machine (2 cores shared by other work skew them).
    const file = writeResult('api', {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      loadavgAtStart,
      loadavgAtEnd: os.loadavg(),
      args,
      results,
    });
    process.stdout.write(`wrote ${file}\n`);
  } finally {
    child.send({ type: 'stop' } satisfies ToChild);
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve();
      }, 15_000);
      child.on('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

if (args.serve) await serve();
else await main();

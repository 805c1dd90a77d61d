// bench soak: an agent against the real dockerd under churn for --minutes: it keeps about --pods
// intake pods (POST /pods), and every --interval-ms deletes one, creates one or replaces one's spec
// (PUT, a changed container arg, so the container is recreated), in the spirit of upstream's
// node e2e "resource usage tracking" soak. It samples every 10 s and prints a line every minute:
// the process RSS, heap, open fds (/proc/self/fd), the watch history (changes held, and the bytes
// of those changes as the bench's watch client received them), pods known and running, and the
// node's Docker containers. At the end a table of first / last / max and the slope per minute (over
// the whole run and over its second half, when the history ring is warm), and bench/results/soak-*.json.
//
// The agent runs in-process (as the other Docker benches do): the watch history is read from the
// status manager's resourceVersion without adding an export to src/, and the bench's own share of
// RSS and fds (one watch socket, fetch's keep-alive sockets, a few maps) is small and constant.
//
//   npm run bench -- soak [--minutes 30] [--pods 100] [--interval-ms 1000] [--workers 2] [--watch-history 10000]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import type { Pod, Status } from '../src/shared/api.js';
import { kDefaultWatchCacheOptions } from '../src/main/watch/watch-cache.js';
import { kBusybox, positiveInt, startBenchAgent, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    pods: { type: 'string', default: '100' },
    'interval-ms': { type: 'string', default: '1000' },
    workers: { type: 'string', default: '2' },
    'watch-history': { type: 'string', default: String(kDefaultWatchCacheOptions.historySize) },
    'sample-seconds': { type: 'string', default: '10' },
  },
});
const minutes = Number(args.minutes);
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`--minutes must be a number > 0, got ${args.minutes}`);
const target = positiveInt('pods', args.pods);
const intervalMs = positiveInt('interval-ms', args['interval-ms']);
const workers = positiveInt('workers', args.workers);
const historySize = positiveInt('watch-history', args['watch-history']);
const sampleS = positiveInt('sample-seconds', args['sample-seconds']);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const kNamespace = 'soak';

/** Sample: one reading (bytes, counts; `atS` seconds since the churn began). */
interface Sample {
  atS: number;
  rssMiB: number;
  heapMiB: number;
  fds: number;
  historyChanges: number;
  historyKiB: number;
  podsKnown: number;
  podsRunning: number;
  containers: number;
}

const b = await startBenchAgent('soak', { workers, syncFrequencyMs: 60_000 }, { watchHistorySize: historySize });
// The admin token, once the server asks for one (root-dir/admin.token); none before that.
let token: string | undefined;
try {
  token = readFileSync(join(b.rootDir, 'admin.token'), 'utf8').trim();
} catch {
  token = undefined;
}
const base = `http://127.0.0.1:${b.agent.port}`;
const api = (path: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...(token ? { Authorization: `Bearer ${token}` } : {}) },
  });

// Bytes of the last `historySize` changes, as the watch client received them (a ring of sizes).
const frameBytes = new Float64Array(historySize);
let frames = 0;
let ringBytes = 0;
const phase = new Map<string, string>(); // name → last phase seen on the watch (live pods only)
b.onFrame((frame) => {
  if (frame.type === 'BOOKMARK' || frame.type === 'ERROR') return;
  const size = Buffer.byteLength(JSON.stringify(frame));
  const slot = frames % historySize;
  ringBytes += size - frameBytes[slot];
  frameBytes[slot] = size;
  frames++;
  const name = frame.object.metadata?.name ?? '';
  if (frame.object.metadata?.namespace !== kNamespace) return;
  if (frame.type === 'DELETED') phase.delete(name);
  else phase.set(name, frame.object.status?.phase ?? '');
});

const live = new Set<string>(); // names created and not yet deleted
let serial = 0;
let generation = 0;
const ops = { create: 0, delete: 0, update: 0 };
const failures: Record<string, number> = {};

const podJson = (name: string, arg: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: kNamespace, labels: { app: 'soak' } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: kBusybox, command: ['sleep', '3600', arg] }] },
});

async function call(op: keyof typeof ops, path: string, init: RequestInit): Promise<boolean> {
  const res = await api(path, init);
  const text = await res.text();
  if (res.ok) {
    ops[op]++;
    return true;
  }
  let reason = '';
  try {
    reason = (JSON.parse(text) as Status).reason ?? '';
  } catch {
    reason = text.slice(0, 40);
  }
  const key = `${op} ${res.status} ${reason}`;
  failures[key] = (failures[key] ?? 0) + 1;
  return false;
}

const create = async () => {
  const name = `soak-${serial++}`;
  if (
    await call('create', '/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(podJson(name, 'g0')),
    })
  )
    live.add(name);
};
const remove = async (name: string) => {
  live.delete(name);
  await call('delete', `/pods/${kNamespace}/${name}`, { method: 'DELETE' });
};
const update = async (name: string) => {
  await call('update', `/pods/${kNamespace}/${name}`, {
    method: 'PUT',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(podJson(name, `g${++generation}`)),
  });
};
const pick = () => [...live][Math.floor(Math.random() * live.size)];

async function containers(): Promise<number> {
  return (await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${b.nodeName}`] } })).length;
}

const rv0 = b.agent.statusManager.resourceVersion();
async function sample(atS: number): Promise<Sample> {
  const m = process.memoryUsage();
  return {
    atS,
    rssMiB: m.rss / 2 ** 20,
    heapMiB: m.heapUsed / 2 ** 20,
    fds: readdirSync('/proc/self/fd').length,
    historyChanges: Math.min(historySize, b.agent.statusManager.resourceVersion() - rv0),
    historyKiB: ringBytes / 1024,
    podsKnown: [...b.agent.podManager.all()].length,
    podsRunning: [...phase.values()].filter((p) => p === 'Running').length,
    containers: await containers(),
  };
}

/** slope: least-squares slope of `y` over the samples' time, per minute. */
function slope(samples: Sample[], y: (s: Sample) => number): number {
  if (samples.length < 2) return NaN;
  const xs = samples.map((s) => s.atS / 60);
  const ys = samples.map(y);
  const mx = xs.reduce((a, v) => a + v, 0) / xs.length;
  const my = ys.reduce((a, v) => a + v, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

const fmt = (s: Sample) =>
  `soak ${(s.atS / 60).toFixed(1)} min: RSS ${s.rssMiB.toFixed(1)} MiB, heap ${s.heapMiB.toFixed(1)} MiB, fds ${s.fds}, watch history ${s.historyChanges} changes / ${s.historyKiB.toFixed(0)} KiB, pods ${s.podsKnown} known / ${s.podsRunning} Running, containers ${s.containers}, ops ${ops.create}c/${ops.delete}d/${ops.update}u`;

const samples: Sample[] = [];
let stopping = false;
try {
  // Fill to the target one POST at a time, then churn.
  for (let i = 0; i < target; i++) await create();
  process.stderr.write(
    `soak: ${live.size} pods submitted to node ${b.nodeName}; churning for ${minutes} min, one operation every ${intervalMs} ms\n`,
  );
  const t0 = performance.now();
  const endAt = t0 + minutes * 60_000;
  let nextSample = t0;
  let nextLine = t0;
  while (performance.now() < endAt && !stopping) {
    const now = performance.now();
    if (now >= nextSample) {
      const s = await sample((now - t0) / 1000);
      samples.push(s);
      nextSample += sampleS * 1000;
      if (now >= nextLine) {
        process.stderr.write(`${fmt(s)}\n`);
        nextLine += 60_000;
      }
    }
    // Keep about `target` pods: below it create, above it delete, else one of the three at random.
    const r = Math.random();
    if (live.size < target - 5 || (live.size <= target + 5 && r < 1 / 3)) await create();
    else if (live.size > target + 5 || r < 2 / 3) await remove(pick());
    else await update(pick());
    const wait = intervalMs - (performance.now() - now);
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
  }
  samples.push(await sample((performance.now() - t0) / 1000));
  process.stderr.write(`${fmt(samples.at(-1)!)}\n`);

  const second = samples.filter((s) => s.atS >= samples.at(-1)!.atS / 2);
  const measures: [string, (s: Sample) => number][] = [
    ['RSS (MiB)', (s) => s.rssMiB],
    ['heap used (MiB)', (s) => s.heapMiB],
    ['open fds', (s) => s.fds],
    ['watch history (changes)', (s) => s.historyChanges],
    ['watch history (KiB)', (s) => s.historyKiB],
    ['pods known', (s) => s.podsKnown],
    ['pods Running', (s) => s.podsRunning],
    ['node containers', (s) => s.containers],
  ];
  const rows = measures.map(([label, y]) => ({
    measure: label,
    first: y(samples[0]),
    last: y(samples.at(-1)!),
    max: Math.max(...samples.map(y)),
    slopePerMin: slope(samples, y),
    slopePerMinSecondHalf: slope(second, y),
  }));
  console.log(
    `\nsoak: ~${target} pods, ${minutes} min of churn (one op / ${intervalMs} ms), ${workers} worker threads, watch history ${historySize}, ${new Date().toISOString()}`,
  );
  console.log(`operations: ${ops.create} creates, ${ops.delete} deletes, ${ops.update} updates; failed: ${JSON.stringify(failures)}`);
  console.log(
    table([
      ['measure', 'first', 'last', 'max', 'slope/min', 'slope/min (2nd half)'],
      ...rows.map((r) => [r.measure, r.first, r.last, r.max, r.slopePerMin, r.slopePerMinSecondHalf]),
    ]),
  );
  const file = writeResult('soak', {
    date: new Date().toISOString(),
    minutes,
    pods: target,
    intervalMs,
    workers,
    historySize,
    nodeName: b.nodeName,
    ops,
    failures,
    summary: rows,
    samples,
  });
  console.log(`results: ${file}`);
} finally {
  stopping = true;
  process.stderr.write(`soak: deleting ${live.size} pods\n`);
  await Promise.all([...live].map((name) => remove(name).catch(() => {})));
  const t = performance.now();
  while (phase.size > 0 && performance.now() - t < 3 * 60_000) await new Promise((res) => setTimeout(res, 500));
  await b.stop();
  const list = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${b.nodeName}`] } });
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
}

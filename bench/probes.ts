// bench probes: N static pods, each with a liveness and a readiness probe (period 1 s), against the
// real dockerd and the agent with its default settings; once every pod is Ready, measures the agent
// process's own CPU (process.cpuUsage: main thread + worker threads) over --duration seconds, as %
// of one core. First, unless --skip-baseline, the same agent runs the same pods without probes for
// the same window: the baseline (PLEG, resyncs, housekeeping, stats), so the table shows both the
// CPU per probe of the whole agent (the issue's figure) and what probing adds above the baseline.
// Counts the probes actually run in the window (the agent's prober_probe_total), so a run where
// probes fell behind their period shows it. The Docker engine's CPU over each window (dockerd,
// containerd, the shims with the runc calls and exec'd processes they reaped) is measured beside
// the agent's: an exec probe's cost is mostly the engine's. Prints a table, writes bench/results/probes-*.json.
//
//   npm run bench -- probes [--pods 100] [--duration 60] [--workers 2] [--kind net|exec|none] [--skip-baseline]
//
// --kind net (default): hostNetwork pods, each a busybox httpd on its own 127.0.0.1 port, with an
//   httpGet readiness probe and a tcpSocket liveness probe (dialled from the main thread, no worker hop).
// --kind exec: network-none pods with exec probes (`true`): every probe is a `docker exec`, whose
//   cost is mostly dockerd's and runc's (a few tens of ms of CPU each), not the agent's.
// --kind none: the same pods as net without probes: the baseline alone.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { pino } from 'pino';
import { newAgent } from '../src/main/agent.js';
import { resolveAgentOptions } from '../src/main/options/agent-options.js';
import type { Pod } from '../src/shared/api.js';
import { engineCpuSeconds, progress, table, writeResult } from './lib.js';
import { releaseNodeNetwork } from '../test/support/network.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    duration: { type: 'string', default: '60' },
    workers: { type: 'string', default: '2' },
    kind: { type: 'string', default: 'net' },
    'skip-baseline': { type: 'boolean', default: false },
  },
});
const N = Number(args.pods);
const durationS = Number(args.duration);
const workers = Number(args.workers);
const kind = args.kind;
if (!Number.isInteger(N) || N < 1) throw new Error(`--pods must be an integer >= 1, got ${args.pods}`);
if (!(durationS > 0)) throw new Error(`--duration must be > 0 seconds, got ${args.duration}`);
if (kind !== 'net' && kind !== 'exec' && kind !== 'none') throw new Error(`--kind must be net, exec or none, got ${kind}`);
const kBusybox = 'kubelet-ts/busybox:1.35';
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const nodeName = `bench-probes-${randomBytes(3).toString('hex')}`;
// Each pod's httpd listens on its own port, between the test services (etcd 23790–23801, the
// registries 5055–5056) and Linux's ephemeral range (32768 and up): an ephemeral port there may be
// taken by any outgoing loopback connection (the probes' own among them), and an httpd that finds
// its port taken exits and crash-loops.
const kFirstPort = 24_000;
const kEphemeralStart = 32_768;
if (N > kEphemeralStart - kFirstPort)
  throw new Error(`--pods ${N}: at most ${kEphemeralStart - kFirstPort} pods, one port each below ${kEphemeralStart}`);
const basePort = kFirstPort + Math.floor(Math.random() * (kEphemeralStart - kFirstPort - N + 1));

/**
 * probesRun: probes the agent has run so far — the sum of its prober_probe_total (GET
 * /metrics/probes, every result counted; readable without a token, as /metrics). Since issue #16
 * direct probes no longer pass through the worker pool, so kubelet_runtime_operations_total no
 * longer counts them (upstream's counts only runtime calls either).
 */
async function probesRun(): Promise<number> {
  const body = await (await fetch(`http://127.0.0.1:${agent.port}/metrics/probes`)).text();
  let n = 0;
  for (const m of body.matchAll(/^prober_probe_total\{[^}]*\} (\d+(?:\.\d+)?(?:e\+\d+)?)$/gm)) n += Number(m[1]);
  return n;
}

const ready = (pod: Pod) =>
  pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).length > 0 && pod.status.containerStatuses!.every((c) => c.ready);

function manifest(i: number, kind: string): string {
  if (kind === 'exec') {
    return `apiVersion: v1
kind: Pod
metadata: {name: probes-${i}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: "${kBusybox}"
      command: ["sleep", "3600"]
      livenessProbe: {exec: {command: ["true"]}, periodSeconds: 1, timeoutSeconds: 5}
      readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1, timeoutSeconds: 5}
`;
  }
  const port = basePort + i;
  return `apiVersion: v1
kind: Pod
metadata: {name: probes-${i}}
spec:
  terminationGracePeriodSeconds: 1
  hostNetwork: true
  containers:
    - name: main
      image: "${kBusybox}"
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 127.0.0.1:${port} -h /www"]
${
  kind === 'none'
    ? ''
    : `      livenessProbe: {tcpSocket: {port: ${port}}, periodSeconds: 1, failureThreshold: 5}
      readinessProbe: {httpGet: {path: /index.html, port: ${port}}, periodSeconds: 1}
`
}`;
}

const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-'));
const manifests = join(base, 'manifests');
await import('node:fs/promises').then((fs) => fs.mkdir(manifests));
// The agent's defaults otherwise (relist every 60 s, resync every 60 s, stats every 10 s), as a user runs it.
const options = resolveAgentOptions({
  nodeName,
  podManifestPath: manifests,
  rootDir: join(base, 'root'),
  address: '127.0.0.1',
  port: 0,
  workers,
  logLevel: 'warn',
  anonymousAuth: true /* its GET /metrics/probes without a token */,
});
// Served (on a free loopback port) only so probesRun can read GET /metrics/probes; nothing else asks it.
const agent = newAgent(options, { logger: pino({ level: 'silent' }) });
// Interrupted (Ctrl-C, timeout): still remove this node's containers and the temp dir.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    void (async () => {
      const left = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${nodeName}`] } });
      await Promise.all(
        left.map((c) =>
          docker
            .getContainer(c.Id)
            .remove({ force: true })
            .catch(() => {}),
        ),
      );
      await releaseNodeNetwork(options.rootDir); // its pods' leases and its bridge (test/support/network.ts)
      await rm(base, { recursive: true, force: true });
      process.exit(130);
    })();
  });
}
/** One window's figures: the agent's CPU over `durationS` with N Ready pods of `kind`. */
interface Window {
  kind: string;
  readyAfterS: number;
  wallMs: number;
  probesRunPerSecond: number;
  probesInWindow: number;
  cpuMs: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  cpuPercentOfOneCore: number;
  /** The Docker engine's CPU over the same window, milliseconds (bench/lib.ts engineCpuSeconds). */
  engineCpuMs: { dockerd: number; containerd: number; shims: number; total: number };
  podsReadyAtEnd: number;
  restarts: number;
  unhealthyEvents: number;
  topFailures: Array<{ message: string; count: number }>;
}

/** engineDelta: the engine's CPU between two readings, milliseconds per part and in all. */
function engineDelta(a: ReturnType<typeof engineCpuSeconds>, b: ReturnType<typeof engineCpuSeconds>): Window['engineCpuMs'] {
  const ms = (k: 'dockerd' | 'containerd' | 'shims') => Math.round((b[k] - a[k]) * 1000);
  const parts = { dockerd: ms('dockerd'), containerd: ms('containerd'), shims: ms('shims') };
  return { ...parts, total: parts.dockerd + parts.containerd + parts.shims };
}

const unhealthyCount = () =>
  agent.events
    .list()
    .filter((e) => e.reason === 'Unhealthy')
    .reduce((n, e) => n + (e.count ?? 1), 0);

/** measure starts N pods of `kind`, waits until they are Ready, measures one window, removes them. */
async function measure(kind: string): Promise<Window> {
  await writeFile(join(manifests, 'probes.yaml'), Array.from({ length: N }, (_, i) => manifest(i, kind)).join('---\n'));
  const bar = progress(`pods Ready (${kind} probes)`, N);
  const t0 = Date.now();
  for (;;) {
    const n = agent.listPods().filter(ready).length;
    bar.update(n);
    if (n === N) break;
    if (Date.now() - t0 > 8 * 60_000) throw new Error(`only ${n}/${N} pods became Ready within 8 minutes (is the machine overloaded?)`);
    await new Promise((r) => setTimeout(r, 500));
  }
  bar.end();
  const readyAfterS = (Date.now() - t0) / 1000;
  const unhealthyBefore = unhealthyCount();
  process.stderr.write(`measuring the agent's CPU for ${durationS} s (${kind} probes)...\n`);
  const probes0 = await probesRun();
  const cpu0 = process.cpuUsage();
  const e0 = engineCpuSeconds();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, durationS * 1000));
  const cpu = process.cpuUsage(cpu0);
  const e1 = engineCpuSeconds();
  const wallMs = performance.now() - w0;
  const probesInWindow = (await probesRun()) - probes0;
  const pods = agent.listPods();
  const restarts = pods.reduce((n, p) => n + (p.status?.containerStatuses ?? []).reduce((m, c) => m + c.restartCount, 0), 0);
  const stillReady = pods.filter(ready).length;
  // The distinct failure messages (e.g. timeouts under load), most frequent first.
  const failures = new Map<string, number>();
  for (const e of agent.events.list()) {
    if (e.reason !== 'Unhealthy') continue;
    const message = e.message!.replace(/\d+\.\d+\.\d+\.\d+:\d+/g, 'ADDR');
    failures.set(message, (failures.get(message) ?? 0) + (e.count ?? 1));
  }
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const window: Window = {
    kind,
    readyAfterS,
    wallMs: Math.round(wallMs),
    probesRunPerSecond: Number((probesInWindow / (wallMs / 1000)).toFixed(1)),
    probesInWindow,
    cpuMs: Math.round(cpuMs),
    cpuUserMs: Math.round(cpu.user / 1000),
    cpuSystemMs: Math.round(cpu.system / 1000),
    cpuPercentOfOneCore: Number(((cpuMs / wallMs) * 100).toFixed(2)),
    engineCpuMs: engineDelta(e0, e1),
    podsReadyAtEnd: stillReady,
    restarts,
    unhealthyEvents: unhealthyCount() - unhealthyBefore,
    topFailures: [...failures]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([message, count]) => ({ message, count })),
  };
  await rm(join(manifests, 'probes.yaml'), { force: true });
  const t1 = Date.now();
  while (agent.listPods().length > 0 && Date.now() - t1 < 120_000) await new Promise((r) => setTimeout(r, 500));
  return window;
}

try {
  await agent.start();
  const baseline = kind !== 'none' && !args['skip-baseline'] ? await measure('none') : null;
  const w = await measure(kind);
  const perProbe = (cpuMs: number) => (w.probesInWindow > 0 ? Number((cpuMs / w.probesInWindow).toFixed(3)) : null);
  // What probing adds: the CPU above the baseline's, at the same wall time, per probe run.
  const aboveMs = baseline ? w.cpuMs - (baseline.cpuPercentOfOneCore / 100) * w.wallMs : null;
  // The same for the engine: what dockerd, containerd and the shims spent per probe (an exec probe's real cost).
  const engineAboveMs = baseline ? w.engineCpuMs.total - (baseline.engineCpuMs.total / baseline.wallMs) * w.wallMs : null;
  const result = {
    bench: 'probes',
    date: new Date().toISOString(),
    kind,
    pods: N,
    probesPerSecond: kind === 'none' ? 0 : 2 * N,
    workers,
    durationS,
    readyAfterS: w.readyAfterS,
    probesRunPerSecond: w.probesRunPerSecond,
    cpuMsPerProbe: perProbe(w.cpuMs),
    cpuMsPerProbeAboveBaseline: aboveMs === null ? null : perProbe(aboveMs),
    engineCpuMsPerProbe: perProbe(w.engineCpuMs.total),
    engineCpuMsPerProbeAboveBaseline: engineAboveMs === null ? null : perProbe(engineAboveMs),
    engineCpuPercentOfOneCore: Number(((w.engineCpuMs.total / w.wallMs) * 100).toFixed(2)),
    engineCpuMs: w.engineCpuMs,
    cpuPercentOfOneCore: w.cpuPercentOfOneCore,
    baselineCpuPercentOfOneCore: baseline?.cpuPercentOfOneCore ?? null,
    cpuUserMs: w.cpuUserMs,
    cpuSystemMs: w.cpuSystemMs,
    podsReadyAtEnd: w.podsReadyAtEnd,
    restarts: w.restarts,
    unhealthyEvents: w.unhealthyEvents,
    topFailures: w.topFailures,
    baseline,
  };
  process.stdout.write(
    `${table([
      [
        'pods',
        'probe kind',
        'probes/s (nominal)',
        'probes/s (run)',
        'agent CPU % of one core',
        'without probes',
        'CPU ms per probe',
        'above the baseline',
        'engine CPU %',
        'engine ms per probe',
        'above its baseline',
        'user ms',
        'system ms',
        'ready at end',
        'restarts',
        'Unhealthy events',
      ],
      [
        N,
        kind,
        result.probesPerSecond,
        result.probesRunPerSecond,
        result.cpuPercentOfOneCore,
        result.baselineCpuPercentOfOneCore ?? '-',
        result.cpuMsPerProbe ?? '-',
        result.cpuMsPerProbeAboveBaseline ?? '-',
        result.engineCpuPercentOfOneCore,
        result.engineCpuMsPerProbe ?? '-',
        result.engineCpuMsPerProbeAboveBaseline ?? '-',
        result.cpuUserMs,
        result.cpuSystemMs,
        `${w.podsReadyAtEnd}/${N}`,
        w.restarts,
        w.unhealthyEvents,
      ],
    ])}\n`,
  );
  for (const f of w.topFailures) process.stdout.write(`  ${f.count} × ${f.message}\n`);
  process.stdout.write(`wrote ${writeResult('probes', result)}\n`);
} finally {
  await rm(join(manifests, 'probes.yaml'), { force: true });
  const t1 = Date.now();
  while (agent.listPods().length > 0 && Date.now() - t1 < 120_000) await new Promise((r) => setTimeout(r, 500));
  await agent.stop();
  const left = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${nodeName}`] } });
  await Promise.all(
    left.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  // Its default network's bridge stays up after the agent stops (as the kubelet's cni0): remove it, once its containers are gone.
  await releaseNodeNetwork(options.rootDir);
  await rm(base, { recursive: true, force: true });
}

// Shared bench helpers: percentiles, a progress line, results JSON. Not used by src/.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { mkdir, mkdtemp, readdir, rename, rm as rmPath, writeFile as writeFileAsync } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import type Docker from 'dockerode';
import { newAgent, type Agent, type AgentDeps } from '../src/main/agent.js';
import { resolveAgentOptions, type AgentOptions } from '../src/main/options/agent-options.js';
import type { Pod } from '../src/shared/api.js';
import type { PodSyncRunner } from '../src/main/pool/worker-pool.js';
import { releaseNodeNetwork } from '../test/support/network.js';
import { progress } from './progress.js';
import { startWatchClient, type PodTimes } from './watch-client.js';
import type { WatchFrame } from './watch-frames.js';

/** percentile of `values` (milliseconds or any unit), p in 0..100, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export { progress, progressLine } from './progress.js';

/**
 * writeResult writes `data` to bench/results/<name>-<ISO time>.json (the source tree's, also when
 * the bench runs compiled from dist/bench) and returns the path.
 */
export function writeResult(name: string, data: unknown): string {
  const here = import.meta.dirname;
  const dir = join(basename(dirname(here)) === 'dist' ? join(here, '..', '..', 'bench') : here, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

/** table prints rows as aligned columns. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isInteger(c) ? String(c) : c.toFixed(2)) : c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ')).join('\n');
}

// ---- agent helpers shared by the density, steady, relist and scale benches ----

export const kBusybox = 'kubelet-ts/busybox:1.35';
export const kPause = 'kubelet-ts/pause:1.0';

/** parseIntList parses `1,2,4` (flag `name`) into positive integers. */
export function parseIntList(name: string, text: string): number[] {
  const out = text.split(',').map((s) => Number(s.trim()));
  if (!out.length || out.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--${name} must be a comma-separated list of integers >= 1, got ${text}`);
  return out;
}

/** positiveInt checks one integer flag. */
export function positiveInt(name: string, text: string | undefined, min = 1): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got ${text}`);
  return n;
}

/** podYaml: one busybox pod manifest (one `main` container sleeping), static pod style. */
export function podYaml(name: string, opts: { restartPolicy?: string; image?: string } = {}): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  restartPolicy: ${opts.restartPolicy ?? 'Always'}
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "${opts.image ?? kBusybox}", command: ["sleep", "3600"]}]
`;
}

export { isRunningPod as isRunning, type WatchFrame } from './watch-frames.js';
export type { PodTimes } from './watch-client.js';

/** BenchAgent: an in-process agent with its own node name, manifest directory and a watch client. */
export interface BenchAgent {
  agent: Agent;
  nodeName: string;
  manifests: string;
  /** The agent's --root-dir (intake pods, admin.token). */
  rootDir: string;
  times: PodTimes;
  /** Calls `fn` with every watch frame when it arrives (performance.now() ms); returns the unsubscribe. */
  onFrame(fn: (frame: WatchFrame, atMs: number) => void): () => void;
  /** Writes one manifest file atomically (tmp + rename). */
  write(file: string, yaml: string): Promise<void>;
  remove(file: string): Promise<void>;
  /** The IP leases of the agent's default pod network's IPAM (host-local) now: 0 once every pod's network was torn down. */
  ipamLeases(): Promise<number>;
  /** Stops the agent, releases its default network (leases, iptables rules, bridge) and deletes its directories (containers are the caller's business). */
  stop(): Promise<void>;
}

/**
 * startBenchAgent starts an agent on `bench-<kind>-<random>` with a temp manifest dir and its HTTP
 * server on a free loopback port, and connects a watch client to `/watch/pods` (bench/watch-client.ts,
 * on a thread of its own): every time a bench reports is when a watch client was told, as a user watching the agent would be. `makeRunner` may
 * build the agent's pod sync runner from its resolved options (closed on stop). The worker threads
 * log at `KUBELET_TS_BENCH_LOG` (default silent).
 */
export async function startBenchAgent(
  kind: string,
  overrides: Partial<AgentOptions> = {},
  deps: Partial<AgentDeps> = {},
  makeRunner?: (options: AgentOptions) => PodSyncRunner,
): Promise<BenchAgent> {
  const nodeName = `bench-${kind}-${randomBytes(3).toString('hex')}`;
  const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-'));
  const manifests = join(base, 'manifests');
  await mkdir(manifests);
  const level = process.env.KUBELET_TS_BENCH_LOG ?? 'silent';
  const options = resolveAgentOptions({
    nodeName,
    podManifestPath: manifests,
    rootDir: join(base, 'root'),
    address: '127.0.0.1',
    port: 0,
    fileCheckFrequencyMs: 60_000,
    logLevel: level,
    // Its own default pod network (bridge, CIDR), never the host's /etc/cni/net.d.
    cniConfDir: join(base, 'cni-conf'),
    // Benches size the node for their N: --max-pods' kubelet default (110) would refuse the rest.
    maxPods: 1_000_000,
    // A bench's own loopback agent in a private root dir: its reads (list, watch, metrics) are measured without a token, as before issue #38.
    anonymousAuth: true,
    ...overrides,
  });
  const runner = makeRunner?.(options);
  const agent = newAgent(options, { logger: pino({ level }), ...(runner ? { runner } : {}), ...deps });
  await agent.start();
  // The watch client decodes its frames on a thread of its own, filed apart as `bench-watch` by
  // bench/thread-cpu.ts: the agent's main-thread and process CPU figures leave it out.
  const watch = await startWatchClient(agent.port).catch(async (err: unknown) => {
    await agent.stop();
    await runner?.close();
    await rmPath(base, { recursive: true, force: true });
    throw err;
  });
  const { times } = watch;
  return {
    agent,
    nodeName,
    manifests,
    rootDir: options.rootDir,
    times,
    onFrame: (fn) => watch.onFrame(fn),
    async write(file, yaml) {
      const tmp = join(base, `.${file}.tmp`);
      await writeFileAsync(tmp, yaml);
      await rename(tmp, join(manifests, file));
    },
    async remove(file) {
      await rmPath(join(manifests, file), { force: true });
    },
    async ipamLeases() {
      const dir = join(options.rootDir, 'cni', 'networks', 'kubelet-ts');
      const names = await readdir(dir).catch(() => [] as string[]);
      return names.filter((n) => /^[0-9.]+$/.test(n)).length;
    },
    async stop() {
      await watch.close();
      await agent.stop();
      await runner?.close();
      await releaseNodeNetwork(options.rootDir);
      await rmPath(base, { recursive: true, force: true });
    },
  };
}

/**
 * warmUpAgent starts `pods` busybox pods on bench agent `b` at once (manifests `warm-up-<i>.yaml`),
 * waits for all Running, removes them, waits for all removed, and forgets their times: after it the
 * agent's threads have loaded and compiled the code a pod's start and removal run (V8 compiles a
 * function's optimized code on its platform threads after it ran hot), so the timed burst that follows
 * measures a pod start of an agent that has started pods before, as a node's agent has.
 * @throws as waitUntil, when the pods are not Running or removed within its wait.
 */
export async function warmUpAgent(b: BenchAgent, pods: number, what: string): Promise<void> {
  const files = Array.from({ length: pods }, (_, i) => `warm-up-${i}.yaml`);
  await Promise.all(files.map((f, i) => b.write(f, podYaml(`warm-up-${i}`))));
  await waitUntil(`${what}: warm-up pods Running`, pods, () => b.times.running.size);
  await Promise.all(files.map((f) => b.remove(f)));
  await waitUntil(`${what}: warm-up pods removed`, pods, () => b.times.removed.size);
  b.times.accepted.clear();
  b.times.running.clear();
  b.times.removed.clear();
  b.times.byName.clear();
}

/**
 * watchDieEvents opens a Docker events stream of the `die` events of node `nodeName`'s containers
 * and records when each container died by dockerd's own clock (the event's timeNano, as epoch ms).
 * `died` fills as events come; `close()` ends the stream.
 */
export async function watchDieEvents(docker: Docker, nodeName: string): Promise<{ died: Map<string, number>; close(): void }> {
  const died = new Map<string, number>();
  const events = (await docker.getEvents({
    filters: { type: ['container'], event: ['die'], label: [`kubelet-ts.node-name=${nodeName}`] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  let buffered = '';
  events.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        const e = JSON.parse(line) as { id?: string; timeNano?: number };
        if (e.id && e.timeNano) died.set(e.id, e.timeNano / 1e6);
      } catch {
        // not a whole event
      }
    }
  });
  return { died, close: () => events.destroy() };
}

/** waitUntil polls `count()` every 100 ms, showing progress, until it reaches `total`. @throws after `timeoutMs`. */
export async function waitUntil(label: string, total: number, count: () => number, timeoutMs = 15 * 60_000): Promise<number> {
  const bar = progress(label, total);
  const t0 = performance.now();
  while (count() < total) {
    if (performance.now() - t0 > timeoutMs) {
      bar.end();
      throw new Error(`${label}: only ${count()}/${total} after ${Math.round(timeoutMs / 1000)} s`);
    }
    bar.update(count());
    await new Promise((r) => setTimeout(r, 100));
  }
  bar.update(total);
  bar.end();
  return performance.now() - t0;
}

/**
 * pool runs `f` on every item of `items`, at most `n` at a time, in order of the items; resolves when
 * all are done. Rejects with the first rejection of `f` (the others already begun run on; catch
 * inside `f` to go on past a failure).
 */
export async function pool<T>(items: readonly T[], n: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) await f(items[next++]!);
    }),
  );
}

/** sleepUntil resolves at `atMs` on the performance.now() clock (milliseconds; at once when past): a paced run's "item i is due at t0 + i / rate". */
export async function sleepUntil(atMs: number): Promise<void> {
  const wait = atMs - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

/** The machine's CPU time so far from /proc/stat's first line: busy and all, in jiffies (every core). */
function machineJiffies(): { busy: number; all: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const all = f.reduce((a, b) => a + b, 0);
  return { busy: all - f[3]! - f[4]!, all }; // less idle and iowait
}

const kDockerNetnsDir = '/var/run/docker/netns';

/** The shared dockerd's network-namespace files (`/var/run/docker/netns`), or NaN when unreadable. */
function dockerNetnsCountIn(dir: string): number {
  try {
    return readdirSync(dir).length;
  } catch {
    return NaN;
  }
}

/**
 * netnsBaselineAfterCollection: the baseline for settle's `netnsBaseline`, taken once at a bench's
 * start. When a namespace file there is younger than 15 minutes (likely a container removed by the
 * bench run just before this one, whose namespace dockerd frees at its next collection), it first
 * waits for that collection (the count drops) or 65 s, with a progress line, so the first timed
 * run does not have it inside. Older files are left out of the wait: dockerd 20.10 never collects
 * the files of a daemon that ran before it (7 stayed on this machine for hours), and those of
 * long-running containers stay. Resolves with the count then (NaN when the directory is unreadable).
 */
export async function netnsBaselineAfterCollection(dir = kDockerNetnsDir): Promise<number> {
  const start = dockerNetnsCountIn(dir);
  let recent = 0;
  try {
    for (const name of readdirSync(dir)) {
      if (Date.now() - statSync(join(dir, name)).mtimeMs < 15 * 60_000) recent++;
    }
  } catch {
    return start;
  }
  if (recent === 0) return start;
  const bar = progress(
    "settle: waiting for dockerd to free an earlier run's network namespaces (its GC runs every 60 s), seconds of at most",
    65,
  );
  const t0 = performance.now();
  while (dockerNetnsCountIn(dir) >= start && performance.now() - t0 < 65_000) {
    bar.update(Math.round((performance.now() - t0) / 1000));
    await new Promise((r) => setTimeout(r, 250));
  }
  bar.update(Math.round((performance.now() - t0) / 1000)); // the seconds it took
  bar.end();
  if (dockerNetnsCountIn(dir) >= start)
    process.stderr.write(
      `bench: dockerd freed none of the ${recent} recent network namespaces in /var/run/docker/netns within 65 s (a slow or busy engine); going on with them counted in the baseline\n`,
    );
  return dockerNetnsCountIn(dir);
}

/**
 * settle waits, before a timed run, for the last run's teardown to be over, so it is not counted
 * in the next run (on 2026-12-06 the agent's second rep, run right after the floor's removal, was
 * 1.0–1.2 s slower than its first in every `--reps 2` run):
 * - with `netnsBaseline` (the shared engine's count when the bench began, from
 *   netnsBaselineAfterCollection), until dockerd has dropped the network namespaces of the removed
 *   containers. dockerd 20.10 leaves them to a garbage collection every 60 s, whose unmounts and
 *   the kernel's freeing of ~100 namespaces would otherwise land inside whichever run is under way;
 *   a run begun right after a collection ends before the next one (runs here take under 60 s).
 *   Containers of others started meanwhile keep the count up: then this waits until `timeoutMs`.
 *   `netnsDir`: another engine's namespace directory (a dockerd of the bench's own: `<exec-root>/netns`).
 * - then until the whole machine has been quiet for one second: busy CPU (every process and kernel
 *   thread, from /proc/stat) under `busyShare` (default 0.15) of all cores.
 * Gives up after `timeoutMs` (default 90 000 ms) and says so on stderr. Resolves with the
 * milliseconds waited.
 */
export async function settle(
  opts: { netnsBaseline?: number; netnsDir?: string; busyShare?: number; timeoutMs?: number } = {},
): Promise<number> {
  const { netnsBaseline = NaN, netnsDir = kDockerNetnsDir, busyShare = 0.15, timeoutMs = 90_000 } = opts;
  const dockerNetnsCount = () => dockerNetnsCountIn(netnsDir);
  const t0 = performance.now();
  const late = () => performance.now() - t0 > timeoutMs;
  if (dockerNetnsCount() > netnsBaseline) {
    const left = dockerNetnsCount() - netnsBaseline;
    const bar = progress("settle: the last run's network namespaces freed by dockerd (its GC runs every 60 s)", left);
    // Containers of others started meanwhile raise the count: never fewer than none freed.
    const freed = () => Math.max(0, left - Math.max(0, dockerNetnsCount() - netnsBaseline));
    while (dockerNetnsCount() > netnsBaseline && !late()) {
      bar.update(freed());
      await new Promise((r) => setTimeout(r, 250));
    }
    bar.update(freed()); // all at once, as dockerd frees them
    bar.end();
    if (late())
      process.stderr.write(
        `bench: ${dockerNetnsCount() - netnsBaseline} network namespaces of removed containers still in ${netnsDir} after ${Math.round(timeoutMs / 1000)} s; timing anyway\n`,
      );
  }
  for (;;) {
    const a = machineJiffies();
    await new Promise((r) => setTimeout(r, 1000));
    const b = machineJiffies();
    const share = (b.busy - a.busy) / Math.max(1, b.all - a.all);
    if (share < busyShare) return performance.now() - t0;
    if (late()) {
      process.stderr.write(
        `bench: the machine stayed busy (${Math.round(share * 100)} % of all cores over the last second) for ${Math.round(timeoutMs / 1000)} s; timing anyway\n`,
      );
      return performance.now() - t0;
    }
  }
}

/** stats of a sample (same unit as the input): p50, p90, p99, max. */
export function summary(values: number[]): { n: number; p50: number; p90: number; p99: number; max: number } {
  return {
    n: values.length,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : NaN,
  };
}

const kClkTck = 100; // USER_HZ on Linux x86-64: the unit of /proc/<pid>/stat's times

/** procCpuSeconds: utime + stime of `pid` (and, with `children`, cutime + cstime: the children it reaped), seconds; NaN if unreadable. */
function procCpuSeconds(pid: string, children: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number); // f[0] is field 3 (state)
    return (f[11]! + f[12]! + (children ? f[13]! + f[14]! : 0)) / kClkTck; // utime, stime, cutime, cstime (fields 14–17)
  } catch {
    return NaN;
  }
}

const readPid = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
};

/**
 * engineCpuSeconds: the CPU the shared Docker engine has used so far, seconds: `dockerd` (utime +
 * stime, from /var/run/docker.pid), `containerd` (/var/run/docker/containerd/containerd.pid) and
 * `shims` — every containerd-shim process with the children it reaped (the runc calls and the
 * processes a `docker exec` starts). A difference of two readings is a window's cost; a shim that
 * exited inside the window skews it (its CPU leaves the total: use engineCpuWindow). NaN where a
 * pid is unknown. For benches that run alone on the machine (another dockerd's shims would count).
 */
export function engineCpuSeconds(): { dockerd: number; containerd: number; shims: number } {
  const dockerd = readPid('/var/run/docker.pid');
  const containerd = readPid('/var/run/docker/containerd/containerd.pid');
  let shims = 0;
  for (const cpu of shimCpuSeconds().values()) shims += cpu;
  return {
    dockerd: dockerd ? procCpuSeconds(dockerd, false) : NaN,
    containerd: containerd ? procCpuSeconds(containerd, true) : NaN,
    shims,
  };
}

/**
 * The CPU seconds so far of each containerd-shim process (with the children it reaped), by PID;
 * with `address`, only the shims whose command line names it (`-address <containerd socket>`: one engine's).
 */
function shimCpuSeconds(address?: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('containerd-shim')) continue;
      if (address !== undefined && !readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(address)) continue;
      out.set(pid, procCpuSeconds(pid, true) || 0);
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * engineCpuWindow opens a window on the shared engine's CPU and returns its reader: the seconds
 * dockerd, containerd and the shims used since. Unlike a difference of engineCpuSeconds, a shim is
 * counted by PID: one alive at both ends counts its growth, a new one all of it, and one that
 * exited meanwhile nothing (shims are reparented to init, so their CPU leaves with them: a
 * difference of totals would subtract the CPU of shims still exiting from the last removal). So
 * remove nothing inside a window. NaN when a daemon's pid file is missing.
 */
export function engineCpuWindow(): () => number {
  return engineCpuWindowOf({
    dockerdPidFile: '/var/run/docker.pid',
    containerdPidFile: '/var/run/docker/containerd/containerd.pid',
  });
}

/**
 * EngineFiles: where one Docker engine's pids are: its dockerd's and its containerd's pid files,
 * and (for an engine other than the shared one) the containerd socket its shims name, so only its
 * own shims count.
 */
export interface EngineFiles {
  dockerdPidFile: string;
  containerdPidFile: string;
  shimAddress?: string;
}

/** engineCpuWindowOf: engineCpuWindow of the engine at `files` (seconds since the window opened; NaN when a pid file is missing). */
export function engineCpuWindowOf(files: EngineFiles): () => number {
  const daemons = () => {
    const dockerd = readPid(files.dockerdPidFile);
    const containerd = readPid(files.containerdPidFile);
    return (dockerd ? procCpuSeconds(dockerd, false) : NaN) + (containerd ? procCpuSeconds(containerd, true) : NaN);
  };
  const d0 = daemons();
  const shims0 = shimCpuSeconds(files.shimAddress);
  return () => {
    let shims = 0;
    for (const [pid, cpu] of shimCpuSeconds(files.shimAddress)) shims += cpu - (shims0.get(pid) ?? 0);
    return daemons() - d0 + shims;
  };
}

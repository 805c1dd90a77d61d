// bench cri-floor: the raw CRI floor beside the raw Docker floor (#40 item 6) — what no node agent
// can beat on each runtime. CRI: grpc-js itself (src/workers/runtime/cri) running N pods on the
// containerd of tools/lib/containerd.sh, each RunPodSandbox + CreateContainer + StartContainer
// (busybox `sleep 3600`), `concurrency` pods at a time; Docker: bench/raw-floor.ts (pause +
// busybox, 4 Engine API calls a pair). The two run one after the other at each concurrency, in one
// stream, so the machine's drift hits both alike. Prints a table, writes bench/results/cri-floor-*.json.
//
//   npm run bench -- cri-floor [--pods 100] [--concurrency 1,4,8,16,32] [--network node|pod] [--no-docker]
//
// --network node (default): host-network sandboxes, no CNI — the like of the Docker floor's network
// none; pod: each sandbox on the runtime's CNI bridge (kts-cri0), as a kubelet's pod is.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { kBusybox, parseIntList, pool, positiveInt, progress, table, writeResult } from './lib.js';
import { rawFloor, type RawFloorRun } from './raw-floor.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1,4,8,16,32' },
    network: { type: 'string', default: 'node' },
    'no-docker': { type: 'boolean', default: false },
  },
});
const pods = positiveInt('pods', args.pods);
const concurrencies = parseIntList('concurrency', args.concurrency!);
if (args.network !== 'node' && args.network !== 'pod') throw new Error(`--network must be node or pod, got ${JSON.stringify(args.network)}`);
const network = args.network;
/** The endpoint: KUBELET_TS_CRI_ENDPOINT, else the one tools/lib/containerd.sh wrote to .run/containerd.env. */
function criEndpoint(): string {
  if (process.env.KUBELET_TS_CRI_ENDPOINT) return process.env.KUBELET_TS_CRI_ENDPOINT;
  const file = join(import.meta.dirname, '..', basename(join(import.meta.dirname, '..')) === 'dist' ? '..' : '.', '.run', 'containerd.env');
  const line = existsSync(file) ? /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(readFileSync(file, 'utf8')) : null;
  if (!line) throw new Error(`no CRI endpoint: set KUBELET_TS_CRI_ENDPOINT or run tools/lib/containerd.sh up (it writes ${file})`);
  return line[1]!;
}
const endpoint = criEndpoint();

/** CriFloorRun: one CRI floor run; milliseconds from the first call to the first and last container started, and to every sandbox removed; this process's CPU per pod (ms). */
interface CriFloorRun { concurrency: number; firstRunningMs: number; allRunningMs: number; allRemovedMs: number; clientCpuMsPerPod: number }

/**
 * criFloor runs `pods` pods at `concurrency` through `rt`, labelled `kubelet-ts.bench=<runId>`, then
 * stops and removes every sandbox with that label (16 at a time). A failed call rejects (the
 * caller removes by the label).
 */
async function criFloor(rt: RemoteRuntimeService, concurrency: number, runId: string): Promise<CriFloorRun> {
  const labels = { 'kubelet-ts.bench': runId };
  const bar = progress(`raw CRI (concurrency ${concurrency}, network ${network}): pods started`, pods);
  let done = 0;
  let firstRunningMs = NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pool(Array.from({ length: pods }, (_, i) => i), concurrency, async (i) => {
    const config = {
      metadata: { name: `bench-${i}`, uid: `${runId}-${concurrency}-${i}`, namespace: 'kts-bench', attempt: 0 },
      labels,
      linux: { security_context: { namespace_options: { network: network === 'node' ? 'NODE' : 'POD', pid: 'CONTAINER' } } },
    } as const;
    const sandbox = await rt.runPodSandbox(config);
    const id = await rt.createContainer(sandbox, { metadata: { name: 'main', attempt: 0 }, image: { image: kBusybox }, command: ['sleep', '3600'], labels }, config);
    await rt.startContainer(id);
    if (done === 0) firstRunningMs = performance.now() - t0;
    bar.update(++done);
  });
  const allRunningMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  bar.end();
  const t1 = performance.now();
  await removeCriByLabel(rt, labels);
  return { concurrency, firstRunningMs, allRunningMs, allRemovedMs: performance.now() - t1, clientCpuMsPerPod: (cpu.user + cpu.system) / 1000 / pods };
}

/** removeCriByLabel stops and removes every sandbox carrying `labels` (and so its containers), 16 at a time; single failures are ignored. */
async function removeCriByLabel(rt: RemoteRuntimeService, labels: Record<string, string>): Promise<void> {
  const sandboxes = await rt.listPodSandbox({ label_selector: labels });
  await pool(sandboxes, 16, async (s) => {
    await rt.stopPodSandbox(s.id).catch(() => undefined);
    await rt.removePodSandbox(s.id).catch(() => undefined);
  });
}

const runId = `cri-floor-${randomBytes(4).toString('hex')}`;
const rt = new RemoteRuntimeService(endpoint);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const version = await rt.version('0.1.0');
const rows: { concurrency: number; cri: CriFloorRun; docker?: RawFloorRun }[] = [];
try {
  for (const c of concurrencies) {
    const cri = await criFloor(rt, c, `${runId}-c${c}`);
    const dockerRun = args['no-docker'] ? undefined : await rawFloor(docker, pods, c, `${runId}-d${c}`);
    rows.push({ concurrency: c, cri, docker: dockerRun });
  }
} finally {
  for (const c of concurrencies) await removeCriByLabel(rt, { 'kubelet-ts.bench': `${runId}-c${c}` }).catch(() => undefined);
  rt.close();
}

const perPod = (r: { allRunningMs: number } | undefined) => (r ? r.allRunningMs / pods : NaN);
const best = <T extends { allRunningMs: number }>(rs: (T | undefined)[]) => rs.filter((r): r is T => r !== undefined).sort((a, b) => a.allRunningMs - b.allRunningMs)[0];
const bestCri = best(rows.map((r) => r.cri));
const bestDocker = best(rows.map((r) => r.docker));
process.stdout.write(`\n${pods} pods each; CRI: ${version.runtime_name} ${version.runtime_version}, network ${network}; Docker: network none\n`);
process.stdout.write(`${table([
  ['concurrency', 'CRI ms/pod', 'CRI pods/s', 'Docker ms/pod', 'Docker pods/s', 'CRI client CPU ms/pod', 'Docker client CPU ms/pod'],
  ...rows.map((r) => [r.concurrency, perPod(r.cri).toFixed(1), (1000 / perPod(r.cri)).toFixed(1), perPod(r.docker).toFixed(1), (1000 / perPod(r.docker)).toFixed(1),
    r.cri.clientCpuMsPerPod.toFixed(2), (r.docker?.clientCpuMsPerPod ?? NaN).toFixed(2)]),
])}\n`);
process.stdout.write(`best: CRI ${perPod(bestCri).toFixed(1)} ms/pod at concurrency ${bestCri?.concurrency}; Docker ${perPod(bestDocker).toFixed(1)} ms/pod at concurrency ${bestDocker?.concurrency ?? '-'}\n`);
const file = writeResult('cri-floor', { pods, network, runtime: version, concurrencies, rows, best: { cri: bestCri, docker: bestDocker } });
process.stdout.write(`results: ${file}\n`);

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
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { parseIntList, positiveInt, table, writeResult } from './lib.js';
import { benchCriEndpoint, criFloor, removeCriByLabel, type CriFloorRun } from './cri-floor-run.js';
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
if (args.network !== 'node' && args.network !== 'pod')
  throw new Error(`--network must be node or pod, got ${JSON.stringify(args.network)}`);
const network = args.network;
const endpoint = benchCriEndpoint();

const runId = `cri-floor-${randomBytes(4).toString('hex')}`;
const rt = new RemoteRuntimeService(endpoint);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const version = await rt.version('0.1.0');
const rows: { concurrency: number; cri: CriFloorRun; docker?: RawFloorRun }[] = [];
try {
  for (const c of concurrencies) {
    const cri = await criFloor(rt, pods, c, `${runId}-c${c}`, network);
    const dockerRun = args['no-docker'] ? undefined : await rawFloor(docker, pods, c, `${runId}-d${c}`);
    rows.push({ concurrency: c, cri, docker: dockerRun });
  }
} finally {
  for (const c of concurrencies) await removeCriByLabel(rt, { 'kubelet-ts.bench': `${runId}-c${c}` }).catch(() => undefined);
  rt.close();
}

const perPod = (r: { allRunningMs: number } | undefined) => (r ? r.allRunningMs / pods : NaN);
const best = <T extends { allRunningMs: number }>(rs: (T | undefined)[]) =>
  rs.filter((r): r is T => r !== undefined).sort((a, b) => a.allRunningMs - b.allRunningMs)[0];
const bestCri = best(rows.map((r) => r.cri));
const bestDocker = best(rows.map((r) => r.docker));
process.stdout.write(
  `\n${pods} pods each; CRI: ${version.runtime_name} ${version.runtime_version}, network ${network}; Docker: network none\n`,
);
process.stdout.write(
  `${table([
    ['concurrency', 'CRI ms/pod', 'CRI pods/s', 'Docker ms/pod', 'Docker pods/s', 'CRI client CPU ms/pod', 'Docker client CPU ms/pod'],
    ...rows.map((r) => [
      r.concurrency,
      perPod(r.cri).toFixed(1),
      (1000 / perPod(r.cri)).toFixed(1),
      perPod(r.docker).toFixed(1),
      (1000 / perPod(r.docker)).toFixed(1),
      r.cri.clientCpuMsPerPod.toFixed(2),
      (r.docker?.clientCpuMsPerPod ?? NaN).toFixed(2),
    ]),
  ])}\n`,
);
process.stdout.write(
  `best: CRI ${perPod(bestCri).toFixed(1)} ms/pod at concurrency ${bestCri?.concurrency}; Docker ${perPod(bestDocker).toFixed(1)} ms/pod at concurrency ${bestDocker?.concurrency ?? '-'}\n`,
);
const file = writeResult('cri-floor', { pods, network, runtime: version, concurrencies, rows, best: { cri: bestCri, docker: bestDocker } });
process.stdout.write(`results: ${file}\n`);

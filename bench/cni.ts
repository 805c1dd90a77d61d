// bench cni: what one pod's network costs — the wall ms and the CPU ms (the agent's and the plugins')
// of a CNI ADD (loopback + bridge/host-local + portmap, the agent's default list) and of a DEL, for N
// network namespaces, one at a time and 4 at a time. Real plugins (/usr/lib/cni), real netns, a
// bridge and a subnet of its own (removed at the end). Needs root. Prints a table, writes
// bench/results/cni-*.json.
//
//   npm run bench -- cni [--pods 20] [--concurrency 4] [--host-ports]
//
// CPU: the agent's is process.cpuUsage(); the plugins' is the reaped children's utime+stime from
// /proc/self/stat (clock ticks at 100 Hz), both per operation (the phase's total / N).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultNetworkConfigList } from '../src/io/cni-config.js';
import { newCniPodNetwork } from '../src/workers/network/cni-pod-network.js';
import type { PodNetworkSetUp } from '../src/workers/network/pod-network.js';
import { pool, positiveInt, summary, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '20' },
    concurrency: { type: 'string', default: '4' },
    'host-ports': { type: 'boolean', default: false },
  },
});
const N = Math.min(positiveInt('pods', args.pods), 250);
const concurrency = positiveInt('concurrency', args.concurrency);
if (process.getuid?.() !== 0) throw new Error('bench cni needs root (network namespaces, a bridge, iptables)');

const id = randomBytes(3).toString('hex');
const routes = execFileSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' });
const x = [...Array(254).keys()].map((i) => i + 1).find((i) => !routes.includes(`10.251.${i}.`));
if (x === undefined) throw new Error('no free 10.251.x.0/24');
const subnet = `10.251.${x}.0/24`;
const bridge = `ktsbn${id}`;
const dir = await mkdtemp(join(tmpdir(), 'kts-bench-cni-'));
const conf = join(dir, 'net.d', 'bench.conflist');
await mkdir(join(dir, 'net.d'));
await writeFile(
  conf,
  JSON.stringify(defaultNetworkConfigList({ name: `kts-bench-${id}`, bridge, subnet, dataDir: join(dir, 'networks'), masquerade: false })),
);
const net = newCniPodNetwork({
  plugin: 'cni',
  binDirs: ['/usr/lib/cni'],
  confFile: conf,
  cacheDir: join(dir, 'cache'),
  hostPortIp: '127.0.0.1',
});
const ns = Array.from({ length: N }, (_, i) => `kts-bench-${id}-${i}`);

const childCpuMs = (): number => {
  const f = readFileSync('/proc/self/stat', 'utf8')
    .slice(readFileSync('/proc/self/stat', 'utf8').lastIndexOf(')') + 2)
    .split(' ');
  return ((Number(f[13]) + Number(f[14])) * 1000) / 100; // cutime, cstime (fields 16, 17)
};
const selfCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Phase {
  op: 'ADD' | 'DEL';
  concurrency: number;
  wallMs: ReturnType<typeof summary>;
  totalWallMs: number;
  agentCpuMsPerOp: number;
  pluginCpuMsPerOp: number;
}
const phases: Phase[] = [];

async function phase(op: 'ADD' | 'DEL', c: number, round: number): Promise<void> {
  const ms: number[] = [];
  const [s0, c0, t0] = [selfCpuMs(), childCpuMs(), performance.now()];
  await pool([...ns.keys()], c, async (i) => {
    const p: PodNetworkSetUp = {
      sandboxId: `${round}${id}${String(i).padStart(4, '0')}`.padEnd(64, '0'),
      podUid: `uid-${i}`,
      podName: `p-${i}`,
      podNamespace: 'bench',
      netnsPath: `/var/run/netns/${ns[i]!}`,
      portMappings: args['host-ports'] ? [{ hostPort: 30000 + i, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' }] : [],
    };
    const t = performance.now();
    if (op === 'ADD') await net.setUpPod(p);
    else await net.tearDownPod(p, p.netnsPath);
    ms.push(performance.now() - t);
  });
  const [s1, c1, t1] = [selfCpuMs(), childCpuMs(), performance.now()];
  phases.push({
    op,
    concurrency: c,
    wallMs: summary(ms),
    totalWallMs: t1 - t0,
    agentCpuMsPerOp: (s1 - s0) / N,
    pluginCpuMsPerOp: (c1 - c0) / N,
  });
}

try {
  for (const n of ns) execFileSync('ip', ['netns', 'add', n]);
  let round = 1;
  for (const c of [1, concurrency]) {
    await phase('ADD', c, round);
    await phase('DEL', c, round);
    round++;
  }
} finally {
  await net.reconcile(new Set()).catch(() => {});
  for (const n of ns) execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
  try {
    execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
  } catch {
    // not created
  }
  await rm(dir, { recursive: true, force: true });
}

console.log(
  table([
    ['op', 'concurrency', 'p50 ms', 'p99 ms', 'total s', 'agent CPU ms/op', 'plugins CPU ms/op'],
    ...phases.map((p) => [p.op, p.concurrency, p.wallMs.p50, p.wallMs.p99, p.totalWallMs / 1000, p.agentCpuMsPerOp, p.pluginCpuMsPerOp]),
  ]),
);
console.log(`results: ${writeResult('cni', { pods: N, hostPorts: args['host-ports'], subnet, phases })}`);

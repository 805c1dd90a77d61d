// bench etcd: N pods across A agents (in-process, one dockerd) through the three-member etcd cluster
// of tools/lib/etcd.sh — the cluster-mode counterpart of the density bench. All pods are put at
// once under {prefix}/pods/{node}/default/{name}; prints the time until every pod's written-back
// status in etcd says Running (all containers ready), and the etcd writes per pod (podstatus puts
// counted from a watch on the status prefix, node key writes separately). Then deletes the pods
// and times until every status key is gone. Writes bench/results/etcd-*.json.
//
//   npm run bench -- etcd [--pods 200] [--agents 3] [--workers 2] [--qps 50] [--burst 100]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { etcdKeys, newEtcdClient } from '../src/etcd/client.js';
import type { PodStatus } from '../src/shared/api.js';
import { kBusybox, positiveInt, startBenchAgent, table, waitUntil, writeResult, type BenchAgent } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '200' },
    agents: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    qps: { type: 'string', default: '50' },
    burst: { type: 'string', default: '100' },
  },
});
const N = positiveInt('pods', args.pods);
const A = positiveInt('agents', args.agents);
const workers = positiveInt('workers', args.workers);
const qps = positiveInt('qps', args.qps);
const burst = positiveInt('burst', args.burst);
const root = join(import.meta.dirname, '..');

execFileSync('bash', [join(root, 'tools/lib/etcd.sh'), 'up'], { stdio: ['ignore', 'inherit', 'inherit'] });
const env = Object.fromEntries(
  readFileSync(join(root, '.run/etcd.env'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const servers = String(env.KUBELET_TS_ETCD_CLUSTER).split(',');
const prefix = `/kts-bench/etcd-${randomBytes(3).toString('hex')}`;
const keys = etcdKeys(prefix);
const admin = newEtcdClient({ servers });
const docker = new Docker({ socketPath: '/var/run/docker.sock' });

const phases = new Map<string, boolean>(); // podstatus key → Running and ready
let statusPuts = 0;
let statusDeletes = 0;
let nodePuts = 0;
const watcher = await admin.watch().prefix(`${prefix}/`).create();
watcher.on('put', (kv) => {
  const key = kv.key.toString();
  if (key.startsWith(`${prefix}/nodes/`)) nodePuts++;
  if (!key.startsWith(`${prefix}/podstatus/`)) return;
  statusPuts++;
  const s = JSON.parse(kv.value.toString()) as PodStatus;
  phases.set(key, s.phase === 'Running' && (s.containerStatuses ?? []).length > 0 && s.containerStatuses!.every((c) => c.ready));
});
watcher.on('delete', (kv) => {
  const key = kv.key.toString();
  if (!key.startsWith(`${prefix}/podstatus/`)) return;
  statusDeletes++;
  phases.delete(key);
});

const agents: BenchAgent[] = [];
try {
  for (let i = 0; i < A; i++) {
    agents.push(
      await startBenchAgent('etcd', {
        workers,
        etcdServers: servers,
        etcdPrefix: prefix,
        syncFrequencyMs: 60_000,
        logLevel: process.env.KUBELET_TS_BENCH_LOG ?? 'warn',
        etcdQps: qps,
        etcdBurst: burst,
      } as never),
    );
  }
  const podValue = (name: string) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: kBusybox, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
      },
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      admin
        .put(keys.pod(agents[i % A]!.nodeName, 'default', `etcd-${i}`))
        .value(podValue(`etcd-${i}`))
        .exec(),
    ),
  );
  const putMs = performance.now() - t0;
  await waitUntil('statuses Running in etcd', N, () => [...phases.values()].filter(Boolean).length);
  const runningMs = performance.now() - t0;
  const putsUntilRunning = statusPuts;

  const t1 = performance.now();
  await admin.delete().prefix(keys.allPodsPrefix()).exec();
  await waitUntil('status keys removed', N, () => N - phases.size);
  const removedMs = performance.now() - t1;

  const result = {
    date: new Date().toISOString(),
    pods: N,
    agents: A,
    workers,
    qps,
    burst,
    etcdMembers: servers.length,
    putAllPodsMs: Math.round(putMs),
    allStatusesRunningMs: Math.round(runningMs),
    allStatusKeysRemovedMs: Math.round(removedMs),
    statusPutsPerPodUntilRunning: +(putsUntilRunning / N).toFixed(2),
    statusPutsPerPodTotal: +(statusPuts / N).toFixed(2),
    statusDeletes,
    nodeKeyPuts: nodePuts,
  };
  process.stdout.write(
    table([
      ['metric', 'value'],
      ['pods / agents / etcd members', `${N} / ${A} / ${servers.length}`],
      ['put all desired pods (ms)', result.putAllPodsMs],
      ['all statuses Running in etcd (ms)', result.allStatusesRunningMs],
      ['status puts per pod until Running', result.statusPutsPerPodUntilRunning],
      ['status puts per pod (whole run)', result.statusPutsPerPodTotal],
      ['all status keys removed after delete (ms)', result.allStatusKeysRemovedMs],
      ['node key writes', nodePuts],
    ]),
  );
  process.stdout.write(`wrote ${writeResult('etcd', result)}\n`);
} finally {
  await Promise.all(agents.map((a) => a.stop().catch(() => {})));
  for (const a of agents) {
    const list = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${a.nodeName}`] } });
    await Promise.all(
      list.map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => {}),
      ),
    );
  }
  await watcher.cancel().catch(() => {});
  await admin
    .delete()
    .prefix(`${prefix}/`)
    .exec()
    .catch(() => {});
  admin.close();
}

// bench density: N static pods through the manifest directory, all at once, against the real
// dockerd, and — in the same run — the raw floor: dockerode creating and starting the same
// sandbox + container pairs with the same concurrency. Prints a table, writes bench/results/density-*.json.
//
//   npm run bench -- density [--pods 50] [--workers 2]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { pino } from 'pino';
import { newAgent } from '../src/main/agent.js';
import { resolveAgentOptions } from '../src/main/agent-options.js';
import type { Pod } from '../src/shared/api.js';
import { percentile, progress, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: { pods: { type: 'string', default: '50' }, workers: { type: 'string', default: '2' } },
});
const N = Number(args.pods);
const workers = Number(args.workers);
if (!Number.isInteger(N) || N < 1) throw new Error(`--pods must be an integer >= 1, got ${args.pods}`);
const kBusybox = 'kubelet-ts/busybox:1.35';
const kPause = 'kubelet-ts/pause:1.0';
const kTasksPerWorker = 16; // as src/main/agent.ts
const concurrency = workers * kTasksPerWorker;
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
const runId = randomBytes(3).toString('hex');
const nodeName = `bench-density-${runId}`;

const isRunning = (pod: Pod) => pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).every((c) => c.ready);

async function removeByLabel(label: string): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [label] } });
  await Promise.all(list.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => {})));
}

async function agentRun() {
  const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-'));
  const manifests = join(base, 'manifests');
  await import('node:fs/promises').then((fs) => fs.mkdir(manifests));
  const options = resolveAgentOptions({ nodeName, podManifestPath: manifests, rootDir: join(base, 'root'), port: 0, workers, relistPeriodMs: 1000, syncFrequencyMs: 60_000 });
  const agent = newAgent(options, { logger: pino({ level: 'silent' }), serve: false });
  await agent.start();
  const accepted = new Map<string, number>();
  const running = new Map<string, number>();
  let removed = 0;
  agent.statusManager.subscribe((change) => {
    const t = performance.now();
    if (change.type === 'ADDED') accepted.set(change.uid, t);
    else if (change.type === 'DELETED') removed++;
    if (change.type !== 'DELETED' && isRunning(change.pod) && !running.has(change.uid)) running.set(change.uid, t);
  });
  const docs = Array.from({ length: N }, (_, i) => `apiVersion: v1
kind: Pod
metadata: {name: density-${i}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "${kBusybox}", command: ["sleep", "3600"]}]
`).join('---\n');
  const bar = progress('agent: pods Running', N);
  const t0 = performance.now();
  await writeFile(join(manifests, 'density.yaml'), docs);
  while (running.size < N) { bar.update(running.size); await new Promise((r) => setTimeout(r, 100)); }
  const allRunningMs = performance.now() - t0;
  bar.end();
  const latencies = [...running].map(([uid, t]) => t - (accepted.get(uid) ?? t0));
  const bar2 = progress('agent: pods removed', N);
  const t1 = performance.now();
  await rm(join(manifests, 'density.yaml'));
  while (removed < N) { bar2.update(removed); await new Promise((r) => setTimeout(r, 100)); }
  const allRemovedMs = performance.now() - t1;
  bar2.end();
  await agent.stop();
  await removeByLabel(`kubelet-ts.node-name=${nodeName}`);
  await rm(base, { recursive: true, force: true });
  return { allRunningMs, allRemovedMs, latencies };
}

async function rawRun() {
  const label = { 'kubelet-ts.bench': runId };
  const bar = progress('raw dockerode: pairs started', N);
  let done = 0;
  let next = 0;
  const t0 = performance.now();
  const one = async (i: number) => {
    const sandbox = await docker.createContainer({ name: `bench-raw-${runId}-${i}-POD`, Image: kPause, Labels: label, HostConfig: { NetworkMode: 'none', IpcMode: 'shareable' } });
    await sandbox.start();
    const app = await docker.createContainer({
      name: `bench-raw-${runId}-${i}-main`, Image: kBusybox, Cmd: ['sleep', '3600'], Labels: label,
      HostConfig: { NetworkMode: `container:${sandbox.id}`, IpcMode: `container:${sandbox.id}` },
    });
    await app.start();
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, N) }, async () => {
    while (next < N) { await one(next++); bar.update(++done); }
  }));
  const allRunningMs = performance.now() - t0;
  bar.end();
  const t1 = performance.now();
  await removeByLabel(`kubelet-ts.bench=${runId}`);
  return { allRunningMs, allRemovedMs: performance.now() - t1 };
}

try {
  const agent = await agentRun();
  const raw = await rawRun();
  const ratio = agent.allRunningMs / raw.allRunningMs;
  const s = (ms: number) => ms / 1000;
  console.log(`\ndensity: ${N} pods (sandbox + 1 container each), ${workers} worker threads, concurrency ${concurrency}, ${new Date().toISOString()}`);
  console.log(table([
    ['measure', 'agent (s)', 'raw dockerode (s)', 'ratio'],
    ['time to all Running', s(agent.allRunningMs), s(raw.allRunningMs), ratio],
    ['time to all removed', s(agent.allRemovedMs), s(raw.allRemovedMs), agent.allRemovedMs / raw.allRemovedMs],
    ['pod startup p50', s(percentile(agent.latencies, 50)), '', ''],
    ['pod startup p90', s(percentile(agent.latencies, 90)), '', ''],
    ['pod startup p99', s(percentile(agent.latencies, 99)), '', ''],
    ['pod startup max', s(Math.max(...agent.latencies)), '', ''],
  ]));
  const file = writeResult('density', {
    date: new Date().toISOString(), pods: N, workers, concurrency,
    agent: { allRunningMs: agent.allRunningMs, allRemovedMs: agent.allRemovedMs, startupMs: { p50: percentile(agent.latencies, 50), p90: percentile(agent.latencies, 90), p99: percentile(agent.latencies, 99), max: Math.max(...agent.latencies) } },
    raw, ratioAllRunning: ratio,
  });
  console.log(`ratio agent/raw (time to all Running): ${ratio.toFixed(2)}\nresults: ${file}`);
} finally {
  await removeByLabel(`kubelet-ts.node-name=${nodeName}`);
  await removeByLabel(`kubelet-ts.bench=${runId}`);
}

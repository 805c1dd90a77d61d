// The raw CRI floor's runs (issue #40 item 6), shared by bench cri-floor, density and interleaved:
// grpc-js itself (src/workers/runtime/cri) making pod sandboxes and their containers on the
// containerd of tools/lib/containerd.sh — RunPodSandbox + CreateContainer + StartContainer (busybox
// `sleep 3600`) — what no node agent on that runtime can beat; the CRI counterpart of
// bench/raw-floor.ts (dockerode's 4 Engine API calls a pair). The calls are the ones the kubelet's
// kuberuntime makes for a one-container pod (kuberuntime_sandbox.go, kuberuntime_container.go).
import { basename, join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import type { RemoteRuntimeService } from '../src/workers/runtime/cri/remote-runtime.js';
import { onInterrupt } from './interrupt.js';
import { kBusybox, pool, progress } from './lib.js';

/**
 * benchCriEndpoint: the CRI endpoint (`unix:///…`): KUBELET_TS_CRI_ENDPOINT, else the one
 * tools/lib/containerd.sh wrote to .run/containerd.env.
 * @throws Error saying how to start containerd when neither names one.
 */
export function benchCriEndpoint(): string {
  if (process.env.KUBELET_TS_CRI_ENDPOINT) return process.env.KUBELET_TS_CRI_ENDPOINT;
  const file = join(import.meta.dirname, '..', basename(join(import.meta.dirname, '..')) === 'dist' ? '..' : '.', '.run', 'containerd.env');
  const line = existsSync(file) ? /^KUBELET_TS_CRI_ENDPOINT=(.+)$/m.exec(readFileSync(file, 'utf8')) : null;
  if (!line) throw new Error(`no CRI endpoint: set KUBELET_TS_CRI_ENDPOINT or run tools/lib/containerd.sh up (it writes ${file})`);
  return line[1]!;
}

/** CriNetwork: `node` — host-network sandboxes, no CNI (the like of the Docker floor's network none); `pod` — the runtime's CNI bridge. */
export type CriNetwork = 'node' | 'pod';

/**
 * CriFloorRun: one CRI floor run; milliseconds from the first call to the first and last container
 * started, and to every sandbox removed; this process's CPU per pod (ms: grpc-js, the floor's client cost).
 */
export interface CriFloorRun {
  concurrency: number;
  firstRunningMs: number;
  allRunningMs: number;
  allRemovedMs: number;
  clientCpuMsPerPod: number;
}

/**
 * startCriPod runs one pod as the floor does: RunPodSandbox (`name`, `uid`, `labels`, `network`),
 * CreateContainer `main` (busybox `sleep 3600`), StartContainer — 3 CRI calls one after the other.
 * @throws the CRI client's AgentError of a failed call (the caller removes by the labels).
 */
export async function startCriPod(
  rt: RemoteRuntimeService,
  name: string,
  uid: string,
  labels: Record<string, string>,
  network: CriNetwork,
): Promise<void> {
  const config = {
    metadata: { name, uid, namespace: 'kts-bench', attempt: 0 },
    labels,
    linux: { security_context: { namespace_options: { network: network === 'node' ? 'NODE' : 'POD', pid: 'CONTAINER' } } },
  } as const;
  const sandbox = await rt.runPodSandbox(config);
  const id = await rt.createContainer(
    sandbox,
    { metadata: { name: 'main', attempt: 0 }, image: { image: kBusybox }, command: ['sleep', '3600'], labels },
    config,
  );
  await rt.startContainer(id);
}

/**
 * criFloor runs `pods` pods at `concurrency` through `rt`, labelled `kubelet-ts.bench=<runId>`, with
 * a progress line, then stops and removes every sandbox with that label (16 at a time; also on
 * SIGINT/SIGTERM, bench/interrupt.ts).
 * @throws as startCriPod (the caller removes by the label).
 */
export async function criFloor(
  rt: RemoteRuntimeService,
  pods: number,
  concurrency: number,
  runId: string,
  network: CriNetwork,
): Promise<CriFloorRun> {
  const labels = { 'kubelet-ts.bench': runId };
  const unregister = onInterrupt(() => removeCriByLabel(rt, labels));
  const bar = progress(`raw CRI (concurrency ${concurrency}, network ${network}): pods started`, pods);
  let done = 0;
  let firstRunningMs = NaN;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await pool(
    Array.from({ length: pods }, (_, i) => i),
    concurrency,
    async (i) => {
      await startCriPod(rt, `bench-${i}`, `${runId}-${concurrency}-${i}`, labels, network);
      if (done === 0) firstRunningMs = performance.now() - t0;
      bar.update(++done);
    },
  );
  const allRunningMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  bar.end();
  const t1 = performance.now();
  await removeCriByLabel(rt, labels);
  unregister();
  return {
    concurrency,
    firstRunningMs,
    allRunningMs,
    allRemovedMs: performance.now() - t1,
    clientCpuMsPerPod: (cpu.user + cpu.system) / 1000 / pods,
  };
}

/**
 * removeCriByLabel stops and removes every sandbox carrying `labels` (and so its containers), 16 at
 * a time, and resolves with how many there were; single failures are ignored (already gone).
 */
export async function removeCriByLabel(rt: RemoteRuntimeService, labels: Record<string, string>): Promise<number> {
  const sandboxes = await rt.listPodSandbox({ label_selector: labels });
  await pool(sandboxes, 16, async (s) => {
    await rt.stopPodSandbox(s.id).catch(() => undefined);
    await rt.removePodSandbox(s.id).catch(() => undefined);
  });
  return sandboxes.length;
}

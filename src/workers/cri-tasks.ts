/**
 * INTERIM (issue #40): the pool tasks a CRI runtime (`--container-runtime-endpoint`) answers
 * before kuberuntime speaks the CRI — the runtime status check (the kubelet's updateRuntimeUp:
 * CRI Status, RuntimeReady; pkg/kubelet/kubelet.go) and the stats collection
 * (stats/collect-cri-stats.ts). Every other task kind (syncs, kills, relists, probes, GC) rejects
 * with ERR_RUNTIME "not implemented for CRI runtimes yet", which the agent reports as a failed
 * task; nothing is started or touched. sync.worker.ts hands a 'remote' bootstrap here; the lead
 * folds this into the sync worker when kuberuntime's CRI syncer lands. Worker threads only.
 */
import { AgentError, serializeError } from '../shared/errors.js';
import { kDefaultNodeSandboxSettings, PROTOCOL_VERSION, type WorkerBootstrap, type WorkerResult, type WorkerResultMap, type WorkerTask } from '../shared/messages.js';
import { getRuntime, type NodeRuntime } from './runtime/node-runtime.js';
import { collectCriStats } from './stats/collect-cri-stats.js';

/**
 * runtimeReady: resolves when the runtime's Status has RuntimeReady true, as updateRuntimeUp checks it.
 * @throws AgentError ERR_RUNTIME `runtime not ready: RuntimeReady=false reason:… message:…`; the Status call's own errors.
 */
export async function runtimeReady(nr: Pick<NodeRuntime, 'runtime'>): Promise<void> {
  const st = await nr.runtime.status();
  const c = st.status?.conditions.find((x) => x.type === 'RuntimeReady');
  if (!c?.status) throw new AgentError('ERR_RUNTIME', `runtime not ready: RuntimeReady=${c ? 'false' : 'missing'} reason:${c?.reason ?? ''} message:${c?.message ?? ''}`);
}

/**
 * createCriTaskHandler: the task handler of a pool thread whose bootstrap names runtime 'remote'
 * (see file doc); `nr` defaults to this thread's NodeRuntime. Never rejects: `{ok:false}` carries the error.
 */
export function createCriTaskHandler(b: WorkerBootstrap, nr: NodeRuntime = getRuntime(b), now: () => number = Date.now): (task: WorkerTask) => Promise<WorkerResult> {
  const sandbox = { ...kDefaultNodeSandboxSettings, ...b.sandbox };
  return async (task) => {
    const kind = (task as { kind?: unknown } | null)?.kind as keyof WorkerResultMap;
    try {
      if (task?.protocol !== PROTOCOL_VERSION) throw new AgentError('ERR_PROTOCOL', `task protocol ${JSON.stringify(task?.protocol)} does not match the worker's ${PROTOCOL_VERSION}`);
      switch (task.kind) {
        case 'runtimeStatus':
          await runtimeReady(nr);
          return { ok: true, kind: 'runtimeStatus', value: { observedAtMs: now() } };
        case 'stats':
          return { ok: true, kind: 'stats', value: await collectCriStats({ runtime: nr.runtime, images: nr.images, rootDir: b.rootDir, cgroupRoot: sandbox.cgroupsPerQOS ? sandbox.cgroupRoot : '', now }, task) };
        default:
          throw new AgentError('ERR_RUNTIME', `${String(kind)}: not implemented for CRI runtimes yet (issue #40)`);
      }
    } catch (err) {
      return { ok: false, kind, error: serializeError(err) };
    }
  };
}

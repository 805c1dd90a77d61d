/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_manager.go GetPodStatus (getSandboxIDByPodUID,
 * PodSandboxStatus, determinePodSandboxIPs, getPodContainerStatuses) and of
 * kuberuntime_container.go toKubeContainerStatus, over the CRI: everything of one pod UID as the
 * RuntimePod of shared/runtime-pod.ts (kubecontainer.PodStatus) — times from nanoseconds to
 * milliseconds, `CONTAINER_*` to the state word, reason and message as the runtime says them,
 * hash and restart count from the annotations (labels.ts). The relist of the PLEG
 * (generic.go relist: GetPods(true)) is here too: ListPodSandbox + ListContainers.
 */
import { realClock, type Clock } from '../../shared/clock.js';
import { isNotFound } from '../../shared/errors.js';
import type { RelistContainer, RelistResult } from '../../shared/sync-tasks.js';
import type { RuntimeContainer, RuntimeContainerState, RuntimePod } from '../../shared/runtime-pod.js';
import { kDefaultTerminationGracePeriodSeconds } from '../../shared/pod-policy.js';
import type { RuntimeService } from '../runtime/cri/services.js';
import type { Container, ContainerState, ContainerStatus, PodSandbox, PodSandboxStatus } from '../runtime/cri/types.js';
import { getContainerInfoFromAnnotations, nodeSelector } from './labels.js';
import { kContainerNameLabel, kPodInfraContainerName, kPodNameLabel, kPodNamespaceLabel, kPodUidLabel } from '../kubetypes/label-keys.js';

/** nsToMs: a CRI timestamp (nanoseconds since the epoch; 0 = not yet) in milliseconds. */
export function nsToMs(ns: number): number {
  return ns > 0 ? Math.floor(ns / 1e6) : 0;
}

/** toRuntimeState: `CONTAINER_CREATED` → created, `_RUNNING` → running, `_EXITED` → exited, else unknown (toKubeContainerState). */
export function criToRuntimeState(state: ContainerState): RuntimeContainerState {
  if (state === 'CONTAINER_CREATED') return 'created';
  if (state === 'CONTAINER_RUNNING') return 'running';
  if (state === 'CONTAINER_EXITED') return 'exited';
  return 'unknown';
}

/**
 * sandboxToRuntimeContainer: a sandbox as the RuntimePod's sandbox entry: name `POD`, attempt =
 * restartCount = metadata.attempt, `running` when SANDBOX_READY else `exited`, hash from the
 * sandbox's `io.kubernetes.container.hash` annotation (sandboxHash).
 */
export function sandboxToRuntimeContainer(s: PodSandbox | PodSandboxStatus): RuntimeContainer {
  const attempt = s.metadata?.attempt ?? 0;
  return {
    id: s.id,
    name: kPodInfraContainerName,
    sandbox: true,
    attempt,
    state: s.state === 'SANDBOX_READY' ? 'running' : 'exited',
    hash: getContainerInfoFromAnnotations(s.annotations).hash,
    restartCount: attempt,
    image: '',
    imageId: '',
    createdAtMs: nsToMs(s.created_at),
    startedAtMs: 0,
    finishedAtMs: 0,
    exitCode: 0,
    reason: '',
    message: '',
    sandboxId: '',
  };
}

/**
 * statusToRuntimeContainer: a ContainerStatus (of a container of sandbox `sandboxId`) as a
 * RuntimeContainer (toKubeContainerStatus): the image as the pod named it
 * (`user_specified_image`, else the runtime's), `image_ref` as its ID, exit code, reason and
 * message only once exited.
 */
export function statusToRuntimeContainer(s: ContainerStatus, sandboxId: string): RuntimeContainer {
  const info = getContainerInfoFromAnnotations(s.annotations);
  const state = criToRuntimeState(s.state);
  const exited = state === 'exited';
  return {
    id: s.id,
    name: s.metadata?.name ?? s.labels[kContainerNameLabel] ?? '',
    sandbox: false,
    attempt: s.metadata?.attempt ?? info.restartCount,
    state,
    hash: info.hash,
    restartCount: info.restartCount,
    image: s.image?.user_specified_image || s.image?.image || '',
    imageId: s.image_ref,
    createdAtMs: nsToMs(s.created_at),
    startedAtMs: nsToMs(s.started_at),
    finishedAtMs: exited ? nsToMs(s.finished_at) : 0,
    exitCode: exited ? s.exit_code : 0,
    reason: exited ? s.reason : '',
    message: exited ? s.message : '',
    sandboxId,
  };
}

function newestFirst(a: RuntimeContainer, b: RuntimeContainer): number {
  return b.createdAtMs - a.createdAtMs || b.attempt - a.attempt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** A pod as read from the CRI: its RuntimePod and the config labels/annotations of its newest sandbox. */
export interface CriPodRead {
  runtimePod: RuntimePod | null;
  /** Annotations of each container, by ID (the termination message policy, the preStop handler). */
  annotations: Map<string, Record<string, string>>;
}

async function ifPresent<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

/**
 * getCriRuntimePod, as GetPodStatus: the sandboxes (ListPodSandbox) and containers
 * (ListContainers) of pod `uid` on this node (`label_selector`: nodeSelector), the status of each
 * (in parallel; one removed meanwhile is skipped), the newest sandbox's creation time and the pod
 * IP from its PodSandboxStatus when it is running (`status.network.ip`; '' for a host-network sandbox). Null RuntimePod when the
 * runtime has nothing of the pod.
 * @throws AgentError from the runtime (ERR_RUNTIME_UNAVAILABLE, …), never not-found.
 */
export async function getCriRuntimePod(runtime: RuntimeService, nodeName: string, uid: string): Promise<CriPodRead> {
  const selector = nodeSelector(nodeName, uid);
  const [sandboxes, containers] = await Promise.all([
    runtime.listPodSandbox({ label_selector: selector }),
    runtime.listContainers({ label_selector: selector }),
  ]);
  const annotations = new Map<string, Record<string, string>>();
  if (sandboxes.length === 0 && containers.length === 0) return { runtimePod: null, annotations };
  const sbs = sandboxes.map(sandboxToRuntimeContainer).sort(newestFirst);
  const [newestStatus, statuses] = await Promise.all([
    sbs[0]?.state === 'running' ? ifPresent(runtime.podSandboxStatus(sbs[0].id)) : Promise.resolve(null),
    Promise.all(
      containers.map(async (c: Container) => {
        const st = (await ifPresent(runtime.containerStatus(c.id)))?.status;
        if (!st) return null;
        annotations.set(c.id, st.annotations);
        return statusToRuntimeContainer(st, c.pod_sandbox_id);
      }),
    ),
  ]);
  // The newest sandbox's creation time as its status says it (GetPodStatus reads each sandbox by
  // PodSandboxStatus): dockershim lists it in whole seconds and gives the exact one in the status.
  // Its state stays the list's (a running sandbox whose network is gone is re-created by the plan).
  if (newestStatus?.status) sbs[0] = { ...sbs[0], createdAtMs: nsToMs(newestStatus.status.created_at) };
  const cs = statuses.filter((c): c is RuntimeContainer => c !== null).sort(newestFirst);
  const meta = sandboxes.slice().sort((a, b) => b.created_at - a.created_at)[0]?.labels ?? containers[0]?.labels ?? {};
  const newestAnnotations = sandboxes.slice().sort((a, b) => b.created_at - a.created_at)[0]?.annotations ?? {};
  const grace =
    getContainerInfoFromAnnotations(newestAnnotations).terminationGracePeriodSeconds ??
    getContainerInfoFromAnnotations(cs[0] ? annotations.get(cs[0].id) : {}).terminationGracePeriodSeconds;
  return {
    runtimePod: {
      uid,
      name: meta[kPodNameLabel] ?? '',
      namespace: meta[kPodNamespaceLabel] ?? '',
      sandboxes: sbs,
      containers: cs,
      podIp: newestStatus?.status?.state === 'SANDBOX_READY' ? (newestStatus.status.network?.ip ?? '') : '',
      terminationGracePeriodSeconds: grace ?? kDefaultTerminationGracePeriodSeconds,
    },
    annotations,
  };
}

/**
 * criRelist, as the PLEG's relist (generic.go, GetPods(true)): every sandbox and container of this
 * node (ListPodSandbox + ListContainers, filtered on `kubelet-ts.node-name`), no status calls,
 * with the time taken before the calls (epoch ms). Sandboxes are listed as containers named `POD`.
 * @throws AgentError from the runtime (ERR_RUNTIME_UNAVAILABLE when it is down).
 */
export async function criRelist(
  runtime: RuntimeService,
  nodeName: string,
  clock: Clock = realClock,
  withPodNames = false,
): Promise<RelistResult> {
  const observedAtMs = clock.now();
  const selector = nodeSelector(nodeName);
  const [sandboxes, containers] = await Promise.all([
    runtime.listPodSandbox({ label_selector: selector }),
    runtime.listContainers({ label_selector: selector }),
  ]);
  const entry = (id: string, labels: Record<string, string>, name: string, state: RuntimeContainerState): RelistContainer => {
    const c: RelistContainer = { id, podUid: labels[kPodUidLabel] ?? '', name, state };
    if (withPodNames) {
      c.podNamespace = labels[kPodNamespaceLabel] ?? '';
      c.podName = labels[kPodNameLabel] ?? '';
    }
    return c;
  };
  return {
    observedAtMs,
    containers: [
      ...sandboxes.map((s) => entry(s.id, s.labels, kPodInfraContainerName, s.state === 'SANDBOX_READY' ? 'running' : 'exited')),
      ...containers.map((c) => entry(c.id, c.labels, c.metadata?.name ?? c.labels[kContainerNameLabel] ?? '', criToRuntimeState(c.state))),
    ],
  };
}

/** What a sync created, for readBackStarted: the new sandbox's status and the containers created. */
export interface CriSyncCreated {
  /** PodSandboxStatus of the sandbox this sync ran (RunPodSandbox's own read, not repeated); absent when none was. */
  sandbox?: PodSandboxStatus;
  /** The containers this sync created (started or not), in order, each with the sandbox it was created in. */
  containers: { id: string; sandboxId: string }[];
}

/**
 * readBackStarted: the pod after a sync that only ran a sandbox and created/started containers
 * (no kill, no removal), without reading the whole pod again: `before` (the read the sync began
 * with; null for a new pod) plus the sandbox's status the sync already read, plus ContainerStatus of
 * each container it created, in parallel (one removed meanwhile is skipped). The containers the
 * sync did not touch keep the state `before` read; a change to them is the PLEG's to report, as in
 * the kubelet, whose SyncPod reads nothing back and whose next sync takes the pod's status from the
 * PLEG's cache (pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod, pkg/kubelet/pleg/generic.go
 * updateCache). The annotations are the created containers' only.
 * @throws AgentError from ContainerStatus (ERR_RUNTIME_UNAVAILABLE, …), never not-found.
 */
export async function readBackStarted(
  runtime: RuntimeService,
  uid: string,
  before: RuntimePod | null,
  created: CriSyncCreated,
): Promise<CriPodRead> {
  const annotations = new Map<string, Record<string, string>>();
  const statuses = await Promise.all(
    created.containers.map(async ({ id, sandboxId }) => {
      const st = (await ifPresent(runtime.containerStatus(id)))?.status;
      if (!st) return null;
      annotations.set(id, st.annotations);
      return { st, sandboxId };
    }),
  );
  const sb = created.sandbox;
  const sandboxes = sb ? [sandboxToRuntimeContainer(sb), ...(before?.sandboxes ?? [])].sort(newestFirst) : (before?.sandboxes ?? []);
  const read = statuses.filter((s) => s !== null);
  const fresh = read.map(({ st, sandboxId }) => statusToRuntimeContainer(st, sandboxId));
  const freshIds = new Set(fresh.map((c) => c.id));
  const containers = [...fresh, ...(before?.containers ?? []).filter((c) => !freshIds.has(c.id))].sort(newestFirst);
  if (!before && sandboxes.length === 0 && containers.length === 0) return { runtimePod: null, annotations };
  const labels = sb?.labels ?? read[0]?.st.labels ?? {};
  const grace =
    before?.terminationGracePeriodSeconds ??
    getContainerInfoFromAnnotations(sb?.annotations ?? (fresh[0] ? annotations.get(fresh[0].id) : {})).terminationGracePeriodSeconds;
  return {
    runtimePod: {
      uid,
      name: before?.name || (labels[kPodNameLabel] ?? ''),
      namespace: before?.namespace || (labels[kPodNamespaceLabel] ?? ''),
      sandboxes,
      containers,
      podIp: sb ? (sb.state === 'SANDBOX_READY' ? (sb.network?.ip ?? '') : '') : (before?.podIp ?? ''),
      terminationGracePeriodSeconds: grace ?? kDefaultTerminationGracePeriodSeconds,
    },
    annotations,
  };
}

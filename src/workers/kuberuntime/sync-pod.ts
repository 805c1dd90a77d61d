/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod (with startContainer;
 * the image step, EnsureImageExists, is image-manager.ts): carries out the PodActions that
 * computePodActions planned, in the kubelet's order — kill, (garbage), sandbox, containers — and
 * reports each step.
 */
import type { Container, Pod } from '../../shared/api.js';
import { AgentError, isAlreadyExists, isUnavailable, serializeError } from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import { podFields, type Logger } from '../../shared/logging.js';
import { podTerminationGracePeriodSeconds, restartsAfterKill } from '../../shared/pod-policy.js';
import type { NodeSandboxSettings, PodEventRecord, PodSyncResult, RuntimeContainer, RuntimePod, SyncPodTask, SyncStepResult } from '../../shared/messages.js';
import { computePodActions, type ContainerToStart, type PodActions } from './compute-pod-actions.js';
import { buildContainerSpec, buildSandboxSpec, type PodSandboxConfig } from './container-config.js';
import { buildEphemeralContainerSpec } from './ephemeral-containers.js';
import { ephemeralContainerAsContainer } from '../../shared/ephemeral-containers.js';
import { preparePodSandbox } from './pod-sandbox.js';
import { sandboxSecurityConfig } from './security-context.js';
import { effectiveSecurityContext } from '../../shared/security-context.js';
import { killRuntimePod, networkTeardownFailed, removeContainers, stopContainers, tearDownSandboxes } from './kill-pod.js';
import { kPodUidLabel } from './labels.js';
import { hasHook, runLifecycleHook } from './hooks.js';
import { assembleRuntimePod, readPodDetails } from './runtime-pod.js';
import { recordSyncChanges } from './sync-read-back.js';
import { fillTerminationMessages } from './termination-message.js';
import type { ImagePuller } from '../images/image-puller.js';
import { ensureImageExists } from '../images/image-manager.js';
import type { ContainerCreateSpec, ContainerRuntime } from '../runtime/runtime.js';
import { setUpPodVolumes, type PodVolumesResult } from '../volumes/pod-volumes.js';
import { isFinishedPodKill, isNothingToDo, killOptions, pullPolicyOf, recordSandboxFailure, recordStartFailure, usesPodIp } from './sync-pod-plan.js';
import type { PodNetwork } from '../network/pod-network.js';
import { podPortMappings, sandboxNetnsPath, setUpFailureMessage, usesPodNetwork } from './sandbox-network.js';
import { markSandboxChecked, sandboxNetworkState } from './sandbox-check.js';
import { ensureHostsFile } from '../dns/etc-hosts.js';

/** What a sync needs besides its task (one per worker thread). */
export interface SyncDeps {
  /** The node-scoped runtime (see runtime/node-scope.ts). */
  runtime: ContainerRuntime;
  nodeName: string;
  /** --root-dir, absolute. */
  rootDir: string;
  /** --pod-infra-container-image. */
  podInfraContainerImage: string;
  /** Epoch ms. */
  now: () => number;
  logger?: Logger;
  /** The thread's serialized image puller (one pull per image at a time, credentials); default: plain runtime pulls. */
  imagePuller?: ImagePuller;
  /**
   * The node's sandbox settings (DNS, pod cgroups, pids, log rotation). Absent (unit tests, the
   * fake runtime): no hosts/resolv.conf files, no pod cgroup, no oom_score_adj or log options.
   */
  sandbox?: NodeSandboxSettings;
  /**
   * The thread's pod network (newPodNetwork for the docker runtime, kNoopPodNetwork for the fake
   * one): ADD after a sandbox of a pod that is not hostNetwork starts, DEL before it stops.
   */
  network: PodNetwork;
  /** Where hostPorts without a hostIP are published (NodeNetworkSettings.hostPortIp, --node-ip); absent: the task's hostIp. */
  hostPortIp?: string;
}

/** Requeue delay when a sync stopped at its deadline with work left, milliseconds. */
export const kDeadlineRequeueMs = 100;

/** Requeue delay after a failed step (sandbox creation, image pull, create/start), milliseconds. */
export const kFailedStepRequeueMs = 10_000;

class PodSync {
  readonly result: PodSyncResult;
  changed = false;
  #podSandbox?: PodSandboxConfig;
  #sandboxEvents: PodEventRecord[] = [];
  /** The pod's IPs (status.podIPs): from the runtime's read, or from the ADD of a new sandbox. */
  podIps: string[];
  /** The ADD of a new sandbox's network, under way: resolves true once set up, false when it failed (recorded). */
  #networkGate: Promise<boolean> = Promise.resolve(true);
  /**
   * Where the CreatePodSandbox step goes in result.steps: the place the sandbox's create took. Its
   * start and ADD finish after the first container's steps have been recorded (createSandbox).
   */
  #sandboxStepAt: number | undefined;
  constructor(
    readonly deps: SyncDeps,
    readonly task: SyncPodTask,
    readonly pod: Pod,
    runtimePod: RuntimePod | null,
  ) {
    this.result = { podUid: pod.metadata?.uid ?? '', steps: [], events: [], runtimePod, waiting: {}, backoff: {}, requeueAfterMs: 0 };
    this.podIps = runtimePod?.podIp && pod.spec?.hostNetwork !== true ? [runtimePod.podIp] : [];
  }

  /** networkReady: waits for the start and the ADD of a new sandbox (true at once when there is none); false when either failed. */
  networkReady(): Promise<boolean> {
    return this.#networkGate;
  }

  requeue(ms: number): void {
    this.result.requeueAfterMs = this.result.requeueAfterMs === 0 ? ms : Math.min(this.result.requeueAfterMs, ms);
  }

  /** False (and a requeue) once the task's deadline has passed. */
  inTime(): boolean {
    if (this.deps.now() < this.task.deadlineMs) return true;
    this.requeue(kDeadlineRequeueMs);
    this.deps.logger?.debug(podFields(this.pod), 'Sync deadline reached, requeueing');
    return false;
  }

  /**
   * create with dockershim's name-conflict recovery: if the name is taken by a dead container of
   * this pod (e.g. a create that timed out but happened), remove it and create again, once.
   */
  async create(spec: ContainerCreateSpec): Promise<string> {
    try {
      return await this.deps.runtime.createContainer(spec);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const mine = await this.deps.runtime.listContainers({ labels: [`${kPodUidLabel}=${this.result.podUid}`] });
      const taken = mine.find((c) => c.name === spec.name);
      if (!taken) {
        // Not ours (no label of this pod): never touched (DESIGN.md §4); say so rather than pass Docker's bare 409 on.
        throw new AgentError('ERR_ALREADY_EXISTS', `the container name "${spec.name}" is taken by a container that kubelet-ts did not create (it has no ${kPodUidLabel}=${this.result.podUid} label); kubelet-ts leaves it alone: remove or rename it (${serializeError(err).message})`);
      }
      if (taken.state === 'running') throw err;
      await this.deps.runtime.removeContainer(taken.id);
      this.changed = true;
      return await this.deps.runtime.createContainer(spec);
    }
  }

  /**
   * podSandbox: the pod-level config shared by the sandbox and its containers (preparePodSandbox),
   * prepared once per sync; undefined without `deps.sandbox`. Rejects as preparePodSandbox does.
   */
  async podSandbox(): Promise<PodSandboxConfig | undefined> {
    if (!this.deps.sandbox) return undefined;
    if (!this.#podSandbox) {
      const { config, events } = await preparePodSandbox(this.deps.rootDir, this.deps.sandbox, this.pod, this.podIps, this.deps.logger);
      this.#podSandbox = config;
      this.#sandboxEvents = events;
    }
    return this.#podSandbox;
  }

  /**
   * recordSandboxStep records the CreatePodSandbox step (ok or failed) where the sandbox's create
   * took its place (#sandboxStepAt; at the end when the create itself failed), before the steps of
   * the containers that went on while the sandbox started: the steps read in the kubelet's order.
   */
  recordSandboxStep(step: SyncStepResult): void {
    const at = this.#sandboxStepAt ?? this.result.steps.length;
    this.result.steps.splice(Math.min(at, this.result.steps.length), 0, step);
  }

  /**
   * sandboxFailed records a failed sandbox creation: the `CreatePodSandbox` step fails with
   * `CreatePodSandboxError`, the kubelet's `FailedCreatePodSandBox` event, every container waits
   * (ContainerCreating / PodInitializing) and the pod is requeued after kFailedStepRequeueMs.
   */
  sandboxFailed(message: string): void {
    recordSandboxFailure(this.pod, this.result, message, this.#sandboxStepAt);
    this.requeue(kFailedStepRequeueMs);
  }

  /**
   * setUpNetwork is dockershim RunPodSandbox's SetUpPod for the started sandbox `id`: its netns
   * (`/proc/<pid>/ns/net`), CNI ADD with the pod's hostPorts, then the pod's /etc/hosts rewritten
   * with the pod IP (before any container starts: the file is bind-mounted at a container's start).
   * On failure the sandbox is stopped and removed, and the sandbox step fails with the kubelet's
   * wording (sandboxFailed). Resolves true when set up. Rejects only when the runtime is unavailable.
   */
  async setUpNetwork(id: string): Promise<boolean> {
    const name = this.pod.metadata?.name ?? '';
    const namespace = this.pod.metadata?.namespace ?? 'default';
    try {
      const netnsPath = await sandboxNetnsPath(this.deps.runtime, id);
      if (!netnsPath) throw new AgentError('ERR_NETWORK', 'the sandbox container is not running (no network namespace)');
      failpoint('before-network-setup');
      const status = await this.deps.network.setUpPod({
        sandboxId: id, podUid: this.result.podUid, podName: name, podNamespace: namespace, netnsPath,
        portMappings: podPortMappings(this.pod, this.hostPortIp()),
      });
      failpoint('after-network-setup');
      markSandboxChecked(this.deps.network, id);
      this.podIps = status.ips;
      if (this.deps.sandbox) await ensureHostsFile(this.deps.rootDir, this.pod, this.podIps, this.deps.sandbox.clusterDomain);
      this.recordSandboxStep({ action: 'CreatePodSandbox', target: 'POD', ok: true });
      return true;
    } catch (err) {
      if (isUnavailable(err)) throw err;
      this.deps.logger?.warn({ ...podFields(this.pod), containerID: id, err }, 'Failed to set up the pod network');
      // RunPodSandbox on a failed SetUpPod: the sandbox is stopped and removed (its network torn down first: DEL is idempotent).
      const rp: RuntimePod = { uid: this.result.podUid, name, namespace, sandboxes: [], containers: [], podIp: '', terminationGracePeriodSeconds: 0 };
      const sandbox = { id, name: 'POD', sandbox: true, state: 'running' } as RuntimeContainer;
      await tearDownSandboxes(this.deps, rp, [sandbox], { steps: [], events: [] });
      await this.deps.runtime.stopContainer(id, 0).catch((e: unknown) => { if (isUnavailable(e)) throw e; });
      await this.deps.runtime.removeContainer(id).catch((e: unknown) => { if (isUnavailable(e)) throw e; });
      this.sandboxFailed(setUpFailureMessage(id, name, namespace, err));
      return false;
    }
  }

  /** hostPortIp: the address hostPorts without a hostIP are published on (NodeNetworkSettings.hostPortIp, else the task's hostIp). */
  hostPortIp(): string {
    return this.deps.hostPortIp || this.task.hostIp || '';
  }

  /**
   * Creates the sandbox and starts it; resolves to its ID once created, or '' on failure
   * (recorded). The start — and for a pod on the pod network (not hostNetwork, network enabled)
   * the ADD after it (setUpNetwork) — is NOT awaited: it runs while the sync goes on with the first
   * container's image check or pull, its config (unless its env needs status.podIP) and its
   * create (Docker creates a container in a created sandbox's namespaces; only its start needs the
   * sandbox running); every container start waits for it (networkReady). The kubelet runs them one
   * after the other (RunPodSandbox returns after StartContainer and SetUpPod); the order that
   * matters — sandbox started and ADD done before any container starts — is kept. Paced at 5 pods/s
   * this takes one Docker round trip off every pod's startup.
   */
  async createSandbox(attempt: number): Promise<string> {
    const image = this.deps.podInfraContainerImage;
    try {
      if (!(await ensureImageExists(this, image, 'IfNotPresent', 'POD'))) return '';
      const podSandbox = await this.podSandbox();
      // The DNS events come with the sandbox, as the kubelet's GetPodDNS runs in generatePodSandboxConfig.
      this.result.events.push(...this.#sandboxEvents);
      const spec = buildSandboxSpec(this.pod, attempt, this.deps.nodeName, image, podSandbox, await sandboxSecurityConfig(this.pod, this.deps.rootDir));
      failpoint('before-sandbox-create');
      const id = await this.create(spec);
      this.changed = true;
      failpoint('after-sandbox-create');
      // The start (and the ADD after it) is not awaited here: the first container's create, which
      // only needs the sandbox's ID, overlaps it; every container start waits for the gate.
      const podNetwork = usesPodNetwork(this.pod, this.deps.network);
      if (podNetwork) this.podIps = [];
      this.#sandboxStepAt = this.result.steps.length;
      const gate = this.startSandbox(id).then((started) => {
        if (!started) return false;
        if (podNetwork) return this.setUpNetwork(id);
        this.recordSandboxStep({ action: 'CreatePodSandbox', target: 'POD', ok: true });
        return true;
      });
      // A rejection (runtime unavailable) is rethrown by whoever awaits the gate; never unhandled.
      gate.catch(() => undefined);
      this.#networkGate = gate;
      return id;
    } catch (err) {
      if (isUnavailable(err)) throw err;
      this.sandboxFailed(serializeError(err).message);
      return '';
    }
  }

  /**
   * startSandbox starts the created sandbox `id`; false when Docker refused (recorded as a failed
   * sandbox, as a failed create). Rejects only when the runtime is unavailable.
   */
  async startSandbox(id: string): Promise<boolean> {
    try {
      await this.deps.runtime.startContainer(id);
      failpoint('after-sandbox-start');
      return true;
    } catch (err) {
      if (isUnavailable(err)) throw err;
      this.sandboxFailed(serializeError(err).message);
      return false;
    }
  }

  /** startContainer: image, config, create, start; failures become waiting reasons (recorded). */
  async startContainer(c: ContainerToStart, sandboxId: string): Promise<void> {
    const container = c.ephemeral ? ephemeralContainerAsContainer(this.pod.spec!.ephemeralContainers![c.index]) : c.init ? this.pod.spec!.initContainers![c.index] : this.pod.spec!.containers[c.index];
    const fieldPath = `spec.${c.ephemeral ? 'ephemeralContainers' : c.init ? 'initContainers' : 'containers'}{${c.name}}`;
    const fail = (reason: string, message: string, eventMessage?: string) => {
      recordStartFailure(this.result, c.name, fieldPath, reason, message, eventMessage);
      this.requeue(kFailedStepRequeueMs);
    };
    const image = container.image ?? '';
    if (!(await ensureImageExists(this, image, pullPolicyOf(container), c.name, fieldPath))) return;
    // A container whose env reads status.podIP(s) needs the ADD's result in its config.
    if (usesPodIp(container) && !(await this.networkReady())) return;
    let spec: ContainerCreateSpec;
    try {
      // The image's user, for runAsNonRoot and a runAsGroup without runAsUser (kuberuntime getImageUser).
      const sc = effectiveSecurityContext(this.pod, container);
      const needsImageUser = sc.runAsNonRoot === true || (sc.runAsGroup !== undefined && sc.runAsUser === undefined);
      const imageUser = needsImageUser ? (await this.deps.runtime.imageExists(image))?.user ?? '' : '';
      const ctx = {
        nodeName: this.deps.nodeName,
        rootDir: this.deps.rootDir,
        hostIp: this.task.hostIp,
        podIp: this.podIps[0] ?? '',
        sandboxId,
        podSandbox: await this.podSandbox(),
        imageUser,
        configObjects: this.task.configObjects,
        warn: (reason: string, message: string) => this.result.events.push({ type: 'Warning', reason, message }),
      };
      spec = c.ephemeral
        ? await buildEphemeralContainerSpec(this.pod, this.result.runtimePod, c.index, c.hash, image, ctx)
        : await buildContainerSpec(this.pod, c.index, c.hash, c.restartCount, image, ctx, c.init === true);
    } catch (err) {
      if (isUnavailable(err)) throw err;
      return fail('CreateContainerConfigError', serializeError(err).message);
    }
    let id: string;
    try {
      failpoint('before-container-create');
      id = await this.create(spec);
      this.changed = true;
      failpoint('after-container-create');
    } catch (err) {
      if (isUnavailable(err)) throw err;
      return fail('CreateContainerError', serializeError(err).message);
    }
    this.result.events.push({ type: 'Normal', reason: 'Created', message: `Created container ${c.name}`, fieldPath });
    if (!(await this.networkReady())) {
      // The sandbox is gone (its ADD failed): the container created meanwhile goes too.
      await this.deps.runtime.removeContainer(id).catch((e: unknown) => { if (isUnavailable(e)) throw e; });
      return;
    }
    try {
      await this.deps.runtime.startContainer(id);
      failpoint('after-container-start');
    } catch (err) {
      if (isUnavailable(err)) throw err;
      const message = serializeError(err).message;
      return fail('RunContainerError', message, `Error: failed to start container "${c.name}": ${message}`);
    }
    this.result.steps.push({ action: 'StartContainer', target: c.name, ok: true });
    this.result.events.push({ type: 'Normal', reason: 'Started', message: `Started container ${c.name}`, fieldPath });
    this.deps.logger?.info({ ...podFields(this.pod), container: c.name, containerID: id, reason: c.reason }, 'Started container');
    if (hasHook(container, 'postStart')) await this.postStart(container, c, id, sandboxId, fieldPath);
  }

  /**
   * postStart runs the container's postStart hook right after it started (kuberuntime
   * startContainer step 4). On failure: a `FailedPostStartHook` event, the container is killed
   * (Killing `FailedPostStartHook`, after its preStop hook) and the step fails with
   * `PostStartHookError` — the container's waiting reason when it is to be restarted.
   */
  async postStart(container: Container, c: ContainerToStart, id: string, sandboxId: string, fieldPath: string): Promise<void> {
    const timeoutMs = Math.max(1_000, this.task.deadlineMs - this.deps.now());
    const msg = await runLifecycleHook(this.deps.runtime, this.pod, container, id, 'postStart', { hostIp: this.task.hostIp, podIp: this.podIps[0] ?? '', sandboxId }, timeoutMs);
    if (!msg) return;
    this.result.events.push({ type: 'Warning', reason: 'FailedPostStartHook', message: msg, fieldPath });
    const running = { id, name: c.name, sandbox: false, state: 'running', sandboxId } as RuntimeContainer;
    await stopContainers(this.deps, [running], podTerminationGracePeriodSeconds(this.pod), this.result, { pod: this.pod, hostIp: this.task.hostIp, podIp: this.podIps[0] ?? '', messages: { [id]: 'FailedPostStartHook' } });
    this.result.steps.push({ action: 'StartContainer', target: c.name, ok: false, reason: 'PostStartHookError', message: msg });
    if (restartsAfterKill(this.pod)) this.result.waiting[c.name] = { reason: 'PostStartHookError', message: msg };
    this.requeue(kFailedStepRequeueMs);
  }
}

/**
 * waitForVolumes, as WaitForAttachAndMount failing in the kubelet's SyncPod: while a volume of the
 * pod was never set up, no sandbox is created and no container started; the containers wait with
 * reason `ContainerCreating` (the FailedMount event says why) and the pod is synced again after
 * kFailedStepRequeueMs. Returns true when the pod must wait.
 */
export function waitForVolumes(pod: Pod, actions: PodActions, volumes: PodVolumesResult, s: Pick<PodSync, 'result' | 'requeue'>): boolean {
  const names = Object.keys(volumes.unmounted);
  if (names.length === 0 || (!actions.createSandbox && actions.containersToStart.length === 0)) return false;
  const message = `Unable to attach or mount volumes: unmounted volumes=[${names.join(' ')}]: ${volumes.unmounted[names[0]]}`;
  const waitingFor = actions.createSandbox ? [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name) : actions.containersToStart.map((c) => c.name);
  for (const name of waitingFor) s.result.waiting[name] = { reason: 'ContainerCreating', message };
  s.requeue(kFailedStepRequeueMs);
  return true;
}

/**
 * syncPod carries out one SyncPodTask on a worker thread: reads the pod from the runtime,
 * plans with computePodActions, then (1) kills the pod or the containers to kill (grace period
 * from the spec, SIGTERM then SIGKILL), (2) removes dead attempts beyond one per container,
 * (3) creates the sandbox when needed, (4) starts containers in spec order (image by pull policy,
 * config, create, start). A finished pod's sandbox is not stopped here (isFinishedPodKill): the
 * agent does it once it has published the final status. Each action is a step; failures become waiting reasons
 * (`ErrImageNeverPull`, `ErrImagePull`, `CreateContainerConfigError`, `CreateContainerError`,
 * `RunContainerError`) and events instead of throwing. Stops between steps once
 * `task.deadlineMs` has passed and asks for a requeue. Reads the pod first (one list, an inspect
 * per container) unless `task.knownAbsent`; after a change it reads back only the containers it
 * touched (sync-read-back.ts). Idempotent: a second call with nothing to do changes nothing. With
 * `task.cachedRuntimePod` it plans from that first and, when nothing is to be done, returns it
 * without reading the runtime.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE (retriable) when Docker cannot be reached;
 * ERR_INVALID_ARGUMENT for a pod without metadata.uid.
 */
export async function syncPod(deps: SyncDeps, task: SyncPodTask): Promise<PodSyncResult> {
  const pod = task.pod;
  const uid = pod?.metadata?.uid;
  if (!uid) throw new AgentError('ERR_INVALID_ARGUMENT', 'syncPod: task.pod.metadata.uid is required');
  if (!Array.isArray(pod.spec?.containers)) throw new AgentError('ERR_INVALID_ARGUMENT', 'syncPod: task.pod.spec.containers is required');
  // The volume manager's part of every sync (also the periodic one): volumes set up, their files
  // refreshed from the current objects and labels (an emptyDir's sizeLimit: the eviction manager's).
  const volumes = await setUpPodVolumes(pod, task.configObjects, { nodeName: deps.nodeName, rootDir: deps.rootDir, hostIp: task.hostIp });
  if (task.cachedRuntimePod) {
    // The periodic resync of a pod nothing happened to: plan from the main thread's cache and
    // stop there when nothing is to be done (no Docker call at all).
    // The network check here is the quick one without an inspect (a cache file read and stats of
    // the host-side interfaces): still no Docker call on this path.
    const net = await sandboxNetworkState(null, deps.network, pod, task.cachedRuntimePod, deps.logger);
    const planned = computePodActions(pod, task.cachedRuntimePod, task.backoff ?? {}, deps.now(), task.livenessFailed ?? [], task.startedSidecars ?? [], net);
    if (isNothingToDo(planned)) {
      deps.logger?.debug({ uid, requeueAfterMs: planned.requeueAfterMs }, 'Synced pod from the cached runtime state');
      return { podUid: uid, steps: [], events: [...volumes.events, ...planned.events], runtimePod: task.cachedRuntimePod, waiting: { ...planned.waiting }, backoff: planned.backoff, requeueAfterMs: planned.requeueAfterMs };
    }
  }
  // Everything the sync does to the runtime from here on is recorded for its read-back (sync-read-back.ts).
  const recorder = recordSyncChanges(deps.runtime);
  deps = { ...deps, runtime: recorder.runtime };
  // A pod the main thread knows has no container (the PLEG's view since its last task) needs no read.
  const first = task.knownAbsent ? [] : await readPodDetails(deps.runtime, deps.nodeName, uid);
  const runtimePod = await assembleRuntimePod(uid, first, deps.network);
  await fillTerminationMessages(deps.rootDir, runtimePod, deps.runtime, first);
  const net = await sandboxNetworkState(deps.runtime, deps.network, pod, runtimePod, deps.logger);
  const actions = computePodActions(pod, runtimePod, task.backoff ?? {}, deps.now(), task.livenessFailed ?? [], task.startedSidecars ?? [], net);
  const s = new PodSync(deps, task, pod, runtimePod);
  const r = s.result;
  r.events.push(...volumes.events, ...actions.events);
  // The kubelet's SyncPod: a sandbox to re-create (one existed) is announced before the kill.
  if (actions.createSandbox && (runtimePod?.sandboxes.length ?? 0) > 0) r.events.push({ type: 'Normal', reason: 'SandboxChanged', message: 'Pod sandbox changed, it will be killed and re-created.' });
  Object.assign(r.waiting, actions.waiting);
  r.backoff = actions.backoff;
  r.requeueAfterMs = actions.requeueAfterMs;

  await (async () => {
    if (isFinishedPodKill(pod, runtimePod, actions)) {
      deps.logger?.debug({ uid }, 'Pod finished: its sandbox is left for the agent to stop after the final status');
      return;
    }
    if (actions.killPod) {
      if (runtimePod && (await killRuntimePod(deps, runtimePod, podTerminationGracePeriodSeconds(pod), r, { pod, hostIp: task.hostIp, podIp: runtimePod.podIp }))) s.changed = true;
      // KillPod failed (a sandbox's network DEL): no new sandbox now, the next sync retries (SyncPod returns on a KillPod error).
      if (networkTeardownFailed(r)) {
        s.requeue(kFailedStepRequeueMs);
        return;
      }
      if (!actions.createSandbox) return;
    } else if (actions.containersToKill.length && runtimePod) {
      const byId = new Set(actions.containersToKill.map((k) => k.id));
      if (await stopContainers(deps, runtimePod.containers.filter((c) => byId.has(c.id)), podTerminationGracePeriodSeconds(pod), r, killOptions(pod, task, actions.containersToKill, runtimePod.podIp))) s.changed = true;
    }
    if (actions.containersToRemove.length && runtimePod) {
      const byId = new Set(actions.containersToRemove);
      const all = [...runtimePod.containers, ...runtimePod.sandboxes].filter((c) => byId.has(c.id));
      // A dead sandbox still set up (it died on its own) has its network torn down before removal (RemovePodSandbox).
      if (pod.spec?.hostNetwork !== true && deps.network.enabled) {
        const setUp = [];
        for (const sb of all) if (sb.sandbox && (await deps.network.podNetworkStatus(sb.id)) !== null) setUp.push(sb);
        const torn = await tearDownSandboxes(deps, runtimePod, setUp, r);
        if (torn.size < setUp.length) {
          const keep = new Set(setUp.filter((x) => !torn.has(x.id)).map((x) => x.id));
          all.splice(0, all.length, ...all.filter((x) => !keep.has(x.id)));
        }
      }
      if (await removeContainers(deps, all, r)) s.changed = true;
    }
    if (waitForVolumes(pod, actions, volumes, s)) return;
    let sandboxId = actions.sandboxId;
    if (actions.createSandbox) {
      if (!s.inTime()) return;
      sandboxId = await s.createSandbox(actions.attempt);
      if (!sandboxId) return;
    }
    try {
      for (const c of actions.containersToStart) {
        if (!s.inTime()) return;
        await s.startContainer(c, sandboxId);
        if (!(await s.networkReady())) return;
      }
    } finally {
      // The ADD of a new sandbox always finishes within the sync (it may fail, recorded).
      await s.networkReady();
    }
  })();

  if (s.changed) {
    const after = (await recorder.readBack(first)) ?? (await readPodDetails(deps.runtime, deps.nodeName, uid));
    r.runtimePod = await assembleRuntimePod(uid, after, deps.network);
    await fillTerminationMessages(deps.rootDir, r.runtimePod, deps.runtime, after);
  }
  deps.logger?.debug({ uid, steps: r.steps.length, changed: s.changed, requeueAfterMs: r.requeueAfterMs }, 'Synced pod');
  return r;
}

/**
 * Counterpart of pkg/kubelet/kuberuntime/kuberuntime_manager.go SyncPod (createPodSandbox,
 * startContainer of kuberuntime_container.go) over the CRI alone: the PodActions computePodActions
 * planned, carried out with RunPodSandbox / PodSandboxStatus (the pod IP is
 * `status.network.ip`: the runtime makes the network), ImageStatus / PullImage,
 * CreateContainer / StartContainer, StopContainer / StopPodSandbox, RemoveContainer /
 * RemovePodSandbox, and hooks through ExecSync — in the kubelet's order: kill, remove, sandbox,
 * containers. The same SyncPodTask → PodSyncResult contract as the syncer before the CRI seam.
 */
import path from 'node:path';
import type { Container, Pod } from '../../shared/api.js';
import { AgentError, isUnavailable, serializeError } from '../../shared/errors.js';
import { ephemeralContainerAsContainer } from '../../shared/ephemeral-containers.js';
import { failpoint } from '../../shared/failpoints.js';
import { podFields } from '../../shared/logging.js';
import type { PodEventRecord, PodSyncResult, SyncPodTask } from '../../shared/sync-tasks.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { podTerminationGracePeriodSeconds, restartsAfterKill } from '../../shared/pod-policy.js';
import { ensurePodCgroup, kCgroupMount, podCgroupSupported } from '../cm/pod-cgroup.js';
import { ensureHostsFile } from '../dns/etc-hosts.js';
import { mkdirPodDir } from '../kubetypes/pod-files.js';
import { readPodDNS } from '../dns/pod-dns.js';
import { criImagePort, imageRefAndUser } from './cri-images.js';
import { ensureImageExists, type ImageSync } from '../images/image-manager.js';
import type { ImageManagerService } from '../runtime/cri/services.js';
import type { CriInput, PodSandboxConfig } from '../runtime/cri/types.js';
import { setUpPodVolumes, type PodVolumesResult } from '../volumes/pod-volumes.js';
import { computePodActions } from './compute-pod-actions.js';
import type { ContainerToStart, PodActions } from './pod-actions.js';
import { generateContainerConfig, generateRunContainerOptions } from './container-config.js';
import { killCriPod, removeCriContainers, stopCriContainers, type CriSyncDeps } from './kill-pod.js';
import { getCriRuntimePod, readBackStarted, type CriSyncCreated } from './runtime-pod.js';
import { hasHook, runLifecycleHook } from './hooks.js';
import { oomScoreAdjFloor } from '../cm/oom-score-floor.js';
import { nodeMemoryCapacityBytes } from '../cm/memory-capacity.js';
import { imageStatusOnce } from './image-status-once.js';
import { generatePodSandboxConfig } from './sandbox-config.js';
import { SpecHashes } from './spec-hashes.js';
import { verifyRunAsNonRoot } from './security-checks.js';
import {
  isFinishedPodKill,
  isNothingToDo,
  isSettled,
  killOptions,
  pullPolicyOf,
  recordSandboxFailure,
  recordStartFailure,
} from './sync-pod-plan.js';
import { fillTerminationMessageFiles } from './termination-message.js';

export type { CriSyncDeps } from './kill-pod.js';

/** Requeue delay when a sync stopped at its deadline with work left, milliseconds. */
export const kDeadlineRequeueMs = 100;

/** Requeue delay after a failed step (sandbox creation, image pull, create/start), milliseconds. */
export const kFailedStepRequeueMs = 10_000;

/**
 * waitForVolumes, as WaitForAttachAndMount failing in the kubelet's SyncPod: while a volume of the
 * pod was never set up, no sandbox is created and no container started; the containers wait with
 * reason `ContainerCreating` (the FailedMount event says why) and the pod is synced again after
 * kFailedStepRequeueMs. Returns true when the pod must wait.
 */
export function waitForVolumes(
  pod: Pod,
  actions: PodActions,
  volumes: PodVolumesResult,
  s: { result: PodSyncResult; requeue(ms: number): void },
): boolean {
  const names = Object.keys(volumes.unmounted);
  if (names.length === 0 || (!actions.createSandbox && actions.containersToStart.length === 0)) return false;
  const message = `Unable to attach or mount volumes: unmounted volumes=[${names.join(' ')}]: ${volumes.unmounted[names[0]]}`;
  const waitingFor = actions.createSandbox
    ? [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => c.name)
    : actions.containersToStart.map((c) => c.name);
  for (const name of waitingFor) s.result.waiting[name] = { reason: 'ContainerCreating', message };
  s.requeue(kFailedStepRequeueMs);
  return true;
}

class CriPodSync {
  readonly result: PodSyncResult;
  changed = false;
  /** Whether a kill or removal changed the pod: the whole pod is read back then (readBackStarted only knows starts). */
  killed = false;
  /** What this sync created, for the read-back. */
  readonly created: CriSyncCreated = { containers: [] };
  podIp: string;
  /** The runtime's images, each ImageStatus answered once in this sync (imageStatusOnce). */
  readonly images: ImageManagerService;
  sandboxConfig?: CriInput<PodSandboxConfig>;
  constructor(
    readonly deps: CriSyncDeps,
    readonly task: SyncPodTask,
    readonly pod: Pod,
    runtimePod: RuntimePod | null,
    /** The sync's spec hashes (its plans' and its sandbox config's: each hashed once). */
    readonly hashes: SpecHashes,
  ) {
    this.result = { podUid: pod.metadata?.uid ?? '', steps: [], events: [], runtimePod, waiting: {}, backoff: {}, requeueAfterMs: 0 };
    this.podIp = pod.spec?.hostNetwork ? '' : (runtimePod?.podIp ?? '');
    this.images = imageStatusOnce(deps.images);
  }

  /** imageSync: this sync as ensureImageExists reads it, with the CRI's images. */
  imageSync(): ImageSync {
    return {
      deps: { clock: this.deps.clock },
      task: this.task,
      pod: this.pod,
      result: this.result,
      requeue: (ms) => this.requeue(ms),
      images: criImagePort(this.images, this.sandboxConfig, this.deps.rootDir, this.deps.nodeKeyring, this.deps.clock),
    };
  }

  requeue(ms: number): void {
    this.result.requeueAfterMs = this.result.requeueAfterMs === 0 ? ms : Math.min(this.result.requeueAfterMs, ms);
  }

  inTime(): boolean {
    if (this.deps.clock.now() < this.task.deadlineMs) return true;
    this.requeue(100);
    return false;
  }

  /**
   * podSandboxConfig, as generatePodSandboxConfig with its inputs: the pod cgroup (created with its
   * limits, --pod-max-pids included, on a cgroup v1 host with --cgroups-per-qos) and the pod's DNS
   * config (its events returned for the sandbox's creation).
   */
  async podSandboxConfig(attempt: number): Promise<{ config: PodSandboxConfig; events: PodEventRecord[] }> {
    const settings = this.deps.sandbox;
    let cgroupParent = '';
    const mount = this.deps.cgroupMount ?? kCgroupMount;
    if (settings?.cgroupsPerQOS && (await podCgroupSupported(mount)))
      cgroupParent = await ensurePodCgroup(this.pod, settings.cgroupRoot, settings.podPidsLimit, mount);
    const dns = settings ? await readPodDNS(this.pod, settings) : undefined;
    const config = generatePodSandboxConfig(this.pod, attempt, {
      nodeName: this.deps.nodeName,
      rootDir: this.deps.rootDir,
      podLogsDir: this.deps.podLogsDir,
      clusterDomain: settings?.clusterDomain ?? '',
      dns: dns?.config,
      cgroupParent,
      sandboxHash: this.hashes.sandbox(this.pod),
    });
    return { config, events: dns?.events ?? [] };
  }

  /** sandboxFailed: a failed CreatePodSandbox step, FailedCreatePodSandBox, every container waits. */
  sandboxFailed(message: string): void {
    recordSandboxFailure(this.pod, this.result, message);
    this.requeue(kFailedStepRequeueMs);
  }

  /**
   * createSandbox, as createPodSandbox: the config, the pod's log directory, RunPodSandbox, then
   * PodSandboxStatus for the pod IP. Resolves the sandbox ID, '' on failure (recorded).
   * @throws AgentError ERR_RUNTIME_UNAVAILABLE.
   */
  async createSandbox(attempt: number): Promise<string> {
    try {
      const { config, events } = await this.podSandboxConfig(attempt);
      this.sandboxConfig = config;
      this.result.events.push(...events);
      mkdirPodDir(config.log_directory, 0o755);
      const id = await this.deps.runtime.runPodSandbox(config);
      this.changed = true;
      const status = (await this.deps.runtime.podSandboxStatus(id)).status;
      if (status) this.created.sandbox = status;
      else this.killed = true; // no status to build the read-back from: read the whole pod
      this.podIp = this.pod.spec?.hostNetwork ? '' : (status?.network?.ip ?? '');
      this.result.steps.push({ action: 'CreatePodSandbox', target: 'POD', ok: true });
      return id;
    } catch (err) {
      if (isUnavailable(err)) throw err;
      this.sandboxFailed(serializeError(err).message);
      return '';
    }
  }

  /** startContainer, as kuberuntime startContainer: image, config, create, start, postStart; failures become waiting reasons (recorded). */
  async startContainer(c: ContainerToStart, sandboxId: string): Promise<void> {
    const spec = this.pod.spec!;
    const container = c.ephemeral
      ? ephemeralContainerAsContainer(spec.ephemeralContainers![c.index])
      : c.init
        ? spec.initContainers![c.index]
        : spec.containers[c.index];
    const list = c.ephemeral ? 'ephemeralContainers' : c.init ? 'initContainers' : 'containers';
    const fieldPath = `spec.${list}{${c.name}}`;
    const field = `spec.${list}[${c.index}]`;
    const fail = (reason: string, message: string, eventMessage?: string) => {
      recordStartFailure(this.result, c.name, fieldPath, reason, message, eventMessage);
      this.requeue(kFailedStepRequeueMs);
    };
    const image = container.image ?? '';
    if (!(await ensureImageExists(this.imageSync(), image, pullPolicyOf(container), c.name, fieldPath))) return;
    let id: string;
    try {
      const { ref, user } = await imageRefAndUser(this.images, image);
      verifyRunAsNonRoot(this.pod, container, user.uid !== undefined ? String(user.uid) : (user.username ?? ''));
      const ctx = {
        nodeName: this.deps.nodeName,
        rootDir: this.deps.rootDir,
        hostIp: this.task.hostIp,
        podIp: this.podIp,
        sandboxId,
        image: user,
        configObjects: this.task.configObjects,
        memoryCapacityBytes: nodeMemoryCapacityBytes(),
        oomScoreAdjFloor: await oomScoreAdjFloor(),
        etcHostsFile: this.deps.sandbox
          ? await ensureHostsFile(this.deps.rootDir, this.pod, this.podIp ? [this.podIp] : [], this.deps.sandbox.clusterDomain)
          : '',
        warn: (reason: string, message: string) => this.result.events.push({ type: 'Warning', reason, message }),
      };
      const opts = await generateRunContainerOptions(this.pod, container, field, c.restartCount, ctx);
      const config = generateContainerConfig(this.pod, container, field, c.hash, c.restartCount, ref, opts, ctx);
      const target = c.ephemeral ? spec.ephemeralContainers![c.index].targetContainerName : undefined;
      const targetId = target ? this.result.runtimePod?.containers.find((x) => x.name === target && x.state === 'running')?.id : undefined;
      if (targetId && config.linux?.security_context?.namespace_options)
        Object.assign(config.linux.security_context.namespace_options, { pid: 'TARGET', target_id: targetId });
      if (!this.sandboxConfig)
        this.sandboxConfig = (await this.podSandboxConfig(this.result.runtimePod?.sandboxes[0]?.attempt ?? 0)).config;
      // The container's log directory (kuberuntime generateContainerConfig: MkdirAll of BuildContainerLogsDirectory).
      mkdirPodDir(path.join(this.sandboxConfig.log_directory ?? '', c.name), 0o755);
      try {
        failpoint('before-container-create');
        id = await this.deps.runtime.createContainer(sandboxId, config, this.sandboxConfig);
        this.changed = true;
        this.created.containers.push({ id, sandboxId });
        failpoint('after-container-create');
      } catch (err) {
        if (isUnavailable(err)) throw err;
        return fail('CreateContainerError', serializeError(err).message);
      }
    } catch (err) {
      if (isUnavailable(err)) throw err;
      return fail('CreateContainerConfigError', serializeError(err).message);
    }
    this.result.events.push({ type: 'Normal', reason: 'Created', message: `Created container ${c.name}`, fieldPath });
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
    if (hasHook(container, 'postStart')) await this.postStart(container, c, id, fieldPath);
  }

  /** postStart: the hook through ExecSync (or httpGet to the pod IP); on failure the container is killed and the step fails with PostStartHookError. */
  async postStart(container: Container, c: ContainerToStart, id: string, fieldPath: string): Promise<void> {
    const timeoutMs = Math.max(1_000, this.task.deadlineMs - this.deps.clock.now());
    const msg = await runLifecycleHook(
      this.deps.runtime,
      this.pod,
      container,
      id,
      'postStart',
      { hostIp: this.task.hostIp, podIp: this.podIp, sandboxId: '' },
      timeoutMs,
    );
    if (!msg) return;
    this.result.events.push({ type: 'Warning', reason: 'FailedPostStartHook', message: msg, fieldPath });
    const running = { id, name: c.name, sandbox: false, state: 'running', sandboxId: '' } as RuntimePod['containers'][number];
    this.killed = true;
    await stopCriContainers(this.deps, [running], podTerminationGracePeriodSeconds(this.pod), this.result, {
      pod: this.pod,
      hostIp: this.task.hostIp,
      podIp: this.podIp,
      messages: { [id]: 'FailedPostStartHook' },
    });
    this.result.steps.push({ action: 'StartContainer', target: c.name, ok: false, reason: 'PostStartHookError', message: msg });
    if (restartsAfterKill(this.pod)) this.result.waiting[c.name] = { reason: 'PostStartHookError', message: msg };
    this.requeue(kFailedStepRequeueMs);
  }
}

/**
 * syncPodCri carries out one SyncPodTask on a CRI runtime (syncPod's contract):
 * volumes, the pod read from the runtime (getCriRuntimePod; nothing when `task.knownAbsent`), computePodActions (a ready sandbox of
 * a pod that is not hostNetwork without an IP is re-created, as podSandboxChanged), then kill,
 * remove, RunPodSandbox, and the containers in order. When something changed, the pod is read
 * again: whole (getCriRuntimePod) after a kill or removal; after starts alone, only what the sync
 * made (readBackStarted: the sandbox status RunPodSandbox's step already read, ContainerStatus of
 * each container created), as the kubelet's SyncPod leaves the rest to the PLEG's cache.
 * Failures become steps, events and waiting reasons, as there.
 * @throws AgentError ERR_RUNTIME_UNAVAILABLE; ERR_INVALID_ARGUMENT for a pod without metadata.uid.
 */
export async function syncPodCri(deps: CriSyncDeps, task: SyncPodTask): Promise<PodSyncResult> {
  const pod = task.pod;
  const uid = pod?.metadata?.uid;
  if (!uid) throw new AgentError('ERR_INVALID_ARGUMENT', 'syncPod: task.pod.metadata.uid is required');
  if (!Array.isArray(pod.spec?.containers)) throw new AgentError('ERR_INVALID_ARGUMENT', 'syncPod: task.pod.spec.containers is required');
  const volumes = await setUpPodVolumes(pod, task.configObjects, { nodeName: deps.nodeName, rootDir: deps.rootDir, hostIp: task.hostIp });
  const net = { enabled: deps.podNetwork !== false && pod.spec?.hostNetwork !== true };
  const hashes = new SpecHashes();
  const plan = (rp: RuntimePod | null, backoff = task.backoff ?? {}) =>
    computePodActions(pod, rp, backoff, deps.clock.now(), task.livenessFailed ?? [], task.startedSidecars ?? [], net, hashes);
  if (task.cachedRuntimePod) {
    const planned = plan(task.cachedRuntimePod);
    if (isNothingToDo(planned)) {
      return {
        podUid: uid,
        steps: [],
        events: [...volumes.events, ...planned.events],
        runtimePod: task.cachedRuntimePod,
        waiting: { ...planned.waiting },
        backoff: planned.backoff,
        requeueAfterMs: planned.requeueAfterMs,
        settled: isSettled(planned, { waiting: planned.waiting, backoff: task.backoff ?? {} }, volumes.events),
      };
    }
  }
  // knownAbsent: the main thread knows the runtime holds nothing of the pod (pod-absence.ts, as the
  // kubelet's pod cache answers GetNewerThan for a pod it has no entry of): no list calls.
  const read = task.knownAbsent
    ? { runtimePod: null, annotations: new Map<string, Record<string, string>>() }
    : await getCriRuntimePod(deps.runtime, deps.nodeName, uid);
  const runtimePod = read.runtimePod;
  await fillTerminationMessageFiles(deps.rootDir, runtimePod, read.annotations, deps.logs);
  const actions = plan(runtimePod);
  const s = new CriPodSync(deps, task, pod, runtimePod, hashes);
  const r = s.result;
  r.events.push(...volumes.events, ...actions.events);
  if (actions.createSandbox && (runtimePod?.sandboxes.length ?? 0) > 0)
    r.events.push({ type: 'Normal', reason: 'SandboxChanged', message: 'Pod sandbox changed, it will be killed and re-created.' });
  Object.assign(r.waiting, actions.waiting);
  r.backoff = actions.backoff;
  r.requeueAfterMs = actions.requeueAfterMs;

  await (async () => {
    if (isFinishedPodKill(pod, runtimePod, actions)) return;
    if (actions.killPod) {
      if (
        runtimePod &&
        (await killCriPod(deps, runtimePod, podTerminationGracePeriodSeconds(pod), r, {
          pod,
          hostIp: task.hostIp,
          podIp: runtimePod.podIp,
        }))
      )
        s.changed = s.killed = true;
      if (!actions.createSandbox) return;
    } else if (actions.containersToKill.length && runtimePod) {
      const byId = new Set(actions.containersToKill.map((k) => k.id));
      if (
        await stopCriContainers(
          deps,
          runtimePod.containers.filter((c) => byId.has(c.id)),
          podTerminationGracePeriodSeconds(pod),
          r,
          killOptions(pod, task, actions.containersToKill, runtimePod.podIp),
        )
      )
        s.changed = s.killed = true;
    }
    if (actions.containersToRemove.length && runtimePod) {
      const byId = new Set(actions.containersToRemove);
      if (
        await removeCriContainers(
          deps,
          [...runtimePod.containers, ...runtimePod.sandboxes].filter((c) => byId.has(c.id)),
          r,
        )
      )
        s.changed = s.killed = true;
    }
    if (waitForVolumes(pod, actions, volumes, s)) return;
    let sandboxId = actions.sandboxId;
    if (actions.createSandbox) {
      if (!s.inTime()) return;
      sandboxId = await s.createSandbox(actions.attempt);
      if (!sandboxId) return;
    }
    for (const c of actions.containersToStart) {
      if (!s.inTime()) return;
      await s.startContainer(c, sandboxId);
    }
  })();

  if (s.changed && s.killed) {
    const after = await getCriRuntimePod(deps.runtime, deps.nodeName, uid);
    r.runtimePod = after.runtimePod;
    await fillTerminationMessageFiles(deps.rootDir, r.runtimePod, after.annotations, deps.logs);
  } else if (s.changed) {
    // Only starts: the read the sync began with, the sandbox status RunPodSandbox's step read, and
    // ContainerStatus of the containers it created (readBackStarted); a termination message only
    // for those (the others' were filled by the first read).
    const after = await readBackStarted(deps.runtime, uid, runtimePod, s.created);
    r.runtimePod = after.runtimePod;
    const fresh = new Set(s.created.containers.map((c) => c.id));
    if (after.runtimePod)
      await fillTerminationMessageFiles(
        deps.rootDir,
        { ...after.runtimePod, containers: after.runtimePod.containers.filter((c) => fresh.has(c.id)) },
        after.annotations,
        deps.logs,
      );
  }
  // Would the pod's next sync, planned from what this one leaves, change nothing (PodSyncResult.settled)?
  r.settled = s.changed
    ? isSettled(plan(r.runtimePod, r.backoff), r, volumes.events)
    : isSettled(actions, { waiting: r.waiting, backoff: task.backoff ?? {} }, volumes.events);
  deps.logger?.debug({ uid, steps: r.steps.length, changed: s.changed, requeueAfterMs: r.requeueAfterMs }, 'Synced pod (CRI)');
  return r;
}

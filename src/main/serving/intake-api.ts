/**
 * Counterpart of the apiserver's side of pod create / update / delete, for the `api` source
 * (POST / PUT / DELETE /pods): the intake source persists the pods (config/source-intake.ts), and
 * each answer waits until the agent has handled the update it sent (SyncLoop ADD / UPDATE /
 * REMOVE), so it carries the pod's status. What it may touch: the intake source; it reads the pod
 * manager and the merge's holders of full names. Main thread only.
 */
import { podFullName, podSource } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { failpoint } from '../../shared/failpoints.js';
import { isNotFound } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import type { PodUpdate } from '../../shared/pod-update.js';
import { newIntakeSource, type IntakeSource, type IntakeWrite } from '../config/source-intake.js';
import { shortenDeletion, type GracefulDeletionDeps } from '../pod/graceful-deletion.js';
import type { PodManager } from '../pod/pod-manager.js';
import type { Clock } from '../../shared/clock.js';

/** Options of {@link newIntakeApi} (a subset of AgentOptions). */
export interface IntakeApiOptions {
  rootDir: string;
  nodeName: string;
  /** --intake-store-bytes: bytes the stored intake pods' files may total (IntakeSourceOptions.maxStoreBytes). */
  intakeStoreBytes?: number;
}

/** Dependencies of {@link newIntakeApi}: the agent's parts it reads or feeds. */
export interface IntakeApiDeps {
  logger: Logger;
  podManager: PodManager;
  /**
   * The merge's holder of a full name (PodConfig.owner): asked when the pod manager has none, for
   * pods whose SyncLoop ADD is still queued behind a big update.
   */
  mergedOwner?: (fullName: string) => { uid: string; source: string } | undefined;
  /** The merge's pod of a UID, any source (PodConfig.get): a POSTed pod may not take its UID. */
  mergedPod?: (uid: string) => Pod | undefined;
  /**
   * The agent's config update entry (the sync loop's `config` event). Returns a promise that
   * resolves once the update's changes are handled (a big one is handled in chunks,
   * sync-handler.ts); the intake methods wait for it before they answer.
   */
  onUpdate: (update: PodUpdate) => Promise<void> | void;
  /** Pods the node can still admit (SyncHandler.freePodSlots); a POST of more is refused whole with 403. Default unbounded. */
  freePodSlots?: () => number;
  /**
   * For a DELETE of an intake pod that a DELETE already removed and that still terminates
   * (pod/graceful-deletion.ts shortenDeletion, which may shorten its grace period): the pods'
   * watch and the pod workers. Both absent = such a DELETE answers 404.
   */
  statusManager?: GracefulDeletionDeps['statusManager'];
  podWorkers?: GracefulDeletionDeps['podWorkers'];
  /** Records an event on a pod: the restore's FailedRestore Warnings (IntakeSourceDeps.recordEvent). */
  recordEvent?: (pod: Pod, event: PodEventRecord) => void;
  /** The clock (epoch ms) of the intake pods' timestamps; default the real clock. */
  clock?: Clock;
}

/**
 * IntakeApi: the AgentHost's pod writes. Each waits until start() has restored the stored pods,
 * then rejects with the intake source's AgentError
 * (ERR_ALREADY_EXISTS, ERR_CONFLICT, ERR_FORBIDDEN, ERR_NOT_FOUND, ERR_INVALID_MANIFEST) or an I/O
 * error; nothing is changed then.
 */
export interface IntakeApi {
  /** start restores the persisted intake pods (one SET of source `api`); resolves once it was handled. */
  start(): Promise<void>;
  /**
   * submitPods stores and adds `pods` all or nothing; resolves with them and their statuses.
   * `write.dryRun`: checked and answered as stored (no status yet), nothing stored or added.
   */
  submitPods(pods: Pod[], write?: IntakeWrite): Promise<Pod[]>;
  /**
   * replacePod replaces intake pod `namespace/name` (same UID); resolves with it and its status.
   * `write.dryRun`: checked and answered as it would be stored, with the current status; nothing changes.
   */
  replacePod(namespace: string, name: string, pod: Pod, write?: IntakeWrite): Promise<Pod>;
  /**
   * deletePod removes intake pod `namespace/name`; the REMOVE carries `gracePeriodSeconds`
   * (seconds; default the pod's). Resolves with the pod marked deleted, and its status. A pod that
   * an earlier DELETE removed and that is still terminating answers again, as the apiserver's
   * delete of an object with a deletionTimestamp: a shorter `gracePeriodSeconds` shortens its grace
   * period (pod/graceful-deletion.ts shortenDeletion), anything else leaves it as it is.
   */
  deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod>;
  /**
   * heldUids: UIDs of stored pods no copy of which could be read at start (IntakeSource.heldUids):
   * the agent's housekeeping must leave their running containers alone.
   */
  heldUids(): ReadonlySet<string>;
}

class IntakeApiImpl implements IntakeApi {
  readonly #intake: IntakeSource;
  /** Completion of the last update handed to the agent: the intake methods' answers wait for it. */
  #applied: Promise<void> | void = undefined;
  /**
   * Resolved once start() restored the stored pods: the server answers before the sources start
   * (the first relist comes first), and a write that arrives meanwhile waits for it.
   */
  readonly #started: Promise<void>;
  #markStarted!: () => void;

  constructor(
    options: IntakeApiOptions,
    private readonly deps: IntakeApiDeps,
  ) {
    this.#started = new Promise<void>((resolve) => {
      this.#markStarted = resolve;
    });
    this.#intake = newIntakeSource(
      { rootDir: options.rootDir, nodeName: options.nodeName, maxStoreBytes: options.intakeStoreBytes },
      {
        logger: deps.logger.child({ component: 'intake-source' }),
        freePodSlots: deps.freePodSlots,
        recordEvent: deps.recordEvent,
        clock: deps.clock,
        onUpdate: (update) => {
          this.#applied = deps.onUpdate(update);
        },
        holder: (fullName) => {
          const r = deps.podManager.getByFullName(fullName);
          return r ? { uid: r.uid, source: podSource(r.pod) ?? 'unknown' } : deps.mergedOwner?.(fullName);
        },
        uidHolder: (uid) => {
          const pod = deps.podManager.get(uid)?.pod ?? deps.mergedPod?.(uid);
          return pod ? { fullName: podFullName(pod), source: podSource(pod) ?? 'unknown' } : undefined;
        },
      },
    );
  }

  async start(): Promise<void> {
    await this.#intake.start();
    await this.#applied;
    this.#markStarted();
  }

  #withStatus(pod: Pod): Pod {
    const r = this.deps.podManager.get(pod.metadata?.uid ?? '');
    return r ? { ...r.pod, status: r.status } : pod;
  }

  async submitPods(pods: Pod[], write: IntakeWrite = {}): Promise<Pod[]> {
    await this.#started;
    const stored = await this.#intake.submit(pods, write);
    if (write.dryRun) return stored;
    await this.#applied;
    failpoint('before-intake-reply');
    return stored.map((p) => this.#withStatus(p));
  }

  async replacePod(namespace: string, name: string, pod: Pod, write: IntakeWrite = {}): Promise<Pod> {
    await this.#started;
    const stored = await this.#intake.replace(namespace, name, pod, write);
    if (write.dryRun) {
      const status = this.deps.podManager.get(stored.metadata?.uid ?? '')?.status;
      return status ? { ...stored, status } : stored;
    }
    await this.#applied;
    return this.#withStatus(stored);
  }

  /** #deleteAgain: the terminating intake pod `namespace/name` after a repeated DELETE, or undefined when there is none. */
  #deleteAgain(namespace: string, name: string, gracePeriodSeconds: number | undefined): Pod | undefined {
    const record = this.deps.podManager.getByFullName(`${namespace}/${name}`);
    if (!record || podSource(record.pod) !== 'api') return undefined;
    const { statusManager, podWorkers, logger, podManager } = this.deps;
    const pod =
      statusManager && podWorkers
        ? shortenDeletion({ logger, podManager, statusManager, podWorkers }, record.uid, gracePeriodSeconds)
        : undefined;
    return pod && (record.status ? { ...pod, status: record.status } : pod);
  }

  heldUids(): ReadonlySet<string> {
    return this.#intake.heldUids();
  }

  async deletePod(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod> {
    await this.#started;
    let removed: Pod;
    try {
      removed = await this.#intake.remove(namespace, name, gracePeriodSeconds);
    } catch (err) {
      const again = isNotFound(err) ? this.#deleteAgain(namespace, name, gracePeriodSeconds) : undefined;
      if (again === undefined) throw err;
      return again;
    }
    await this.#applied;
    // The pod stays listed while it terminates (SyncLoop REMOVE puts the same deletion marks on it).
    const record = this.deps.podManager.get(removed.metadata?.uid ?? '');
    return record?.status ? { ...removed, status: record.status } : removed;
  }
}

/** newIntakeApi builds the intake's API half; nothing runs until start(). */
export function newIntakeApi(options: IntakeApiOptions, deps: IntakeApiDeps): IntakeApi {
  return new IntakeApiImpl(options, deps);
}

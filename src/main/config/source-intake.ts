/**
 * Counterpart of pkg/kubelet/config/apiserver.go (the kubelet's `api` pod source), fed by the
 * server's intake (POST/PUT/DELETE /pods) instead of an apiserver watch, and persisted under
 * `{--root-dir}/intake/` so that the pods survive an agent restart, also after `kill -9`
 * (docs/contracts.md "Pod sources and pod identity": name as given, `metadata.uid` if set else a new UUID, source annotation `api`).
 *
 * Durability: every write is temp file → fsync → rename → fsync of the directory, and a request is
 * answered only after that; each pod is stored twice, and the restore trusts only the agent's own
 * files (intake-pod-files.ts has the layout and what a restore does with each file). A batch is
 * all or nothing: every temp file is written and synced before the first rename; if a rename
 * fails, the files already renamed are removed again.
 * Operations are serialised (one at a time), so two requests for one name cannot both win.
 *
 * Bounds (issue #11 finding 4), both checked before anything is written, so a refused request
 * leaves the store as it was: a batch needs a free pod slot per pod (`freePodSlots`: --max-pods
 * minus the active pods, the kubelet's admission counted up front: a batch that cannot be admitted
 * whole is refused whole instead of being stored as Failed/OutOfpods pods), and the store's files
 * may total at most `maxStoreBytes`. Both refusals are ForbiddenError (403), as the apiserver's
 * ResourceQuota admission answers `exceeded quota`.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigHashAnnotationKey, ConfigSeenAnnotationKey, ConfigSourceAnnotationKey, podFullName } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { realClock, type Clock } from '../../shared/clock.js';
import { applyPodDefaults } from '../../shared/defaults.js';
import {
  AgentError,
  ConflictError,
  ForbiddenError,
  insufficientStorageError,
  InvalidManifestError,
  isNoSpaceErrno,
  type FieldError,
} from '../../shared/errors.js';
import { failpoint } from '../../shared/failpoints.js';
import { podContentHash } from '../../shared/hash.js';
import { podFields, type Logger } from '../../shared/logging.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import { markPodDeleted, type PodUpdate } from '../../shared/pod-update.js';
import { admitServiceAccount, admitServiceAccountReplace } from '../../shared/service-account-admission.js';
import { podFiles, removePodFiles, restoreIntakePods } from './intake-pod-files.js';
import { writeFilesDurably } from './intake-store.js';
import { syncDir } from '../host/serial-file.js';

export { intakeFileName } from './intake-pod-files.js';
export { storedJsonFiles, writeFilesDurably } from './intake-store.js';

/** kIntakeDirName: the directory under --root-dir that holds intake pods, one JSON file each. */
export const kIntakeDirName = 'intake';

/** A pod UID we accept from a client: it ends up in the runtime's labels and in `{rootDir}/pods/{uid}`. */
const kUidRe = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Options of {@link newIntakeSource}. */
export interface IntakeSourceOptions {
  /** --root-dir (absolute); pods are stored in `{rootDir}/intake/pod~{uid}.json` and its twin `pod~{uid}~2.json` (intake-pod-files.ts). */
  rootDir: string;
  /** This node's name: set as spec.nodeName of pods that name no node (they are bound to this node, as by a scheduler). */
  nodeName?: string;
  /**
   * Bytes the store's pod files may total (`--intake-store-bytes`; default unbounded): a submit or
   * replace that would pass it is refused with ForbiddenError before anything is written.
   */
  maxStoreBytes?: number;
}

/** Dependencies of {@link newIntakeSource}. */
export interface IntakeSourceDeps {
  logger: Logger;
  /** Receives the source's updates (SET once at start, then ADD / UPDATE / REMOVE). Main thread. */
  onUpdate: (update: PodUpdate) => void;
  /**
   * Who holds the full name `namespace/name` among the agent's pods (any source), if anyone:
   * its UID and source. Used for 409 AlreadyExists and 403 on another source's pod.
   */
  holder: (fullName: string) => { uid: string; source: string } | undefined;
  /**
   * Who holds the pod UID `uid` among the agent's pods of the other sources, if anyone: its full
   * name and source. A POSTed pod may not take another pod's UID (409; default: nobody).
   */
  uidHolder?: (uid: string) => { fullName: string; source: string } | undefined;
  /** The clock of config.seen, creationTimestamp and deletionTimestamp; default the real clock. */
  clock?: Clock;
  /**
   * Pods the node can still admit (--max-pods minus the active pods and those waiting to be
   * admitted; SyncHandler.freePodSlots); default unbounded. A submit of more pods is refused whole.
   */
  freePodSlots?: () => number;
  /** Records an event on a pod (the restore's FailedRestore Warnings); default: none recorded. */
  recordEvent?: (pod: Pod, event: PodEventRecord) => void;
}

/**
 * IntakeWrite: how a write is made. `dryRun`: run every check and answer with the result, but
 * change nothing (no file, no update to the agent) — the apiserver's `?dryRun=All`.
 */
export interface IntakeWrite {
  dryRun?: boolean;
}

/**
 * IntakeSource: the `api` source. Methods run on the main thread, are serialised, and reject with
 * AgentError: `ERR_ALREADY_EXISTS` (409), `ERR_NOT_FOUND` (404), `ERR_INVALID_MANIFEST` (422, a
 * bad uid), ForbiddenError `ERR_FORBIDDEN` (403: a pod of another source, more pods than free
 * slots, or a store past maxStoreBytes) or ConflictError `ERR_CONFLICT` (409: a uid precondition
 * that does not match).
 */
export interface IntakeSource {
  /** start restores the stored pods and sends them as one SET (also when there are none). Resolves when sent. */
  start(): Promise<void>;
  /**
   * submit admits new pods (defaulted and valid): assigns each its UID, sets the source
   * annotations and creationTimestamp, persists all of them, then sends one ADD. All or nothing.
   * With `write.dryRun` every check runs (names, UIDs, node, --max-pods, the store quota) and the
   * pods are answered as they would be stored, but nothing is written or sent (the apiserver's
   * `dryRun=All`).
   * @returns the pods as stored.
   */
  submit(pods: Pod[], write?: IntakeWrite): Promise<Pod[]>;
  /**
   * replace swaps the spec (and labels/annotations) of the intake pod `namespace/name`, keeping its
   * UID; sends UPDATE. `write.dryRun`: checked and answered, neither written nor sent.
   */
  replace(namespace: string, name: string, pod: Pod, write?: IntakeWrite): Promise<Pod>;
  /**
   * remove deletes the intake pod `namespace/name` from disk and sends REMOVE with the pod marked
   * as the apiserver marks a deleted one: `metadata.deletionTimestamp` and
   * `deletionGracePeriodSeconds` (`gracePeriodSeconds`, else the pod's, else 30; seconds).
   * @returns the pod removed, so marked.
   */
  remove(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod>;
  /** get: the stored intake pod `namespace/name`, or undefined. */
  get(namespace: string, name: string): Pod | undefined;
  /** The stored pods. */
  pods(): Pod[];
  /**
   * heldUids: UIDs of stored pods of which no copy could be read at start: their running
   * containers must be left alone (not cleaned up as orphans). Empty before start().
   */
  heldUids(): ReadonlySet<string>;
}

/**
 * configHashOf: the value of an intake pod's `kubernetes.io/config.hash`: podContentHash (32 chars)
 * of the pod without its own old `config.hash` (a pod read back with GET and PUT again hashes the
 * same). Unchanged from before podContentHash was shared, so stored intake pods keep their hash.
 */
function configHashOf(pod: Pod): string {
  const { [ConfigHashAnnotationKey]: _old, ...annotations } = pod.metadata?.annotations ?? {};
  return podContentHash({ ...pod, metadata: { ...pod.metadata, annotations } }, 32);
}

class IntakeSourceImpl implements IntakeSource {
  readonly #dir: string;
  readonly #rootDir: string;
  readonly #held = new Set<string>();
  readonly #pods = new Map<string, Pod>(); // fullName → pod
  /** UTF-8 bytes of each stored pod's file, by full name; `#storeBytes` is their sum. */
  readonly #fileBytes = new Map<string, number>();
  #storeBytes = 0;
  readonly #maxStoreBytes: number;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #clock: Clock;
  readonly #nodeName: string;

  constructor(
    options: IntakeSourceOptions,
    private readonly deps: IntakeSourceDeps,
  ) {
    this.#dir = join(options.rootDir, kIntakeDirName);
    this.#rootDir = options.rootDir;
    this.#nodeName = options.nodeName ?? '';
    this.#clock = deps.clock ?? realClock;
    this.#maxStoreBytes = options.maxStoreBytes ?? Infinity;
  }

  /** #setFileBytes records the size of `fullName`'s file (undefined: the file is gone). */
  #setFileBytes(fullName: string, bytes: number | undefined): void {
    this.#storeBytes += (bytes ?? 0) - (this.#fileBytes.get(fullName) ?? 0);
    if (bytes === undefined) this.#fileBytes.delete(fullName);
    else this.#fileBytes.set(fullName, bytes);
  }

  /**
   * #checkStoreBytes refuses a write of `files` (replacing those of `replacing`) that would take
   * the store past maxStoreBytes, as ResourceQuota's `exceeded quota` (403).
   */
  #checkStoreBytes(what: string, files: { content: string }[], replacing: string[] = []): void {
    const requested = files.reduce((n, f) => n + Buffer.byteLength(f.content), 0);
    const used = this.#storeBytes - replacing.reduce((n, f) => n + (this.#fileBytes.get(f) ?? 0), 0);
    if (used + requested > this.#maxStoreBytes) {
      throw new ForbiddenError(
        `${what} is forbidden: exceeded quota: intake store, requested: ${requested} bytes, used: ${used} bytes, limited: ${this.#maxStoreBytes} bytes (--intake-store-bytes)`,
      );
    }
  }

  /** Runs `fn` after every earlier operation (a mutex by promise chain). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  /**
   * Stores `pods` with writeFilesDurably (all or nothing). A full file system (ENOSPC, EDQUOT) is
   * logged as one warning line without a stack and rethrown as ERR_INSUFFICIENT_STORAGE (the
   * server's 507); nothing was stored then. Other I/O errors are rethrown as they are.
   */
  async #write(files: { name: string; content: string }[]): Promise<void> {
    try {
      await writeFilesDurably(this.#dir, files);
    } catch (err) {
      if (!isNoSpaceErrno(err)) throw err;
      const wrapped = insufficientStorageError(err, this.#dir);
      this.deps.logger.warn(
        { source: 'api', dir: this.#dir, pods: files.length, errno: (err as NodeJS.ErrnoException).code },
        `Could not store intake pods: ${wrapped.message}`,
      );
      throw wrapped;
    }
  }

  start(): Promise<void> {
    // In the chain, so a write that arrives before the restore is done waits for it (the restore
    // deletes leftover temp files, and its SET must come before the write's ADD).
    return this.#serial(() => this.#restore());
  }

  async #restore(): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    // The directory's own entry is durable too before the first pod is acknowledged (power loss; a kill -9 keeps the page cache).
    await syncDir(this.#rootDir);
    const restored = await restoreIntakePods(this.#dir, this.#rootDir, { logger: this.deps.logger, recordEvent: this.deps.recordEvent });
    for (const { pod, bytes } of restored.pods) {
      this.#pods.set(podFullName(pod), pod);
      this.#setFileBytes(podFullName(pod), bytes);
    }
    // A file left in place still takes its room in the store.
    this.#storeBytes += restored.strayBytes;
    for (const uid of restored.held) this.#held.add(uid);
    const pods = restored.pods.map((r) => r.pod);
    this.deps.logger.info({ source: 'api', pods: pods.length, held: restored.held.length, dir: this.#dir }, 'Restored intake pods');
    this.deps.onUpdate({ op: 'SET', source: 'api', pods });
  }

  /**
   * A pod bound to another node (spec.nodeName set and not this node's) can never run here: the
   * kubelet's NodeName admission predicate would reject it. The intake refuses it at the door
   * instead (a 422 naming the field), so that nothing is stored under a name it would hold.
   */
  #otherNode(pod: Pod, field: string): FieldError | null {
    const bound = pod.spec?.nodeName;
    if (!this.#nodeName || typeof bound !== 'string' || bound === '' || bound === this.#nodeName) return null;
    return {
      field,
      type: 'Invalid value',
      value: bound,
      detail: `must be empty or this node's name "${this.#nodeName}": the pod is bound to another node`,
    };
  }

  submit(pods: Pod[], write: IntakeWrite = {}): Promise<Pod[]> {
    return this.#serial(async () => {
      const errors: FieldError[] = [];
      const stored: Pod[] = [];
      const uids = new Set<string>();
      const now = new Date(this.#clock.now()).toISOString();
      pods.forEach((input, i) => {
        const pod = structuredClone(input) as Pod & { status?: unknown };
        const meta = (pod.metadata ??= {}) as { -readonly [K in keyof NonNullable<Pod['metadata']>]: NonNullable<Pod['metadata']>[K] };
        meta.namespace ??= 'default';
        const fullName = podFullName(pod);
        const held = this.deps.holder(fullName);
        if (held || this.#pods.has(fullName)) {
          throw new AgentError(
            'ERR_ALREADY_EXISTS',
            `pods "${meta.name}" already exists${held && held.source !== 'api' ? ` (held by a pod from source ${held.source})` : ''}`,
          );
        }
        const prefix = pods.length > 1 ? `[${i}].` : '';
        if (meta.uid !== undefined && meta.uid !== '') {
          if (!kUidRe.test(meta.uid)) {
            errors.push({
              field: `${prefix}metadata.uid`,
              type: 'Invalid value',
              value: meta.uid,
              detail:
                "must consist of alphanumeric characters, '-', '_' or '.', start with an alphanumeric character and be at most 128 characters",
            });
          } else if (uids.has(meta.uid) || [...this.#pods.values()].some((p) => p.metadata?.uid === meta.uid)) {
            throw new AgentError('ERR_ALREADY_EXISTS', `pods "${meta.name}" already exists: uid ${meta.uid} is taken`);
          } else {
            const other = this.deps.uidHolder?.(meta.uid);
            if (other)
              throw new AgentError(
                'ERR_ALREADY_EXISTS',
                `pods "${meta.name}" already exists: uid ${meta.uid} is taken by pod ${other.fullName} from source ${other.source}`,
              );
          }
        } else {
          meta.uid = randomUUID();
        }
        uids.add(meta.uid);
        const bound = this.#otherNode(pod, `${prefix}spec.nodeName`);
        if (bound) errors.push(bound);
        if (this.#nodeName && pod.spec && !pod.spec.nodeName) pod.spec.nodeName = this.#nodeName;
        admitServiceAccount(pod);
        meta.creationTimestamp = now;
        meta.annotations = { ...(meta.annotations ?? {}), [ConfigSourceAnnotationKey]: 'api', [ConfigSeenAnnotationKey]: now };
        meta.annotations[ConfigHashAnnotationKey] = configHashOf(pod);
        delete pod.status;
        stored.push(pod);
      });
      if (errors.length > 0) throw new InvalidManifestError('request body', errors);
      const what = stored.length === 1 ? `pods "${stored[0].metadata?.name}"` : 'pods';
      const free = Math.max(0, this.deps.freePodSlots?.() ?? Infinity);
      if (stored.length > free) {
        // As ResourceQuota's `exceeded quota` (403), before anything is written: the kubelet would
        // admit the first `free` and fail the rest with OutOfpods, but nothing would free them.
        throw new ForbiddenError(
          `${what} is forbidden: exceeded quota: node pod capacity (--max-pods), requested: pods=${stored.length}, free: pods=${free}; ${free} of the ${stored.length} would fit`,
        );
      }
      // Two copies per pod (podFiles); the quota counts one.
      const files = stored.flatMap((p) => podFiles(p));
      this.#checkStoreBytes(
        what,
        files.filter((_, i) => i % 2 === 0),
      );
      if (write.dryRun) return stored;
      failpoint('before-intake-write');
      await this.#write(files);
      failpoint('after-intake-write');
      stored.forEach((p, i) => {
        this.#pods.set(podFullName(p), p);
        this.#setFileBytes(podFullName(p), Buffer.byteLength(files[2 * i].content));
      });
      for (const p of stored) this.deps.logger.info({ ...podFields(p), source: 'api' }, 'Admitted intake pod');
      this.deps.onUpdate({ op: 'ADD', source: 'api', pods: stored });
      return stored;
    });
  }

  replace(namespace: string, name: string, input: Pod, write: IntakeWrite = {}): Promise<Pod> {
    return this.#serial(async () => {
      const fullName = `${namespace}/${name}`;
      const old = this.#pods.get(fullName);
      if (!old) throw this.#absent(fullName, name);
      const uid = old.metadata!.uid!;
      if (input.metadata?.uid && input.metadata.uid !== uid) {
        throw new ConflictError(`Precondition failed: UID in precondition: ${input.metadata.uid}, UID in object meta: ${uid}`);
      }
      const pod = structuredClone(input) as Pod & { status?: unknown };
      const bound = this.#otherNode(pod, 'spec.nodeName');
      if (bound) throw new InvalidManifestError('request body', [bound]);
      const now = new Date(this.#clock.now()).toISOString();
      if (this.#nodeName && pod.spec && !pod.spec.nodeName) pod.spec.nodeName = this.#nodeName;
      admitServiceAccountReplace(pod, old);
      // The API's resourceVersion is the server's, not the pod's content (a PATCH or a read-modify-write sends it back).
      const { resourceVersion: _rv, ...meta } = pod.metadata ?? {};
      pod.metadata = {
        ...meta,
        name,
        namespace,
        uid,
        creationTimestamp: old.metadata?.creationTimestamp,
        annotations: { ...(pod.metadata?.annotations ?? {}), [ConfigSourceAnnotationKey]: 'api', [ConfigSeenAnnotationKey]: now },
      };
      delete pod.status;
      const oldAnnotations = old.metadata?.annotations ?? {};
      const hash = configHashOf(pod);
      // An unchanged pod keeps when it was first seen (config.hash and config.seen, as the file source keeps an
      // unchanged manifest's): a no-op replace shows no change of either. A dry run (`kubectl diff`) answers
      // with both as they are: they are the node's bookkeeping, and the apiserver's dry run alters no
      // annotation the request did not change.
      const keep = hash === oldAnnotations[ConfigHashAnnotationKey] || write.dryRun;
      pod.metadata.annotations![ConfigSeenAnnotationKey] = keep ? (oldAnnotations[ConfigSeenAnnotationKey] ?? now) : now;
      pod.metadata.annotations![ConfigHashAnnotationKey] = keep ? (oldAnnotations[ConfigHashAnnotationKey] ?? hash) : hash;
      const files = podFiles(pod);
      const file = files[0];
      this.#checkStoreBytes(`pods "${name}"`, [file], [fullName]);
      if (write.dryRun) return pod;
      failpoint('before-intake-write');
      await this.#write(files);
      failpoint('after-intake-write');
      this.#pods.set(fullName, pod);
      this.#setFileBytes(fullName, Buffer.byteLength(file.content));
      this.deps.logger.info({ ...podFields(pod), source: 'api' }, 'Replaced intake pod');
      this.deps.onUpdate({ op: 'UPDATE', source: 'api', pods: [pod] });
      return pod;
    });
  }

  remove(namespace: string, name: string, gracePeriodSeconds?: number): Promise<Pod> {
    return this.#serial(async () => {
      const fullName = `${namespace}/${name}`;
      const pod = this.#pods.get(fullName);
      if (!pod) throw this.#absent(fullName, name);
      await removePodFiles(this.#dir, pod);
      this.#pods.delete(fullName);
      this.#setFileBytes(fullName, undefined);
      this.deps.logger.info({ ...podFields(pod), source: 'api' }, 'Deleted intake pod');
      // As the apiserver marks a deleted pod: the REMOVE itself carries the grace period.
      const deleted = markPodDeleted(pod, gracePeriodSeconds, this.#clock.now());
      this.deps.onUpdate({ op: 'REMOVE', source: 'api', pods: [deleted] });
      return deleted;
    });
  }

  /** The error for a full name that is not an intake pod: 403 if another source holds it, else 404. */
  #absent(fullName: string, name: string): AgentError {
    const held = this.deps.holder(fullName);
    if (held && held.source !== 'api') {
      return new ForbiddenError(
        `pods "${name}" is forbidden: it comes from source ${held.source}, not from the API; change its manifest instead`,
      );
    }
    return new AgentError('ERR_NOT_FOUND', `pods "${name}" not found`);
  }

  get(namespace: string, name: string): Pod | undefined {
    return this.#pods.get(`${namespace}/${name}`);
  }

  pods(): Pod[] {
    return [...this.#pods.values()];
  }

  heldUids(): ReadonlySet<string> {
    return this.#held;
  }
}

/** newIntakeSource creates the `api` source; nothing is read until start(). */
export function newIntakeSource(options: IntakeSourceOptions, deps: IntakeSourceDeps): IntakeSource {
  return new IntakeSourceImpl(options, deps);
}

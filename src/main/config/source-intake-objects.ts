/**
 * Counterpart of the apiserver's create / update / delete of ConfigMaps and Secrets (its
 * registry/core/configmap and registry/core/secret storage), for the intake: the objects posted
 * beside pods (`POST /pods`) or through `PUT` / `DELETE /configmaps|secrets/{namespace}/{name}`,
 * and those the Kubernetes API writes (`/api/v1/namespaces/{ns}/configmaps|secrets`:
 * server/kube-api/config-objects.ts; the API's objects are this source's, as its pods are the intake's),
 * persisted under `{--root-dir}/intake-objects/` (one JSON file each, mode 0600, written durably
 * as the intake's pods are: writeFilesDurably) and restored at start, fed to the object store as
 * source `api`. Operations are serialised. Contents are never logged (kind, namespace, name only).
 * Main thread only.
 *
 * Bound (break test of #39, finding 4): the files of the store (one copy of each object counted,
 * as the pods' budget counts one) may total at most `maxStoreBytes` (`--intake-store-bytes`, a budget of its own beside the pods'
 * one of config/source-intake.ts); a create or replace that would pass it is refused before
 * anything is written with ForbiddenError (403 `exceeded quota`), as the apiserver's ResourceQuota
 * admission refuses a write past a namespace's quota (plugin/pkg/admission/resourcequota,
 * staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go). The objects a
 * restore reads are counted, never refused.
 */
import { createHash, randomUUID } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { PodSourceName } from '../../shared/api.js';
import { realClock, type Clock } from '../../shared/clock.js';
import {
  configObjectResource,
  keyOf,
  normalizeConfigObject,
  validateConfigObjectUpdate,
  type ConfigObject,
  type ConfigObjectKind,
} from '../../shared/config-objects.js';
import {
  AgentError,
  ConflictError,
  ForbiddenError,
  formatFieldError,
  insufficientStorageError,
  InvalidManifestError,
  isNoSpaceErrno,
} from '../../shared/errors.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import type { ConfigObjectUpdate } from './object-store.js';
import { readStoredFile, setAsideStoredFile, storedJsonFiles, writeFilesDurably } from './intake-store.js';
import { syncDir } from '../host/serial-file.js';

/** kIntakeObjectsDirName: the directory under --root-dir that holds intake ConfigMaps and Secrets. */
export const kIntakeObjectsDirName = 'intake-objects';

/** resourceOf: the API resource name of a kind (`configmaps`, `secrets`), as Status messages name it. */
export function resourceOf(kind: ConfigObjectKind): string {
  return configObjectResource(kind);
}

/**
 * kMaxObjectFileNameBytes: the longest first-copy file name written (255 bytes, NAME_MAX, less the
 * temp file's `.` + `.{8 hex}.tmp` of writeFilesDurably, less the twin's `~2`).
 */
const kMaxObjectFileNameBytes = 255 - 14 - 2;

/**
 * intakeObjectFileName: `{configmap|secret|persistentvolumeclaim}_{namespace}_{name}.json` (DNS names hold no `_`); when
 * that would not fit in a file name (a name of up to 253 characters: issue #38 finding 10), the
 * name is cut to 150 characters and `~` and 16 hex digits of the SHA-256 of `{kind}/{namespace}/{name}`
 * are appended (`~` is in no DNS name, so no such name collides with a short one). The restore
 * reads the object's identity from its content, never from the file name.
 */
export function intakeObjectFileName(o: ConfigObject): string {
  const ns = o.metadata?.namespace ?? 'default';
  const name = o.metadata?.name ?? '';
  const plain = `${o.kind.toLowerCase()}_${ns}_${name}.json`;
  if (Buffer.byteLength(plain) <= kMaxObjectFileNameBytes) return plain;
  const hash = createHash('sha256').update(`${o.kind}/${ns}/${name}`).digest('hex').slice(0, 16);
  return `${o.kind.toLowerCase()}_${ns}_${name.slice(0, 150)}~${hash}.json`;
}

/**
 * intakeObjectFileNames: the two copies of an object, as the intake's pods keep two
 * (intake-pod-files.ts): {@link intakeObjectFileName} and its twin, `…~2.json` (no first-copy
 * name ends so: a DNS name holds no `~`, a hash is 16 digits).
 */
export function intakeObjectFileNames(o: ConfigObject): [string, string] {
  const first = intakeObjectFileName(o);
  return [first, `${first.slice(0, -'.json'.length)}~2.json`];
}

/** Options and dependencies of {@link newIntakeObjectSource}. */
export interface IntakeObjectSourceDeps {
  /** --root-dir (absolute). */
  rootDir: string;
  logger: Logger;
  /** Receives the source's updates (SET once at start, then ADD / UPDATE / REMOVE). */
  onUpdate: (update: ConfigObjectUpdate) => void;
  /** Which source holds `kind/namespace/name` in the object store, if any (ObjectStore.owner). */
  owner: (kind: ConfigObjectKind, namespace: string, name: string) => PodSourceName | undefined;
  /** The clock of creationTimestamp; default the real clock. */
  clock?: Clock;
  /**
   * Bytes the store's files (one copy of each object counted) may total (`--intake-store-bytes`;
   * default unbounded): a create or replace that would pass it is refused with ForbiddenError (403).
   */
  maxStoreBytes?: number;
  /**
   * The object store's current `kind/namespace/name` (ObjectStore.get: its resourceVersion
   * stamped), for the resourceVersion preconditions of replace and remove. Without it a
   * resourceVersion precondition never holds.
   */
  current?: (kind: ConfigObjectKind, namespace: string, name: string) => ConfigObject | undefined;
}

/**
 * ObjectWrite: how a write is made. `dryRun` (the API's `?dryRun=All`): every check runs and the
 * answer is the object as it would be stored, but nothing is written or sent. `preconditions`
 * (remove only; replace reads them from the object's own metadata): the DeleteOptions'
 * `uid` / `resourceVersion` the current object must have, else ConflictError (409).
 */
export interface ObjectWrite {
  dryRun?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/** kConflictDetail: the apiserver's message for a write based on a stale resourceVersion (storage.NewResourceVersionConflictsError). */
const kConflictDetail = 'the object has been modified; please apply your changes to the latest version and try again';

/** withoutVersion: `o` without `metadata.resourceVersion` (the object store stamps it; never stored). */
function withoutVersion(o: ConfigObject): ConfigObject {
  if (o.metadata?.resourceVersion === undefined) return o;
  const { resourceVersion: _rv, ...meta } = o.metadata;
  return { ...o, metadata: meta } as ConfigObject;
}

/** storedBytes: the bytes of one of the two files `o` is stored in (its JSON), as the pods' budget counts one copy. */
function storedBytes(o: ConfigObject): number {
  return Buffer.byteLength(JSON.stringify(o));
}

/**
 * IntakeObjectSource: the intake's ConfigMaps and Secrets. Every method rejects with an AgentError
 * and changes nothing then: ERR_ALREADY_EXISTS (`configmaps "x" already exists`, 409),
 * ERR_NOT_FOUND (`configmaps "x" not found`, 404), ForbiddenError (403: an object of another
 * source), InvalidManifestError (422: an update an `immutable` object or a Secret's type forbids),
 * ConflictError (409: a resourceVersion or uid precondition that does not hold: the apiserver's
 * `Operation cannot be fulfilled on configmaps "x": the object has been modified; …`),
 * ForbiddenError (403 `exceeded quota`: a write past `maxStoreBytes`), or
 * ERR_INSUFFICIENT_STORAGE. As the apiserver's create (rest.BeforeCreate), a created object gets a
 * new `metadata.uid` and `creationTimestamp` whatever the body says; a replace keeps both.
 */
export interface IntakeObjectSource {
  /** start restores the stored objects and sends them as one SET. */
  start(): Promise<void>;
  /** create stores new objects (checked and normalised already) all or nothing; sends ADD. */
  create(objects: ConfigObject[], write?: ObjectWrite): Promise<ConfigObject[]>;
  /**
   * replace stores `object` over the intake object of its kind and name; sends UPDATE. A
   * non-empty `metadata.resourceVersion` (or `uid`) in `object` is a precondition on the current one.
   */
  replace(object: ConfigObject, write?: ObjectWrite): Promise<ConfigObject>;
  /** remove deletes the intake object `kind namespace/name`; sends REMOVE. */
  remove(kind: ConfigObjectKind, namespace: string, name: string, write?: ObjectWrite): Promise<ConfigObject>;
}

class IntakeObjectSourceImpl implements IntakeObjectSource {
  readonly #dir: string;
  readonly #objects = new Map<string, ConfigObject>();
  /** Bytes of the file of each stored object (one copy), by key; #storeBytes is their sum. */
  readonly #fileBytes = new Map<string, number>();
  #storeBytes = 0;
  /**
   * The writes' chain starts closed: the server answers before the sources start (the first relist
   * comes first), and a write that arrives meanwhile waits until start() has restored the store
   * (and made its directory), as the intake's pod writes do.
   */
  #chain: Promise<unknown>;
  #open!: () => void;

  constructor(private readonly deps: IntakeObjectSourceDeps) {
    this.#dir = join(deps.rootDir, kIntakeObjectsDirName);
    this.#chain = new Promise<void>((resolve) => {
      this.#open = resolve;
    });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => {});
    return run;
  }

  start(): Promise<void> {
    return this.#restore().finally(() => this.#open());
  }

  /**
   * #restore: per object (its identity read from the content), the first copy that is a regular
   * file of the agent's user, not writable by others, and parses and validates wins; a refused copy
   * (special, other owner, loose mode) is set aside, an unreadable one left in place; then each
   * object whose two copies are not both its usable files under their names is written again
   * (both copies) and a usable file of another name removed (the naming before, a near-limit name).
   */
  #restore(): Promise<void> {
    return (async () => {
      const usable = new Map<string, string[]>();
      for (const file of await storedJsonFiles(this.#dir)) {
        const read = await readStoredFile(file);
        if (read.kind === 'special' || read.kind === 'untrusted') {
          // Never opened (special) or not the agent's own (owner, mode): out of the way, never deleted.
          const aside = await setAsideStoredFile(this.deps.rootDir, file).catch((err: Error) => `not moved: ${err.message}`);
          this.deps.logger.warn(
            { source: 'api', file, err: read.reason, setAside: aside },
            'Refused an intake object file the agent cannot trust; set it aside',
          );
          continue;
        }
        try {
          if (read.kind === 'error') throw new Error(read.reason);
          const r = normalizeConfigObject(JSON.parse(read.text) as unknown);
          if (r.errors) throw new Error(r.errors.map(formatFieldError).join('; '));
          const key = keyOf(r.object);
          if (!this.#objects.has(key)) this.#setStored(key, r.object);
          usable.set(key, [...(usable.get(key) ?? []), file]);
        } catch (err) {
          // The message names fields and keys only (normalizeConfigObject never quotes a value).
          this.deps.logger.warn(
            { source: 'api', file, err: boundedField((err as Error).message) },
            'Could not restore an intake object; leaving its file in place',
          );
        }
      }
      for (const [key, object] of this.#objects) {
        const names = intakeObjectFileNames(object).map((n) => join(this.#dir, n));
        const files = usable.get(key) ?? [];
        if (names.every((n) => files.includes(n)) && files.every((f) => names.includes(f))) continue;
        try {
          await this.#write([object]);
          for (const f of files) if (!names.includes(f)) await unlink(f).catch(() => {});
          this.deps.logger.info({ source: 'api', object: key }, 'Rewrote the two copies of an intake object');
        } catch (err) {
          this.deps.logger.warn(
            { source: 'api', object: key, err: boundedField((err as Error).message) },
            'Could not rewrite the copies of an intake object; keeping what was read',
          );
        }
      }
      this.deps.logger.info({ source: 'api', objects: this.#objects.size, dir: this.#dir }, 'Restored intake ConfigMaps and Secrets');
      this.deps.onUpdate({ source: 'api', op: 'SET', objects: [...this.#objects.values()] });
    })();
  }

  /** #setStored records `o` as stored (with the bytes of its file), or forgets `key` (o undefined). */
  #setStored(key: string, o: ConfigObject | undefined): void {
    const bytes = o === undefined ? 0 : storedBytes(o);
    this.#storeBytes += bytes - (this.#fileBytes.get(key) ?? 0);
    if (o === undefined) {
      this.#objects.delete(key);
      this.#fileBytes.delete(key);
    } else {
      this.#objects.set(key, o);
      this.#fileBytes.set(key, bytes);
    }
  }

  /**
   * #checkStoreBytes throws ForbiddenError (403, ResourceQuota's `exceeded quota`) when storing
   * `objects` (each replacing the stored object of its key, if any) would take the store's files
   * past maxStoreBytes.
   */
  #checkStoreBytes(objects: ConfigObject[]): void {
    const max = this.deps.maxStoreBytes ?? Infinity;
    const requested = objects.reduce((n, o) => n + storedBytes(o), 0);
    const used = this.#storeBytes - objects.reduce((n, o) => n + (this.#fileBytes.get(keyOf(o)) ?? 0), 0);
    if (used + requested <= max) return;
    const first = objects[0];
    throw new ForbiddenError(
      `${resourceOf(first.kind)} ${JSON.stringify(first.metadata?.name ?? '')} is forbidden: exceeded quota: intake object store, requested: ${requested} bytes, used: ${used} bytes, limited: ${max} bytes (--intake-store-bytes)`,
    );
  }

  async #write(objects: ConfigObject[]): Promise<void> {
    try {
      await writeFilesDurably(
        this.#dir,
        objects.flatMap((o) => intakeObjectFileNames(o).map((name) => ({ name, content: JSON.stringify(o) }))),
      );
    } catch (err) {
      throw isNoSpaceErrno(err) ? insufficientStorageError(err, this.#dir) : err;
    }
  }

  /** #checkPreconditions throws ConflictError unless `current` (its store version) has `uid` and `resourceVersion` when given. */
  #checkPreconditions(prev: ConfigObject, pre: ObjectWrite['preconditions']): void {
    const name = prev.metadata?.name ?? '';
    const fail = (detail: string) =>
      new ConflictError(`Operation cannot be fulfilled on ${resourceOf(prev.kind)} ${JSON.stringify(name)}: ${detail}`);
    const uid = prev.metadata?.uid ?? '';
    if (pre?.uid && pre.uid !== uid) throw fail(`Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${uid}`);
    if (pre?.resourceVersion) {
      const have = this.deps.current?.(prev.kind, prev.metadata?.namespace ?? 'default', name)?.metadata?.resourceVersion ?? '';
      if (pre.resourceVersion !== have) throw fail(kConflictDetail);
    }
  }

  create(objects: ConfigObject[], write: ObjectWrite = {}): Promise<ConfigObject[]> {
    return this.#serial(async () => {
      const now = new Date(Math.floor((this.deps.clock ?? realClock).now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
      const stored: ConfigObject[] = [];
      for (const o of objects) {
        const ns = o.metadata?.namespace ?? 'default';
        const name = o.metadata?.name ?? '';
        if (this.#objects.has(keyOf(o)) || this.deps.owner(o.kind, ns, name) !== undefined) {
          throw new AgentError('ERR_ALREADY_EXISTS', `${resourceOf(o.kind)} "${name}" already exists`);
        }
        stored.push(withoutVersion({ ...o, metadata: { ...o.metadata, uid: randomUUID(), creationTimestamp: now } } as ConfigObject));
      }
      this.#checkStoreBytes(stored);
      if (write.dryRun) return stored;
      await this.#write(stored);
      for (const o of stored) this.#setStored(keyOf(o), o);
      this.deps.logger.info({ source: 'api', objects: stored.map(keyOf) }, 'Stored intake objects');
      this.deps.onUpdate({ source: 'api', op: 'ADD', objects: stored });
      return stored;
    });
  }

  replace(object: ConfigObject, write: ObjectWrite = {}): Promise<ConfigObject> {
    return this.#serial(async () => {
      const ns = object.metadata?.namespace ?? 'default';
      const name = object.metadata?.name ?? '';
      const prev = this.#objects.get(keyOf(object));
      if (!prev) {
        const owner = this.deps.owner(object.kind, ns, name);
        if (owner)
          throw new ForbiddenError(`${resourceOf(object.kind)} "${name}" is forbidden: it comes from the ${owner} source; change it there`);
        throw new AgentError('ERR_NOT_FOUND', `${resourceOf(object.kind)} "${name}" not found`);
      }
      this.#checkPreconditions(prev, { uid: object.metadata?.uid, resourceVersion: object.metadata?.resourceVersion });
      const errors = validateConfigObjectUpdate(object, prev);
      if (errors.length > 0) throw new InvalidManifestError(`${object.kind} "${name}"`, errors);
      // A deletion once marked stays (a claim's: config/claims.ts), as BeforeUpdate keeps deletionTimestamp.
      const deletion = prev.metadata?.deletionTimestamp
        ? { deletionTimestamp: prev.metadata.deletionTimestamp, deletionGracePeriodSeconds: prev.metadata.deletionGracePeriodSeconds }
        : {};
      const stored = withoutVersion({
        ...object,
        metadata: { ...object.metadata, creationTimestamp: prev.metadata?.creationTimestamp, uid: prev.metadata?.uid, ...deletion },
      } as ConfigObject);
      this.#checkStoreBytes([stored]);
      if (write.dryRun) return stored;
      await this.#write([stored]);
      this.#setStored(keyOf(stored), stored);
      this.deps.logger.info({ source: 'api', object: keyOf(stored) }, 'Replaced intake object');
      this.deps.onUpdate({ source: 'api', op: 'UPDATE', objects: [stored] });
      return stored;
    });
  }

  remove(kind: ConfigObjectKind, namespace: string, name: string, write: ObjectWrite = {}): Promise<ConfigObject> {
    return this.#serial(async () => {
      const key = `${kind}/${namespace}/${name}`;
      const prev = this.#objects.get(key);
      if (!prev) {
        const owner = this.deps.owner(kind, namespace, name);
        if (owner)
          throw new ForbiddenError(`${resourceOf(kind)} "${name}" is forbidden: it comes from the ${owner} source; remove it there`);
        throw new AgentError('ERR_NOT_FOUND', `${resourceOf(kind)} "${name}" not found`);
      }
      this.#checkPreconditions(prev, write.preconditions);
      if (write.dryRun) return prev;
      for (const name of intakeObjectFileNames(prev)) {
        await unlink(join(this.#dir, name)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
      }
      await syncDir(this.#dir);
      this.#setStored(key, undefined);
      this.deps.logger.info({ source: 'api', object: key }, 'Removed intake object');
      this.deps.onUpdate({ source: 'api', op: 'REMOVE', objects: [prev] });
      return prev;
    });
  }
}

/** newIntakeObjectSource builds the source; nothing is read until start(). */
export function newIntakeObjectSource(deps: IntakeObjectSourceDeps): IntakeObjectSource {
  return new IntakeObjectSourceImpl(deps);
}

/**
 * The PersistentVolumeClaims of a lone node, as the controllers that handle claims upstream do for
 * one node: the local-path provisioner's directory per claim (rancher/local-path-provisioner:
 * made when the claim appears, removed when it goes: reclaim policy Delete), the pvc-protection
 * controller (pkg/controller/volume/pvcprotection: a claim deleted while a pod uses it keeps its
 * `kubernetes.io/pvc-protection` finalizer and shows `deletionTimestamp`; it goes, and its directory
 * with it, once no pod uses it), and the ReadWriteOncePod check of the scheduler's VolumeRestrictions
 * plugin (pkg/scheduler/framework/plugins/volumerestrictions: one pod only; a second one does not
 * start and is told why in a FailedMount event).
 *
 * "Uses" is as the pvc-protection controller's podUsesPVC: a pod of the node (any source) naming the
 * claim whose phase is not Succeeded or Failed. Main thread.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { Pod } from '../../shared/api.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { podObjectRefs, type ConfigObject } from '../../shared/config-objects.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { claimDir, usesClaims, type PersistentVolumeClaim } from '../../shared/pvc.js';
import type { ObjectStore } from './object-store.js';
import type { IntakeObjectSource, ObjectWrite } from './source-intake-objects.js';

/** kClaimReconcileMs: how often claims marked deleted are checked for pods still using them (milliseconds). */
export const kClaimReconcileMs = 1000;

/** Dependencies of {@link newClaimController}. */
export interface ClaimControllerDeps {
  /** --root-dir (absolute). */
  rootDir: string;
  logger: Logger;
  objects: ObjectStore;
  intakeObjects: IntakeObjectSource;
  /** The pods of the node with their status (listPods). */
  pods: () => Pod[];
  /** The clock of deletionTimestamp and of the reconcile timer; default the real clock. */
  clock?: Clock;
}

/** ClaimController: the claims' directories, deletion protection and ReadWriteOncePod. */
export interface ClaimController {
  /**
   * remove: the API's DELETE of a claim: a claim no pod uses is removed (and its directory); one in
   * use is marked deleted (`deletionTimestamp`) and removed later. Rejects as IntakeObjectSource.remove.
   */
  remove(namespace: string, name: string, write?: ObjectWrite): Promise<ConfigObject>;
  /** configObjectsFor: ObjectStore.configObjectsFor with `claimsRefused` for a ReadWriteOncePod claim another pod holds. */
  configObjectsFor(pod: Pod): PodConfigObjects | undefined;
  /**
   * start: every source has given its pods; from now on a claim marked deleted that no pod uses is
   * removed (before, a pod not yet restored would look like none: nothing is removed then).
   */
  start(): void;
  /** stop ends the periodic check and the store subscription. */
  stop(): void;
}

class ClaimControllerImpl implements ClaimController {
  readonly #off: () => void;
  #timer: TimerHandle | undefined;
  readonly #clock: Clock;
  /** claim key → the uid of the pod holding a ReadWriteOncePod claim. */
  readonly #holders = new Map<string, string>();
  #busy = false;

  constructor(private readonly deps: ClaimControllerDeps) {
    this.#clock = deps.clock ?? realClock;
    this.#off = deps.objects.subscribe((c) => {
      if (c.object.kind !== 'PersistentVolumeClaim') return;
      if (c.type === 'ADDED') void this.#dir(c.object, 'make');
      else if (c.type === 'DELETED') void this.#dir(c.object, 'remove');
    });
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = this.#clock.setInterval(() => void this.#finishDeletions(), kClaimReconcileMs);
  }

  /** #dir makes or removes the claim's directory; a failure is logged, never thrown. */
  async #dir(claim: PersistentVolumeClaim, op: 'make' | 'remove'): Promise<void> {
    try {
      const dir = claimDir(this.deps.rootDir, claim);
      if (op === 'make') await mkdir(dir, { recursive: true, mode: 0o777 });
      else await rm(dir, { recursive: true, force: true });
      this.deps.logger.info(
        { claim: `${claim.metadata?.namespace}/${claim.metadata?.name}`, dir },
        op === 'make' ? 'Provisioned the directory of a claim' : 'Removed the directory of a deleted claim',
      );
    } catch (err) {
      this.deps.logger.warn(
        { claim: `${claim.metadata?.namespace}/${claim.metadata?.name}`, err: boundedField((err as Error).message) },
        `Could not ${op} the directory of a claim`,
      );
    }
  }

  /** #users: the pods of the node that use claim `namespace/name`. */
  #users(namespace: string, name: string): Pod[] {
    return this.deps
      .pods()
      .filter((p) => usesClaims(p) && (p.metadata?.namespace || 'default') === namespace && podObjectRefs(p).claims.includes(name));
  }

  async remove(namespace: string, name: string, write: ObjectWrite = {}): Promise<ConfigObject> {
    const claim = this.deps.objects.get('PersistentVolumeClaim', namespace, name);
    // Before start() the pods are not all known yet: a claim is then only marked.
    if (
      !claim ||
      this.deps.objects.owner('PersistentVolumeClaim', namespace, name) !== 'api' ||
      (this.#timer !== undefined && this.#users(namespace, name).length === 0)
    ) {
      return this.deps.intakeObjects.remove('PersistentVolumeClaim', namespace, name, write);
    }
    if (claim.metadata?.deletionTimestamp) return claim;
    const at = new Date(Math.floor(this.#clock.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const { resourceVersion: _rv, ...meta } = claim.metadata ?? {};
    const marked = { ...claim, metadata: { ...meta, deletionTimestamp: at, deletionGracePeriodSeconds: 0 } } as ConfigObject;
    if (write.preconditions?.uid && write.preconditions.uid !== claim.metadata?.uid)
      return this.deps.intakeObjects.remove('PersistentVolumeClaim', namespace, name, write);
    return this.deps.intakeObjects.replace(marked, { dryRun: write.dryRun });
  }

  /** #finishDeletions removes the claims marked deleted that no pod uses any more. */
  async #finishDeletions(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (const c of this.deps.objects.list('PersistentVolumeClaim')) {
        const ns = c.metadata?.namespace ?? 'default';
        const name = c.metadata?.name ?? '';
        if (
          !c.metadata?.deletionTimestamp ||
          this.deps.objects.owner('PersistentVolumeClaim', ns, name) !== 'api' ||
          this.#users(ns, name).length > 0
        )
          continue;
        await this.deps.intakeObjects.remove('PersistentVolumeClaim', ns, name).catch((err: Error) => {
          this.deps.logger.warn({ claim: `${ns}/${name}`, err: boundedField(err.message) }, 'Could not finish the deletion of a claim');
        });
      }
    } finally {
      this.#busy = false;
    }
  }

  configObjectsFor(pod: Pod): PodConfigObjects | undefined {
    const out = this.deps.objects.configObjectsFor(pod);
    if (!out?.claims) return out;
    const uid = pod.metadata?.uid ?? '';
    const ns = pod.metadata?.namespace || 'default';
    for (const [name, claim] of Object.entries(out.claims)) {
      if (!claim?.spec?.accessModes?.includes('ReadWriteOncePod')) continue;
      const key = `${ns}/${name}`;
      const holder = this.#holders.get(key);
      const holding = holder === undefined || holder === uid ? undefined : this.#users(ns, name).find((p) => p.metadata?.uid === holder);
      if (holding) {
        out.claimsRefused = {
          ...out.claimsRefused,
          [name]: `persistentvolumeclaim ${JSON.stringify(name)} has the ReadWriteOncePod access mode and is already in use by pod ${JSON.stringify(holding.metadata?.name)}`,
        };
      } else {
        this.#holders.set(key, uid);
      }
    }
    return out;
  }

  stop(): void {
    this.#clock.clearInterval(this.#timer);
    this.#off();
  }
}

/** newClaimController starts watching the object store's claims; stop() ends it. */
export function newClaimController(deps: ClaimControllerDeps): ClaimController {
  return new ClaimControllerImpl(deps);
}

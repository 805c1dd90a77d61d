/**
 * Counterpart of the kubelet's configmap and secret managers (pkg/kubelet/configmap,
 * pkg/kubelet/secret over pkg/kubelet/util/manager/watch_based_manager.go): the ConfigMaps and
 * Secrets the node knows, merged from every source, and the lookup a pod's sync uses.
 *
 * Where the kubelet watches each object a registered pod references through the apiserver, this
 * store is fed by the sources themselves (a manifest file or URL, the intake, etcd) and holds every
 * object they give; a sync task gets exactly the objects its pod references ({@link
 * ObjectStore.configObjectsFor}), `null` for one referenced but absent (the managers' Get returning
 * NotFound). The same `kind/namespace/name` from two sources: the first one seen wins and keeps it
 * while its source still offers it (as PodConfig does for pods); the others are conflicts.
 *
 * Every change of a winning object (it appeared, its content changed, it went) is stamped with a
 * resourceVersion from one counter shared by ConfigMaps and Secrets (the apiserver's etcd revision
 * for these two kinds: registry/generic/registry/store.go, storage/etcd3): the object as read
 * carries it in `metadata.resourceVersion`, and the store keeps a bounded change feed (ADDED /
 * MODIFIED / DELETED with the object and its version) for a watch to resume from. The counter is
 * its own, not the pods' (the status manager's watch counter): as upstream says of every
 * resourceVersion, the two are opaque and never compared; both start at 0 when the agent starts.
 *
 * Contents are never logged here (keys and sources only). Main thread only; synchronous.
 */
import type { PodSourceName } from '../../shared/api.js';
import { keyOf, podObjectRefs, type ConfigObject } from '../../shared/config-objects.js';
import type { Pod } from '../../shared/api.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { configObjectKey } from '../../shared/config-objects.js';

/**
 * ConfigObjectUpdate: one source's change of its objects, as PodUpdate for pods: SET (its complete
 * set), ADD / UPDATE (these objects, new or replaced) or REMOVE (these objects, by kind and name).
 */
export interface ConfigObjectUpdate {
  source: PodSourceName;
  op: 'SET' | 'ADD' | 'UPDATE' | 'REMOVE';
  objects: ConfigObject[];
}

/** ObjectStoreChanges: the keys (`kind/namespace/name`) whose winning object appeared, changed or went, and the refused duplicates. */
export interface ObjectStoreChanges {
  changed: string[];
  /** Objects of this update that another source's object of the same key holds. */
  conflicts: { key: string; source: PodSourceName; heldBy: PodSourceName }[];
}

/**
 * ObjectChange: one entry of the store's change feed, as a watch event of the apiserver: the object
 * as it now is (DELETED: as it was, with the deletion's version), `resourceVersion` the counter's
 * value of this change (also in `object.metadata.resourceVersion`).
 */
export interface ObjectChange {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: ConfigObject;
  resourceVersion: number;
}

/** kObjectChangeHistory: how many changes the feed keeps for a resume (older: changesSince answers undefined, a 410). */
export const kObjectChangeHistory = 1000;

/** ObjectStore: the merged ConfigMaps, Secrets and PersistentVolumeClaims (shared/pvc.ts; their directories and deletion: claims.ts). Main thread only. */
export interface ObjectStore {
  /** apply merges one source's update; returns which keys' winning object changed. */
  apply(update: ConfigObjectUpdate): ObjectStoreChanges;
  /** get: the winning object of `kind/namespace/name`, or undefined. */
  get(kind: ConfigObject['kind'], namespace: string, name: string): ConfigObject | undefined;
  /** owner: which source holds `kind/namespace/name`, or undefined. */
  owner(kind: ConfigObject['kind'], namespace: string, name: string): PodSourceName | undefined;
  /**
   * configObjectsFor: the objects `pod` references (podObjectRefs: ConfigMaps, Secrets and the
   * claims of its persistentVolumeClaim volumes), by name, `null` for those absent; undefined when
   * it references none (SyncPodTask.configObjects is then left out).
   */
  configObjectsFor(pod: Pod): PodConfigObjects | undefined;
  /** list: the winning objects, `kind` only when given, in key order. */
  list(kind?: ConfigObject['kind']): ConfigObject[];
  /** The number of objects held (winners), for tests and metrics. */
  size(): number;
  /** resourceVersion: the counter's value of the last change (0 before any): a List's `metadata.resourceVersion`. */
  resourceVersion(): number;
  /**
   * changesSince: the changes after resourceVersion `rv`, oldest first (empty when none), or
   * undefined when `rv` is older than the kept history (kObjectChangeHistory) or newer than the
   * counter: the watch's 410 Gone.
   */
  changesSince(rv: number): ObjectChange[] | undefined;
  /** subscribe: `fn` gets every change as it is made, in version order, until the returned function is called. */
  subscribe(fn: (change: ObjectChange) => void): () => void;
}

interface Entry {
  object: ConfigObject;
  source: PodSourceName;
  seq: number;
  /** JSON of the object, to tell a real change from the same object sent again. */
  json: string;
}

/** stamp: `o` with `metadata.resourceVersion` set to `rv` (a copy). */
function stamp(o: ConfigObject, rv: number): ConfigObject {
  return { ...o, metadata: { ...o.metadata, resourceVersion: String(rv) } } as ConfigObject;
}

class ObjectStoreImpl implements ObjectStore {
  /** source → key → its entry. */
  readonly #bySource = new Map<PodSourceName, Map<string, Entry>>();
  /** key → the winning entry. */
  readonly #winner = new Map<string, Entry>();
  /** key → the winning object as read (its resourceVersion stamped). */
  readonly #stamped = new Map<string, ConfigObject>();
  readonly #history: ObjectChange[] = [];
  readonly #subscribers = new Set<(change: ObjectChange) => void>();
  #seq = 0;
  #rv = 0;

  apply(update: ConfigObjectUpdate): ObjectStoreChanges {
    let current = this.#bySource.get(update.source);
    if (!current) this.#bySource.set(update.source, (current = new Map()));
    const touched = new Set<string>();
    const put = (o: ConfigObject) => {
      const key = keyOf(o);
      const old = current!.get(key);
      current!.set(key, { object: o, source: update.source, seq: old?.seq ?? ++this.#seq, json: JSON.stringify(o) });
      touched.add(key);
    };
    switch (update.op) {
      case 'SET': {
        const keep = new Set(update.objects.map(keyOf));
        for (const key of [...current.keys()]) {
          if (!keep.has(key)) {
            current.delete(key);
            touched.add(key);
          }
        }
        for (const o of update.objects) put(o);
        break;
      }
      case 'ADD':
      case 'UPDATE':
        for (const o of update.objects) put(o);
        break;
      case 'REMOVE':
        for (const o of update.objects) {
          const key = keyOf(o);
          if (current.delete(key)) touched.add(key);
        }
        break;
    }
    const changes: ObjectStoreChanges = { changed: [], conflicts: [] };
    for (const key of touched) {
      const previous = this.#winner.get(key);
      let winner: Entry | undefined = previous ? this.#bySource.get(previous.source)?.get(key) : undefined;
      if (!winner) {
        for (const m of this.#bySource.values()) {
          const e = m.get(key);
          if (e && (!winner || e.seq < winner.seq)) winner = e;
        }
      }
      if (winner) this.#winner.set(key, winner);
      else this.#winner.delete(key);
      if (previous?.json !== winner?.json) {
        changes.changed.push(key);
        this.#record(key, winner?.object);
      }
      const mine = current.get(key);
      if (winner && mine && winner.source !== update.source) changes.conflicts.push({ key, source: update.source, heldBy: winner.source });
    }
    return changes;
  }

  /** #record stamps the change of `key` (its new winner, or none: deleted) and publishes it. */
  #record(key: string, object: ConfigObject | undefined): void {
    const before = this.#stamped.get(key);
    if (!object && !before) return;
    const rv = ++this.#rv;
    let change: ObjectChange;
    if (object) {
      const now = stamp(object, rv);
      this.#stamped.set(key, now);
      change = { type: before ? 'MODIFIED' : 'ADDED', object: now, resourceVersion: rv };
    } else {
      this.#stamped.delete(key);
      change = { type: 'DELETED', object: stamp(before!, rv), resourceVersion: rv };
    }
    this.#history.push(change);
    if (this.#history.length > kObjectChangeHistory) this.#history.splice(0, this.#history.length - kObjectChangeHistory);
    for (const fn of [...this.#subscribers]) {
      try {
        fn(change);
      } catch {
        // A subscriber's failure is its own: the store and the other subscribers go on.
      }
    }
  }

  get(kind: ConfigObject['kind'], namespace: string, name: string): ConfigObject | undefined {
    return this.#stamped.get(configObjectKey(kind, namespace, name));
  }

  owner(kind: ConfigObject['kind'], namespace: string, name: string): PodSourceName | undefined {
    return this.#winner.get(configObjectKey(kind, namespace, name))?.source;
  }

  configObjectsFor(pod: Pod): PodConfigObjects | undefined {
    const refs = podObjectRefs(pod);
    if (refs.configMaps.length === 0 && refs.secrets.length === 0 && refs.claims.length === 0) return undefined;
    const out: PodConfigObjects = { configMaps: {}, secrets: {} };
    for (const n of refs.configMaps) {
      const o = this.get('ConfigMap', refs.namespace, n);
      out.configMaps[n] = o?.kind === 'ConfigMap' ? o : null;
    }
    for (const n of refs.secrets) {
      const o = this.get('Secret', refs.namespace, n);
      out.secrets[n] = o?.kind === 'Secret' ? o : null;
    }
    if (refs.claims.length > 0) out.claims = {};
    for (const n of refs.claims) {
      const o = this.get('PersistentVolumeClaim', refs.namespace, n);
      out.claims![n] = o?.kind === 'PersistentVolumeClaim' ? o : null;
    }
    return out;
  }

  list(kind?: ConfigObject['kind']): ConfigObject[] {
    const out: ConfigObject[] = [];
    for (const key of [...this.#winner.keys()].sort()) {
      const o = this.#stamped.get(key)!;
      if (kind === undefined || o.kind === kind) out.push(o);
    }
    return out;
  }

  size(): number {
    return this.#winner.size;
  }

  resourceVersion(): number {
    return this.#rv;
  }

  changesSince(rv: number): ObjectChange[] | undefined {
    if (!Number.isSafeInteger(rv) || rv < 0 || rv > this.#rv) return undefined;
    if (rv === this.#rv) return [];
    const first = this.#history[0];
    // The change right after rv must still be kept.
    if (!first || first.resourceVersion > rv + 1) return undefined;
    return this.#history.filter((c) => c.resourceVersion > rv);
  }

  subscribe(fn: (change: ObjectChange) => void): () => void {
    this.#subscribers.add(fn);
    return () => this.#subscribers.delete(fn);
  }
}

/** newObjectStore creates an empty store. */
export function newObjectStore(): ObjectStore {
  return new ObjectStoreImpl();
}

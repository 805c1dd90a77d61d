// Counterpart of the kubelet's watch-based configmap/secret managers (pkg/kubelet/util/manager/watch_based_manager.go: a reflector per object kind) over etcd instead of the API server.
/**
 * The etcd ConfigMaps and Secrets (`--etcd-servers`): `{prefix}/configmaps/{namespace}/{name}` and
 * `{prefix}/secrets/{namespace}/{name}` (docs/contracts.md "etcd keys"), read by every agent, not
 * per node. For each of the two prefixes: a list (range read), then a watch from the revision
 * after it; a cancelled watch (compaction) lists again, as the reflector's relist. Each list sends
 * a SET (source `etcd`) of both kinds' objects; each watch event an ADD / UPDATE / REMOVE. A value
 * that does not parse or validate is logged (key and field paths only, never the value) and the
 * key's last good object stays. Main thread only.
 */
import type { ConfigObject, ConfigObjectKind } from '../../shared/config-objects.js';
import { normalizeConfigObject } from '../../shared/config-objects.js';
import { formatFieldError } from '../../shared/errors.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import { parseManifestDocuments } from '../../shared/manifest.js';
import type { Etcd3, IKeyValue, Watcher } from '../../etcd/client.js';
import type { ConfigObjectUpdate } from './object-store.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** Options and dependencies of {@link newEtcdObjectSource}. */
export interface EtcdObjectSourceDeps {
  client: Etcd3;
  /** Key prefix (`--etcd-prefix`, e.g. `/registry`). */
  prefix: string;
  logger: Logger;
  onObjects(update: ConfigObjectUpdate): void;
  /** Delay between attempts of a failed list, milliseconds (default 1000). */
  retryMs?: number;
  /** The clock of the list retries; default the real clock. */
  clock?: Clock;
}

/** EtcdObjectSource: the running source. */
export interface EtcdObjectSource {
  /** start tries the first list of both prefixes once and resolves (retrying in the background when etcd does not answer). */
  start(): Promise<void>;
  /** stop cancels the watches and timers; nothing is sent afterwards. Idempotent. */
  stop(): Promise<void>;
}

/**
 * objectFromEtcd decodes one value of `{prefix}/{configmaps|secrets}/{namespace}/{name}`: one
 * object of the key's kind (JSON; YAML too), named as the key (a name or namespace left out is
 * taken from it; another one is an error), checked and normalised (normalizeConfigObject).
 * @throws Error naming the key and every problem (never the value).
 */
export function objectFromEtcd(
  key: string,
  value: string,
  kind: ConfigObjectKind,
  where: { namespace: string; name: string },
): ConfigObject {
  const { pods, objects } = parseManifestDocuments(value, key, value.trimStart().startsWith('{') ? 'json' : 'yaml');
  if (pods.length !== 0 || objects.length !== 1 || objects[0].object.kind !== kind)
    throw new Error(`${key}: must hold exactly one ${kind}`);
  const raw = structuredClone(objects[0].object) as { metadata?: { name?: unknown; namespace?: unknown } };
  const meta = (raw.metadata ??= {});
  meta.name ||= where.name;
  meta.namespace ||= where.namespace;
  if (meta.name !== where.name || meta.namespace !== where.namespace)
    throw new Error(`${key}: metadata.namespace/name does not match the key (${where.namespace}/${where.name})`);
  const r = normalizeConfigObject(raw);
  if (r.errors) throw new Error(`${key}: ${r.errors.map(formatFieldError).join('; ')}`);
  return r.object;
}

const str = (b: Buffer | string) => (typeof b === 'string' ? b : b.toString('utf8'));

class EtcdObjectSourceImpl implements EtcdObjectSource {
  /** etcd key → last good object. */
  readonly #objects = new Map<string, ConfigObject>();
  readonly #problems = new Map<string, string>();
  readonly #watchers = new Map<string, Watcher>();
  readonly #timers = new Set<TimerHandle>();
  readonly #rev = new Map<string, number>();
  readonly #kinds: [ConfigObjectKind, string][];
  #stopped = false;

  constructor(private readonly deps: EtcdObjectSourceDeps) {
    const p = deps.prefix.replace(/\/+$/, '');
    this.#kinds = [
      ['ConfigMap', `${p}/configmaps/`],
      ['Secret', `${p}/secrets/`],
    ];
  }

  async start(): Promise<void> {
    await Promise.all(this.#kinds.map(([kind, prefix]) => this.#list(kind, prefix)));
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const t of this.#timers) (this.deps.clock ?? realClock).clearTimeout(t);
    for (const w of this.#watchers.values()) {
      w.removeAllListeners();
      w.on('error', () => {});
      await Promise.race([w.cancel().catch(() => {}), new Promise((r) => setTimeout(r, 1_000).unref())]);
    }
    this.#watchers.clear();
  }

  #where(prefix: string, key: string): { namespace: string; name: string } | undefined {
    const parts = key.slice(prefix.length).split('/');
    return parts.length === 2 && parts.every((x) => x !== '') ? { namespace: parts[0]!, name: parts[1]! } : undefined;
  }

  /** Decode one kv; the key's object when good, undefined when not (the last good one stays). */
  #decode(kind: ConfigObjectKind, prefix: string, kv: IKeyValue): ConfigObject | undefined {
    const key = str(kv.key);
    try {
      const where = this.#where(prefix, key);
      if (!where) throw new Error(`${key}: key must be ${prefix}<namespace>/<name>`);
      const o = objectFromEtcd(key, str(kv.value), kind, where);
      this.#objects.set(key, o);
      this.#problems.delete(key);
      return o;
    } catch (err) {
      const message = (err as Error).message;
      if (this.#problems.get(key) !== message) {
        this.#problems.set(key, message);
        this.deps.logger.warn({ key, message: boundedField(message) }, `Invalid ${kind} in etcd; keeping its last good version`);
      }
      return undefined;
    }
  }

  async #list(kind: ConfigObjectKind, prefix: string): Promise<void> {
    if (this.#stopped) return;
    let res;
    try {
      res = await this.deps.client.getAll().prefix(prefix).exec();
    } catch (err) {
      this.deps.logger.warn({ prefix, err: (err as Error).message }, `Could not list ${kind}s from etcd; retrying`);
      const t = (this.deps.clock ?? realClock).setTimeout(() => {
        this.#timers.delete(t);
        void this.#list(kind, prefix);
      }, this.deps.retryMs ?? 1_000);
      this.#timers.add(t);
      return;
    }
    if (this.#stopped) return;
    for (const key of [...this.#objects.keys()]) if (key.startsWith(prefix)) this.#objects.delete(key);
    for (const kv of res.kvs) this.#decode(kind, prefix, kv);
    this.#rev.set(prefix, Number(res.header.revision));
    this.deps.logger.info({ prefix, revision: this.#rev.get(prefix) }, `Listed ${kind}s from etcd`);
    this.deps.onObjects({ source: 'etcd', op: 'SET', objects: [...this.#objects.values()] });
    this.#watch(kind, prefix);
  }

  #watch(kind: ConfigObjectKind, prefix: string): void {
    if (this.#stopped) return;
    const w = this.deps.client
      .watch()
      .prefix(prefix)
      .startRevision(String(this.#rev.get(prefix)! + 1))
      .watcher();
    this.#watchers.set(prefix, w);
    w.on('disconnected', () => {
      // As source-etcd.ts: resume from the last applied revision, not the one etcd3 moved it to.
      (w as unknown as { request: { start_revision: number } }).request.start_revision = this.#rev.get(prefix)! + 1;
    });
    w.on('data', (res) => {
      if (this.#watchers.get(prefix) !== w) return;
      const applied = this.#rev.get(prefix)!;
      if (res.events.length === 0) this.#rev.set(prefix, Math.max(applied, Number(res.header.revision)));
      for (const ev of res.events) {
        const rev = Number(ev.kv.mod_revision);
        if (rev <= applied) continue;
        this.#rev.set(prefix, Math.max(this.#rev.get(prefix)!, rev));
        const key = str(ev.kv.key);
        if (ev.type === 'Delete') {
          const before = this.#objects.get(key);
          this.#objects.delete(key);
          this.#problems.delete(key);
          if (before) this.deps.onObjects({ source: 'etcd', op: 'REMOVE', objects: [before] });
          continue;
        }
        const had = this.#objects.has(key);
        const o = this.#decode(kind, prefix, ev.kv);
        if (o) this.deps.onObjects({ source: 'etcd', op: had ? 'UPDATE' : 'ADD', objects: [o] });
      }
    });
    w.on('error', (err: Error) => {
      if (this.#watchers.get(prefix) !== w) return;
      this.deps.logger.warn({ prefix, err: err.message }, `etcd watch of ${kind}s cancelled; listing them again`);
      w.removeAllListeners();
      w.on('error', () => {});
      this.#watchers.delete(prefix);
      void w.cancel().catch(() => {});
      void this.#list(kind, prefix);
    });
  }
}

/** newEtcdObjectSource builds the source; nothing runs until start(). */
export function newEtcdObjectSource(deps: EtcdObjectSourceDeps): EtcdObjectSource {
  return new EtcdObjectSourceImpl(deps);
}

// Counterpart of pkg/kubelet/config/apiserver.go (NewSourceApiserver: a list+watch of this node's pods) over etcd instead of the API server.
/**
 * The etcd source (`--etcd-servers`): desired pods stored under `{prefix}/pods/{nodeName}/`
 * (docs/contracts.md "etcd keys"). Like the kubelet's apiserver source it does a list (a range read of the prefix)
 * and then watches from the revision after the list, so nothing between the two is missed.
 *
 * Revisions: the source remembers the last revision it applied (the list's revision, then each
 * event's mod_revision). After a disconnect the watch resumes from that revision + 1, and an event
 * at or below it is skipped, so no change is lost or applied twice. If etcd compacted that
 * revision (the watch is cancelled), the prefix is listed again and a SET is sent, as the
 * reflector's relist after "410 Gone".
 */
import type { Pod } from '../../shared/api.js';
import { ConfigHashAnnotationKey, ConfigSeenAnnotationKey, ConfigSourceAnnotationKey } from '../../shared/annotations.js';
import { applyPodDefaults } from '../../shared/defaults.js';
import { formatFieldError, InvalidArgumentError } from '../../shared/errors.js';
import { stableHash } from '../../shared/hash.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import { parseManifests } from '../../shared/manifest.js';
import type { PodUpdate } from '../../shared/pod-update.js';
import { validatePodForNode } from '../../shared/validation.js';
import { etcdKeys, type Etcd3, type IKeyValue, type Watcher } from '../../etcd/client.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** EtcdSourceOptions: where this node's pods live. */
export interface EtcdSourceOptions {
  /** This node's name: the source reads `{prefix}/pods/{nodeName}/`. */
  nodeName: string;
  /** Key prefix (`--etcd-prefix`, e.g. `/registry`), without a trailing slash. */
  prefix: string;
  /** Delay between attempts of a failed list, in milliseconds (default 1000). */
  retryMs?: number;
}

/** EtcdPodProblem: a key whose value does not parse or validate (or, with `message` null, no longer has a problem). */
export interface EtcdPodProblem {
  key: string;
  namespace: string;
  name: string;
  /** A stand-in Pod (name, namespace, a UID derived from the key) to record events against. */
  pod: Pod;
  /** What is wrong (every field error, `; `-joined); null when the problem is gone (fixed or deleted). */
  message: string | null;
}

/** EtcdSourceDeps: what the source calls out to (main thread). */
export interface EtcdSourceDeps {
  client: Etcd3;
  logger: Logger;
  /** The clock of the pods' config.seen (epoch ms) and of the list retries; default the real clock. */
  clock?: Clock;
  /** Receives SET after each list, then ADD / UPDATE / REMOVE per watch event (source `etcd`). */
  onUpdate(update: PodUpdate): void;
  /** Receives each bad value once per change (and null when it is gone). The last good pod of that key keeps running. */
  onProblem(problem: EtcdPodProblem): void;
  /** Told when etcd becomes reachable (`true`) or not (`false`). */
  onConnectivity?(connected: boolean, message: string): void;
}

/** EtcdSource: the running source. */
export interface EtcdSource {
  /**
   * start tries the first list once and resolves: after sending the first SET when etcd answered,
   * or after logging the failure when it did not (then it keeps retrying in the background and
   * sends no SET until a list succeeds: an unreachable etcd only delays the agent's orphan cleanup,
   * which waits for every source to be seen). Idempotent.
   */
  start(): Promise<void>;
  /** stop cancels the watch and timers; no callback runs afterwards. Idempotent. */
  stop(): Promise<void>;
  /** Whether the watch (or the last call) reached etcd. */
  connected(): boolean;
  /** The last revision applied (0 before the first list). */
  revision(): number;
  /** Whether `{prefix}/pods/{nodeName}/{namespace}/{name}` exists as far as the source knows (valid or not). */
  hasKey(namespace: string, name: string): boolean;
}

/**
 * podUidForEtcd: the UID of an etcd pod without `metadata.uid`: 32 hex characters of a stable hash
 * of its key and create revision (docs/contracts.md "Pod sources and pod identity") — stable across updates of the value and agent
 * restarts, new when the key is deleted and created again.
 */
export function podUidForEtcd(key: string, createRevision: string | number): string {
  return stableHash({ key, createRevision: String(createRevision) }, 32);
}

/**
 * podFromEtcd decodes and checks one value of `{prefix}/pods/{node}/{namespace}/{name}`: one Pod
 * (JSON; YAML is accepted too), named as the key (an empty name or namespace is taken from the key;
 * a different one is an error), `spec.nodeName` set to `nodeName`, UID `metadata.uid` or
 * {@link podUidForEtcd}, annotations config.source `etcd`, config.hash, config.seen; apiserver
 * defaults; validatePodForNode.
 * @throws InvalidArgumentError with every problem, e.g. `spec.containers[0].image: Required value`.
 */
export function podFromEtcd(
  kv: { key: string; value: string; createRevision: string },
  where: { namespace: string; name: string; nodeName: string },
  clock: Clock = realClock,
): Pod {
  const pods = parseManifests(kv.value, kv.key, kv.value.trimStart().startsWith('{') ? 'json' : 'yaml');
  if (pods.length !== 1) throw new InvalidArgumentError(`${kv.key}: must hold exactly one Pod, got ${pods.length}`);
  const raw = pods[0]!;
  const pod = structuredClone(raw);
  const meta = (pod.metadata ??= {});
  if (!meta.name) meta.name = where.name;
  if (!meta.namespace) meta.namespace = where.namespace;
  if (meta.name !== where.name || meta.namespace !== where.namespace) {
    throw new InvalidArgumentError(
      `${kv.key}: metadata.namespace/name ${meta.namespace}/${meta.name} does not match the key (${where.namespace}/${where.name})`,
    );
  }
  (meta as { uid?: string }).uid = typeof meta.uid === 'string' && meta.uid !== '' ? meta.uid : podUidForEtcd(kv.key, kv.createRevision);
  meta.annotations = {
    ...(meta.annotations ?? {}),
    [ConfigSourceAnnotationKey]: 'etcd',
    [ConfigHashAnnotationKey]: stableHash(raw),
    [ConfigSeenAnnotationKey]: new Date(clock.now()).toISOString(),
  };
  if (pod.spec && typeof pod.spec === 'object') pod.spec.nodeName = where.nodeName;
  const defaulted = applyPodDefaults(pod);
  const errors = validatePodForNode(defaulted);
  if (errors.length > 0) throw new InvalidArgumentError(errors.map(formatFieldError).join('; '));
  return defaulted;
}

interface KeyState {
  /** The last good pod of this key (still desired while a newer value is bad). */
  pod?: Pod;
  /** The problem last reported for this key. */
  problem?: string;
}

function str(b: Buffer | string): string {
  return typeof b === 'string' ? b : b.toString('utf8');
}

/**
 * newEtcdSource builds the etcd source; nothing runs until start().
 * @throws InvalidArgumentError when nodeName is empty.
 */
export function newEtcdSource(options: EtcdSourceOptions, deps: EtcdSourceDeps): EtcdSource {
  if (!options.nodeName) throw new InvalidArgumentError('options.nodeName must be a non-empty string');
  return new EtcdSourceImpl(options, deps);
}

class EtcdSourceImpl implements EtcdSource {
  readonly #keys;
  readonly #prefix: string;
  readonly #log: Logger;
  readonly #retryMs: number;
  readonly #state = new Map<string, KeyState>();
  #rev = 0;
  #watcher: Watcher | undefined;
  #timer: TimerHandle | undefined;
  #connected = false;
  #stopped = false;
  #started: Promise<void> | undefined;

  constructor(
    private readonly options: EtcdSourceOptions,
    private readonly deps: EtcdSourceDeps,
  ) {
    this.#keys = etcdKeys(options.prefix);
    this.#prefix = this.#keys.podsPrefix(options.nodeName);
    this.#log = deps.logger;
    this.#retryMs = options.retryMs ?? 1_000;
  }

  connected(): boolean {
    return this.#connected;
  }

  revision(): number {
    return this.#rev;
  }

  hasKey(namespace: string, name: string): boolean {
    return this.#state.has(this.#keys.pod(this.options.nodeName, namespace, name));
  }

  start(): Promise<void> {
    this.#started ??= this.#list().then(() => undefined);
    return this.#started;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    (this.deps.clock ?? realClock).clearTimeout(this.#timer);
    const w = this.#watcher;
    this.#watcher = undefined;
    if (w) {
      w.removeAllListeners();
      w.on('error', () => {});
      await Promise.race([w.cancel().catch(() => {}), new Promise((r) => setTimeout(r, 1_000).unref())]);
    }
  }

  #setConnected(connected: boolean, message: string): void {
    if (this.#connected === connected) return;
    this.#connected = connected;
    if (connected) this.#log.info({ prefix: this.#prefix, revision: this.#rev }, 'etcd source connected');
    else
      this.#log.warn(
        { prefix: this.#prefix, revision: this.#rev, message },
        'etcd source lost its connection; pods keep running as last desired',
      );
    this.deps.onConnectivity?.(connected, message);
  }

  /** List the prefix, send SET, watch from the next revision; on failure retry later. Returns whether it succeeded. */
  async #list(): Promise<boolean> {
    if (this.#stopped) return false;
    let res;
    try {
      res = await this.deps.client.getAll().prefix(this.#prefix).exec();
    } catch (err) {
      this.#setConnected(false, (err as Error).message);
      if (this.#rev === 0)
        this.#log.warn(
          { prefix: this.#prefix, err: (err as Error).message },
          'Could not list pods from etcd; retrying (no pods from etcd until it answers)',
        );
      this.#timer = (this.deps.clock ?? realClock).setTimeout(() => void this.#list(), this.#retryMs);
      return false;
    }
    if (this.#stopped) return false;
    this.#setConnected(true, '');
    const seen = new Set<string>();
    const pods: Pod[] = [];
    for (const kv of res.kvs) {
      const key = str(kv.key);
      seen.add(key);
      const st = this.#decode(kv);
      if (st.pod) pods.push(st.pod);
    }
    for (const [key, st] of this.#state) {
      if (seen.has(key)) continue;
      this.#state.delete(key);
      if (st.problem) this.#report(key, null);
    }
    this.#rev = Number(res.header.revision);
    this.#log.info({ prefix: this.#prefix, pods: pods.length, revision: this.#rev }, 'Listed pods from etcd');
    this.deps.onUpdate({ op: 'SET', source: 'etcd', pods });
    this.#watch();
    return true;
  }

  #watch(): void {
    if (this.#stopped) return;
    const w = this.deps.client
      .watch()
      .prefix(this.#prefix)
      .startRevision(String(this.#rev + 1))
      .watcher();
    this.#watcher = w;
    w.on('connected', () => this.#setConnected(true, ''));
    w.on('disconnected', (err: Error) => {
      // etcd3 re-creates the watch from `request.start_revision`, which it moves to the *current*
      // revision as soon as the watch is created — before the catch-up events arrive. Point it back
      // at our last applied revision on every disconnect so a change is never skipped.
      (w as unknown as { request: { start_revision: number } }).request.start_revision = this.#rev + 1;
      this.#setConnected(false, err?.message ?? 'disconnected');
    });
    w.on('data', (res) => {
      if (this.#watcher !== w) return;
      if (res.events.length === 0) {
        // A progress notification: every change up to header.revision has been delivered.
        this.#rev = Math.max(this.#rev, Number(res.header.revision));
        return;
      }
      // One revision (e.g. a transaction deleting a whole prefix) may carry several events; etcd
      // delivers a revision's events in one response, so compare against the revision applied
      // before this response.
      const applied = this.#rev;
      for (const ev of res.events) {
        const rev = Number(ev.kv.mod_revision);
        if (rev <= applied) continue; // already applied (replayed after a reconnect)
        this.#apply(ev.type, ev.kv);
        this.#rev = Math.max(this.#rev, rev);
      }
    });
    w.on('error', (err: Error) => {
      // The watch was cancelled by etcd, typically "required revision has been compacted": list again.
      if (this.#watcher !== w) return;
      this.#log.warn({ prefix: this.#prefix, revision: this.#rev, err: err.message }, 'etcd watch cancelled; listing the pods again');
      w.removeAllListeners();
      w.on('error', () => {});
      this.#watcher = undefined;
      void w.cancel().catch(() => {});
      void this.#list();
    });
  }

  #apply(type: string, kv: IKeyValue): void {
    const key = str(kv.key);
    const before = this.#state.get(key);
    if (type === 'Delete') {
      if (!before) return;
      this.#state.delete(key);
      if (before.problem) this.#report(key, null);
      if (before.pod) this.deps.onUpdate({ op: 'REMOVE', source: 'etcd', pods: [before.pod] });
      return;
    }
    const prevPod = before?.pod;
    const st = this.#decode(kv);
    const pod = st.pod;
    if (!pod || pod === prevPod) return;
    if (prevPod && prevPod.metadata!.uid !== pod.metadata!.uid) {
      this.deps.onUpdate({ op: 'REMOVE', source: 'etcd', pods: [prevPod] });
      this.deps.onUpdate({ op: 'ADD', source: 'etcd', pods: [pod] });
    } else {
      this.deps.onUpdate({ op: prevPod ? 'UPDATE' : 'ADD', source: 'etcd', pods: [pod] });
    }
  }

  /** Decode one kv into the key's state (keeping the last good pod when the value is bad). */
  #decode(kv: IKeyValue): KeyState {
    const key = str(kv.key);
    const st = this.#state.get(key) ?? {};
    this.#state.set(key, st);
    const where = this.#keys.parsePodKey(key);
    try {
      if (!where || where.node !== this.options.nodeName)
        throw new InvalidArgumentError(`${key}: key must be ${this.#prefix}<namespace>/<name>`);
      st.pod = podFromEtcd(
        { key, value: str(kv.value), createRevision: String(kv.create_revision) },
        { ...where, nodeName: this.options.nodeName },
        this.deps.clock,
      );
      if (st.problem) {
        st.problem = undefined;
        this.#report(key, null);
      }
    } catch (err) {
      const message = (err as Error).message;
      if (st.problem !== message) {
        st.problem = message;
        this.#report(key, message, String(kv.create_revision));
      }
    }
    return st;
  }

  #report(key: string, message: string | null, createRevision = '0'): void {
    const where = this.#keys.parsePodKey(key);
    const namespace = where?.namespace ?? 'default';
    const name = where?.name ?? key;
    if (message !== null) this.#log.warn({ key, message: boundedField(message) }, 'Invalid pod in etcd; other pods are not affected');
    this.deps.onProblem({
      key,
      namespace,
      name,
      message,
      pod: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, uid: podUidForEtcd(key, createRevision) } },
    });
  }
}

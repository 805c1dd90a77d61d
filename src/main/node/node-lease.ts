// Counterpart of pkg/kubelet/kubelet_node_status.go (registerWithAPIServer, syncNodeStatus) and pkg/kubelet/nodelease (the Lease heartbeat), over etcd.
/**
 * Node registration and heartbeat: the Node object is written to `{prefix}/nodes/{nodeName}`
 * (docs/contracts.md "etcd keys") attached to an etcd lease of `ttlSeconds`. Every `updateFrequencyMs` the lease is
 * kept alive (the heartbeat, as the node lease controller renews its Lease) and the Node is
 * rewritten when its content changed (conditions, capacity…; `lastHeartbeatTime` alone does not
 * count, as the kubelet's nodeStatusReportFrequency). A stopped agent revokes its lease (the key
 * goes at once); a dead one's key disappears when the lease expires.
 *
 * If etcd was unreachable for longer than the TTL, the lease is gone (etcd3 reports it "lost"):
 * a new lease is granted and the Node written again. This file is the third home of etcd3 (through
 * src/etcd/client.ts), next to the etcd source and the status writer.
 */
import type { Node } from '../../shared/api.js';
import { stableHash } from '../../shared/hash.js';
import type { Logger } from '../../shared/logging.js';
import { EtcdLeaseInvalidError, etcdKeys, type Etcd3, type Lease } from '../../etcd/client.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** NodeLeaseOptions (units in the names). */
export interface NodeLeaseOptions {
  nodeName: string;
  /** Key prefix (`--etcd-prefix`), without a trailing slash. */
  prefix: string;
  /** Lease TTL in seconds (`--node-lease-duration-seconds`, 40). */
  ttlSeconds: number;
  /** Heartbeat period in milliseconds (`--node-status-update-frequency`, 10 s). */
  updateFrequencyMs: number;
}

/**
 * NodeLeaseDeps: the etcd client and the Node builder (called at each heartbeat; the agent's is
 * src/main/node/node-status.ts buildNode, the one Node builder).
 */
export interface NodeLeaseDeps {
  client: Etcd3;
  logger: Logger;
  buildNode(): Node | Promise<Node>;
  /** The clock of the renewals (every updateFrequencyMs); default the real clock. */
  clock?: Clock;
}

/** NodeLease: the running registration. */
export interface NodeLease {
  /** start tries to register once (resolves either way) and starts the heartbeat. Idempotent. */
  start(): Promise<void>;
  /** stop ends the heartbeat and revokes the lease (the node key is deleted with it). */
  stop(): Promise<void>;
  /** ok while the last heartbeat reached etcd. */
  healthy(): { ok: boolean; message?: string };
  /** The current lease ID (decimal string), or '' when none is held. */
  leaseId(): string;
}

/** newNodeLease builds the registration; nothing runs until start(). */
export function newNodeLease(options: NodeLeaseOptions, deps: NodeLeaseDeps): NodeLease {
  return new NodeLeaseImpl(options, deps);
}

/** Node content without the heartbeat timestamps, to tell a real change from a heartbeat. */
function contentHash(node: Node): string {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c, lastHeartbeatTime: undefined }));
  return stableHash({ ...node, status: { ...node.status, conditions } });
}

class NodeLeaseImpl implements NodeLease {
  readonly #key: string;
  #lease: Lease | undefined;
  #leaseId = '';
  #lastHash = '';
  #timer: TimerHandle | undefined;
  #running: Promise<void> | undefined;
  #started: Promise<void> | undefined;
  #stopped = false;
  #failure: string | undefined;
  #needsWrite = true;

  constructor(
    private readonly o: NodeLeaseOptions,
    private readonly deps: NodeLeaseDeps,
  ) {
    this.#key = etcdKeys(o.prefix).node(o.nodeName);
  }

  leaseId(): string {
    return this.#leaseId;
  }

  healthy(): { ok: boolean; message?: string } {
    return this.#failure ? { ok: false, message: `node heartbeat to etcd failing: ${this.#failure}` } : { ok: true };
  }

  start(): Promise<void> {
    this.#started ??= (async () => {
      await this.#tick();
      this.#timer = (this.deps.clock ?? realClock).setInterval(() => {
        if (!this.#running) this.#running = this.#tick().finally(() => (this.#running = undefined));
      }, this.o.updateFrequencyMs);
    })();
    return this.#started;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    (this.deps.clock ?? realClock).clearInterval(this.#timer);
    await this.#running;
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease) {
      // A gRPC deadline is a wall-clock date: the real clock, never a test's.
      await lease
        .revoke({ deadline: realClock.now() + 2_000 })
        .catch((err: Error) =>
          this.deps.logger.warn({ err: err.message }, 'Could not revoke the node lease; the node key goes when it expires'),
        );
    }
  }

  async #grant(): Promise<void> {
    const old = this.#lease;
    old?.release();
    const lease = this.deps.client.lease(this.o.ttlSeconds, { autoKeepAlive: false });
    lease.on('lost', () => {});
    this.#lease = lease;
    this.#leaseId = '';
    try {
      this.#leaseId = await withTimeout(lease.grant(), 5_000, 'lease grant timed out');
    } catch (err) {
      // A failed grant leaves that Lease object unusable (etcd3 caches the rejection): drop it.
      lease.release();
      this.#lease = undefined;
      throw err;
    }
    this.#needsWrite = true;
    this.deps.logger.info({ lease: this.#leaseId, ttlSeconds: this.o.ttlSeconds }, 'Granted node lease');
  }

  async #tick(): Promise<void> {
    if (this.#stopped) return;
    try {
      if (!this.#lease || this.#lease.revoked()) await this.#grant();
      else {
        try {
          await withTimeout(this.#lease.keepaliveOnce(), 5_000, 'lease keepalive timed out');
        } catch (err) {
          if (!(err instanceof EtcdLeaseInvalidError)) throw err;
          this.deps.logger.warn(
            { lease: this.#leaseId },
            'Node lease expired (etcd unreachable for longer than its TTL); granting a new one',
          );
          await this.#grant();
        }
      }
      const wasFailing = this.#failure;
      this.#failure = undefined; // etcd answered: the Node built now must not report the outage
      const node = await this.deps.buildNode();
      const hash = contentHash(node);
      if (this.#needsWrite || hash !== this.#lastHash) {
        await withTimeout(this.#lease!.put(this.#key).value(JSON.stringify(node)).exec(), 10_000, 'node put timed out');
        if (this.#lastHash === '') this.deps.logger.info({ key: this.#key }, 'Registered node');
        this.#lastHash = hash;
        this.#needsWrite = false;
      }
      if (wasFailing) this.deps.logger.info({}, 'Node heartbeat reaches etcd again');
    } catch (err) {
      const message = (err as Error).message;
      if (/lease not found|requested lease not found/i.test(message)) {
        this.#lease?.release();
        this.#lease = undefined;
      }
      if (!this.#failure) this.deps.logger.warn({ err: message }, 'Node heartbeat to etcd failed; retrying');
      this.#failure = message;
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

/**
 * Counterpart of the kubelet's CRI streaming server (pkg/kubelet/cri/streaming: ServeExec,
 * ServeAttach and their Executor/Attacher over the runtime) as dockershim ran it: a worker_threads
 * entry that opens exec and attach streams through the node-scoped NodeRuntime's `streams`
 * (runtime/node-runtime.ts getRuntime, from its bootstrap), and relays their bytes; it also runs
 * port-forward connections: on Docker and the fake, port-forward.ts (the netns helper); on a CRI
 * runtime, the runtime's PortForward URL (streams/cri-port-forward.ts), which the kubelet's server
 * proxies the same way (pkg/kubelet/server/server.go getPortForward). A hostNetwork pod's port is
 * dialled directly on either.
 *
 * Why a dedicated Worker, as the logs worker: a stream lasts as long as the user's shell, so it
 * would pin a pool slot that syncs need; one small long-lived Worker multiplexes every stream and
 * keeps the runtime's sockets off the main thread. Each stream has its own MessagePort (sent in the
 * `open` request); the byte-credit flow control of shared/streams-protocol.ts bounds what either
 * thread buffers: the engine's socket is paused while more than kStreamOutputWindowBytes of output
 * are unacknowledged, and each stdin chunk is acknowledged only once the engine's socket took it.
 * Resizes and stdin are applied in arrival order (stdin waits for a resize in flight), so a shell
 * reads its input at the size sent before it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { AgentError, serializeError } from '../shared/errors.js';
import type { PortForwardSpec } from '../shared/port-forward-protocol.js';
import {
  kStreamOutputWindowBytes,
  type ContainerStreamSpec,
  type StreamInbound,
  type StreamOutbound,
  type StreamsWorkerBootstrap,
  type StreamsWorkerRequest,
} from '../shared/streams-protocol.js';
import { getRuntime as getNodeRuntime } from './runtime/node-runtime.js';
import { scopeToNode } from './runtime/node-scope.js';
import type { RuntimeService } from './runtime/cri/services.js';
import type { ContainerRuntime, ContainerStream, NodeRuntime } from './runtime/container/runtime.js';
import { getRuntime } from './runtime/runtime-service.js';
import { startCriPortForward } from './streams/cri-port-forward.js';
import { startPortForward, type PortForwardPort } from './streams/port-forward.js';
import { announceThreadRole } from './thread-roles.js';

announceThreadRole('container-streams');

/** The runtime port-forward.ts gets for a direct reach on a CRI runtime: never asked (a netns reach goes to the CRI's PortForward). */
const kNoNetnsRuntime = {
  inspectContainer: () =>
    Promise.reject(
      new AgentError('ERR_RUNTIME', 'port-forward: a sandbox network namespace is reached through the CRI PortForward on this runtime'),
    ),
} as unknown as ContainerRuntime;

/** The part of a MessagePort a stream uses (tests pass a MessageChannel's port). */
export interface StreamPort {
  postMessage(m: StreamOutbound): void;
  on(event: 'message', fn: (m: StreamInbound) => void): unknown;
  close(): void;
}

interface Open {
  stream?: ContainerStream;
  closed: boolean;
  port: StreamPort;
}

/** StreamsWorker: the request handler, separated from the thread's port for tests. */
export class StreamsWorker {
  readonly #streams = new Map<number, Open>();
  readonly #forwards = new Map<number, () => void>();
  readonly #streamsApi: NodeRuntime['streams'];
  /** What port-forward reaches the sandbox's netns through on Docker and the fake; undefined for a CRI runtime. */
  readonly #forwardRuntime: ContainerRuntime | undefined;
  /** The node-scoped CRI runtime whose PortForward reaches a sandbox's netns; undefined on Docker and the fake. */
  readonly #criRuntime: RuntimeService | undefined;
  readonly #nodeName: string;

  /**
   * `runtime` (tests) is used, scoped by the caller, for both streams and port-forward; without
   * it, streams come from this thread's NodeRuntime for `bootstrap` and port-forward from its
   * Docker-shaped runtime, or for `remote` from the NodeRuntime's CRI runtime, all scoped to its node.
   */
  constructor(bootstrap: StreamsWorkerBootstrap, runtime?: ContainerRuntime) {
    const cri = !runtime && bootstrap.runtime === 'remote' ? getNodeRuntime(bootstrap) : undefined;
    this.#streamsApi = runtime ?? (cri ?? getNodeRuntime(bootstrap)).streams;
    this.#criRuntime = cri?.runtime;
    this.#forwardRuntime = runtime ?? (cri ? undefined : scopeToNode(getRuntime(bootstrap), bootstrap.nodeName));
    this.#nodeName = bootstrap.nodeName;
  }

  /** portForward starts forwarded connection `id` on `port` (port-forward.ts); every later message flows on that port. */
  portForward(id: number, port: PortForwardPort, spec: PortForwardSpec): void {
    const done = () => this.#forwards.delete(id);
    const stop =
      this.#criRuntime && spec.reach.kind === 'netns'
        ? // The runtime enters the sandbox's netns itself; the node-scoped runtime refuses another node's sandbox.
          startCriPortForward(this.#criRuntime, port, { sandboxId: spec.reach.sandboxId, port: spec.port }, done)
        : // A direct reach dials host:port and never asks the runtime.
          startPortForward(this.#forwardRuntime ?? kNoNetnsRuntime, this.#nodeName, port, spec, done);
    this.#forwards.set(id, stop);
  }

  /** How many forwarded connections are open (tests). */
  get forwards(): number {
    return this.#forwards.size;
  }

  /** open starts stream `id` on `port`; every later message of the stream flows on that port. */
  open(id: number, port: StreamPort, spec: ContainerStreamSpec): void {
    const s: Open = { closed: false, port };
    this.#streams.set(id, s);
    let unacked = 0;
    let paused = false;
    let chain: Promise<void> = Promise.resolve();
    const early: StreamInbound[] = [];
    const end = (m: StreamOutbound) => {
      if (s.closed) return;
      s.closed = true;
      this.#streams.delete(id);
      port.postMessage(m);
      port.close();
    };
    const teardown = () => {
      if (s.closed) return;
      s.closed = true;
      this.#streams.delete(id);
      s.stream?.close();
      port.close();
    };
    const apply = (m: StreamInbound) => {
      const st = s.stream;
      if (!st || s.closed) return;
      switch (m.t) {
        case 'stdin': {
          const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
          chain = chain.then(
            () =>
              new Promise<void>((resolve) => {
                st.writeStdin(data, () => {
                  if (!s.closed) port.postMessage({ t: 'stdinAck', bytes: data.length });
                  resolve();
                });
                // The ack waits for the engine; the next write need not.
                resolve();
              }),
          );
          break;
        }
        case 'stdinEnd':
          chain = chain.then(() => st.endStdin());
          break;
        case 'resize':
          chain = chain.then(() => st.resize(m.width, m.height).catch(() => {}));
          break;
        case 'ack':
          unacked -= m.bytes;
          if (paused && unacked < kStreamOutputWindowBytes) {
            paused = false;
            st.resume();
          }
          break;
        case 'close':
          teardown();
          break;
      }
    };
    port.on('message', (m: StreamInbound) => {
      if (m.t === 'close' && !s.stream) return teardown();
      if (!s.stream) early.push(m);
      else apply(m);
    });
    if (!/^[0-9a-f]{12,64}$/.test(spec.containerId)) {
      end({
        t: 'exit',
        exitCode: null,
        error: serializeError(
          new AgentError('ERR_INVALID_ARGUMENT', `container ID ${JSON.stringify(spec.containerId)} is not a Docker ID`),
        ),
      });
      return;
    }
    this.#streamsApi
      .openContainerStream(spec.containerId, spec, {
        onOutput: (fd, chunk) => {
          if (s.closed) return;
          unacked += chunk.length;
          port.postMessage({ t: 'out', fd, data: new Uint8Array(chunk) });
          if (!paused && unacked >= kStreamOutputWindowBytes) {
            paused = true;
            s.stream?.pause();
          }
        },
        onExit: (exitCode, err) => end({ t: 'exit', exitCode, error: err ? serializeError(err) : undefined }),
      })
      .then(
        (stream) => {
          if (s.closed) return stream.close();
          s.stream = stream;
          port.postMessage({ t: 'started' });
          if (spec.tty && spec.size) apply({ t: 'resize', width: spec.size.width, height: spec.size.height });
          for (const m of early.splice(0)) apply(m);
        },
        (err) => end({ t: 'exit', exitCode: null, error: serializeError(err) }),
      );
  }

  /** stop tears every stream down. */
  stop(): void {
    for (const stop of [...this.#forwards.values()]) stop();
    for (const s of [...this.#streams.values()]) {
      s.closed = true;
      s.stream?.close();
      s.port.close();
    }
    this.#streams.clear();
  }

  /** How many streams are open (tests). */
  get size(): number {
    return this.#streams.size;
  }
}

if (parentPort && (workerData as StreamsWorkerBootstrap | undefined)?.kind === 'container-streams') {
  const port = parentPort;
  const worker = new StreamsWorker(workerData as StreamsWorkerBootstrap);
  port.on('message', (msg: StreamsWorkerRequest) => {
    if (msg.type === 'open') worker.open(msg.id, msg.port as unknown as StreamPort, msg.spec);
    else if (msg.type === 'portForward') worker.portForward(msg.id, msg.port as unknown as PortForwardPort, msg.spec);
    else if (msg.type === 'stop') {
      worker.stop();
      port.close();
    }
  });
}

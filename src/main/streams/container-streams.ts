/**
 * Counterpart of the kubelet's GetExec/GetAttach/RunInContainer (pkg/kubelet/kubelet_pods.go: find
 * the running container, then hand the stream to the CRI streaming server), on the main thread.
 * The engine's sockets live in the container-streams worker (src/workers/container-streams.worker.ts),
 * started on first use; this side picks the container and turns each stream's MessagePort into a
 * ContainerStreamSession for the server.
 */
import { isPodContainerName } from '../../shared/ephemeral-containers.js';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import type { Pod } from '../../shared/api.js';
import { AgentError, deserializeError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import type { RuntimeEndpoint } from '../../shared/runtime-endpoint.js';
import {
  kStreamMaxStdinBufferedBytes,
  type ContainerStreamSpec,
  type StreamInbound,
  type StreamOutbound,
  type StreamsWorkerBootstrap,
  type StreamsWorkerRequest,
} from '../../shared/streams-protocol.js';
import type { ContainerStreamExit, ContainerStreamSession, StreamTarget } from '../../server/host/agent-host.js';
import type { PortForwardSpec } from '../../shared/port-forward-protocol.js';
import type { PortForwardSession } from '../../server/host/port-forward-host.js';
import { portForwardSession } from './port-forward.js';
import { startWorker } from '../pool/worker-entry.js';

/**
 * selectStreamContainer picks the container an exec/attach enters, as the kubelet's findContainer:
 * the newest attempt of `container`, which must be running (app containers in a RuntimePod are newest first).
 * @throws AgentError ERR_NOT_FOUND (`container x is not valid for pod y`) when `container` is not in
 *   the pod's spec; ERR_INVALID_ARGUMENT (`container "x" in pod "y" is not running`) when its newest
 *   attempt is not running or it has none.
 */
export function selectStreamContainer(pod: Pod, runtimePod: RuntimePod | null, container: string): string {
  const podName = pod.metadata?.name ?? '';
  const inSpec = isPodContainerName(pod, container);
  if (!inSpec) throw new AgentError('ERR_NOT_FOUND', `container ${container} is not valid for pod ${podName}`);
  const newest = (runtimePod?.containers ?? []).find((c) => c.name === container && !c.sandbox);
  if (!newest || newest.state !== 'running')
    throw new AgentError('ERR_INVALID_ARGUMENT', `container "${container}" in pod "${podName}" is not running`);
  return newest.id;
}

/** StreamsClient: opens exec/attach streams through the streams worker. Main thread. */
export interface StreamsClient {
  /** open starts a stream; the session's callbacks may be set right after (nothing arrives before the next turn). */
  open(spec: ContainerStreamSpec): ContainerStreamSession;
  /** openPortForward starts one forwarded connection (port-forward.ts); callbacks may be set right after. */
  openPortForward(spec: PortForwardSpec): PortForwardSession;
  /** How many streams (and forwarded connections) are open. */
  readonly size: number;
  /** close stops the worker and every stream. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link newStreamsClient}. */
export interface StreamsClientOptions {
  /** The runtime the worker streams from (runtime-endpoint-options.ts runtimeEndpointOf). */
  endpoint: RuntimeEndpoint;
  nodeName: string;
}

/** newStreamsClient creates the client; the worker starts on the first open and is unref'd. */
export function newStreamsClient(options: StreamsClientOptions, deps: { logger: Logger }): StreamsClient {
  let worker: Worker | undefined;
  let nextId = 1;
  const open = new Map<number, (err: Error) => void>();
  const failAll = (err: Error) => {
    for (const fail of [...open.values()]) fail(err);
  };
  const ensure = (): Worker => {
    if (worker) return worker;
    const bootstrap: StreamsWorkerBootstrap = { kind: 'container-streams', ...options.endpoint, nodeName: options.nodeName };
    const w = startWorker('container-streams', bootstrap);
    w.unref();
    w.on('error', (err) => {
      deps.logger.error({ err }, 'Container streams worker failed');
      worker = undefined;
      failAll(err);
    });
    w.on('exit', () => {
      worker = undefined;
      failAll(new Error('the container streams worker exited'));
    });
    worker = w;
    return w;
  };

  return {
    get size() {
      return open.size;
    },
    open(spec) {
      const id = nextId++;
      const { port1, port2 } = new MessageChannel();
      let onStarted: (() => void) | undefined;
      let onOutput: ((fd: 1 | 2, chunk: Uint8Array) => void) | undefined;
      let onExit: ((e: ContainerStreamExit) => void) | undefined;
      let exited: ContainerStreamExit | undefined;
      let stdinPending = 0;
      let done = false;
      const send = (m: StreamInbound) => {
        if (!done) port1.postMessage(m);
      };
      const finish = (e: ContainerStreamExit) => {
        if (done) return;
        done = true;
        open.delete(id);
        port1.close();
        exited = e;
        onExit?.(e);
      };
      open.set(id, (err) => finish({ exitCode: null, error: err }));
      port1.on('message', (m: StreamOutbound) => {
        if (done) return;
        if (m.t === 'started') onStarted?.();
        else if (m.t === 'out') onOutput?.(m.fd, m.data);
        else if (m.t === 'stdinAck') stdinPending -= m.bytes;
        else if (m.t === 'exit') finish({ exitCode: m.exitCode, error: m.error ? deserializeError(m.error) : undefined });
      });
      // A stream the worker already ended closes port2's side: no further message.
      port1.on('close', () => finish({ exitCode: null }));
      try {
        ensure().postMessage({ type: 'open', id, port: port2 as unknown as MessagePort, spec } satisfies StreamsWorkerRequest, [
          port2 as unknown as MessagePort,
        ]);
      } catch (err) {
        queueMicrotask(() => finish({ exitCode: null, error: err as Error }));
      }
      return {
        onStarted: (fn) => {
          onStarted = fn;
        },
        onOutput: (fn) => {
          onOutput = fn;
        },
        onExit: (fn) => {
          onExit = fn;
          if (exited) fn(exited);
        },
        writeStdin(chunk) {
          if (done) return true;
          stdinPending += chunk.byteLength;
          if (stdinPending > kStreamMaxStdinBufferedBytes) return false;
          send({ t: 'stdin', data: chunk });
          return true;
        },
        endStdin: () => send({ t: 'stdinEnd' }),
        resize: (size) => send({ t: 'resize', width: size.width, height: size.height }),
        ack: (bytes) => send({ t: 'ack', bytes }),
        close() {
          if (done) return;
          send({ t: 'close' });
          finish({ exitCode: null });
        },
      };
    },
    openPortForward(spec) {
      const id = nextId++;
      const { port1, port2 } = new MessageChannel();
      const session = portForwardSession(port1, () => open.delete(id));
      open.set(id, (err) => session.fail(err));
      try {
        ensure().postMessage({ type: 'portForward', id, port: port2 as unknown as MessagePort, spec } satisfies StreamsWorkerRequest, [
          port2 as unknown as MessagePort,
        ]);
      } catch (err) {
        queueMicrotask(() => session.fail(err as Error));
      }
      return session;
    },
    async close() {
      const w = worker;
      worker = undefined;
      failAll(new Error('the agent is stopping'));
      if (!w) return;
      w.postMessage({ type: 'stop' } satisfies StreamsWorkerRequest);
      await w.terminate();
    },
  };
}

/** newStreamTarget: the AgentHost.streamTarget of the agent: the pod by full name, then {@link selectStreamContainer}. */
export function streamTargetOf(
  getByFullName: (fullName: string) => { pod: Pod; uid: string } | undefined,
  runtimePod: (uid: string) => RuntimePod | null,
): (namespace: string, pod: string, container: string) => StreamTarget {
  return (namespace, pod, container) => {
    const record = getByFullName(`${namespace}/${pod}`);
    if (!record) throw new AgentError('ERR_NOT_FOUND', `pods "${pod}" not found`);
    return { containerId: selectStreamContainer(record.pod, runtimePod(record.uid), container), podUid: record.uid };
  };
}

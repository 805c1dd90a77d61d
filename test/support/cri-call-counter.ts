// A counting gRPC proxy in front of a CRI runtime (issue #42 item 4): an agent given its endpoint as
// --container-runtime-endpoint makes every RuntimeService and ImageService call through it, and a
// test reads which calls, by method and by pod. The role of the density bench's counting proxy of
// the Docker Engine calls (bench/docker-calls.ts) and of a gRPC interceptor on the kubelet's CRI
// client (pkg/kubelet/cri/remote: the kubelet's own call metrics, kubelet_runtime_operations_total by
// operation_type).
import * as grpc from '@grpc/grpc-js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { loadCriServices } from '../../src/workers/runtime/cri/proto.js';
import { parseCriEndpoint } from '../../src/shared/runtime-endpoint.js';
import { kPodUidLabel } from '../../src/workers/kubetypes/label-keys.js';

/** CriCall: one unary CRI call that went through the proxy. */
export interface CriCall {
  /** The method's proto name, e.g. `RunPodSandbox`. */
  method: string;
  /** The decoded request (the proto's field names, as the agent's client sends them). */
  request: Record<string, unknown>;
  /** The pod UID the call is about, when the proxy can tell (see {@link CriCallCounter.podOf}); '' otherwise. */
  podUid: string;
  /** ListPodSandbox / ListContainers: the IDs the runtime answered, once it answered. */
  answerIds?: string[];
  /** The gRPC error's details when the runtime refused the call. */
  error?: string;
  /** Set once the runtime answered (or refused). */
  done: boolean;
}

/**
 * A hook run before a call is forwarded: the call waits for the promise it returns, so a test can
 * put a runtime call after something else (a relist between a container's create and its start).
 */
export type CriCallHold = (call: CriCall) => Promise<void> | void;

/** CriCallCounter: see {@link startCriCallCounter}. */
export interface CriCallCounter {
  /** The agent's `--container-runtime-endpoint` (`unix:///…`). */
  endpoint: string;
  /** Every call so far, in the order they reached the proxy. */
  calls: CriCall[];
  /** Sets (or clears, with undefined) the hook every later call waits for before it is forwarded. */
  hold(fn: CriCallHold | undefined): void;
  /** The pod UID a sandbox or container ID belongs to, as the proxy learnt it from creates and lists; '' when unknown. */
  podOf(id: string): string;
  /** Stops the server and the upstream clients; the socket file is removed. Idempotent. */
  close(): Promise<void>;
}

const identity = (b: Buffer): Buffer => b;

/** labelsUid: the pod UID of a label map (request filter or object labels). */
function labelsUid(labels: unknown): string {
  return (labels as Record<string, string> | null | undefined)?.[kPodUidLabel] ?? '';
}

/**
 * startCriCallCounter listens on `<dir>/cri-counter.sock` and forwards every unary call of the
 * CRI's RuntimeService and ImageService to `upstream` (`unix:///…`) as raw bytes (what the runtime
 * answers goes back unchanged, errors with their code and details), recording each call first.
 * Streaming methods (GetContainerEvents) are not served: the agent gets Unimplemented, as from a
 * runtime without them (containerd 1.6). Each call is attributed to a pod UID: list calls by their
 * `io.kubernetes.pod.uid` label selector, RunPodSandbox and CreateContainer by their config's labels,
 * calls by ID (status, start, stop, remove, …) through the IDs the proxy saw created or listed.
 * ImageStatus, PullImage and node-wide lists (no pod UID in the selector: the PLEG's relist, GC) have none.
 * @throws Error when the socket cannot be bound.
 */
export async function startCriCallCounter(upstream: string, dir: string): Promise<CriCallCounter> {
  const target = parseCriEndpoint(upstream).target;
  const sock = join(dir, 'cri-counter.sock');
  const server = new grpc.Server();
  const clients: grpc.Client[] = [];
  const calls: CriCall[] = [];
  const owners = new Map<string, string>();
  let hold: CriCallHold | undefined;
  const learn = (id: unknown, uid: string) => {
    if (typeof id === 'string' && id && uid) owners.set(id, uid);
  };
  const podOfRequest = (method: string, r: Record<string, unknown>): string => {
    const filter = r.filter as { label_selector?: unknown } | null | undefined;
    if (method === 'ListPodSandbox' || method === 'ListContainers' || method.startsWith('List')) return labelsUid(filter?.label_selector);
    if (method === 'RunPodSandbox') return labelsUid((r.config as { labels?: unknown } | null)?.labels);
    if (method === 'CreateContainer') return labelsUid((r.config as { labels?: unknown } | null)?.labels);
    for (const key of ['pod_sandbox_id', 'container_id']) if (typeof r[key] === 'string') return owners.get(r[key] as string) ?? '';
    return '';
  };
  const learnFromAnswer = (method: string, call: CriCall, answer: Record<string, unknown>) => {
    if (method === 'RunPodSandbox') learn(answer.pod_sandbox_id, call.podUid);
    else if (method === 'CreateContainer') learn(answer.container_id, call.podUid);
    else if (method === 'ListPodSandbox' || method === 'ListContainers') {
      const items = ((method === 'ListPodSandbox' ? answer.items : answer.containers) as { id: string; labels: unknown }[]) ?? [];
      for (const x of items) learn(x.id, labelsUid(x.labels));
      call.answerIds = items.map((x) => x.id);
    }
  };
  const { RuntimeService, ImageService } = loadCriServices();
  for (const ctor of [RuntimeService, ImageService]) {
    const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      'grpc.max_send_message_length': 16 * 1024 * 1024,
    });
    clients.push(client);
    const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const [name, m] of Object.entries(ctor.service)) {
      if (m.requestStream || m.responseStream) continue;
      const method = m.path.slice(m.path.lastIndexOf('/') + 1);
      definition[name] = {
        ...m,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      };
      handlers[name] = (async (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const request = m.requestDeserialize(call.request) as Record<string, unknown>;
        const entry: CriCall = { method, request, podUid: podOfRequest(method, request), done: false };
        calls.push(entry);
        try {
          await hold?.(entry);
        } catch (err) {
          entry.done = true;
          entry.error = (err as Error).message;
          return callback({ code: grpc.status.ABORTED, details: entry.error });
        }
        client.makeUnaryRequest(
          m.path,
          identity,
          identity,
          call.request,
          new grpc.Metadata(),
          { deadline: call.getDeadline() },
          (err, answer) => {
            entry.done = true;
            if (err) {
              entry.error = err.details;
              return callback({ code: err.code, details: err.details });
            }
            learnFromAnswer(method, entry, m.responseDeserialize(answer!) as Record<string, unknown>);
            callback(null, answer!);
          },
        );
      }) as grpc.handleUnaryCall<Buffer, Buffer>;
    }
    server.addService(definition, handlers);
  }
  await rm(sock, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  let closed: Promise<void> | undefined;
  return {
    endpoint: `unix://${sock}`,
    calls,
    hold(fn) {
      hold = fn;
    },
    podOf: (id) => owners.get(id) ?? '',
    close: () =>
      (closed ??= (async () => {
        server.forceShutdown();
        for (const c of clients) c.close();
        await rm(sock, { force: true });
      })()),
  };
}

/** countByMethod: how many of `calls` each method made, as `{ Method: n }` with the methods in name order. */
export function countByMethod(calls: readonly CriCall[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const c of [...calls].sort((a, b) => (a.method < b.method ? -1 : a.method > b.method ? 1 : 0)))
    counts[c.method] = (counts[c.method] ?? 0) + 1;
  return counts;
}

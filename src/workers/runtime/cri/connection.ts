// Counterpart of the kubelet's CRI connection (pkg/kubelet/cri/remote/remote_runtime.go NewRemoteRuntimeService: grpc.Dial, maxMsgSize, per-call context.WithTimeout).
/**
 * One gRPC connection to a CRI endpoint and the unary call every CRI method goes through: the
 * deadline, cancellation by an AbortSignal and the mapping of gRPC errors (./errors.ts). Worker
 * threads only (it holds a socket); ./remote-runtime.ts and ./remote-image.ts build on it.
 */
import * as grpc from '@grpc/grpc-js';
import { realClock, type Clock } from '../../../shared/clock.js';
import { criError } from './errors.js';
import type { CriEndpoint } from './endpoint.js';
import type { CriCallOptions } from './services.js';

/** kDefaultRuntimeRequestTimeoutMs: the kubelet's `--runtime-request-timeout` default, 2 minutes (milliseconds). */
export const kDefaultRuntimeRequestTimeoutMs = 120_000;
/** kMaxMessageBytes: the largest answer accepted, 16 MiB (the kubelet's maxMsgSize; a ListContainers of many containers). */
export const kMaxMessageBytes = 16 * 1024 * 1024;

/** CriClientOptions: how a CRI client calls. */
export interface CriClientOptions {
  /** `--runtime-request-timeout` in milliseconds (default {@link kDefaultRuntimeRequestTimeoutMs}); 0 = no deadline. */
  requestTimeoutMs?: number;
  /** The thread's Clock (default realClock): each call's gRPC deadline is its now() plus the timeout (epoch ms, as grpc-js reads it). */
  clock?: Clock;
}

/** Deadline of one call: `request` (the request timeout), `none`, or the request timeout plus this many milliseconds. */
export type CallDeadline = 'request' | 'none' | { plusMs: number };

type UnaryMethod = (
  request: unknown,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (err: grpc.ServiceError | null, response?: unknown) => void,
) => grpc.ClientUnaryCall;

/**
 * CriConnection: a grpc-js client of one CRI service on one endpoint. Constructing it does not
 * dial; the first call does (and fails Unavailable when nothing listens). Not thread-safe across
 * workers: each thread makes its own.
 */
export class CriConnection {
  readonly endpoint: CriEndpoint;
  readonly requestTimeoutMs: number;
  /** The clock of the deadlines (CriClientOptions.clock). */
  readonly clock: Clock;
  private readonly client: grpc.Client;
  private closed = false;

  constructor(service: grpc.ServiceClientConstructor, endpoint: CriEndpoint, opts: CriClientOptions = {}) {
    this.endpoint = endpoint;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? kDefaultRuntimeRequestTimeoutMs;
    this.clock = opts.clock ?? realClock;
    this.client = new service(endpoint.target, grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': kMaxMessageBytes,
      'grpc.max_send_message_length': kMaxMessageBytes,
    });
  }

  /**
   * call invokes the unary CRI method `method` (its proto name, e.g. `RunPodSandbox`) with
   * `request` and resolves the decoded answer. The deadline is `deadline` (see
   * {@link CallDeadline}); `opts.signal` cancels the call. Rejects with ./errors.ts criError.
   */
  call<Res>(method: string, request: unknown, deadline: CallDeadline, opts: CriCallOptions = {}): Promise<Res> {
    const timeoutMs = this.timeoutOf(deadline);
    const fail = (err: unknown): Promise<never> => Promise.reject(criError(method, err, timeoutMs));
    if (this.closed) return fail({ code: grpc.status.UNAVAILABLE, details: `the CRI client of ${this.endpoint.target} is closed` });
    if (opts.signal?.aborted) return fail({ code: grpc.status.CANCELLED, details: 'context canceled' });
    const fn = (this.client as unknown as Record<string, UnaryMethod | undefined>)[method];
    if (typeof fn !== 'function') return fail({ code: grpc.status.UNIMPLEMENTED, details: `no method ${method} in the CRI protocol` });
    const callOptions: grpc.CallOptions = timeoutMs > 0 ? { deadline: new Date(this.clock.now() + timeoutMs) } : {};
    return new Promise<Res>((resolve, reject) => {
      const onAbort = (): void => call.cancel();
      const call = fn.call(this.client, request, new grpc.Metadata(), callOptions, (err, response) => {
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) reject(criError(method, err, timeoutMs));
        else resolve(response as Res);
      });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** close drops the connection; calls after it reject Unavailable. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.client.close();
  }

  /** timeoutOf: the milliseconds a call with `deadline` gets (0 = none). */
  timeoutOf(deadline: CallDeadline): number {
    if (deadline === 'none' || !(this.requestTimeoutMs > 0)) return 0;
    return deadline === 'request' ? this.requestTimeoutMs : this.requestTimeoutMs + Math.max(0, deadline.plusMs);
  }
}

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

/**
 * kCriChannelOptions: the grpc-js channel options of a CRI connection — the kubelet's message size
 * limit both ways (remote_runtime.go maxMsgSize), and channelz off: grpc-js' channelz keeps, per
 * call, counters and timestamps in the channel, subchannel and socket (with a closure per stream)
 * for a debugging service nothing here serves or reads (the kubelet's client does not register one
 * either). No retry policy (the kubelet's client has none); grpc-js' transparent retry of a stream
 * the runtime refused or never saw stays on.
 */
export const kCriChannelOptions: grpc.ChannelOptions = Object.freeze({
  'grpc.max_receive_message_length': kMaxMessageBytes,
  'grpc.max_send_message_length': kMaxMessageBytes,
  'grpc.enable_channelz': 0,
});

/** Deadline of one call: `request` (the request timeout), `none`, or the request timeout plus this many milliseconds. */
export type CallDeadline = 'request' | 'none' | { plusMs: number };

/** The channel of a grpc-js client (channel.ts Channel). */
type ClientChannel = ReturnType<grpc.Client['getChannel']>;
/** The grpc-js call object a channel makes (call-interface.ts Call): start, send, read, half-close, cancel. */
type ChannelCall = ReturnType<ClientChannel['createCall']>;

/** No deadline, as grpc-js reads a numeric deadline (deadline.ts: Infinity = none). */
const kNoDeadline = Infinity;

/**
 * statusError: the grpc-js ServiceError of a call that ended with a status other than OK — the
 * shape grpc-js' client gives its callback (call.ts callErrorFromStatus: message
 * `<code> <NAME>: <details>`, with `code`, `details`, `metadata`), without its second stack capture.
 */
function statusError(status: grpc.StatusObject): grpc.ServiceError {
  return Object.assign(new Error(`${status.code} ${grpc.status[status.code]}: ${status.details}`), status);
}

/**
 * CriConnection: a grpc-js client of one CRI service on one endpoint. Constructing it does not
 * dial; the first call does (and fails Unavailable when nothing listens). Not thread-safe across
 * workers: each thread makes its own.
 *
 * A call goes straight to the client's channel (`Channel.createCall`, as grpc-js'
 * client-interceptors.ts getCall does), with the method's serializer and deserializer from the
 * service definition: what grpc-js' `Client.makeUnaryRequest` does for a client without
 * interceptors, less its per-call costs that no CRI caller reads — a captured stack (`new Error()`)
 * per call, the call's EventEmitter and its `metadata`/`status` events, two intercepting-call
 * layers, a fresh `Metadata` and a `Date` deadline. The channel below (name resolution, the
 * subchannel, reconnects, transparent retries of streams the runtime never saw, message size
 * limits, the deadline timer) is grpc-js' own and unchanged.
 */
export class CriConnection {
  readonly endpoint: CriEndpoint;
  readonly requestTimeoutMs: number;
  /** The clock of the deadlines (CriClientOptions.clock). */
  readonly clock: Clock;
  /** The (empty) request metadata of every call: grpc-js copies it when a call starts (resolving-call.ts start), so one serves all. */
  readonly metadata = new grpc.Metadata();
  private readonly client: grpc.Client;
  private readonly channel: ClientChannel;
  private readonly methods: grpc.ServiceDefinition;
  private closed = false;

  constructor(service: grpc.ServiceClientConstructor, endpoint: CriEndpoint, opts: CriClientOptions = {}) {
    this.endpoint = endpoint;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? kDefaultRuntimeRequestTimeoutMs;
    this.clock = opts.clock ?? realClock;
    this.client = new service(endpoint.target, grpc.credentials.createInsecure(), { ...kCriChannelOptions });
    this.channel = this.client.getChannel();
    this.methods = service.service;
  }

  /**
   * call invokes the unary CRI method `method` (its proto name, e.g. `RunPodSandbox`) with
   * `request` and resolves the decoded answer. The deadline is `deadline` (see
   * {@link CallDeadline}); `opts.signal` cancels the call (code Canceled). Rejects with
   * ./errors.ts criError, its `cause` a grpc-js ServiceError (`code`, `details`, `metadata`).
   */
  call<Res>(method: string, request: unknown, deadline: CallDeadline, opts: CriCallOptions = {}): Promise<Res> {
    const timeoutMs = this.timeoutOf(deadline);
    const fail = (err: unknown): Promise<never> => Promise.reject(criError(method, err, timeoutMs));
    if (this.closed) return fail({ code: grpc.status.UNAVAILABLE, details: `the CRI client of ${this.endpoint.target} is closed` });
    const signal = opts.signal;
    if (signal?.aborted) return fail({ code: grpc.status.CANCELLED, details: 'context canceled' });
    const def = Object.hasOwn(this.methods, method) ? this.methods[method] : undefined;
    if (def === undefined || def.requestStream || def.responseStream) {
      return fail({ code: grpc.status.UNIMPLEMENTED, details: `no method ${method} in the CRI protocol` });
    }
    // grpc-js takes a deadline as epoch milliseconds (deadline.ts Deadline = Date | number).
    const call: ChannelCall = this.channel.createCall(
      def.path,
      timeoutMs > 0 ? this.clock.now() + timeoutMs : kNoDeadline,
      null,
      null,
      null,
    );
    return new Promise<Res>((resolve, reject) => {
      let response: unknown;
      let received = false;
      let readError: grpc.StatusObject | undefined;
      const onAbort = (): void => call.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
      call.start(this.metadata, {
        onReceiveMetadata() {},
        onReceiveMessage(message: Buffer) {
          // As grpc-js' unary client: a second answer or an undecodable one ends the call.
          if (received) return call.cancelWithStatus(grpc.status.UNIMPLEMENTED, 'Too many responses received');
          received = true;
          try {
            response = def.responseDeserialize(message);
          } catch (e) {
            readError = {
              code: grpc.status.INTERNAL,
              details: `Response message parsing error: ${(e as Error).message}`,
              metadata: new grpc.Metadata(),
            };
            call.cancelWithStatus(readError.code, readError.details);
          }
        },
        onReceiveStatus(status: grpc.StatusObject) {
          signal?.removeEventListener('abort', onAbort);
          const final = readError ?? status;
          if (final.code !== grpc.status.OK) reject(criError(method, statusError(final), timeoutMs));
          else if (!received)
            reject(criError(method, statusError({ ...final, code: grpc.status.UNIMPLEMENTED, details: 'No message received' }), timeoutMs));
          else resolve(response as Res);
        },
      });
      call.startRead();
      let body: Buffer;
      try {
        body = def.requestSerialize(request);
      } catch (e) {
        call.cancelWithStatus(grpc.status.INTERNAL, `Request message serialization failure: ${(e as Error).message}`);
        return;
      }
      call.sendMessageWithContext({}, body);
      call.halfClose();
      signal?.addEventListener('abort', onAbort, { once: true });
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

/**
 * Counterpart of the apiserver's body decoding in its create and update handlers
 * (k8s.io/apiserver/pkg/endpoints/handlers) behind its max-in-flight filter
 * (k8s.io/apiserver/pkg/server/filters/maxinflight.go): the agent decodes every POST/PUT /pods
 * body, and every protobuf body of the Kubernetes API, on a thread of its own
 * (AgentHost.decodePodsBody and decodeProtobufBody), so a body that exhausts a parser's
 * memory, stack or time ends that thread and never the agent (issue 11, finding 1). What a
 * thread's end means for the request: out of memory or out of time → 413 (the body is too costly
 * to decode); any other death → 400 (the body could not be decoded); every thread busy and the
 * queue full → 429 with `Retry-After: 1` (the apiserver's answer when past max-in-flight). A
 * thread that ended is replaced by its pool before the next body. Main thread only.
 */
import { statusReasonOf } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { PROTOCOL_VERSION } from '../../shared/thread-wire.js';
import type { DecodedProtobufBody, DecodeProtobufBodyTask } from '../../shared/manifest-tasks.js';
import type { DecodedPodsBody, DecodePodsBodyRequest } from '../../shared/pods-body.js';
import {
  kDefaultBodyDecoderPoolOptions,
  newBodyDecoderPool,
  type BodyDecoderPool,
  type BodyDecoderPoolOptions,
} from '../pool/worker-pool.js';

/** Options of {@link newBodyDecoder}: the pool's, and how long one body may take. */
export interface BodyDecoderOptions extends BodyDecoderPoolOptions {
  /** How long decoding one body may take, milliseconds (default 10 s); longer → its thread is ended and the request gets 413. */
  decodeTimeoutMs?: number;
}

/** kBodyDecoderRetryAfterSeconds: the `Retry-After` of a 429, seconds (the apiserver's max-in-flight filter sends 1). */
export const kBodyDecoderRetryAfterSeconds = 1;

/** kDefaultDecodeTimeoutMs: how long one body may take to decode, milliseconds. */
export const kDefaultDecodeTimeoutMs = 10_000;

/** BodyDecoder: AgentHost.decodePodsBody and decodeProtobufBody, and the threads behind them. */
export interface BodyDecoder {
  /** decode never rejects: a bad body, a thread's end and a full queue are all DecodedPodsBody refusals. */
  decode(request: DecodePodsBodyRequest): Promise<DecodedPodsBody>;
  /** decodeProtobuf: a protobuf API body on the same threads, with the same refusals; never rejects. */
  decodeProtobuf(request: Omit<DecodeProtobufBodyTask, 'kind' | 'protocol'>): Promise<DecodedProtobufBody>;
  /** close ends the threads (idempotent); a decode after close answers 400 (no thread could answer). */
  close(): Promise<void>;
}

/**
 * newBodyDecoder starts the body decoder threads lazily, at the first body (`newPool`, default
 * newBodyDecoderPool with `options`), so that an agent nobody POSTs to pays no thread.
 * @param logger warns once per thread that ended, with why (never the body).
 */
export function newBodyDecoder(
  options: BodyDecoderOptions,
  logger: Logger,
  newPool: (o: BodyDecoderPoolOptions) => BodyDecoderPool = newBodyDecoderPool,
): BodyDecoder {
  const { decodeTimeoutMs = kDefaultDecodeTimeoutMs, ...poolOptions } = options;
  let pool: BodyDecoderPool | undefined;
  let closed = false;
  /** run: one task on the pool, its thread's end or a full queue a refusal (see the file comment). */
  const run = async <T extends DecodedPodsBody | DecodedProtobufBody>(
    task: Parameters<BodyDecoderPool['run']>[0],
  ): Promise<T | Exclude<DecodedPodsBody, { ok: true }>> => {
    if (closed) return { ok: false, kind: 'unparsable', message: 'the request body could not be decoded: the agent is stopping' };
    try {
      pool ??= newPool(poolOptions);
      const result = await pool.run(task, AbortSignal.timeout(decodeTimeoutMs));
      if (result.ok) return result.value as T;
      return { ok: false, kind: 'unparsable', message: `the request body could not be decoded: ${result.error.message}` };
    } catch (err) {
      return refusal(err, decodeTimeoutMs, poolOptions.maxHeapMb, logger) as Exclude<DecodedPodsBody, { ok: true }>;
    }
  };
  return {
    decode: (request) => run<DecodedPodsBody>({ kind: 'decodePodsBody', protocol: PROTOCOL_VERSION, ...request }),
    // refusal() never answers `invalid`, the one DecodedPodsBody refusal a protobuf body has not.
    decodeProtobuf: (request) =>
      run<DecodedProtobufBody>({ kind: 'decodeProtobufBody', protocol: PROTOCOL_VERSION, ...request }) as Promise<DecodedProtobufBody>,
    async close() {
      closed = true;
      const p = pool;
      pool = undefined;
      await p?.close();
    },
  };
}

/** refusal: what a rejected run means for the request (see the file comment). */
function refusal(err: unknown, decodeTimeoutMs: number, maxHeapMb: number | undefined, logger: Logger): DecodedPodsBody {
  if (statusReasonOf(err) === 'TooManyRequests') {
    return {
      ok: false,
      kind: 'busy',
      message: `Too many requests, please try again later: ${(err as Error).message}`,
      retryAfterSeconds: kBodyDecoderRetryAfterSeconds,
    };
  }
  const code = (err as { code?: unknown })?.code;
  const name = (err as { name?: unknown })?.name;
  const message = err instanceof Error ? err.message : String(err);
  logger.warn({ err: { name, code, message } }, 'Body decoder thread ended; a new one takes its place');
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return {
      ok: false,
      kind: 'tooLarge',
      message: `the request body is too large to decode: it needed more than the decoder's ${maxHeapMb ?? kDefaultBodyDecoderPoolOptions.maxHeapMb} MiB of memory`,
    };
  }
  if (name === 'AbortError') {
    return { ok: false, kind: 'tooLarge', message: `the request body is too large to decode: it took longer than ${decodeTimeoutMs} ms` };
  }
  return { ok: false, kind: 'unparsable', message: `the request body could not be decoded: the decoder thread failed (${message})` };
}

/**
 * The API routes' side of protobuf request bodies (`application/vnd.kubernetes.protobuf`): the
 * envelope's kind is checked on the main thread and the object decoded on the body decoder thread
 * (shared/kube-protobuf.ts is the codec). Counterpart of the apiserver's request decoding in
 * k8s.io/apiserver/pkg/endpoints/handlers (create.go / update.go: the negotiated serializer).
 */
import type { Status } from '../../shared/api.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { decodeObjectBody, envelopeTypeMeta, isProtobufMediaType } from '../../shared/kube-protobuf.js';
import type { AgentHost } from '../host/agent-host.js';
import { statusError } from '../http/status.js';

/**
 * decodeBodyOffThread: a protobuf body of the Kubernetes API as the JSON form of its object, for
 * the routes that take one of `kinds`. The envelope's kind is read on this thread
 * (envelopeTypeMeta) and another kind is refused at once; the object is decoded by
 * `host.decodeProtobufBody` on the body decoder thread (src/main/serving/body-decoder.ts), or here for a
 * host without one (tests and benches). `prefix` starts every message (e.g. `the protobuf body
 * cannot be handled as a Pod: `). Never rejects.
 * @returns the object, or a Status: 400 BadRequest (no envelope, another kind, bytes that are not
 * that message), 413 RequestEntityTooLarge or 429 TooManyRequests from the decoder thread.
 */
export async function decodeBodyOffThread(
  host: Pick<AgentHost, 'decodeProtobufBody'>,
  body: Uint8Array | undefined,
  kinds: readonly string[],
  prefix = '',
): Promise<Record<string, unknown> | Status> {
  const bytes = body ?? new Uint8Array(0);
  let objectKind: string;
  try {
    const { apiVersion, kind } = envelopeTypeMeta(bytes);
    if (!kinds.includes(kind)) {
      throw new InvalidArgumentError(
        `the protobuf body holds ${kind === '' ? 'no kind' : `a ${JSON.stringify(kind)}`} (apiVersion ${JSON.stringify(apiVersion)}), this request takes a ${kinds.join(' or ')}`,
      );
    }
    objectKind = kind;
    if (!host.decodeProtobufBody) return decodeObjectBody(bytes, objectKind);
  } catch (err) {
    return statusError(400, 'BadRequest', `${prefix}${(err as Error).message}`);
  }
  const decoded = await host.decodeProtobufBody({ body: bytes, objectKind });
  if (decoded.ok) return decoded.object;
  if (decoded.kind === 'tooLarge') return statusError(413, 'RequestEntityTooLarge', `${prefix}${decoded.message}`);
  if (decoded.kind === 'busy')
    return statusError(429, 'TooManyRequests', decoded.message, { retryAfterSeconds: decoded.retryAfterSeconds });
  return statusError(400, 'BadRequest', `${prefix}${decoded.message}`);
}

/**
 * jsonRequestBody: a write's body as JSON for the handlers that read JSON or YAML: a protobuf
 * body (Content-Type `application/vnd.kubernetes.protobuf`, what kubectl's typed clients send,
 * e.g. the Pod of `kubectl debug --copy-to`) decoded to the JSON of its `kind` object
 * (decodeBodyOffThread: off the main thread), any other body as it came. A protobuf body that
 * fails to decode is a 400 BadRequest Status as the apiserver's (`… cannot be handled as a Pod:
 * …`), or the decoder thread's 413 / 429.
 */
export async function jsonRequestBody(
  host: Pick<AgentHost, 'decodeProtobufBody'>,
  body: Buffer | undefined,
  contentType: string | undefined,
  kind: string,
): Promise<{ body: Buffer | undefined; contentType: string | undefined } | Status> {
  if (!isProtobufMediaType(contentType)) return { body, contentType };
  const decoded = await decodeBodyOffThread(host, body, [kind], `the protobuf body cannot be handled as a ${kind}: `);
  return decoded.kind === 'Status' && typeof decoded.code === 'number'
    ? (decoded as unknown as Status)
    : { body: Buffer.from(JSON.stringify(decoded), 'utf8'), contentType: 'application/json' };
}

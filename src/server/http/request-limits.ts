/**
 * Counterpart of the apiserver's request filters (k8s.io/apiserver/pkg/server/filters: maxInFlight,
 * timeout, request body size in handlers/rest.go limitedReadBody) for the kubelet-ts server:
 * header and body size limits, a request body timeout, and checks of path parameters before they
 * reach the runtime or the filesystem.
 */
import type { Status } from '../../shared/api.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from '../../shared/names.js';
import { statusError } from './status.js';

/** RequestLimits: the server's limits (AgentServerOptions fields, all optional). */
export interface RequestLimits {
  /** Largest request body, bytes (`--max-request-body-bytes`, default 1 MiB); larger → 413. */
  maxRequestBodyBytes?: number;
  /** Largest total size of the request headers (names + values), bytes (default 16 KiB); larger → 431. */
  maxHeaderBytes?: number;
  /**
   * How long a client may take to send its body, milliseconds (default 7 s, at most
   * kMaxBodyTimeoutMs); slower → 408. uWebSockets.js itself drops a connection whose request is
   * not in within its idle timeout (10 s, checked every 4 s: 8 to 12 s, body data does not reset
   * it), silently: a longer limit would never answer, so a larger value is lowered to 7 s.
   */
  bodyTimeoutMs?: number;
  /** How long a non-streaming handler may take, milliseconds (default 60 s); slower → 504. */
  handlerTimeoutMs?: number;
}

/** kDefaultRequestLimits: the defaults of {@link RequestLimits}. */
export const kDefaultRequestLimits: Readonly<Required<RequestLimits>> = Object.freeze({
  maxRequestBodyBytes: 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  bodyTimeoutMs: 7_000,
  handlerTimeoutMs: 60_000,
});

/** kMaxBodyTimeoutMs: the longest body timeout that still answers before uWebSockets.js drops the connection (8 s at the earliest), milliseconds. */
export const kMaxBodyTimeoutMs = 7_000;

/**
 * conflictingContentLength checks the Content-Length values of one request (every header line's,
 * and each comma-separated member): they must all be the same decimal number. RFC 9112 §6.3 makes
 * a message with differing ones unframeable (a request-smuggling vector); Go's net/http, which
 * serves the kubelet and the apiserver, answers 400 to it, and so do we. Pure.
 * @param values the raw values in arrival order (absent header: empty list).
 * @returns undefined when consistent, else a 400 `BadRequest` Status naming the header.
 */
export function conflictingContentLength(values: readonly string[]): Status | undefined {
  const members = values.flatMap((v) => v.split(',').map((m) => m.trim()));
  if (members.length === 0) return undefined;
  if (members.some((m) => !/^\d+$/.test(m))) {
    return statusError(
      400,
      'BadRequest',
      `invalid Content-Length header ${JSON.stringify(values.join(', '))}: must be a decimal number of bytes`,
    );
  }
  if (new Set(members.map((m) => String(Number(m)))).size > 1) {
    return statusError(
      400,
      'BadRequest',
      `conflicting Content-Length headers ${JSON.stringify(values.join(', '))}: a request may carry only one length`,
    );
  }
  return undefined;
}

/** tooLarge: 413 `RequestEntityTooLarge` as the apiserver words it. */
export function tooLarge(limit: number): Status {
  return statusError(413, 'RequestEntityTooLarge', `the request body is too large: limit is ${limit} bytes`);
}

/** headerBytes: the size of the headers as counted against `maxHeaderBytes` (names, values, `: ` and CRLF). */
export function headerBytes(headers: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(headers)) n += k.length + v.length + 4;
  return n;
}

/**
 * kParamRules: how each path parameter is checked before a handler sees it: `namespace` and
 * `container` are DNS-1123 labels, `name` and `pod` DNS-1123 subdomains (ValidatePodName).
 */
const kParamRules: Record<string, (v: string) => string[]> = {
  namespace: dns1123LabelErrors,
  name: dns1123SubdomainErrors,
  pod: dns1123SubdomainErrors,
  container: dns1123LabelErrors,
  // `[scheme:]name[:port]` of pods/{name}/proxy: the proxy handler parses and checks it (kube-api/pod-proxy.ts).
  proxyName: () => [],
};

/**
 * checkPathParams validates decoded path parameters (e.g. `{namespace: 'default', name: 'web'}`)
 * so that nothing but a DNS-1123 name reaches runtime filters or file names. Pure.
 * @returns undefined when all are valid, else a 400 `BadRequest` Status naming the parameter:
 *   `invalid path parameter namespace "Bad_NS": a lowercase RFC 1123 label must …`.
 */
export function checkPathParams(params: Record<string, string>): Status | undefined {
  for (const [key, value] of Object.entries(params)) {
    const rule = kParamRules[key] ?? dns1123SubdomainErrors;
    const errs = rule(value);
    if (errs.length > 0) {
      return statusError(400, 'BadRequest', `invalid path parameter ${key} ${JSON.stringify(value)}: ${errs.join('; ')}`, {
        causes: [{ field: key, reason: 'FieldValueInvalid', message: errs.join('; ') }],
      });
    }
  }
  return undefined;
}

/**
 * Counterpart of pkg/probe/http and pkg/probe/tcp: the httpGet and tcpSocket probe logic, and the
 * direct dialers for targets the node can reach (hostNetwork pods, pods with a pod IP). Safe in any
 * thread (node:net and node:tls only). The probe manager runs direct probes on the main thread with
 * {@link runDirectNetProbe} — no worker-pool hop (issue #16) — and the worker's net-probe.ts runs
 * the netns ones (pods with network `none`) with {@link httpProbe} over its helper.
 *
 * The direct HTTP client is a minimal HTTP/1.1 one on a one-shot connection (probe-socket.ts), as a
 * probe needs no more: it writes one `GET` with `Connection: close`, reads the status line and headers, keeps at most
 * 10 KiB of body (the kubelet's maxProbeOutputLength) and closes the connection as soon as it has
 * the body (Content-Length reached, the last chunk seen, 10 KiB read, or the server closed).
 * HTTPS certificates are not verified, as the kubelet's prober.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { NetProbeTask, ProbeOutcome } from '../shared/probe-tasks.js';
import { serializeError } from '../shared/errors.js';
import { exchange, ProbeSocketError } from './probe-socket.js';

/** Most body bytes kept for the probe's output (maxProbeOutputLength 10 KiB). */
export const kMaxProbeBodyBytes = 10 * 1024;
/** Most response-head bytes read before the reply counts as malformed. */
const kMaxHeadBytes = 64 * 1024;
/** Redirects followed to the same host (the kubelet's http client allows 10). */
const kMaxRedirects = 10;
/** User-Agent of probe requests, as the kubelet's `kube-probe/<major>.<minor>`. */
export const kProbeUserAgent = 'kube-probe/1.30';

/** HttpReply: the parsed head of an HTTP response, and its body (at most 10 KiB, decoded as UTF-8). */
export interface HttpReply {
  status: number;
  location?: string;
  body: string;
}

/** ProbeRequest: what a dialer sends. */
export interface ProbeRequest {
  scheme: 'HTTP' | 'HTTPS';
  path: string;
  headers: Record<string, string>;
}

/** Dialer: one GET to host:port; rejects with the kubelet's wording of a dial or timeout error. */
export type Dialer = (host: string, port: number, req: ProbeRequest, timeoutMs: number) => Promise<HttpReply>;

/** requestHead: the request line and headers of a probe's GET, `Connection: close`, CRLF-terminated. */
export function requestHead(req: ProbeRequest): string {
  return [`GET ${req.path} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''].join(
    '\r\n',
  );
}

/** headEnd: the offset just past `\r\n\r\n` in `raw`, or -1. */
function headEnd(raw: Buffer): number {
  const i = raw.indexOf('\r\n\r\n', 0, 'latin1');
  return i === -1 ? -1 : i + 4;
}

/** dechunk: the payload of a chunked body (as far as it is complete). */
function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at, 'latin1');
    if (eol === -1) break;
    const size = parseInt(body.subarray(at, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
    if (at > body.length) break;
  }
  return Buffer.concat(parts);
}

/**
 * parseHttpReply reads the status line, the Location header and the body (at most 10 KiB; a
 * chunked body is decoded) of a raw HTTP/1.x reply. Null when there is no status line.
 */
export function parseHttpReply(raw: Buffer): HttpReply | null {
  const end = headEnd(raw);
  const lines = raw
    .subarray(0, end === -1 ? raw.length : end - 4)
    .toString('latin1')
    .split('\r\n');
  const m = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(lines[0] ?? '');
  if (!m) return null;
  let location: string | undefined;
  let chunked = false;
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i <= 0) continue;
    const name = l.slice(0, i).trim().toLowerCase();
    if (name === 'location') location = l.slice(i + 1).trim();
    else if (name === 'transfer-encoding' && /chunked/i.test(l.slice(i + 1))) chunked = true;
  }
  let body = end === -1 ? Buffer.alloc(0) : raw.subarray(end);
  if (chunked) body = dechunk(body);
  return { status: Number(m[1]), location, body: body.subarray(0, kMaxProbeBodyBytes).toString('utf8') };
}

/** bodyComplete: whether `raw` (head complete at `end`) holds the whole body a probe keeps. */
function bodyComplete(raw: Buffer, end: number): boolean {
  const head = raw.subarray(0, end).toString('latin1');
  const body = raw.length - end;
  if (body >= kMaxProbeBodyBytes + 64) return true;
  if (/^HTTP\/\d(?:\.\d)?\s+(1\d\d|204|304)\b/.test(head)) return true;
  const len = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (len) return body >= Number(len[1]);
  if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) return raw.subarray(end).includes('0\r\n\r\n', 0, 'latin1');
  return false;
}

/** replyComplete: whether a probe has read enough of `raw`: the body it keeps, or a head too long to be one. */
function replyComplete(raw: Buffer): boolean {
  const end = headEnd(raw);
  return end === -1 ? raw.length > kMaxHeadBytes : bodyComplete(raw, end);
}

/**
 * directHttp: one GET on its own connection from this thread (probe-socket.ts: Node's TCP handle
 * for an IP address, a net.Socket for a name, tls unverified for HTTPS). Bounded as a whole by
 * `timeoutMs` (Go's http.Client.Timeout). Rejects with Go's wording:
 * `Get "<url>": dial tcp …: connect: connection refused`, `… context deadline exceeded …`.
 */
export const directHttp: Dialer = async (host, port, req, timeoutMs) => {
  const url = `${req.scheme.toLowerCase()}://${host.includes(':') ? `[${host}]` : host}:${port}${req.path}`;
  const tlsDial =
    req.scheme === 'HTTPS'
      ? {
          connect: () => tls.connect({ host, port, rejectUnauthorized: false, servername: net.isIP(host) ? undefined : host }),
          connectEvent: 'secureConnect',
        }
      : {};
  let raw: Buffer;
  try {
    raw = await exchange({ host, port, send: requestHead(req), complete: replyComplete, timeoutMs, ...tlsDial });
  } catch (err) {
    if (!(err instanceof ProbeSocketError)) throw err;
    if (err.phase === 'timeout')
      throw new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`);
    if (err.phase === 'read') throw new Error(`Get "${url}": read tcp ${host}:${port}: ${err.detail}`);
    throw new Error(`Get "${url}": dial tcp ${host}:${port}: connect: ${err.detail}`);
  }
  if (raw.length === 0) throw new Error(`Get "${url}": EOF`);
  if (headEnd(raw) === -1 && raw.length > kMaxHeadBytes)
    throw new Error(`Get "${url}": malformed HTTP response (head over ${kMaxHeadBytes} bytes)`);
  const reply = parseHttpReply(raw);
  if (!reply) throw new Error(`Get "${url}": malformed HTTP response`);
  return reply;
};

/**
 * httpProbe, as pkg/probe/http DoHTTPProbe: GET through `dial`, following redirects to the same
 * host (up to 10); a redirect to another host is not followed and its 3xx counts (success, as the
 * kubelet's "Probe terminated redirects"). 200–399 is success; anything else is a failure with
 * output `HTTP probe failed with statuscode: N`. Rejects with the dialer's error.
 */
export async function httpProbe(task: NetProbeTask, dial: Dialer): Promise<ProbeOutcome> {
  const headers: Record<string, string> = { 'User-Agent': kProbeUserAgent, Accept: '*/*' };
  let hostHeader = task.port === 80 ? task.host : `${task.host}:${task.port}`;
  for (const h of task.headers ?? []) {
    if (h.name.toLowerCase() === 'host') hostHeader = h.value;
    else headers[h.name] = h.value;
  }
  headers.Host = hostHeader;
  let reqPath = task.path || '/';
  let scheme = task.scheme ?? 'HTTP';
  for (let hop = 0; ; hop++) {
    const reply = await dial(task.host, task.port, { scheme, path: reqPath, headers }, task.timeoutMs);
    if (reply.status >= 300 && reply.status < 400 && reply.location && hop < kMaxRedirects) {
      const base = `${scheme.toLowerCase()}://${hostHeader}${reqPath}`;
      let next: URL;
      try {
        next = new URL(reply.location, base);
      } catch {
        return { result: 'success', output: `Probe terminated redirects, Response body: ${reply.body}` };
      }
      const sameHost = next.host === new URL(base).host;
      if (sameHost && (next.protocol === 'http:' || next.protocol === 'https:')) {
        scheme = next.protocol === 'https:' ? 'HTTPS' : 'HTTP';
        reqPath = next.pathname + next.search;
        continue;
      }
      return { result: 'success', output: `Probe terminated redirects, Response body: ${reply.body}` };
    }
    if (reply.status >= 200 && reply.status < 400) return { result: 'success', output: reply.body };
    return { result: 'failure', output: `HTTP probe failed with statuscode: ${reply.status}` };
  }
}

/** directTcp: a TCP connect, closed at once (pkg/probe/tcp DoTCPProbe). Rejects with Go's dial wording. */
export async function directTcp(host: string, port: number, timeoutMs: number): Promise<void> {
  try {
    await exchange({ host, port, timeoutMs });
  } catch (err) {
    if (!(err instanceof ProbeSocketError)) throw err;
    throw new Error(`dial tcp ${host}:${port}: ${err.phase === 'timeout' ? 'i/o timeout' : `connect: ${err.detail}`}`);
  }
}

/**
 * runDirectNetProbe runs one httpGet (`task.mode` http) or tcpSocket (tcp) probe of a target the
 * node reaches directly (`task.sandboxId` unset) and resolves `success` or `failure` (refused,
 * timed out, bad status; `output` in the kubelet's words). Never rejects.
 */
export async function runDirectNetProbe(task: NetProbeTask): Promise<ProbeOutcome> {
  try {
    if (task.mode === 'tcp') {
      await directTcp(task.host, task.port, task.timeoutMs);
      return { result: 'success', output: '' };
    }
    return await httpProbe(task, directHttp);
  } catch (err) {
    return { result: 'failure', output: serializeError(err).message };
  }
}

/**
 * Counterpart of pkg/probe/http and pkg/probe/tcp (and the HTTP lifecycle handler of
 * pkg/kubelet/lifecycle): httpGet and tcpSocket probes, run on a worker thread.
 *
 * Targets with an address the node can reach (hostNetwork pods, pods with a pod IP) are dialled
 * directly with node:net / node:http. Pods with network `none` have no such address: the probe
 * then runs inside the sandbox's network namespace through the static helper
 * `kubelet-ts-netns-probe` (tools/netns-probe/netns-probe.c, built by tools/ into
 * `.run/bin/`): it setns(2)s into `/proc/<sandbox pid>/ns/net` and connects to 127.0.0.1 there;
 * for HTTP this module writes the request and parses the reply. Nothing is needed in the pause or
 * app image, and the main thread never waits on it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeError } from '../shared/errors.js';
import { setLongTimeout } from '../shared/long-timeout.js';
import type { NetProbeTask, ProbeOutcome } from '../shared/messages.js';
import type { ContainerRuntime } from './runtime/runtime.js';

/** Most body bytes kept for the probe's output (maxProbeOutputLength 10 KiB). */
const kMaxBodyBytes = 10 * 1024;
/** Redirects followed to the same host (the kubelet's http client allows 10). */
const kMaxRedirects = 10;
/** User-Agent of probe requests, as the kubelet's `kube-probe/<major>.<minor>`. */
export const kProbeUserAgent = 'kube-probe/1.30';

/**
 * netnsProbeHelperPath: the helper binary: `$KUBELET_TS_NETNS_PROBE` if set, else
 * `<project root>/.run/bin/kubelet-ts-netns-probe` (the project root is the nearest directory
 * above this module with a package.json, so it works from src/ and from dist/).
 */
export function netnsProbeHelperPath(): string {
  if (process.env.KUBELET_TS_NETNS_PROBE) return process.env.KUBELET_TS_NETNS_PROBE;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(path.join(dir, 'package.json'))) break;
    dir = path.dirname(dir);
  }
  return path.join(dir, '.run', 'bin', 'kubelet-ts-netns-probe');
}

/** The parsed head of an HTTP response. */
interface HttpReply {
  status: number;
  location?: string;
  body: string;
}

/** parseHttpReply reads the status line, the Location header and the body of a raw HTTP/1.x reply. */
export function parseHttpReply(raw: Buffer): HttpReply | null {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const lines = head.split('\r\n');
  const m = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(lines[0] ?? '');
  if (!m) return null;
  let location: string | undefined;
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0 && l.slice(0, i).trim().toLowerCase() === 'location') location = l.slice(i + 1).trim();
  }
  const body = end === -1 ? '' : raw.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1')).subarray(0, kMaxBodyBytes).toString('utf8');
  return { status: Number(m[1]), location, body };
}

/** Runs the netns helper; resolves its exit code, stdout and stderr. */
function runHelper(netnsPath: string, args: string[], input: string, timeoutMs: number): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(netnsProbeHelperPath(), [netnsPath, ...args, String(Math.max(1, timeoutMs))], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // The helper bounds itself by timeoutMs; this is a backstop against a stuck process.
    const timer = setLongTimeout(() => child.kill('SIGKILL'), timeoutMs + 2_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      timer.clear();
      reject(e);
    });
    child.on('close', (code) => {
      timer.clear();
      resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8').trim() });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

type Dialer = (host: string, port: number, req: { scheme: 'HTTP' | 'HTTPS'; path: string; headers: Record<string, string> }, timeoutMs: number) => Promise<HttpReply>;

/**
 * One agent per scheme for the thread's probes. keepAlive is off, so every probe opens and closes
 * its own connection (the kubelet's prober disables keep-alives too); sharing the agent only saves
 * building one per request (`agent: false`): 10–30 % of an httpGet probe's CPU at 200 probes/s in
 * a scratch measurement (too small to show in `bench probes`, whose runs spread by 40 %). HTTPS
 * certificates are not verified, as the kubelet's prober.
 */
const kHttpAgent = new http.Agent({ keepAlive: false });
const kHttpsAgent = new https.Agent({ keepAlive: false, rejectUnauthorized: false });

/** Direct HTTP(S) GET from this thread (HTTPS certificates are not verified, as the kubelet's prober). */
const directHttp: Dialer = (host, port, req, timeoutMs) =>
  new Promise((resolve, reject) => {
    const mod = req.scheme === 'HTTPS' ? https : http;
    const agent = req.scheme === 'HTTPS' ? kHttpsAgent : kHttpAgent;
    // The whole request is bounded (Go's http.Client.Timeout), by a timer that outlasts Node's
    // 2^31-1 ms: the `timeout` option is a socket idle timer, which fires at once past that.
    const timer = setLongTimeout(() => r.destroy(new Error(`Get "${req.scheme.toLowerCase()}://${host}:${port}${req.path}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)), timeoutMs);
    const settle = <T>(f: (v: T) => void) => (v: T) => {
      timer.clear();
      f(v);
    };
    const r = mod.request({ host, port, path: req.path, method: 'GET', headers: req.headers, agent, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (b: Buffer) => {
        if (size < kMaxBodyBytes) chunks.push(b);
        size += b.length;
      });
      res.on('end', settle(() => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body: Buffer.concat(chunks).subarray(0, kMaxBodyBytes).toString('utf8') })));
      res.on('error', settle(reject));
    });
    r.on('error', settle(reject));
    r.end();
  });

/** HTTP GET inside a network namespace through the helper (plain HTTP only). */
function netnsHttp(netnsPath: string): Dialer {
  return async (host, port, req, timeoutMs) => {
    if (req.scheme === 'HTTPS') throw new Error('HTTPS probes of pods without a pod IP (network none) are not supported');
    const head = [`GET ${req.path} HTTP/1.1`, ...Object.entries(req.headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''].join('\r\n');
    const r = await runHelper(netnsPath, ['raw', host, String(port)], head, timeoutMs);
    if (r.code === 2) throw Object.assign(new Error(r.stderr || 'netns probe helper failed'), { unknown: true });
    if (r.code !== 0) throw new Error(`Get "http://${host}:${port}${req.path}": ${r.stderr || `helper exited with ${r.code}`}`);
    const reply = parseHttpReply(r.stdout);
    if (!reply) throw new Error(`Get "http://${host}:${port}${req.path}": malformed HTTP response`);
    return reply;
  };
}

/**
 * httpProbe, as pkg/probe/http DoHTTPProbe: GET, following redirects to the same host (up to 10);
 * a redirect to another host is not followed and its 3xx counts (success, as the kubelet's
 * "Probe terminated redirects"). 200–399 is success; anything else is a failure with output
 * `HTTP probe failed with statuscode: N`.
 */
async function httpProbe(task: NetProbeTask, dial: Dialer): Promise<ProbeOutcome> {
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

/** Direct TCP connect (pkg/probe/tcp DoTCPProbe). */
function directTcp(host: string, port: number, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port });
    // Not s.setTimeout: Node's timers fire at once past 2^31-1 ms, and timeoutSeconds may be longer.
    const timer = setLongTimeout(() => s.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)), timeoutMs);
    s.once('connect', () => {
      timer.clear();
      s.destroy();
      resolve();
    });
    s.once('error', (e: NodeJS.ErrnoException) => {
      timer.clear();
      reject(new Error(`dial tcp ${host}:${port}: connect: ${e.code === 'ECONNREFUSED' ? 'connection refused' : e.message}`));
    });
  });
}

/** netnsPathOf: `/proc/<pid>/ns/net` of the running sandbox `sandboxId`. @throws when it is not running. */
async function netnsPathOf(runtime: ContainerRuntime, sandboxId: string): Promise<string> {
  const d = await runtime.inspectContainer(sandboxId);
  if (!d.running || !d.pid) throw new Error(`sandbox ${sandboxId.slice(0, 12)} is not running`);
  return `/proc/${d.pid}/ns/net`;
}

/**
 * runNetProbe runs one httpGet (`mode` http) or tcpSocket (`mode` tcp) probe and resolves its
 * verdict: `success`, `failure` (refused, timed out, bad status; `output` says why in the
 * kubelet's words), or `unknown` when the probe could not be run (the sandbox is gone, the
 * netns helper is missing). With `task.sandboxId` it runs inside that sandbox's network namespace.
 * Never rejects. Runs on a worker thread.
 */
export async function runNetProbe(runtime: ContainerRuntime, task: NetProbeTask): Promise<ProbeOutcome> {
  let netnsPath = '';
  if (task.sandboxId) {
    try {
      netnsPath = await netnsPathOf(runtime, task.sandboxId);
    } catch (err) {
      return { result: 'unknown', output: serializeError(err).message };
    }
    if (!existsSync(netnsProbeHelperPath())) {
      return { result: 'unknown', output: `netns probe helper ${netnsProbeHelperPath()} is missing (tools/test or tools/up builds it)` };
    }
  }
  try {
    if (task.mode === 'tcp') {
      if (netnsPath) {
        const r = await runHelper(netnsPath, ['tcp', task.host, String(task.port)], '', task.timeoutMs);
        if (r.code === 2) return { result: 'unknown', output: r.stderr };
        if (r.code !== 0) return { result: 'failure', output: `dial tcp ${task.host}:${task.port}: ${r.stderr.replace(/^dial tcp: /, '')}` };
      } else await directTcp(task.host, task.port, task.timeoutMs);
      return { result: 'success', output: '' };
    }
    return await httpProbe(task, netnsPath ? netnsHttp(netnsPath) : directHttp);
  } catch (err) {
    if ((err as { unknown?: boolean }).unknown) return { result: 'unknown', output: (err as Error).message };
    return { result: 'failure', output: serializeError(err).message };
  }
}

/**
 * Counterpart of pkg/probe/http and pkg/probe/tcp (and the HTTP lifecycle handler of
 * pkg/kubelet/lifecycle): httpGet and tcpSocket probes, run on a worker thread.
 *
 * Targets with an address the node can reach (hostNetwork pods, pods with a pod IP) are dialled
 * directly (io/http-probe.ts; the probe manager runs those on the main thread itself, the
 * worker only for HTTP lifecycle hooks). Pods with network `none` have no such address: the probe
 * then runs inside the sandbox's network namespace through the static helper
 * `kubelet-ts-netns-probe` (tools/netns-probe/netns-probe.c, built by tools/ into
 * `.run/bin/`): it setns(2)s into `/proc/<sandbox pid>/ns/net` and connects to 127.0.0.1 there;
 * for HTTP this module writes the request and parses the reply. Nothing is needed in the pause or
 * app image, and the main thread never waits on it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeError } from '../../shared/errors.js';
import { httpProbe, parseHttpReply, requestHead, runDirectNetProbe, type Dialer } from '../../io/http-probe.js';
import { realClock, type Clock } from '../../shared/clock.js';
import type { NetProbeTask, ProbeOutcome } from '../../shared/probe-tasks.js';
import type { ContainerRuntime } from '../runtime/container/runtime.js';

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

/** Runs the netns helper; resolves its exit code, stdout and stderr. Its backstop timer is `clock`'s. */
function runHelper(
  netnsPath: string,
  args: string[],
  input: string,
  timeoutMs: number,
  clock: Clock,
): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(netnsProbeHelperPath(), [netnsPath, ...args, String(Math.max(1, timeoutMs))], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    // The helper bounds itself by timeoutMs; this is a backstop against a stuck process.
    const timer = clock.setTimeout(() => child.kill('SIGKILL'), timeoutMs + 2_000);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clock.clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clock.clearTimeout(timer);
      resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8').trim() });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** HTTP GET inside a network namespace through the helper (plain HTTP only). */
function netnsHttp(netnsPath: string, clock: Clock): Dialer {
  return async (host, port, req, timeoutMs) => {
    if (req.scheme === 'HTTPS') throw new Error('HTTPS probes of pods without a pod IP (network none) are not supported');
    const r = await runHelper(netnsPath, ['raw', host, String(port)], requestHead(req), timeoutMs, clock);
    if (r.code === 2) throw Object.assign(new Error(r.stderr || 'netns probe helper failed'), { unknown: true });
    if (r.code !== 0) throw new Error(`Get "http://${host}:${port}${req.path}": ${r.stderr || `helper exited with ${r.code}`}`);
    const reply = parseHttpReply(r.stdout);
    if (!reply) throw new Error(`Get "http://${host}:${port}${req.path}": malformed HTTP response`);
    return reply;
  };
}

/** netnsPathOf: `/proc/<pid>/ns/net` of the running sandbox `sandboxId`. @throws when it is not running. */
async function netnsPathOf(runtime: ContainerRuntime, sandboxId: string): Promise<string> {
  const d = await runtime.inspectContainer(sandboxId);
  if (!d.running || !d.pid) throw new Error(`sandbox ${sandboxId.slice(0, 12)} is not running`);
  return `/proc/${d.pid}/ns/net`;
}

/**
 * probeNetns: the network namespace path of the running sandbox `sandboxId`, with the netns
 * helper present; else the `unknown` outcome saying why a probe cannot be run there (the sandbox is
 * gone, the helper is missing). Never rejects. Used by the netns httpGet/tcpSocket and gRPC probes.
 */
export async function probeNetns(runtime: ContainerRuntime, sandboxId: string): Promise<string | ProbeOutcome> {
  let netnsPath: string;
  try {
    netnsPath = await netnsPathOf(runtime, sandboxId);
  } catch (err) {
    return { result: 'unknown', output: serializeError(err).message };
  }
  if (!existsSync(netnsProbeHelperPath())) {
    return { result: 'unknown', output: `netns probe helper ${netnsProbeHelperPath()} is missing (tools/test or tools/up builds it)` };
  }
  return netnsPath;
}

/**
 * runNetProbe runs one httpGet (`mode` http) or tcpSocket (`mode` tcp) probe and resolves its
 * verdict: `success`, `failure` (refused, timed out, bad status; `output` says why in the
 * kubelet's words), or `unknown` when the probe could not be run (the sandbox is gone, the
 * netns helper is missing). With `task.sandboxId` it runs inside that sandbox's network namespace.
 * The netns helper's backstop timer is `clock`'s (default realClock). Never rejects. Runs on a worker thread.
 */
export async function runNetProbe(runtime: ContainerRuntime, task: NetProbeTask, clock: Clock = realClock): Promise<ProbeOutcome> {
  if (!task.sandboxId) return runDirectNetProbe(task);
  const netnsPath = await probeNetns(runtime, task.sandboxId);
  if (typeof netnsPath !== 'string') return netnsPath;
  try {
    if (task.mode === 'tcp') {
      const r = await runHelper(netnsPath, ['tcp', task.host, String(task.port)], '', task.timeoutMs, clock);
      if (r.code === 2) return { result: 'unknown', output: r.stderr };
      if (r.code !== 0) return { result: 'failure', output: `dial tcp ${task.host}:${task.port}: ${r.stderr.replace(/^dial tcp: /, '')}` };
      return { result: 'success', output: '' };
    }
    return await httpProbe(task, netnsHttp(netnsPath, clock));
  } catch (err) {
    if ((err as { unknown?: boolean }).unknown) return { result: 'unknown', output: (err as Error).message };
    return { result: 'failure', output: serializeError(err).message };
  }
}

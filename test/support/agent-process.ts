// Test harness that runs kubelet-ts as a real child process (`node --import tsx src/main/index.ts`), for
// tests that must kill it (SIGKILL) or drive it from the command line; the in-process harness is agent.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './docker.js';
import { withTestRuntime } from './runtime.js';

/** The repository root (where package.json is). */
export const kRepoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** freePort: a TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Every agent child this test process spawned and that has not exited yet. If the test process
 * exits first (vitest ending after a timed-out test, a crash), they are killed with SIGKILL on
 * its `exit`, so no agent outlives the run (issue #38 finding 11).
 */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function trackChild(child: ChildProcess): void {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // `exit` handlers must be synchronous: kill() sends the signal at once.
  process.once('exit', () => {
    for (const c of liveChildren) c.kill('SIGKILL');
  });
}

/**
 * killAgentProcesses sends SIGKILL to every agent child still running that `which` selects
 * (default: all this process spawned, also those whose start has not resolved yet) and resolves
 * when they have exited.
 */
export async function killAgentProcesses(which: (child: ChildProcess) => boolean = () => true): Promise<void> {
  const dying = [...liveChildren].filter(which);
  await Promise.all(
    dying.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}

/** AgentProcess: one running `kubelet-ts` agent process. */
export interface AgentProcess {
  child: ChildProcess;
  port: number;
  base: string;
  /** The agent's `--root-dir` (from its args; the agent's default when not given). */
  rootDir: string;
  /**
   * api fetches `path` from the agent as its administrator: `Authorization: Bearer` with the token
   * of `<rootDir>/admin.token`, unless `init.headers` sets an Authorization header of its own.
   */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** stdout+stderr so far (pino JSON lines). */
  output(): string;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Resolves when the process has exited (by itself or by a signal), with its exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** AgentProcessOptions: extra settings of {@link startAgentProcess}. */
export interface AgentProcessOptions {
  /** Variables added to the child's environment (e.g. `KUBELET_TS_FAILPOINTS`). */
  env?: Record<string, string>;
  /**
   * Called with the child as soon as it is spawned, before its /healthz answers: a caller that
   * may be cleaned up while the start still waits (a timed-out test) can stop it by then.
   */
  onSpawn?: (child: ChildProcess) => void;
}

/**
 * startAgentProcess spawns the agent with `args` (plus `--port <free port>` unless given; the
 * environment plus `options.env`) and resolves once GET /healthz answers 200. On the test runtime
 * (runtime.ts: `--container-runtime-endpoint unix:///…` for containerd) unless `args` name a
 * runtime of their own (`--runtime`, `--docker-endpoint`, `--container-runtime-endpoint`).
 */
export async function startAgentProcess(args: string[], port?: number, options: AgentProcessOptions = {}): Promise<AgentProcess> {
  const p = port ?? (await freePort());
  // Its own default network, never the host's /etc/cni/net.d (a conf dir that does not exist has no config).
  const rootArg = args.lastIndexOf('--root-dir');
  if (rootArg >= 0 && !args.includes('--cni-conf-dir')) args = [...args, '--cni-conf-dir', join(args[rootArg + 1], 'cni', 'test-conf-dir')];
  args = withTestRuntime(args);
  const env = options.env ? { ...process.env, ...options.env } : process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/index.ts', '--port', String(p), ...args], {
    cwd: kRepoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  trackChild(child);
  options.onSpawn?.(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${p}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`agent exited with ${child.exitCode}: ${out.slice(-2000)}`);
      try {
        return (await fetch(`${base}/healthz`)).status === 200;
      } catch {
        return false;
      }
    },
    { timeoutMs: 150_000, intervalMs: 200, description: `agent on port ${p}` },
  ).catch((err: unknown) => {
    child.kill('SIGKILL'); // never leave a half-started agent behind
    throw err;
  });
  const rootIndex = args.lastIndexOf('--root-dir');
  const rootDir = rootIndex >= 0 ? resolve(kRepoRoot, args[rootIndex + 1]) : '/var/lib/kubelet-ts';
  return {
    child,
    port: p,
    base,
    rootDir,
    exited,
    async api(path, init) {
      const headers = new Headers(init?.headers);
      if (!headers.has('authorization'))
        headers.set('authorization', `Bearer ${(await readFile(join(rootDir, 'admin.token'), 'utf8')).trim()}`);
      return fetch(`${base}${path}`, { ...init, headers });
    },
    output: () => out,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** CliResult: what a client command printed and its exit code. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * runCliProcess runs `kubelet-ts <args>` as a child process and resolves when it exits (stdin from
 * `input`). `env` is added to this process's environment (e.g. `KUBELET_TS_ROOT_DIR`, where the
 * client looks for the admin token).
 */
export function runCliProcess(args: string[], input?: string, env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/index.ts', ...args], {
      cwd: kRepoRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

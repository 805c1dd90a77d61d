// The official Python client (`python3-kubernetes` 22.6, Debian's, under /usr/bin/python3) against a
// test agent: a kubeconfig for the agent's TLS port with the test's token, a script (a string, or a
// file under test/support/python/) run with the prelude `kts.py` importable, and its stdout read line
// by line as JSON events. Every child is killed by its PID at stop() and, with usePythonClient(),
// after each test, so a failing or timed-out test leaves no process behind.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import type { TestNode } from './agent.js';

/** The system Python (a pyenv `python3` may shadow it on PATH without the kubernetes package). */
export const kSystemPython = '/usr/bin/python3';

/** kPythonDir: the scripts and the prelude `kts.py`. */
export const kPythonDir = join(dirname(fileURLToPath(import.meta.url)), 'python');

/** kHavePythonClient: /usr/bin/python3 imports `kubernetes` (tools/ installs python3-kubernetes). */
export const kHavePythonClient =
  existsSync(kSystemPython) && spawnSync(kSystemPython, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;

/** PythonEvent: one line of the script's stdout, parsed (`kts.emit(kind, **fields)` gives `{event: kind, ...}`). */
export type PythonEvent = { event: string } & Record<string, unknown>;

/** PythonRunOptions: the token (default: the node's admin token), arguments (sys.argv[1:]), extra environment. */
export interface PythonRunOptions {
  token?: string;
  args?: string[];
  env?: Record<string, string>;
}

/** PythonRun: a running script. */
export interface PythonRun {
  readonly pid: number;
  /** The events read so far, in order. */
  readonly events: PythonEvent[];
  /** stderr so far (a traceback). */
  stderr(): string;
  /** until resolves with the first event (from the start) that `pred` accepts; rejects after `timeoutMs` (default 30 000) or if the script exits first, with its stderr. */
  until(pred: (e: PythonEvent) => boolean, description: string, timeoutMs?: number): Promise<PythonEvent>;
  /** exited resolves with the exit code when the script ends by itself. */
  readonly exited: Promise<number | null>;
  /** stop kills the script (SIGKILL, by its PID) if it still runs and removes its kubeconfig. Idempotent. */
  stop(): Promise<void>;
}

/**
 * writeKubeconfig writes, under `dir`, a kubeconfig for `node`'s TLS listener (`tlsPort: 0` in
 * startTestNode) trusting its own CA (`<rootDir>/pki/kubelet-ts.crt`), with `token` as the user's
 * bearer token; returns its path.
 */
export async function writeKubeconfig(node: TestNode, dir: string, token: string): Promise<string> {
  if (!node.agent.tlsPort) throw new Error('writeKubeconfig: the node has no TLS listener (start it with tlsPort: 0)');
  const path = join(dir, 'kubeconfig');
  await writeFile(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'test',
      clusters: [
        {
          name: 'node',
          cluster: {
            server: `https://127.0.0.1:${node.agent.tlsPort}`,
            'certificate-authority': join(node.rootDir, 'pki', 'kubelet-ts.crt'),
          },
        },
      ],
      users: [{ name: 'user', user: { token } }],
      contexts: [{ name: 'test', context: { cluster: 'node', user: 'user', namespace: 'default' } }],
    }),
    { mode: 0o600 },
  );
  return path;
}

/**
 * runPython starts `script` (Python source, or a file name under test/support/python/, or an
 * absolute path) with /usr/bin/python3 against `node`: KUBECONFIG is a fresh kubeconfig (writeKubeconfig)
 * and PYTHONPATH holds `kts.py`. Lines of stdout that are not JSON are kept as `{event: 'text', line}`.
 */
export async function runPython(node: TestNode, script: string, options: PythonRunOptions = {}): Promise<PythonRun> {
  const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-py-'));
  const kubeconfig = await writeKubeconfig(node, dir, options.token ?? node.adminToken());
  const isFile = !script.includes('\n') && script.endsWith('.py');
  const file = isFile ? (isAbsolute(script) ? script : join(kPythonDir, script)) : join(dir, 'script.py');
  if (!isFile) await writeFile(file, script);
  const child: ChildProcess = spawn(kSystemPython, ['-u', file, ...(options.args ?? [])], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, KUBECONFIG: kubeconfig, PYTHONPATH: kPythonDir, PYTHONDONTWRITEBYTECODE: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events: PythonEvent[] = [];
  let stderr = '';
  let partial = '';
  let exitCode: number | null | undefined;
  child.stdout!.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line) continue;
      try {
        events.push(JSON.parse(line) as PythonEvent);
      } catch {
        events.push({ event: 'text', line });
      }
    }
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  let stopped: Promise<void> | undefined;
  return {
    pid: child.pid!,
    events,
    stderr: () => stderr,
    exited,
    async until(pred, description, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const e = events.find(pred);
        if (e) return e;
        const why = exitCode !== undefined ? `the script exited (${exitCode})` : Date.now() > deadline ? `${timeoutMs} ms passed` : '';
        if (why)
          throw new Error(
            `python: ${why} before ${description}; events: ${JSON.stringify(events).slice(-2000)}; stderr:\n${stderr.slice(-3000)}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop() {
      stopped ??= (async () => {
        if (exitCode === undefined && child.pid) {
          try {
            process.kill(child.pid, 'SIGKILL');
          } catch {
            // already gone
          }
          await exited;
        }
        await rm(dir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}

/**
 * usePythonClient registers, in the calling describe block, an afterEach that stops every script the
 * returned `run` started during the test, and returns `run` (runPython's arguments).
 */
export function usePythonClient(): typeof runPython {
  const runs: PythonRun[] = [];
  afterEach(async () => {
    await Promise.all(runs.splice(0).map((r) => r.stop()));
  });
  return async (node, script, options) => {
    const r = await runPython(node, script, options);
    runs.push(r);
    return r;
  };
}

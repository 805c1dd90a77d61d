// The real kubectl (/usr/bin/kubectl, v1.32) pointed at a test agent over TLS (kubectl sends a
// bearer token only over TLS): one-shot runs and background runs (get -w, logs -f, port-forward).
// Used by the issue-15 kubectl suites; each child gets HOME set to the suite's own directory and
// only PATH from this environment, so nothing of the machine's kubeconfig is read.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../src/main/cli.js';
import type { CliIo } from '../../src/cli/io.js';
import type { TestNode } from './agent.js';
import { waitFor } from './docker.js';

export const kKubectl = '/usr/bin/kubectl';
export const kHaveKubectl = existsSync(kKubectl);

/** KubectlRun: a finished kubectl. */
export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** KubectlRunning: a kubectl still running (get -w, logs -f, port-forward): its output so far, and stop() (SIGTERM). */
export interface KubectlRunning {
  out(): string;
  err(): string;
  stop(): Promise<KubectlRun>;
}

/** KubectlOptions: the token (default: the node's admin token), stdin, extra environment. */
export interface KubectlOptions {
  token?: string;
  input?: string;
  env?: Record<string, string>;
  /** keepStdinOpen: leave kubectl's stdin open after `input` (the caller writes to `child.stdin` and ends it). */
  keepStdinOpen?: boolean;
}

/**
 * kubectlFor: kubectl against `node()`'s TLS port (`tlsPort: 0` in startTestNode), with `home()` as
 * HOME. Both are read at each run, so a suite may build the runner before its beforeAll.
 */
export function kubectlFor(node: () => TestNode, home: () => string) {
  const flags = (token: string) => [
    '--server',
    `https://127.0.0.1:${node().agent.tlsPort}`,
    '--certificate-authority',
    join(node().rootDir, 'pki', 'kubelet-ts.crt'),
    '--token',
    token,
    '--request-timeout',
    '60s',
  ];
  const start = (args: string[], opts: KubectlOptions = {}) => {
    const child = spawn(kKubectl, [...flags(opts.token ?? node().adminToken()), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    if (opts.keepStdinOpen) child.stdin.write(opts.input ?? '');
    else child.stdin.end(opts.input ?? '');
    const done = new Promise<KubectlRun>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
    return { child, done, out: () => stdout, err: () => stderr };
  };
  return {
    flags,
    start,
    /** kubectl runs kubectl to its end. */
    kubectl: (args: string[], opts: KubectlOptions = {}): Promise<KubectlRun> => start(args, opts).done,
    /** background starts kubectl and leaves it running. */
    background: (args: string[], opts: KubectlOptions = {}): KubectlRunning => {
      const r = start(args, opts);
      return {
        out: r.out,
        err: r.err,
        stop: () => {
          r.child.kill('SIGTERM');
          return r.done;
        },
      };
    },
  };
}

/**
 * writeAgentKubeconfig: what a user does, `kubelet-ts kubeconfig --server https://127.0.0.1:<tls
 * port> --root-dir <root dir>` for `node` (started with `tlsPort: 0`), written to `<dir>/kubeconfig`
 * (mode 0600); returns its path. The admin token and the agent's CA are in it.
 * @throws Error with the command's stderr when it writes any.
 */
export async function writeAgentKubeconfig(node: TestNode, dir: string): Promise<string> {
  const io = { stdout: '', stderr: '' };
  const cli: CliIo = { stdout: (t) => (io.stdout += t), stderr: (t) => (io.stderr += t), exit: () => undefined };
  await runCli(['kubeconfig', '--server', `https://127.0.0.1:${node.agent.tlsPort}`, '--root-dir', node.rootDir], {}, cli);
  if (io.stderr !== '') throw new Error(`kubelet-ts kubeconfig: ${io.stderr}`);
  const path = join(dir, 'kubeconfig');
  await writeFile(path, io.stdout, { mode: 0o600 });
  return path;
}

/**
 * createNamespacedSleeper: as the admin, `kubectl create namespace NS` and `kubectl create -f` of a
 * one-container busybox pod `name` sleeping in it (grace period 1 s, image never pulled), then
 * waits (≤ 90 s) until kubectl reads it Running — the namespaced pod the least-privilege suites
 * exec into as their ordinary users. The manifest is written under `dir`.
 */
export async function createNamespacedSleeper(
  kubectl: (args: string[]) => Promise<KubectlRun>,
  dir: string,
  namespace: string,
  name: string,
  image: string,
): Promise<void> {
  const created = await kubectl(['create', 'namespace', namespace]);
  if (created.code !== 0) throw new Error(`kubectl create namespace ${namespace}: ${created.stderr}`);
  const file = join(dir, `${name}.yaml`);
  await writeFile(
    file,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${image}, imagePullPolicy: Never, command: ["sleep", "3600"]}
`,
  );
  const made = await kubectl(['create', '-f', file]);
  if (made.code !== 0 || made.stderr !== '') throw new Error(`kubectl create -f ${file}: ${made.code} ${made.stderr}`);
  await waitFor(async () => (await kubectl(['get', 'pod', '-n', namespace, name, '-o', 'jsonpath={.status.phase}'])).stdout === 'Running', {
    timeoutMs: 90_000,
    description: `${namespace}/${name} Running`,
  });
}

// End-to-end: the client commands (apply, get, logs, describe, delete) run as real child processes
// (`kubelet-ts <command> --server …`) against a real agent that runs the pods in Docker.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kRepoRoot, runCliProcess, type CliResult } from '../support/agent-process.js';
import { runCli } from '../../src/main/cli.js';

const kWaitMs = 150_000;
const kTestMs = 200_000;

const manifest = (name: string, command: string, labels = `app: ${name}`) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", ${JSON.stringify(command)}]
`;

describe.skipIf(!inject('dockerAvailable'))('client commands against a real agent', () => {
  let node: TestNode;
  let authNode: TestNode;
  let dir: string;
  let server: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-client-'));
    await writeFile(join(dir, 'tokens.csv'), 'secret-admin,admin,1,system:masters\nsecret-view,viewer,2,"kubelet-ts:read-only"\n');
    node = await startTestNode({ podManifestPath: '' });
    authNode = await startTestNode({ podManifestPath: '', tokenAuthFile: join(dir, 'tokens.csv'), anonymousAuth: false, runtime: 'fake' });
    // The agent's own socket: the client sends the admin token only to a server it has authenticated (issue #38).
    server = `unix://${join(node.rootDir, 'kubelet-ts.sock')}`;
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    await authNode?.cleanup();
    await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  // A real child process (`kubelet-ts …`) for the main path of each command; on this shared
  // 2-core machine each costs seconds, so variations run the same CLI code in-process (inproc).
  // The client finds the node's admin token itself (KUBELET_TS_ROOT_DIR, --root-dir).
  const cli = (...args: string[]) => runCliProcess([...args, '--server', server], undefined, { KUBELET_TS_ROOT_DIR: node.rootDir });
  const inproc = async (...args: string[]): Promise<CliResult> => {
    const r = { code: -1, stdout: '', stderr: '' };
    await runCli(
      [...args, '--server', server, '--root-dir', node.rootDir],
      {},
      { stdout: (t) => (r.stdout += t), stderr: (t) => (r.stderr += t), exit: (c) => (r.code = c) },
    );
    return r;
  };
  const runCliOn = async (at: string, ...args: string[]): Promise<CliResult> => {
    const r = { code: -1, stdout: '', stderr: '' };
    await runCli(
      [...args, '--server', at],
      {},
      { stdout: (t) => (r.stdout += t), stderr: (t) => (r.stderr += t), exit: (c) => (r.code = c) },
    );
    return r;
  };
  const podJson = async (name: string) => {
    const res = await node.api(`/pods/default/${name}`);
    return res.status === 200 ? ((await res.json()) as Pod) : undefined;
  };
  const waitRunning = (name: string) =>
    waitFor(
      async () => {
        const p = await podJson(name);
        return p?.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready) ? p : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 250, description: `${name} Running` },
    );

  it(
    'apply -f DIR creates the pods, a second apply reports them unchanged, a changed file configured',
    async () => {
      const mdir = join(dir, 'manifests');
      await mkdir(mdir);
      await writeFile(
        join(mdir, 'alpha.yaml'),
        manifest('alpha', 'echo alpha-1; echo alpha-2; exec sleep 3600', 'app: alpha, tier: front'),
      );
      await writeFile(join(mdir, 'beta.yml'), manifest('beta', 'exec sleep 3600', 'app: beta, tier: back'));
      await writeFile(join(mdir, 'notes.txt'), 'not a manifest');
      const first = await cli('apply', '-f', mdir);
      expect(first).toMatchObject({ code: 0, stdout: 'pod/alpha created\npod/beta created\n' });
      const second = await inproc('apply', '-f', mdir);
      expect(second.stdout).toBe('pod/alpha unchanged\npod/beta unchanged\n');
      await writeFile(join(mdir, 'beta.yml'), manifest('beta', 'echo changed; exec sleep 3600', 'app: beta, tier: back'));
      expect((await inproc('apply', '-f', join(mdir, 'beta.yml'))).stdout).toBe('pod/beta configured\n');
      await waitRunning('alpha');
      // The changed container is restarted (restartCount 1) with the new command.
      await waitFor(async () => (await inproc('logs', 'beta')).stdout === 'changed\n', {
        timeoutMs: kWaitMs,
        intervalMs: 500,
        description: 'beta restarted',
      });
      await waitRunning('beta');
    },
    kTestMs,
  );

  it(
    'apply -f - reads stdin and reports a bad manifest with the server message',
    async () => {
      const ok = await runCliProcess(
        ['apply', '-f', '-', '--server', server, '--root-dir', node.rootDir],
        manifest('gamma', 'exec sleep 3600'),
      );
      expect(ok).toMatchObject({ code: 0, stdout: 'pod/gamma created\n' });
      const bad = await runCliProcess(
        ['apply', '-f', '-', '--server', server, '--root-dir', node.rootDir],
        'apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: m, image: x}]}\n',
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Pod "Bad_Name" is invalid: metadata.name: Invalid value');
    },
    kTestMs,
  );

  it(
    'get pods prints a kubectl table, filters by -l (set-based too) and prints -o wide and -o json',
    async () => {
      await waitRunning('gamma');
      const table = await cli('get', 'pods');
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 4))).toEqual([
        ['alpha', '1/1', 'Running', '0'],
        ['beta', '1/1', 'Running', '1'],
        ['gamma', '1/1', 'Running', '0'],
      ]);
      const selected = await inproc('get', 'pods', '-l', 'tier in (front,back),app!=beta', '--no-headers');
      expect(
        selected.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(/\s+/)[0]),
      ).toEqual(['alpha']);
      const wide = await inproc('get', 'pods', 'alpha', '-o', 'wide');
      expect(wide.stdout.split('\n')[0]).toMatch(/IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/);
      expect(wide.stdout.split('\n')[1]).toContain(node.nodeName);
      const json = JSON.parse((await inproc('get', 'pods', '-o', 'json', '-l', 'app=beta')).stdout);
      expect(json).toMatchObject({ kind: 'List', items: [{ kind: 'Pod', metadata: { name: 'beta' } }] });
      const missing = await inproc('get', 'pods', 'nope');
      expect(missing).toMatchObject({ code: 1, stderr: 'error: pods "nope" not found\n' });
    },
    kTestMs,
  );

  it(
    'logs prints the log, --tail limits it, -f ends when the container stops',
    async () => {
      await waitFor(async () => (await inproc('logs', 'alpha')).stdout === 'alpha-1\nalpha-2\n', { timeoutMs: kWaitMs, intervalMs: 500 });
      expect((await cli('logs', 'alpha', '--tail', '1')).stdout).toBe('alpha-2\n');
      expect((await inproc('logs', 'alpha', '-c', 'nope')).code).toBe(1);
      await runCliProcess(
        ['apply', '-f', '-', '--server', server, '--root-dir', node.rootDir],
        manifest('brief', 'echo one; sleep 2; echo two; exit 0').replace(
          'terminationGracePeriodSeconds: 1',
          'terminationGracePeriodSeconds: 1\n  restartPolicy: Never',
        ),
      );
      await waitFor(
        async () => ((await podJson('brief'))?.status?.containerStatuses ?? []).some((c) => c.state?.running || c.state?.terminated),
        { timeoutMs: kWaitMs, intervalMs: 200 },
      );
      const followed = await cli('logs', 'brief', '-f');
      expect(followed).toMatchObject({ code: 0, stdout: 'one\ntwo\n' });
    },
    2 * kTestMs,
  );

  it(
    'describe pod shows status, containers, conditions and events',
    async () => {
      const { code, stdout } = await cli('describe', 'pod', 'alpha');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Name:\s+alpha\n/);
      expect(stdout).toMatch(/Status:\s+Running/);
      expect(stdout).toMatch(/State:\s+Running/);
      expect(stdout).toMatch(/Ready\s+True/);
      expect(stdout).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container main/);
    },
    kTestMs,
  );

  it(
    'get pods --watch prints the table and then a row for each change',
    async () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/main/index.ts', 'get', 'pods', '-w', '-l', 'app=gamma', '--server', server, '--root-dir', node.rootDir],
        { cwd: kRepoRoot },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      try {
        await waitFor(() => /gamma\s+1\/1\s+Running/.test(out), {
          timeoutMs: kWaitMs,
          intervalMs: 200,
          description: `initial row (stderr ${JSON.stringify(err)})`,
        });
        expect((await node.api('/pods/default/gamma?gracePeriodSeconds=0', { method: 'DELETE' })).status).toBe(200);
        await waitFor(() => /gamma\s+\S+\s+Terminating/.test(out), { timeoutMs: kWaitMs, intervalMs: 200, description: 'Terminating row' });
      } finally {
        child.kill('SIGINT');
      }
      expect(out.split('\n')[0]).toMatch(/^NAME\s+READY\s+STATUS/);
    },
    kTestMs,
  );

  it(
    'delete pod waits until the pod is gone',
    async () => {
      const res = await cli('delete', 'pod', 'beta', '--grace-period', '0', '--timeout', '600');
      expect(res).toMatchObject({ code: 0, stdout: 'pod "beta" deleted\n' });
      expect(await podJson('beta')).toBeUndefined();
      const again = await inproc('delete', 'pod', 'beta');
      expect(again.code).toBe(1);
      expect(again.stderr).toBe('Error from server (NotFound): pods "beta" not found\n');
    },
    kTestMs,
  );

  it(
    'sends --token; the read-only group may get but not apply (--anonymous-auth=false)',
    async () => {
      const authServer = `unix://${join(authNode.rootDir, 'kubelet-ts.sock')}`;
      // `dir` holds no admin.token: the client has no token to find.
      const anonymous = await runCliProcess(['get', 'pods', '--server', authServer, '--root-dir', dir]);
      expect(anonymous.code).toBe(1);
      expect(anonymous.stderr).toContain('Unauthorized');
      expect((await runCliProcess(['get', 'pods', '--server', authServer, '--token', 'secret-view', '--root-dir', dir])).code).toBe(0);
      const f = join(dir, 'ro.yaml');
      await writeFile(f, manifest('ro', 'sleep 1'));
      const denied = await runCliOn(authServer, 'apply', '-f', f, '--token', 'secret-view');
      expect(denied.code).toBe(1);
      expect(denied.stderr).toContain('User "viewer" cannot create resource "nodes/proxy"');
      const allowed = await runCliOn(authServer, 'apply', '-f', f, '--token', 'secret-admin');
      expect(allowed).toMatchObject({ code: 0, stdout: 'pod/ro created\n' });
    },
    kTestMs,
  );
});

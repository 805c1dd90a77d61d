import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/main/cli.js';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { createServer, type AgentServer } from '../../src/server/server.js';
import type { Pod } from '../../src/shared/api.js';
import { AgentError } from '../../src/shared/errors.js';
import { newLogger } from '../../src/shared/logging.js';

const pods = new Map<string, Pod>();
const calls: string[] = [];
const host: AgentHost = {
  listPods: () => [...pods.values()],
  getPod: (ns, name) => pods.get(`${ns}/${name}`),
  healthz: () => ({ ok: true, checks: [] }),
  async submitPods(list) {
    for (const p of list) {
      calls.push(`POST ${p.metadata?.namespace}/${p.metadata?.name}`);
      pods.set(`${p.metadata?.namespace ?? 'default'}/${p.metadata?.name}`, { ...p, status: { phase: 'Pending' } });
    }
    return list;
  },
  async replacePod(ns, name, p) {
    calls.push(`PUT ${ns}/${name}`);
    pods.set(`${ns}/${name}`, p);
    return p;
  },
  async deletePod(ns, name, grace) {
    calls.push(`DELETE ${ns}/${name} grace=${grace}`);
    const p = pods.get(`${ns}/${name}`);
    if (!p) throw new AgentError('ERR_NOT_FOUND', `pods "${name}" not found`);
    pods.delete(`${ns}/${name}`);
    return p;
  },
};

let server: AgentServer;
let dir: string;
beforeAll(async () => {
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  dir = await mkdtemp(join(tmpdir(), 'cmds-'));
});
afterAll(async () => {
  server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  let code = -1;
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), exit: (c) => (code = c) };
  await runCli([...args, '--server', `http://127.0.0.1:${server.port}`], {}, io);
  return { code, stdout, stderr };
}

const yaml = (name: string, ns?: string, image = 'busybox') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n${ns ? `  namespace: ${ns}\n` : ''}  labels: {app: ${name}}\nspec:\n  containers: [{name: main, image: ${image}}]\n`;

describe('client commands (in-process CLI against a server)', () => {
  it('apply -f FILE creates, then reports unchanged, then configured', async () => {
    const f = join(dir, 'a.yaml');
    await writeFile(f, `${yaml('one')}---\n${yaml('two', 'other')}`);
    expect(await run('apply', '-f', f)).toMatchObject({ code: 0, stdout: 'pod/one created\npod/two created\n' });
    expect(calls.slice(-2)).toEqual(['POST default/one', 'POST other/two']);
    expect((await run('apply', '-f', f)).stdout).toBe('pod/one unchanged\npod/two unchanged\n');
    await writeFile(f, yaml('one', undefined, 'busybox:2'));
    expect((await run('apply', '-f', f)).stdout).toBe('pod/one configured\n');
  });

  it('apply refuses a namespace that differs from -n, and a missing path', async () => {
    const f = join(dir, 'b.yaml');
    await writeFile(f, yaml('three', 'other'));
    const res = await run('apply', '-f', f, '-n', 'default');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('does not match the namespace "default"');
    expect(await run('apply', '-f', join(dir, 'missing.yaml'))).toMatchObject({
      code: 1,
      stderr: `error: the path "${join(dir, 'missing.yaml')}" does not exist\n`,
    });
  });

  it('apply reports an invalid pod with the server 422 message', async () => {
    const f = join(dir, 'invalid.yaml');
    await writeFile(f, yaml('Bad_Name'));
    const res = await run('apply', '-f', f);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: Pod "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name"/);
  });

  it('apply reports a file that does not parse before sending anything', async () => {
    const f = join(dir, 'bad.yaml');
    await writeFile(f, 'apiVersion: v1\nkind: Pod\nmetadata: {name: x\n');
    const before = calls.length;
    const res = await run('apply', '-f', f);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: error parsing .*bad\.yaml: \[0\]: Invalid value: YAML syntax error/);
    expect(calls.length).toBe(before);
  });

  it('get pods lists the default namespace, -n another, -A all with a NAMESPACE column', async () => {
    expect((await run('get', 'pods')).stdout.split('\n')[1]).toMatch(/^one\s+0\/1\s+Pending\s+0\s+/);
    expect((await run('get', 'pods', '-n', 'other')).stdout).toMatch(/\ntwo\s/);
    expect((await run('get', 'po', '-A')).stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME/);
    expect(await run('get', 'pods', '-n', 'empty')).toMatchObject({ code: 0, stderr: 'No resources found in empty namespace.\n' });
  });

  it('get answers an unknown resource type and a bad selector as kubectl does', async () => {
    expect(await run('get', 'deployments')).toMatchObject({
      code: 1,
      stderr: 'error: the server doesn\'t have a resource type "deployments"\n',
    });
    const bad = await run('get', 'pods', '-l', 'a in b');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("labelSelector: unable to parse requirement: found 'b' expected: '('");
  });

  it('delete pod passes --grace-period and reports a missing pod', async () => {
    expect(await run('delete', 'pod', 'one', '--grace-period', '5', '--wait=false')).toMatchObject({
      code: 0,
      stdout: 'pod "one" deleted\n',
    });
    expect(calls.at(-1)).toBe('DELETE default/one grace=5');
    expect(await run('delete', 'pod', 'one', '--wait=false')).toMatchObject({
      code: 1,
      stderr: 'Error from server (NotFound): pods "one" not found\n',
    });
    expect(await run('delete', 'pod', 'one', '--wait=false', '--ignore-not-found')).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await run('delete', 'pod', 'two', '-n', 'other')).code).toBe(0);
    expect(calls.at(-1)).toBe('DELETE other/two grace=undefined');
  });

  it('delete -f deletes the pods a manifest file names, each in its own namespace', async () => {
    pods.clear();
    for (const [ns, name] of [
      ['default', 'f1'],
      ['team', 'f2'],
      ['default', 'keep'],
    ])
      pods.set(`${ns}/${name}`, { metadata: { name, namespace: ns, labels: { app: name } }, spec: { containers: [] } });
    const file = join(dir, 'two.yaml');
    await writeFile(file, `${yaml('f1')}---\n${yaml('f2', 'team')}---\n${yaml('gone')}`);
    const res = await run('delete', '-f', file, '--wait=false');
    expect(res).toMatchObject({
      code: 1,
      stdout: 'pod "f1" deleted\npod "f2" deleted\n',
      stderr: 'Error from server (NotFound): pods "gone" not found\n',
    });
    expect(calls.slice(-3)).toEqual([
      'DELETE default/f1 grace=undefined',
      'DELETE team/f2 grace=undefined',
      'DELETE default/gone grace=undefined',
    ]);
    expect([...pods.keys()]).toEqual(['default/keep']);
    // An explicit -n that contradicts the manifest is refused before anything is deleted.
    const clash = await run('delete', '-f', file, '-n', 'elsewhere');
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain('the namespace from the provided object "team" does not match the namespace "elsewhere"');
    expect([...pods.keys()]).toEqual(['default/keep']);
    expect((await run('delete', 'pod', '-f', file)).stderr).toContain('there is no need to specify a resource type');
  });

  it('delete -l and --all delete the pods the selector matches in the namespace, -A in all', async () => {
    pods.clear();
    const add = (ns: string, name: string, app: string) =>
      pods.set(`${ns}/${name}`, { metadata: { name, namespace: ns, labels: { app } }, spec: { containers: [] } });
    add('default', 'w1', 'web');
    add('default', 'w2', 'web');
    add('default', 'db', 'db');
    add('team', 'w3', 'web');
    expect(await run('delete', 'pods', '-l', 'app=web', '--wait=false')).toMatchObject({
      code: 0,
      stdout: 'pod "w1" deleted\npod "w2" deleted\n',
    });
    expect([...pods.keys()].sort()).toEqual(['default/db', 'team/w3']);
    expect(await run('delete', 'pods', '-l', 'app=none')).toMatchObject({ code: 0, stdout: 'No resources found\n' });
    expect(await run('delete', 'pods', '-l', 'app=web', '-A', '--wait=false')).toMatchObject({ code: 0, stdout: 'pod "w3" deleted\n' });
    expect(await run('delete', 'pods', '--all', '--wait=false')).toMatchObject({ code: 0, stdout: 'pod "db" deleted\n' });
    expect(pods.size).toBe(0);
    expect((await run('delete', 'pods', 'x', '-l', 'app=web')).stderr).toBe(
      'error: name cannot be provided when a selector is specified\n',
    );
    expect((await run('delete', 'pods')).stderr).toBe('error: resource(s) were provided, but no name was specified\n');
    expect((await run('delete')).stderr).toBe('error: You must provide one or more resources by argument or filename.\n');
  });

  it('reports an unreachable server', async () => {
    let stderr = '';
    let code = -1;
    await runCli(
      ['get', 'pods', '--server', 'http://127.0.0.1:9'],
      {},
      { stdout: () => {}, stderr: (t) => (stderr += t), exit: (c) => (code = c) },
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: cannot reach the kubelet-ts API at http:\/\/127\.0\.0\.1:9: /);
  });
});

describe('joinStdinFlag', () => {
  it('turns -f - and --filename - into one argument, leaving the rest', async () => {
    const { joinStdinFlag } = await import('../../src/cli/apply.js');
    expect(joinStdinFlag(['apply', '-f', '-', '-n', 'x'])).toEqual(['apply', '-f=-', '-n', 'x']);
    expect(joinStdinFlag(['apply', '--filename', '-'])).toEqual(['apply', '--filename=-']);
    expect(joinStdinFlag(['apply', '-f', 'a.yaml', '-'])).toEqual(['apply', '-f', 'a.yaml', '-']);
  });
});

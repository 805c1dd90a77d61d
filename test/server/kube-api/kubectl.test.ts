// The real kubectl (/usr/bin/kubectl, v1.32) against test/support/kubectl-fake-apiserver.ts, which
// serves discovery, src/server/kube-api/openapi.ts and Pods patched by src/server/kube-api/patch.ts:
// explain reads our OpenAPI v3, apply validates against it on the server (fieldValidation=Strict)
// and builds its strategic merge patch from our patch extensions, and patchPod applies what it sends.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/kubectl-fake-apiserver.js';

const kKubectl = '/usr/bin/kubectl';
const run = promisify(execFile);
const hasKubectl = existsSync(kKubectl);
if (!hasKubectl) console.warn(`kubectl.test.ts: skipped, ${kKubectl} is absent`);

function manifest(command: string, image = 'busybox:1.36'): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app: web
spec:
  containers:
  - name: main
    image: ${image}
    command: ["sleep", "${command}"]
  - name: side
    image: busybox:1.36
    command: ["sleep", "1000"]
`;
}

describe.skipIf(!hasKubectl)('kubectl v1.32 against the OpenAPI documents and patchPod', () => {
  let server: FakeApiServer;
  let dir: string;
  const kubectl = async (...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> => {
    try {
      const r = await run(
        kKubectl,
        ['--server', server.url, '--token', 'test', '--cache-dir', join(dir, 'cache'), '-n', 'default', ...args],
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, KUBECONFIG: join(dir, 'kubeconfig') },
          timeout: 60_000,
        },
      );
      return { ...r, code: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: typeof e.code === 'number' ? e.code : -1 };
    }
  };
  const file = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const patches = () => server.requests.filter((r) => r.method === 'PATCH');
  const stored = () => server.pods.get('default/web');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kubelet-ts-kubectl-'));
    server = await startFakeApiServer();
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('explain pod.spec and pod.spec.containers print our schemas', async () => {
    const spec = await kubectl('explain', 'pod.spec');
    expect(spec.stderr).toBe('');
    expect(spec.stdout).toContain('FIELD: spec <PodSpec>');
    expect(spec.stdout).toMatch(/containers\t<\[\]Container> -required-/);
    const containers = await kubectl('explain', 'pod.spec.containers');
    expect(containers.stdout).toContain('FIELD: containers <[]Container>');
    expect(containers.stdout).toMatch(/image\t<string>/);
    expect(server.requests.some((r) => r.url.startsWith('/openapi/v3/api/v1?hash='))).toBe(true);
  });

  it('explain --output plaintext-openapiv2 reads the protobuf /openapi/v2', async () => {
    const out = await kubectl('explain', 'pod.spec.containers', '--output', 'plaintext-openapiv2');
    expect(out.stderr).toBe('');
    expect(out.stdout).toContain('RESOURCE: containers <[]Object>');
    expect(out.stdout).toContain('List of containers belonging to the pod.');
    expect(server.requests.some((r) => r.url.startsWith('/openapi/v2') && r.accept.includes('protobuf'))).toBe(true);
  });

  it('apply -f creates, then a changed command sends a strategic merge patch that changes only that container', async () => {
    const created = await kubectl('apply', '-f', file('pod.yaml', manifest('3600')));
    expect(created.stdout.trim()).toBe('pod/web created');
    const side = stored()?.spec?.containers[1];
    const changed = await kubectl('apply', '-f', file('pod.yaml', manifest('7200')));
    expect(changed.stdout.trim()).toBe('pod/web configured');
    const [patch] = patches();
    expect(patch.contentType).toBe('application/strategic-merge-patch+json');
    expect(patch.url).toContain('fieldValidation=Strict');
    const body = JSON.parse(patch.body) as { spec: Record<string, unknown> };
    // kubectl read the merge key from our OpenAPI extensions: it sent one container, not the list.
    expect(body.spec).toEqual({
      '$setElementOrder/containers': [{ name: 'main' }, { name: 'side' }],
      containers: [{ command: ['sleep', '7200'], name: 'main' }],
    });
    expect(stored()?.spec?.containers.map((c) => [c.name, c.command])).toEqual([
      ['main', ['sleep', '7200']],
      ['side', ['sleep', '1000']],
    ]);
    expect(stored()?.spec?.containers[1]).toEqual(side);
  });

  it('apply -f with a misspelt field is refused by the server-side field validation kubectl asks for', async () => {
    const typo = await kubectl(
      'apply',
      '-f',
      file(
        'typo.yaml',
        manifest('7200').replace(
          '    image: busybox:1.36\n    command: ["sleep", "1000"]',
          '    imagee: busybox:1.36\n    command: ["sleep", "1000"]',
        ),
      ),
    );
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain('strict decoding error: unknown field "spec.containers[1].imagee"');
    expect(stored()?.spec?.containers[1].image).toBe('busybox:1.36');
  });

  it('patch --type strategic, merge and json', async () => {
    expect(
      (
        await kubectl(
          'patch',
          'pod',
          'web',
          '--type',
          'strategic',
          '-p',
          '{"spec":{"containers":[{"name":"side","image":"busybox:1.37"}]}}',
        )
      ).stdout.trim(),
    ).toBe('pod/web patched');
    expect((await kubectl('patch', 'pod', 'web', '--type', 'merge', '-p', '{"metadata":{"labels":{"m":"1"}}}')).code).toBe(0);
    expect(
      (await kubectl('patch', 'pod', 'web', '--type', 'json', '-p', '[{"op":"add","path":"/metadata/labels/j","value":"2"}]')).code,
    ).toBe(0);
    expect(stored()?.spec?.containers.map((c) => c.image)).toEqual(['busybox:1.36', 'busybox:1.37']);
    expect(stored()?.metadata?.labels).toEqual({ app: 'web', m: '1', j: '2' });
    const bad = await kubectl('patch', 'pod', 'web', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/name","value":"nope"}]');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('TestError');
  });

  it('apply --server-side: a conflict with kubectl-patch, then --force-conflicts takes the field', async () => {
    // main's image (set at create: no owner) changes freely; side's image was set by kubectl-patch.
    const body = file('ssa.yaml', manifest('7200', 'busybox:1.35'));
    const conflict = await kubectl('apply', '--server-side', '-f', body);
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain(
      'Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .spec.containers[name="side"].image',
    );
    const forced = await kubectl('apply', '--server-side', '--force-conflicts', '-f', body);
    expect(forced.stdout.trim()).toBe('pod/web serverside-applied');
    expect(stored()?.spec?.containers.map((c) => c.image)).toEqual(['busybox:1.35', 'busybox:1.36']);
    const managers = (stored()?.metadata?.managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
    expect(managers).toContain('kubectl/Apply');
    expect(new Set(managers).size).toBe(managers.length);
  });
});

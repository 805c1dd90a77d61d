// End-to-end (issue 39 item 7): ConfigMaps and Secrets written through the Kubernetes API by the
// REAL kubectl (/usr/bin/kubectl, v1.32) over TLS: create configmap / secret generic, apply -f twice,
// a replace (what `kubectl edit` does with a PUT), patch of every type, delete, 409 for a stale
// replace, an immutable ConfigMap refusing a change, a pod's ConfigMap volume seeing an update, a
// pod that waits for its ConfigMap until it is created, the objects restored after a restart, a 403
// for a user without the verb, and no Secret value in any reply, not even in apply's annotation.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kKubectl, kubectlFor } from '../support/kubectl.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';

const kTestMs = 120_000;
const kViewer = 'view-token-0123456789abcdef0123456789';
if (!kHaveKubectl) console.warn(`issue-39-config: skipped: ${kKubectl} is not installed`);

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)(
  'ConfigMaps and Secrets through the API with the real kubectl (issue 39 item 7)',
  () => {
    let node: TestNode;
    let dir: string;
    const { kubectl, background } = kubectlFor(
      () => node,
      () => dir,
    );
    const python = usePythonClient();
    /** ok runs kubectl and expects it to succeed without a word on stderr; returns stdout. */
    const ok = async (args: string[], input?: string) => {
      const r = await kubectl(args, input === undefined ? {} : { input });
      expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
      expect(r.code).toBe(0);
      return r.stdout;
    };
    const json = async <T = Record<string, unknown>>(args: string[]) => JSON.parse(await ok([...args, '-o', 'json'])) as T;
    type Cm = {
      metadata: { name: string; uid?: string; resourceVersion?: string; creationTimestamp?: string; annotations?: Record<string, string> };
      data?: Record<string, string>;
      immutable?: boolean;
    };
    const stored = (kind: 'ConfigMap' | 'Secret', name: string) => node.agent.objects.get(kind, 'default', name);

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-config-'));
      const tokens = join(dir, 'tokens.csv');
      await writeFile(tokens, `${kViewer},viewer,2,"kubelet-ts:read-only"\n`);
      node = await startTestNode({ tokenAuthFile: tokens, tlsPort: 0 });
    }, kTestMs);
    afterAll(async () => {
      await node?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, kTestMs);

    it(
      'create configmap and secret generic: stored with a server uid, creationTimestamp and resourceVersion; the Secret never read back',
      async () => {
        expect(await ok(['create', 'configmap', 'cm1', '--from-literal=a=1', '--from-literal=b=2'])).toBe('configmap/cm1 created\n');
        const cm = await json<Cm>(['get', 'cm', 'cm1']);
        expect(cm.data).toEqual({ a: '1', b: '2' });
        expect(cm.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
        expect(cm.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(Number(cm.metadata.resourceVersion)).toBeGreaterThan(0);
        // The List carries the version of the last change of any ConfigMap or Secret.
        const list = JSON.parse(await ok(['get', '--raw', '/api/v1/namespaces/default/configmaps'])) as {
          metadata: { resourceVersion?: string };
        };
        expect(Number(list.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(cm.metadata.resourceVersion));
        expect((await kubectl(['create', 'configmap', 'cm1', '--from-literal=a=1'])).stderr).toBe(
          'error: failed to create configmap: configmaps "cm1" already exists\n',
        );

        expect(await ok(['create', 'secret', 'generic', 's1', '--from-literal=password=hunter2-value'])).toBe('secret/s1 created\n');
        const s = await kubectl(['get', 'secret', 's1', '-o', 'yaml']);
        expect(s.stdout).toContain('kubelet-ts/secret-keys: password');
        expect(s.stdout).not.toContain(Buffer.from('hunter2-value').toString('base64'));
        expect(stored('Secret', 's1')?.data).toEqual({ password: Buffer.from('hunter2-value').toString('base64') });

        // --dry-run=server answers as the store would, and stores nothing.
        expect(await ok(['create', 'configmap', 'dry', '--from-literal=a=1', '--dry-run=server'])).toBe(
          'configmap/dry created (server dry run)\n',
        );
        expect(stored('ConfigMap', 'dry')).toBeUndefined();
        // Bad names and keys are the apiserver's 422 naming the field.
        expect((await kubectl(['create', 'configmap', 'Bad_Name', '--from-literal=a=1'])).stderr).toContain(
          'metadata.name: Invalid value: "Bad_Name"',
        );
        const big = await kubectl(['create', '-f', '-'], {
          input: JSON.stringify({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'big' },
            data: { a: 'x'.repeat(1024 * 1024 + 1) },
          }),
        });
        // Over 1 MiB of data cannot arrive: the agent's body limit (1 MiB) answers first.
        expect(big.stderr).toContain('(RequestEntityTooLarge)');
        expect(stored('ConfigMap', 'big')).toBeUndefined();
      },
      kTestMs,
    );

    it(
      'generateName: the server picks the name',
      async () => {
        const out = await ok(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: gen-}\ndata: {a: "1"}\n');
        expect(out).toMatch(/^configmap\/gen-[bcdfghjklmnpqrstvwxz2456789]{5} created\n$/);
      },
      kTestMs,
    );

    it(
      'apply -f twice (the second a change), also of a Secret whose applied annotation is redacted in every reply',
      async () => {
        const file = join(dir, 'applied.yaml');
        await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: "1", gone: "x"}\n');
        expect(await ok(['apply', '-f', file])).toBe('configmap/applied created\n');
        await writeFile(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: applied}\ndata: {a: "2", b: "3"}\n');
        expect(await ok(['apply', '-f', file])).toBe('configmap/applied configured\n');
        expect((await json<Cm>(['get', 'cm', 'applied'])).data).toEqual({ a: '2', b: '3' });
        const ssa = join(dir, 'ssa.yaml');
        await writeFile(ssa, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "1"}\n');
        expect(await ok(['apply', '--server-side', '-f', ssa])).toBe('configmap/ssa serverside-applied\n');
        await writeFile(ssa, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: "2"}\n');
        expect(await ok(['apply', '--server-side', '-f', ssa])).toBe('configmap/ssa serverside-applied\n');
        expect((await json<Cm>(['get', 'cm', 'ssa'])).data).toEqual({ a: '2' });

        const secretFile = join(dir, 'secret.yaml');
        await writeFile(
          secretFile,
          'apiVersion: v1\nkind: Secret\nmetadata: {name: applied-s}\nstringData: {token: first-secret-value, other: keep-me-secret}\n',
        );
        const first = await kubectl(['apply', '-f', secretFile, '-o', 'yaml']);
        expect(first.code).toBe(0);
        expect(first.stdout).toContain('kubectl.kubernetes.io/last-applied-configuration');
        expect(first.stdout).not.toContain('first-secret-value');
        expect(first.stdout).not.toContain('keep-me-secret');
        await writeFile(
          secretFile,
          'apiVersion: v1\nkind: Secret\nmetadata: {name: applied-s}\nstringData: {token: second-secret-value}\n',
        );
        const second = await kubectl(['apply', '-f', secretFile, '-o', 'yaml']);
        expect(second.code).toBe(0);
        expect(second.stdout).not.toContain('second-secret-value');
        const got = await kubectl(['get', 'secret', 'applied-s', '-o', 'yaml']);
        for (const v of ['first-secret-value', 'second-secret-value', 'keep-me-secret']) {
          expect(got.stdout).not.toContain(v);
          expect(got.stdout).not.toContain(Buffer.from(v).toString('base64'));
        }
        // The change reached the store (a key dropped from stringData stays in data, as upstream).
        expect(stored('Secret', 'applied-s')?.data?.token).toBe(Buffer.from('second-secret-value').toString('base64'));
        expect(JSON.stringify(node.warnings)).not.toContain('second-secret-value');
      },
      kTestMs,
    );

    it(
      "replace (an edit's PUT) moves the resourceVersion; a replace built on the old one is 409 Conflict",
      async () => {
        await ok(['create', 'configmap', 'edited', '--from-literal=a=1']);
        const before = await json<Cm>(['get', 'cm', 'edited']);
        const file = join(dir, 'edited.json');
        await writeFile(file, JSON.stringify({ ...before, data: { a: 'changed' } }));
        expect(await ok(['replace', '-f', file])).toBe('configmap/edited replaced\n');
        const after = await json<Cm>(['get', 'cm', 'edited']);
        expect(after.data).toEqual({ a: 'changed' });
        expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
        expect(after.metadata.uid).toBe(before.metadata.uid);
        await writeFile(file, JSON.stringify({ ...before, data: { a: 'stale' } }));
        const stale = await kubectl(['replace', '-f', file]);
        expect(stale.stderr).toContain('Error from server (Conflict): error when replacing');
        expect(stale.stderr).toContain(
          'Operation cannot be fulfilled on configmaps "edited": the object has been modified; please apply your changes to the latest version and try again',
        );
        expect((await json<Cm>(['get', 'cm', 'edited'])).data).toEqual({ a: 'changed' });
        // kubectl edit itself (its editor a sed): a strategic merge patch of what changed.
        const edit = await kubectl(['edit', 'cm', 'edited'], { env: { EDITOR: 'sed -i s/changed/edited-by-kubectl/' } });
        expect(edit.stderr).toBe('');
        expect(edit.stdout).toBe('configmap/edited edited\n');
        expect((await json<Cm>(['get', 'cm', 'edited'])).data).toEqual({ a: 'edited-by-kubectl' });

        // A Secret is read without its data; replacing it as read keeps the stored data.
        await ok(['create', 'secret', 'generic', 'replaced-s', '--from-literal=k=kept-by-replace']);
        const secret = await json<Cm>(['get', 'secret', 'replaced-s']);
        await writeFile(file, JSON.stringify({ ...secret, metadata: { ...secret.metadata, labels: { tier: 'x' } } }));
        expect(await ok(['replace', '-f', file])).toBe('secret/replaced-s replaced\n');
        expect(stored('Secret', 'replaced-s')?.data).toEqual({ k: Buffer.from('kept-by-replace').toString('base64') });
        expect(stored('Secret', 'replaced-s')?.metadata?.labels).toEqual({ tier: 'x' });
        expect(stored('Secret', 'replaced-s')?.metadata?.annotations?.['kubelet-ts/secret-keys']).toBeUndefined();
      },
      kTestMs,
    );

    it(
      'patch: strategic merge, merge and JSON patch; delete; immutable refuses a change of data',
      async () => {
        await ok(['create', 'configmap', 'patched', '--from-literal=a=1']);
        expect(await ok(['patch', 'cm', 'patched', '-p', '{"data":{"b":"2"}}'])).toBe('configmap/patched patched\n');
        expect(await ok(['patch', 'cm', 'patched', '--type=merge', '-p', '{"data":{"a":null}}'])).toBe('configmap/patched patched\n');
        expect(await ok(['patch', 'cm', 'patched', '--type=json', '-p', '[{"op":"add","path":"/data/c","value":"3"}]'])).toBe(
          'configmap/patched patched\n',
        );
        expect((await json<Cm>(['get', 'cm', 'patched'])).data).toEqual({ b: '2', c: '3' });
        // A patch of a Secret applies to its stored data (never to the redacted reply).
        await ok(['create', 'secret', 'generic', 'ps', '--from-literal=x=1', '--from-literal=y=2']);
        await ok(['patch', 'secret', 'ps', '-p', `{"data":{"y":"${Buffer.from('two').toString('base64')}"}}`]);
        expect(stored('Secret', 'ps')?.data).toEqual({ x: Buffer.from('1').toString('base64'), y: Buffer.from('two').toString('base64') });
        // A patch may write a Secret's values, never read them (into an annotation a reply shows).
        const copy = await kubectl([
          'patch',
          'secret',
          'ps',
          '--type=json',
          '-p',
          '[{"op":"copy","from":"/data/x","path":"/metadata/annotations/leak"}]',
        ]);
        expect(copy.stderr).toContain("a Secret's values are never read back by this agent");
        expect(stored('Secret', 'ps')?.metadata?.annotations?.leak).toBeUndefined();

        expect(await ok(['delete', 'cm', 'patched'])).toBe('configmap "patched" deleted\n');
        expect((await kubectl(['get', 'cm', 'patched'])).stderr).toContain('configmaps "patched" not found');

        await ok(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen}\nimmutable: true\ndata: {a: "1"}\n');
        const refused = await kubectl(['patch', 'cm', 'frozen', '-p', '{"data":{"a":"2"}}']);
        expect(refused.stderr).toContain('The ConfigMap "frozen" is invalid: data:');
        expect(refused.stderr).toContain('Forbidden: field is immutable when `immutable` is set');
        expect((await json<Cm>(['get', 'cm', 'frozen'])).data).toEqual({ a: '1' });
        // Its labels may still change, as upstream.
        await ok(['label', 'cm', 'frozen', 'x=y']);
      },
      kTestMs,
    );

    it(
      'kubectl get cm -w sees each write of the API; a watch of Secrets never carries a value',
      async () => {
        const cms = background(['get', 'cm', '-w', '--output-watch-events']);
        const secrets = background(['get', 'secret', '-w', '-o', 'json']);
        try {
          await waitFor(async () => cms.out().includes('cm1'), { timeoutMs: 30_000, description: 'watch listing' });
          await ok(['create', 'configmap', 'watched', '--from-literal=a=1']);
          await waitFor(async () => /ADDED\s+watched\s+1\s/.test(cms.out()), { timeoutMs: 30_000, description: 'ADDED watched' });
          await ok(['patch', 'cm', 'watched', '-p', '{"data":{"b":"2"}}']);
          await waitFor(async () => /MODIFIED\s+watched\s+2\s/.test(cms.out()), { timeoutMs: 30_000, description: 'MODIFIED watched' });
          await ok(['delete', 'cm', 'watched']);
          await waitFor(async () => /DELETED\s+watched\s/.test(cms.out()), { timeoutMs: 30_000, description: 'DELETED watched' });
          await ok(['create', 'secret', 'generic', 'watched-s', '--from-literal=k=watched-secret-value']);
          await waitFor(async () => secrets.out().includes('"name": "watched-s"'), { timeoutMs: 30_000, description: 'secret watched' });
          expect(secrets.out()).not.toContain(Buffer.from('watched-secret-value').toString('base64'));
        } finally {
          await cms.stop();
          await secrets.stop();
        }
      },
      kTestMs,
    );

    it(
      'a user without the verb gets 403; an object from a manifest file refuses API writes',
      async () => {
        const r = await kubectl(['create', 'configmap', 'nope', '--from-literal=a=1'], { token: kViewer });
        expect(r.stderr).toBe(
          'error: failed to create configmap: configmaps is forbidden: User "viewer" cannot create resource "configmaps" in API group "" in the namespace "default"\n',
        );
        expect((await kubectl(['get', 'cm', 'cm1', '-o', 'name'], { token: kViewer })).stdout).toBe('configmap/cm1\n');
        const d = await kubectl(['delete', 'cm', 'cm1'], { token: kViewer });
        expect(d.stderr).toContain('cannot delete resource "configmaps"');

        await node.writeManifest('from-file.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\ndata: {a: "1"}\n');
        await waitFor(async () => (await kubectl(['get', 'cm', 'from-file', '-o', 'name'])).stdout === 'configmap/from-file\n', {
          timeoutMs: 30_000,
          description: 'from-file read',
        });
        expect((await kubectl(['patch', 'cm', 'from-file', '-p', '{"data":{"a":"2"}}'])).stderr).toContain('comes from the file source');
        expect((await kubectl(['create', 'configmap', 'from-file', '--from-literal=a=1'])).stderr).toBe(
          'error: failed to create configmap: configmaps "from-file" already exists\n',
        );
      },
      kTestMs,
    );

    it.skipIf(!kHavePythonClient)(
      "the official Python client: create, read, replace (twice, the second built from the first reply), patch, a stale replace's 409, list, delete, delete_collection by label",
      async () => {
        const run = await python(
          node,
          `
from kts import client, core, emit
api = core()
out = {}
made = api.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='py-cm'), data={'a': '1'}))
out['created'] = made.data
read = api.read_namespaced_config_map('py-cm', 'default')
read.data['a'] = '2'
first = api.replace_namespaced_config_map('py-cm', 'default', read)
first.data['b'] = '3'
second = api.replace_namespaced_config_map('py-cm', 'default', first)
out['replaced'] = second.data
out['versions'] = [made.metadata.resource_version, first.metadata.resource_version, second.metadata.resource_version]
out['patched'] = api.patch_namespaced_config_map('py-cm', 'default', {'data': {'c': '4'}}).data
try:
    api.replace_namespaced_config_map('py-cm', 'default', read)
    out['stale'] = 'accepted'
except client.ApiException as e:
    out['stale'] = e.status
out['listed'] = [i.metadata.name for i in api.list_namespaced_config_map('default', field_selector='metadata.name=py-cm').items]
api.delete_namespaced_config_map('py-cm', 'default')
try:
    api.read_namespaced_config_map('py-cm', 'default')
    out['gone'] = 'still there'
except client.ApiException as e:
    out['gone'] = e.status
for n in ['batch-1', 'batch-2']:
    api.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name=n, labels={'set': 'batch'}), data={'a': '1'}))
api.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='batch-other'), data={'a': '1'}))
api.delete_collection_namespaced_config_map('default', label_selector='set=batch')
out['left'] = sorted(i.metadata.name for i in api.list_namespaced_config_map('default').items if i.metadata.name.startswith('batch-'))
emit('done', **out)
`,
        );
        const out = (await run.until((e) => e.event === 'done', "the script's result", 60_000)) as unknown as {
          versions: string[];
        } & Record<string, unknown>;
        expect(out).toMatchObject({
          created: { a: '1' },
          replaced: { a: '2', b: '3' },
          patched: { a: '2', b: '3', c: '4' },
          stale: 409,
          listed: ['py-cm'],
          gone: 404,
          left: ['batch-other'],
        });
        const [v0, v1, v2] = out.versions.map(Number);
        expect(v1).toBeGreaterThan(v0);
        expect(v2).toBeGreaterThan(v1);
      },
      kTestMs,
    );

    it('a pod waits for its ConfigMap until kubectl creates it; its volume then sees each update; objects are restored after a restart', async () => {
      const pod = `apiVersion: v1
kind: Pod
metadata: {name: cfg-reader}
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{name: cfg, configMap: {name: late}}]
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      volumeMounts: [{name: cfg, mountPath: /cfg}]
      command: [sh, -c, "while true; do echo value=$(cat /cfg/k); sleep 1; done"]
`;
      expect(await ok(['create', '-f', '-'], pod)).toBe('pod/cfg-reader created\n');
      await waitFor(
        async () =>
          (await kubectl(['get', 'pod', 'cfg-reader', '-o', 'jsonpath={.status.containerStatuses[0].state.waiting.reason}'])).stdout ===
          'ContainerCreating',
        { timeoutMs: 60_000, description: 'cfg-reader waiting' },
      );
      await ok(['create', 'configmap', 'late', '--from-literal=k=first']);
      const logs = async () => (await kubectl(['logs', 'cfg-reader'])).stdout;
      await waitFor(async () => (await logs()).includes('value=first'), { timeoutMs: 90_000, description: 'cfg-reader sees first' });
      await ok(['patch', 'cm', 'late', '-p', '{"data":{"k":"second"}}']);
      await ok(['create', 'secret', 'generic', 'kept', '--from-literal=password=kept-value']);
      await waitFor(async () => (await logs()).includes('value=second'), { timeoutMs: 90_000, description: 'cfg-reader sees second' });

      await node.restart();
      const cm = await json<Cm>(['get', 'cm', 'late']);
      expect(cm.data).toEqual({ k: 'second' });
      expect(stored('Secret', 'kept')?.data).toEqual({ password: Buffer.from('kept-value').toString('base64') });
      // Still the API's: writable after the restart.
      await ok(['patch', 'cm', 'late', '-p', '{"data":{"k":"third"}}']);
      await waitFor(async () => (await logs()).includes('value=third'), { timeoutMs: 90_000, description: 'cfg-reader sees third' });
      await ok(['delete', 'pod', 'cfg-reader', '--wait=false']);
    }, 300_000);
  },
);

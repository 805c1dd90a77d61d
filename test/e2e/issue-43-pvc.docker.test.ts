// End-to-end (issue 43 item 3): PersistentVolumeClaims on a lone node with the REAL kubectl over TLS
// and the real Docker: a claim applied is Bound at once to a local-path directory under the root
// dir; a pod writes into it, and a new pod reads it after the first is gone; a pod naming a missing
// claim waits (ContainerCreating, a FailedMount event naming the claim) and starts once the claim is
// made; a claim deleted while in use is Terminating and keeps its directory until the pod goes; a
// ReadWriteOncePod claim is mounted by one pod only.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 180_000;
const kViewer = 'view-token-0123456789abcdef0123456789';
if (!kHaveKubectl) console.warn(`issue-43-pvc: skipped: ${kKubectl} is not installed`);

/** claim: a PersistentVolumeClaim manifest (YAML). */
function claim(name: string, mode = 'ReadWriteOnce', extra = ''): string {
  return `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ${name}}
spec:
  accessModes: [${mode}]
  resources: {requests: {storage: 1Gi}}${extra}
`;
}

/** pod: a busybox pod mounting claim `claimName` at /data and running `script`. */
function pod(name: string, claimName: string, script: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 0
  volumes: [{name: data, persistentVolumeClaim: {claimName: ${claimName}}}]
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      volumeMounts: [{name: data, mountPath: /data}]
      command: [sh, -c, ${JSON.stringify(script)}]
`;
}

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)(
  'PersistentVolumeClaims on a lone node with the real kubectl (issue 43 item 3)',
  () => {
    let node: TestNode;
    let dir: string;
    const { kubectl, background } = kubectlFor(
      () => node,
      () => dir,
    );
    const ok = async (args: string[], input?: string) => {
      const r = await kubectl(args, input === undefined ? {} : { input });
      expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
      expect(r.code).toBe(0);
      return r.stdout;
    };
    const jsonpath = async (args: string[], path: string) => (await kubectl([...args, '-o', `jsonpath=${path}`])).stdout;
    const phase = (name: string) => jsonpath(['get', 'pod', name], '{.status.phase}');
    const waiting = (name: string) => jsonpath(['get', 'pod', name], '{.status.containerStatuses[0].state.waiting.reason}');
    const events = (name: string) =>
      jsonpath(['get', 'events', '--field-selector', `involvedObject.name=${name}`], '{range .items[*]}{.reason}: {.message}{"\\n"}{end}');
    /** claimDirs: the directories under `{rootDir}/local-path` whose name ends with `_default_{name}`. */
    const claimDirs = async (name: string) =>
      (await readdir(join(node.rootDir, 'local-path')).catch(() => [] as string[])).filter((d) => d.endsWith(`_default_${name}`));

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-pvc-'));
      const tokens = join(dir, 'tokens.csv');
      await writeFile(tokens, `${kViewer},viewer,2,"kubelet-ts:read-only"\n`);
      node = await startTestNode({ tokenAuthFile: tokens, tlsPort: 0 });
    }, kTestMs);
    afterAll(async () => {
      await node?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, kTestMs);

    it(
      'apply a claim: Bound at once with the request as capacity; its data outlives the pod that wrote it',
      async () => {
        expect(await ok(['apply', '-f', '-'], claim('data'))).toBe('persistentvolumeclaim/data created\n');
        const table = await ok(['get', 'pvc', 'data']);
        expect(table).toMatch(/^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS/);
        expect(table).toMatch(/\ndata\s+Bound\s+1Gi\s+RWO\s+local-path\s/);
        const got = JSON.parse(await ok(['get', 'pvc', 'data', '-o', 'json'])) as {
          status: unknown;
          spec: { storageClassName: string };
          metadata: { finalizers: string[] };
        };
        expect(got.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
        expect(got.spec.storageClassName).toBe('local-path');
        expect(got.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
        // Applied again unchanged: nothing to do.
        expect(await ok(['apply', '-f', '-'], claim('data'))).toBe('persistentvolumeclaim/data unchanged\n');
        await waitFor(async () => (await claimDirs('data')).length === 1, { timeoutMs: 30_000, description: 'the claim directory' });

        await ok(['create', '-f', '-'], pod('writer', 'data', 'echo kept-across-pods > /data/file && sleep 3600'));
        await waitFor(async () => (await phase('writer')) === 'Running', { timeoutMs: 90_000, description: 'writer running' });
        // kubectl describe reads the claim, the pods that use it and its events.
        const described = await ok(['describe', 'pvc', 'data']);
        expect(described).toMatch(/Status:\s+Bound/);
        expect(described).toMatch(/Used By:\s+writer/);
        await waitFor(async () => (await kubectl(['exec', 'writer', '--', 'cat', '/data/file'])).stdout === 'kept-across-pods\n', {
          timeoutMs: 30_000,
          description: 'writer wrote',
        });
        await ok(['delete', 'pod', 'writer']);

        await ok(['create', '-f', '-'], pod('reader', 'data', 'cat /data/file; sleep 3600'));
        await waitFor(async () => (await kubectl(['logs', 'reader'])).stdout === 'kept-across-pods\n', {
          timeoutMs: 90_000,
          description: 'reader reads the file',
        });
        await ok(['delete', 'pod', 'reader']);

        // The claim and its data survive a restart of the agent, and a new pod still reads them.
        const [before] = await claimDirs('data');
        await node.restart();
        expect(await jsonpath(['get', 'pvc', 'data'], '{.status.phase}')).toBe('Bound');
        expect(await claimDirs('data')).toEqual([before]);
        await ok(['create', '-f', '-'], pod('after', 'data', 'cat /data/file; sleep 3600'));
        await waitFor(async () => (await kubectl(['logs', 'after'])).stdout === 'kept-across-pods\n', {
          timeoutMs: 90_000,
          description: 'after reads the file',
        });
        await ok(['delete', 'pod', 'after']);
      },
      kTestMs,
    );

    it(
      'refuses a claim without access modes or storage request, or of another storage class, naming the field',
      async () => {
        const bad = await kubectl(['apply', '-f', '-'], {
          input: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: bad}\nspec: {storageClassName: fast}\n',
        });
        expect(bad.code).not.toBe(0);
        expect(bad.stderr).toContain('spec.accessModes: Required value: at least 1 access mode is required');
        expect(bad.stderr).toContain('spec.resources[storage]: Required value');
        expect(bad.stderr).toContain('spec.storageClassName: Unsupported value: "fast"');
      },
      kTestMs,
    );

    it(
      'a pod naming a missing claim waits with a FailedMount event naming it, and starts once the claim is made',
      async () => {
        await ok(['create', '-f', '-'], pod('early', 'late', 'echo started; sleep 3600'));
        await waitFor(async () => (await waiting('early')) === 'ContainerCreating', { timeoutMs: 60_000, description: 'early waiting' });
        await waitFor(
          async () =>
            (await events('early')).includes(
              'FailedMount: MountVolume.SetUp failed for volume "data" : persistentvolumeclaim "late" not found',
            ),
          { timeoutMs: 60_000, description: 'the FailedMount event' },
        );
        await ok(['apply', '-f', '-'], claim('late'));
        await waitFor(async () => (await kubectl(['logs', 'early'])).stdout === 'started\n', {
          timeoutMs: 90_000,
          description: 'early starts',
        });
        await ok(['delete', 'pod', 'early']);
      },
      kTestMs,
    );

    it(
      'a claim deleted while a pod uses it is Terminating and keeps its directory; it goes with its directory once the pod is deleted',
      async () => {
        await ok(['apply', '-f', '-'], claim('inuse'));
        await ok(['create', '-f', '-'], pod('user', 'inuse', 'echo x > /data/f; sleep 3600'));
        await waitFor(async () => (await phase('user')) === 'Running', { timeoutMs: 90_000, description: 'user running' });
        const [d] = await claimDirs('inuse');
        expect(d).toBeDefined();
        // The DELETE answers with the claim as it now is: marked, kept by its finalizer (the generic store's answer).
        const marked = JSON.parse(await ok(['delete', '--raw', '/api/v1/namespaces/default/persistentvolumeclaims/inuse'])) as {
          kind: string;
          metadata: { deletionTimestamp?: string; finalizers?: string[] };
        };
        expect(marked).toMatchObject({
          kind: 'PersistentVolumeClaim',
          metadata: { deletionTimestamp: expect.stringMatching(/^\d{4}-/), finalizers: ['kubernetes.io/pvc-protection'] },
        });
        // A second DELETE is the same answer (kubectl delete of a claim already marked).
        expect(await ok(['delete', 'pvc', 'inuse', '--wait=false'])).toBe('persistentvolumeclaim "inuse" deleted\n');
        await waitFor(async () => /\ninuse\s+Terminating\s/.test((await kubectl(['get', 'pvc', 'inuse'])).stdout), {
          timeoutMs: 30_000,
          description: 'inuse Terminating',
        });
        expect(await jsonpath(['get', 'pvc', 'inuse'], '{.metadata.deletionTimestamp}')).toMatch(/^\d{4}-/);
        expect((await stat(join(node.rootDir, 'local-path', d, 'f'))).isFile()).toBe(true);
        expect(await phase('user')).toBe('Running');

        await ok(['delete', 'pod', 'user']);
        await waitFor(async () => (await kubectl(['get', 'pvc', 'inuse'])).stderr.includes('not found'), {
          timeoutMs: 60_000,
          description: 'inuse gone',
        });
        await waitFor(async () => (await claimDirs('inuse')).length === 0, { timeoutMs: 30_000, description: 'the directory removed' });
      },
      kTestMs,
    );

    it(
      'kubectl get pvc -w sees a claim come and go; a user without the verb gets 403; discovery lists the resource',
      async () => {
        const watch = background(['get', 'pvc', '-w', '--output-watch-events']);
        try {
          await ok(['apply', '-f', '-'], claim('watched'));
          await waitFor(async () => /ADDED\s+watched\s+Bound\s/.test(watch.out()), { timeoutMs: 30_000, description: 'ADDED watched' });
          await ok(['delete', 'pvc', 'watched']);
          await waitFor(async () => /DELETED\s+watched\s/.test(watch.out()), { timeoutMs: 30_000, description: 'DELETED watched' });
        } finally {
          await watch.stop();
        }
        const r = await kubectl(['apply', '-f', '-'], { input: claim('nope'), token: kViewer });
        expect(r.stderr).toContain(
          'User "viewer" cannot create resource "persistentvolumeclaims" in API group "" in the namespace "default"',
        );
        expect((await kubectl(['get', 'pvc', '-o', 'name'], { token: kViewer })).code).toBe(0);
        expect(await ok(['api-resources', '--api-group=', '-o', 'name'])).toContain('persistentvolumeclaims\n');
      },
      kTestMs,
    );

    it(
      'a ReadWriteOncePod claim is mounted by one pod only: the second waits with an event saying why',
      async () => {
        await ok(['apply', '-f', '-'], claim('solo', 'ReadWriteOncePod'));
        await ok(['create', '-f', '-'], pod('first', 'solo', 'sleep 3600'));
        await waitFor(async () => (await phase('first')) === 'Running', { timeoutMs: 90_000, description: 'first running' });
        await ok(['create', '-f', '-'], pod('second', 'solo', 'sleep 3600'));
        await waitFor(async () => (await events('second')).includes('ReadWriteOncePod access mode and is already in use by pod "first"'), {
          timeoutMs: 60_000,
          description: 'the refusal event',
        });
        expect(await waiting('second')).toBe('ContainerCreating');
        await ok(['delete', 'pod', 'first']);
        await waitFor(async () => (await phase('second')) === 'Running', {
          timeoutMs: 90_000,
          description: 'second runs once first is gone',
        });
        await ok(['delete', 'pod', 'second']);
      },
      kTestMs,
    );
  },
);

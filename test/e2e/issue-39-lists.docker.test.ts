// End-to-end (issue 39, item 10): the rest of list semantics against the real agent. Lists come in
// the apiserver's order (namespace, then name) and page with limit/continue — the real kubectl's
// `get pods --chunk-size 2` across several pages, a raw list following its continue tokens, an
// expired token's 410 — the Node and /version report `v1.32.0-kubelet-ts.N`, and `kubectl diff` of
// an unchanged pod is empty (config.hash and config.seen do not change on its dry run).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 120_000;
/** Created out of name order: the lists must come back sorted. */
const kNames = ['l-e', 'l-a', 'l-d', 'l-b', 'l-c'];

describe.skipIf(!inject('dockerAvailable'))('list semantics (issue 39 item 10)', () => {
  let node: TestNode;
  let dir: string;
  const label = `lists-${process.pid}`;
  const { kubectl } = kubectlFor(
    () => node,
    () => dir,
  );
  const podYaml = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
  labels: {test: ${label}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      command: [sleep, "3600"]
`;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-lists-'));
    node = await startTestNode({ tlsPort: 0 });
    for (const name of kNames) {
      const res = await node.api('/api/v1/namespaces/default/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/yaml' },
        body: podYaml(name),
      });
      expect(res.status, await res.clone().text()).toBe(201);
    }
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'a raw list pages with limit and continue, in name order, with remainingItemCount on an unfiltered list',
    async () => {
      const names: string[] = [];
      let token: string | undefined;
      let pages = 0;
      let firstVersion: string | undefined;
      do {
        const res = await node.api(`/api/v1/namespaces/default/pods?limit=2${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        expect(res.status).toBe(200);
        const list = (await res.json()) as {
          metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
          items: Pod[];
        };
        expect(list.items.length).toBeLessThanOrEqual(2);
        if (pages === 0) {
          firstVersion = list.metadata.resourceVersion;
          expect(list.metadata.remainingItemCount).toBe(kNames.length - 2);
        }
        // Every page reports the first page's resourceVersion (the list's snapshot, as upstream).
        expect(list.metadata.resourceVersion).toBe(firstVersion);
        names.push(...list.items.map((p) => p.metadata!.name!));
        token = list.metadata.continue;
        pages++;
      } while (token);
      expect(pages).toBe(3);
      expect(names).toEqual([...kNames].sort());
    },
    kTestMs,
  );

  it(
    'a continue token of a version the history no longer holds answers 410 Expired; a made-up one 400',
    async () => {
      const stale = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: 'default/l-c\u0000' })).toString('base64url');
      const res = await node.api(`/api/v1/namespaces/default/pods?limit=2&continue=${stale}`);
      expect(res.status).toBe(410);
      expect(await res.json()).toMatchObject({
        kind: 'Status',
        reason: 'Expired',
        code: 410,
        message: expect.stringMatching(/^The provided continue parameter is too old/),
      });
      expect((await node.api('/api/v1/namespaces/default/pods?limit=2&continue=made-up')).status).toBe(400);
    },
    kTestMs,
  );

  describe.skipIf(!kHaveKubectl)('the real kubectl', () => {
    it(
      'kubectl get pods --chunk-size 2 reads every page and prints them in name order',
      async () => {
        const run = await kubectl(['get', 'pods', '-l', `test=${label}`, '--chunk-size', '2', '-o', 'name', '-v=6']);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout.trim().split('\n')).toEqual([...kNames].sort().map((n) => `pod/${n}`));
        // kubectl asked for 3 pages: the first with limit=2, then two with a continue token.
        const requests = run.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/api\/v1\/namespaces\/default\/pods\?/.test(l));
        expect(requests.filter((l) => l.includes('limit=2'))).toHaveLength(3);
        expect(requests.filter((l) => l.includes('continue='))).toHaveLength(2);
      },
      kTestMs,
    );

    it(
      'kubectl version and the Node report v1.32.0-kubelet-ts.N',
      async () => {
        const version = await kubectl(['version', '-o', 'json']);
        expect(version.code, version.stderr).toBe(0);
        const server = (JSON.parse(version.stdout) as { serverVersion: { gitVersion: string; major: string; minor: string } })
          .serverVersion;
        expect(server).toMatchObject({
          major: '1',
          minor: '32',
          gitVersion: expect.stringMatching(/^v1\.32\.0-kubelet-ts\.\d+\.\d+\.\d+$/),
        });
        const kubelet = await kubectl(['get', 'node', node.nodeName, '-o', 'jsonpath={.status.nodeInfo.kubeletVersion}']);
        expect(kubelet.code, kubelet.stderr).toBe(0);
        expect(kubelet.stdout).toBe(server.gitVersion);
      },
      kTestMs,
    );

    it(
      'kubectl diff of an unchanged pod is empty (exit 0), and of a changed one shows the change (exit 1)',
      async () => {
        const file = join(dir, 'diffed.yaml');
        await writeFile(file, podYaml('diffed'));
        const applied = await kubectl(['apply', '-f', file]);
        expect(applied.code, applied.stderr).toBe(0);
        await waitFor(async () => (await kubectl(['get', 'pod', 'diffed', '-o', 'jsonpath={.status.phase}'])).stdout === 'Running', {
          timeoutMs: 90_000,
          description: 'diffed Running',
        });
        const same = await kubectl(['diff', '-f', file]);
        expect({ code: same.code, stdout: same.stdout, stderr: same.stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
        await writeFile(file, podYaml('diffed').replace(`{test: ${label}}`, `{test: ${label}, v: "2"}`));
        const changed = await kubectl(['diff', '-f', file]);
        expect(changed.code, changed.stderr).toBe(1);
        expect(changed.stdout).toMatch(/^\+\s+v: "2"$/m);
        // The node's bookkeeping annotations do not change on the dry run.
        expect(changed.stdout).not.toContain('kubernetes.io/config.');
        // Server-side diff (an apply patch with dryRun=All, sent whatever the file) of the unchanged pod: empty.
        await writeFile(file, podYaml('diffed'));
        const serverSide = await kubectl(['diff', '--server-side', '--force-conflicts', '-f', file]);
        expect({ code: serverSide.code, stdout: serverSide.stdout, stderr: serverSide.stderr }).toEqual({
          code: 0,
          stdout: '',
          stderr: '',
        });
      },
      kTestMs,
    );
  });
});

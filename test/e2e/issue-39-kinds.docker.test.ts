// End-to-end (issue 39, item 5): every kind the node serves is watched as the apiserver serves it.
// The real kubectl (v1.32) `get events -w`, `events --watch`, `get nodes -w` and `get ns -w` each see
// a change happen; a raw watch from a too-old resourceVersion gets the 410 ERROR event; and the
// official Python client's watch.Watch().stream(...) — which sends `watch=True` — sees events, the
// node and namespaces change.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { kHaveKubectl, kubectlFor, type KubectlRunning } from '../support/kubectl.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';

const kTestMs = 120_000;

describe.skipIf(!inject('dockerAvailable'))('watch of events, nodes and namespaces (issue 39 item 5)', () => {
  let node: TestNode;
  let dir: string;
  const running: KubectlRunning[] = [];
  const { kubectl, background } = kubectlFor(
    () => node,
    () => dir,
  );
  const python = usePythonClient();

  /** createPod: a pod that starts and sleeps (its start records Scheduled… Started events). */
  const createPod = async (name: string) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { test: `kinds-${process.pid}` } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
      },
    };
    const res = await node.api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(pod),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  /** watchOut: a background kubectl whose stdout comes to hold `text` (its stderr in the failure). */
  const sees = (run: KubectlRunning, test: (out: string) => boolean, description: string) =>
    waitFor(() => test(run.out()), { timeoutMs: 60_000, description }).catch((err: Error) => {
      throw new Error(`${err.message}; kubectl stdout ${JSON.stringify(run.out())}, stderr ${JSON.stringify(run.err())}`);
    });
  /** started: `kubectl … -w` printed its first list (its watch is open after it). */
  const started = (run: KubectlRunning, first: string) => sees(run, (o) => o.includes(first), `kubectl printed ${first}`);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-kinds-'));
    node = await startTestNode({ tlsPort: 0 });
  }, kTestMs);
  afterEach(async () => {
    for (const r of running.splice(0)) await r.stop();
  });
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe.skipIf(!kHaveKubectl)('the real kubectl', () => {
    it(
      'kubectl get events -w shows the events of a pod started after it began',
      async () => {
        const run = background(['get', 'events', '-w']);
        running.push(run);
        // The events may come in kubectl's first list or on its watch: either way kubectl must not fail (405 before).
        await new Promise((r) => setTimeout(r, 1500));
        await createPod('ev-get');
        await sees(run, (o) => /Started\s+pod\/ev-get/i.test(o), 'kubectl get events -w shows Started of ev-get');
        expect(run.err()).toBe('');
      },
      kTestMs,
    );

    it(
      'kubectl events --watch shows the events of a pod started after it began',
      async () => {
        const run = background(['events', '--watch']);
        running.push(run);
        await new Promise((r) => setTimeout(r, 1500));
        await createPod('ev-events');
        await sees(run, (o) => /Started\s+Pod\/ev-events/i.test(o), 'kubectl events --watch shows Started of ev-events');
        expect(run.err()).toBe('');
      },
      kTestMs,
    );

    it(
      'kubectl get nodes -w shows the node cordoned',
      async () => {
        const run = background(['get', 'nodes', '-w']);
        running.push(run);
        await started(run, node.nodeName);
        try {
          const cordon = await kubectl(['cordon', node.nodeName]);
          expect(cordon.code, cordon.stderr).toBe(0);
          await sees(run, (o) => o.includes('SchedulingDisabled'), 'kubectl get nodes -w shows SchedulingDisabled');
        } finally {
          await kubectl(['uncordon', node.nodeName]);
        }
        expect(run.err()).toBe('');
      },
      kTestMs,
    );

    it(
      'kubectl get ns -w shows a namespace created after it began',
      async () => {
        const run = background(['get', 'ns', '-w']);
        running.push(run);
        await started(run, 'kube-system');
        const made = await kubectl(['create', 'namespace', 'kinds-watched']);
        expect(made.code, made.stderr).toBe(0);
        await sees(run, (o) => /kinds-watched\s+Active/.test(o), 'kubectl get ns -w shows kinds-watched');
        expect(run.err()).toBe('');
        await kubectl(['delete', 'namespace', 'kinds-watched']);
      },
      kTestMs,
    );
  });

  it(
    'a ConfigMap created through the API shows on kubectl get configmaps -w and on a raw watch, under the version a replace must carry',
    async () => {
      if (!kHaveKubectl) return;
      const run = background(['get', 'configmaps', '-w']);
      running.push(run);
      const controller = new AbortController();
      const raw = await node.api('/api/v1/namespaces/default/configmaps?watch=true', { signal: controller.signal });
      expect(raw.status).toBe(200);
      let text = '';
      const reader = raw.body!.getReader();
      try {
        await new Promise((r) => setTimeout(r, 1000));
        const made = await kubectl(['create', 'configmap', 'kinds-cm', '--from-literal=a=b']);
        expect(made.code, made.stderr).toBe(0);
        await sees(run, (o) => /kinds-cm\s+1/.test(o), 'kubectl get configmaps -w shows kinds-cm');
        while (!text.includes('"kinds-cm"')) text += new TextDecoder().decode((await reader.read()).value);
        const added = text
          .split('\n')
          .map((l) =>
            l ? (JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion: string } } }) : undefined,
          )
          .find((e) => e?.object.metadata.name === 'kinds-cm')!;
        expect(added.type).toBe('ADDED');
        // The watched version is the store's own: a replace built from the watched object is accepted (409 with any other).
        const replaced = await node.api('/api/v1/namespaces/default/configmaps/kinds-cm', {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ ...added.object, data: { a: 'c' } }),
        });
        expect(replaced.status, await replaced.clone().text()).toBe(200);
      } finally {
        controller.abort();
        await kubectl(['delete', 'configmap', 'kinds-cm']);
      }
    },
    kTestMs,
  );

  it.each(['/api/v1/events', '/api/v1/namespaces/default/events', '/api/v1/nodes', '/api/v1/namespaces'])(
    'a raw watch of %s from a too-old resourceVersion gets the 410 ERROR event, then the end',
    async (path) => {
      const res = await node.api(`${path}?watch=true&resourceVersion=1`);
      expect(res.status).toBe(200);
      const lines = (await res.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: Record<string, unknown> });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
      // Every List carries its resourceVersion, and each item its own.
      const list = (await (await node.api(path)).json()) as {
        metadata: { resourceVersion?: string };
        items: { metadata: { resourceVersion?: string } }[];
      };
      expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
      for (const item of list.items) expect(item.metadata.resourceVersion).toMatch(/^\d+$/);
    },
    kTestMs,
  );

  describe.skipIf(!kHavePythonClient)('the official Python client (watch=True)', () => {
    it(
      'watch.Watch().stream(list_namespaced_event) sees the events of a pod started after it began',
      async () => {
        const run = await python(
          node,
          `
from kubernetes import watch
import kts
kts.emit('open')
for e in watch.Watch().stream(kts.core().list_namespaced_event, 'default', timeout_seconds=90):
    kts.emit(e['type'], name=e['object'].involved_object.name, reason=e['object'].reason, rv=e['object'].metadata.resource_version)
`,
        );
        await run.until((e) => e.event === 'open', 'the script started', 20_000);
        await new Promise((r) => setTimeout(r, 1500));
        await createPod('ev-python');
        const started = await run.until((e) => e.name === 'ev-python' && e.reason === 'Started', 'the Started event of ev-python', 60_000);
        expect(started.event).toMatch(/^(ADDED|MODIFIED)$/);
        expect(String(started.rv)).toMatch(/^\d+$/);
      },
      kTestMs,
    );

    it(
      'watches of nodes and namespaces see the node cordoned and a namespace created',
      async () => {
        const run = await python(
          node,
          `
from kubernetes import watch
import kts, threading
def nodes():
    for e in watch.Watch().stream(kts.core().list_node, timeout_seconds=90):
        kts.emit('node-' + e['type'], name=e['object'].metadata.name, unschedulable=e['object'].spec.unschedulable)
def namespaces():
    for e in watch.Watch().stream(kts.core().list_namespace, timeout_seconds=90):
        kts.emit('ns-' + e['type'], name=e['object'].metadata.name)
threading.Thread(target=nodes, daemon=True).start()
namespaces()
`,
        );
        await run.until((e) => e.event === 'node-ADDED' && e.name === node.nodeName, 'the node ADDED', 20_000);
        await run.until((e) => e.event === 'ns-ADDED' && e.name === 'kube-system', 'kube-system ADDED', 20_000);
        try {
          const cordon = await node.api(`/api/v1/nodes/${node.nodeName}`, {
            method: 'PATCH',
            headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
            body: '{"spec":{"unschedulable":true}}',
          });
          expect(cordon.status).toBe(200);
          await run.until((e) => e.event === 'node-MODIFIED' && e.unschedulable === true, 'the node MODIFIED, unschedulable', 30_000);
        } finally {
          await node.api(`/api/v1/nodes/${node.nodeName}`, {
            method: 'PATCH',
            headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
            body: '{"spec":{"unschedulable":null}}',
          });
        }
        const made = await node.api('/api/v1/namespaces', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kinds-python' } }),
        });
        expect(made.status).toBe(201);
        await run.until((e) => e.event === 'ns-ADDED' && e.name === 'kinds-python', 'kinds-python ADDED', 30_000);
        await node.api('/api/v1/namespaces/kinds-python', { method: 'DELETE' });
      },
      kTestMs,
    );
  });
});

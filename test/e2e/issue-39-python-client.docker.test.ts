// End-to-end (issue 39, "Done when", first point): the official Python client (Debian's
// python3-kubernetes 22.6 under /usr/bin/python3, through test/support/python-client.ts) against
// the real agent over TLS and the real dockerd, every step the issue lists:
// - a pod watch (list, then watch from the List's resourceVersion, as an informer) sees ADDED,
//   MODIFIED Running, MODIFIED with deletionTimestamp and DELETED, in that order, each one
//   delivered while it is still the pod's latest write (the client's last event carries the
//   resourceVersion a GET shows: nothing had to be written after it for it to arrive);
// - a log follow of a container that printed one line and went quiet shows that line;
// - a second replace built from the first reply succeeds;
// - ConfigMap create, read, update and delete;
// - port-forward and exec over the v4 channel WebSocket protocols;
// - watches of nodes, namespaces and events.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { kHavePythonClient, usePythonClient, type PythonEvent, type PythonRun } from '../support/python-client.js';

const kTestMs = 150_000;
const kNs = 'default';
/** The grace period of the watched pod's delete (seconds): its container ignores SIGTERM, so it stays Terminating this long. */
const kGraceSeconds = 20;

/** kPodWatch: list the pods named argv[1], then watch from the List's resourceVersion; one event line per watch event with what the test checks. */
const kPodWatch = `import sys
from kubernetes import watch
import kts
v1 = kts.core()
name = sys.argv[1]
listed = v1.list_namespaced_pod('${kNs}', field_selector='metadata.name=' + name)
kts.emit('listed', rv=listed.metadata.resource_version, count=len(listed.items))
for e in watch.Watch().stream(v1.list_namespaced_pod, '${kNs}', field_selector='metadata.name=' + name, resource_version=listed.metadata.resource_version, timeout_seconds=300):
    p = e['object']
    cs = (p.status.container_statuses or [None])[0] if p.status else None
    state = None
    if cs is not None and cs.state is not None:
        state = 'running' if cs.state.running else 'terminated' if cs.state.terminated else 'waiting' if cs.state.waiting else None
    kts.emit('pod', type=e['type'], name=p.metadata.name, rv=p.metadata.resource_version, phase=p.status.phase if p.status else None,
             deletionTimestamp=p.metadata.deletion_timestamp, grace=p.metadata.deletion_grace_period_seconds,
             state=state, ready=bool(cs and cs.ready), exitCode=cs.state.terminated.exit_code if state == 'terminated' else None)
kts.emit('end')
`;

describe.skipIf(!inject('dockerAvailable') || !kHavePythonClient)('issue 39 done-when: the official Python client against the node', () => {
  let node: TestNode;
  const label = `issue-39-python-${process.pid}`;
  const python = usePythonClient();

  const podPath = (name: string) => `/api/v1/namespaces/${kNs}/pods/${name}`;
  const createPod = async (name: string, command: string, graceSeconds = 1) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: kNs, labels: { test: label } },
      spec: {
        terminationGracePeriodSeconds: graceSeconds,
        containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }],
      },
    };
    const res = await node.api(`/api/v1/namespaces/${kNs}/pods`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(pod),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  const running = (name: string) =>
    waitFor(
      async () => {
        const res = await node.api(podPath(name));
        const pod = res.status === 200 ? ((await res.json()) as Pod) : undefined;
        return pod && isRunningAndReady(pod) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` },
    );

  /**
   * caughtUp: waits until the script's last pod event for `name` is the pod's latest write (its
   * resourceVersion is the one a GET shows) and `pred` holds for it. A client that gets an event
   * only once the next one is written never gets there while the pod is quiet.
   */
  const caughtUp = (run: PythonRun, name: string, pred: (e: PythonEvent) => boolean, description: string) =>
    waitFor(
      async () => {
        const res = await node.api(podPath(name));
        if (res.status !== 200) return undefined;
        const current = ((await res.json()) as Pod).metadata?.resourceVersion;
        const last = run.events.filter((e) => e.event === 'pod' && e.name === name).at(-1);
        return last && pred(last) && last.rv === current ? last : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, description },
    );

  beforeAll(async () => {
    node = await startTestNode({ tlsPort: 0 });
    // One line, then silence; and a web server for port-forward and exec.
    await createPod('py-quiet', 'echo first-line; exec sleep 3600');
    await createPod('py-web', 'mkdir -p /www && echo hello-from-web > /www/index.html && exec httpd -f -p 8080 -h /www');
    await Promise.all([running('py-quiet'), running('py-web')]);
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
  }, kTestMs);

  it(
    'a pod watch sees ADDED, MODIFIED Running, MODIFIED with deletionTimestamp and DELETED, each while it is the latest write',
    async () => {
      const name = 'py-watched';
      const run = await python(node, kPodWatch, { args: [name] });
      const listed = await run.until((e) => e.event === 'listed', 'the List', 30_000);
      expect(listed.count).toBe(0);
      expect(String(listed.rv)).toMatch(/^\d+$/);
      // The container ignores SIGTERM: the pod stays Terminating for the whole grace period.
      await createPod(name, "trap '' TERM; while true; do sleep 1; done", kGraceSeconds);

      await run.until((e) => e.event === 'pod' && e.type === 'ADDED', 'ADDED', 30_000);
      const up = await caughtUp(
        run,
        name,
        (e) => e.type === 'MODIFIED' && e.state === 'running' && e.ready === true && e.phase === 'Running',
        'MODIFIED Running, ready, as the latest write',
      );
      expect(up.deletionTimestamp).toBeNull();

      const del = await node.api(`${podPath(name)}?gracePeriodSeconds=${kGraceSeconds}`, { method: 'DELETE' });
      expect(del.status, await del.clone().text()).toBe(200);
      const marked = await caughtUp(
        run,
        name,
        (e) => e.type === 'MODIFIED' && e.deletionTimestamp !== null,
        'MODIFIED with deletionTimestamp as the latest write',
      );
      expect(marked.grace).toBe(kGraceSeconds);
      expect(marked.state).toBe('running');

      // DELETED is the last write of all: it must arrive with the stream still open (not at its timeout).
      const deleted = await run.until((e) => e.event === 'pod' && e.type === 'DELETED', 'DELETED', (kGraceSeconds + 40) * 1000);
      expect(run.events.some((e) => e.event === 'end')).toBe(false);
      expect(deleted.deletionTimestamp).toBe(marked.deletionTimestamp);
      expect(deleted.state).toBe('terminated');

      const pods = run.events.filter((e) => e.event === 'pod');
      const types = pods.map((e) => e.type);
      expect(types[0]).toBe('ADDED');
      expect(types.at(-1)).toBe('DELETED');
      expect(types.slice(1, -1).every((t) => t === 'MODIFIED')).toBe(true);
      const iRunning = pods.findIndex((e) => e.state === 'running' && e.deletionTimestamp === null);
      const iMarked = pods.findIndex((e) => e.deletionTimestamp !== null);
      expect(iRunning).toBeGreaterThan(0);
      expect(iMarked).toBeGreaterThan(iRunning);
      const rvs = pods.map((e) => Number(e.rv));
      for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1]);
    },
    kTestMs,
  );

  it(
    'a log follow (watch.Watch().stream of read_namespaced_pod_log) of a container that printed one line and went quiet shows that line',
    async () => {
      const run = await python(
        node,
        `import kts
from kubernetes import watch
for line in watch.Watch().stream(kts.core().read_namespaced_pod_log, name='py-quiet', namespace='${kNs}', container='main'):
    kts.emit('line', text=line)
`,
      );
      const got = await run.until((e) => e.event === 'line', 'the first line', 30_000);
      expect(got.text).toBe('first-line');
    },
    kTestMs,
  );

  it(
    'a second replace built from the first reply succeeds; a read after it shows its version',
    async () => {
      const run = await python(
        node,
        `import kts
v1 = kts.core()
pod = v1.read_namespaced_pod('py-quiet', '${kNs}')
pod.metadata.labels['step'] = '1'
first = v1.replace_namespaced_pod('py-quiet', '${kNs}', pod)
first.metadata.labels['step'] = '2'
second = v1.replace_namespaced_pod('py-quiet', '${kNs}', first)
read = v1.read_namespaced_pod('py-quiet', '${kNs}')
kts.emit('done', versions=[pod.metadata.resource_version, first.metadata.resource_version, second.metadata.resource_version], read=read.metadata.resource_version, step=read.metadata.labels['step'])
`,
      );
      const r = await run.until((e) => e.event === 'done', 'both replaces', 60_000);
      const versions = (r.versions as string[]).map(Number);
      expect(versions[1]).toBeGreaterThan(versions[0]);
      expect(versions[2]).toBeGreaterThan(versions[1]);
      expect(r.read).toBe((r.versions as string[])[2]);
      expect(r.step).toBe('2');
    },
    kTestMs,
  );

  it(
    'ConfigMap create, read, update (replace from the reply) and delete; the read after the delete is 404',
    async () => {
      const run = await python(
        node,
        `import kts
from kubernetes import client
from kubernetes.client.rest import ApiException
v1 = kts.core()
made = v1.create_namespaced_config_map('${kNs}', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='py-cm', labels={'test': '${label}'}), data={'a': '1'}))
kts.emit('created', rv=made.metadata.resource_version, uid=made.metadata.uid, data=made.data)
read = v1.read_namespaced_config_map('py-cm', '${kNs}')
kts.emit('read', rv=read.metadata.resource_version, data=read.data)
read.data['a'] = '2'
updated = v1.replace_namespaced_config_map('py-cm', '${kNs}', read)
kts.emit('updated', rv=updated.metadata.resource_version, data=updated.data)
listed = v1.list_namespaced_config_map('${kNs}', label_selector='test=${label}')
kts.emit('listed', names=[c.metadata.name for c in listed.items], data=[c.data for c in listed.items])
v1.delete_namespaced_config_map('py-cm', '${kNs}')
try:
    v1.read_namespaced_config_map('py-cm', '${kNs}')
    kts.emit('after-delete', status=200)
except ApiException as e:
    kts.emit('after-delete', status=e.status)
`,
      );
      const after = await run.until((e) => e.event === 'after-delete', 'the read after the delete', 60_000);
      const by = (kind: string) => run.events.find((e) => e.event === kind)!;
      expect(by('created').data).toEqual({ a: '1' });
      expect(String(by('created').uid)).not.toBe('');
      expect(by('read').rv).toBe(by('created').rv);
      expect(by('updated').data).toEqual({ a: '2' });
      expect(Number(by('updated').rv)).toBeGreaterThan(Number(by('created').rv));
      expect(by('listed')).toMatchObject({ names: ['py-cm'], data: [{ a: '2' }] });
      expect(after.status).toBe(404);
    },
    kTestMs,
  );

  it(
    "port-forward (kubernetes.stream.portforward) reaches the pod's port",
    async () => {
      const run = await python(node, 'portforward_get.py', { args: ['py-web', kNs, '8080', '/index.html'] });
      const r = await run.until((e) => e.event === 'response', 'the answer through the forward', 60_000);
      expect(String(r.text)).toMatch(/^HTTP\/1\.[01] 200 OK/);
      expect(String(r.text)).toContain('hello-from-web');
      expect(r.error).toBeNull();
    },
    kTestMs,
  );

  it(
    'exec (kubernetes.stream.stream) runs a command and returns its stdout and stderr',
    async () => {
      const run = await python(
        node,
        `import kts
from kubernetes.stream import stream
out = stream(kts.core().connect_get_namespaced_pod_exec, 'py-web', '${kNs}', command=['sh', '-c', 'cat /www/index.html; echo to-stderr >&2'], stderr=True, stdin=False, stdout=True, tty=False)
kts.emit('exec', out=out)
`,
      );
      const r = await run.until((e) => e.event === 'exec', 'the exec output', 60_000);
      expect(String(r.out)).toContain('hello-from-web\n');
      expect(String(r.out)).toContain('to-stderr\n');
    },
    kTestMs,
  );

  it(
    "watches of nodes, namespaces and events (list, then watch from its resourceVersion) see a cordon, a new namespace and a new pod's events",
    async () => {
      const run = await python(
        node,
        `import threading
from kubernetes import watch
import kts
v1 = kts.core()
def follow(tag, list_fn, describe, *args):
    listed = list_fn(*args)
    kts.emit(tag + '-listed', rv=listed.metadata.resource_version)
    for e in watch.Watch().stream(list_fn, *args, resource_version=listed.metadata.resource_version, timeout_seconds=300):
        kts.emit(tag, type=e['type'], **describe(e['object']))
threads = [
    threading.Thread(target=follow, args=('node', v1.list_node, lambda o: dict(name=o.metadata.name, unschedulable=o.spec.unschedulable)), daemon=True),
    threading.Thread(target=follow, args=('ns', v1.list_namespace, lambda o: dict(name=o.metadata.name)), daemon=True),
    threading.Thread(target=follow, args=('event', v1.list_namespaced_event, lambda o: dict(name=o.involved_object.name, reason=o.reason), '${kNs}'), daemon=True),
]
for t in threads:
    t.start()
for t in threads:
    t.join()
`,
      );
      for (const tag of ['node', 'ns', 'event']) {
        const l = await run.until((e) => e.event === `${tag}-listed`, `the ${tag} List`, 30_000);
        expect(String(l.rv)).toMatch(/^\d+$/);
      }
      const cordon = (unschedulable: boolean | null) =>
        node.api(`/api/v1/nodes/${node.nodeName}`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
          body: JSON.stringify({ spec: { unschedulable } }),
        });
      try {
        expect((await cordon(true)).status).toBe(200);
        const cordoned = await run.until((e) => e.event === 'node' && e.unschedulable === true, 'the node MODIFIED, unschedulable', 30_000);
        expect(cordoned).toMatchObject({ type: 'MODIFIED', name: node.nodeName });
      } finally {
        await cordon(null);
      }
      const made = await node.api('/api/v1/namespaces', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'py-watched-ns' } }),
      });
      expect(made.status).toBe(201);
      try {
        const added = await run.until((e) => e.event === 'ns' && e.name === 'py-watched-ns', 'the namespace ADDED', 30_000);
        expect(added.type).toBe('ADDED');
      } finally {
        await node.api('/api/v1/namespaces/py-watched-ns', { method: 'DELETE' });
      }
      await createPod('py-events', 'exec sleep 3600');
      const started = await run.until(
        (e) => e.event === 'event' && e.name === 'py-events' && e.reason === 'Started',
        'the Started event of py-events',
        90_000,
      );
      expect(started.type).toMatch(/^(ADDED|MODIFIED)$/);
    },
    kTestMs,
  );
});

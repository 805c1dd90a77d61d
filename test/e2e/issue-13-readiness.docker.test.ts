// Issue 13, item 2 (the main thread's side): the node's pod network readiness against the real
// dockerd, as the kubelet's runtimeState.networkErrors and SyncPod's NetworkNotReady; a colliding
// --pod-cidr refused at start; hostPort refused at admission with --network-plugin none. On
// containerd (test/support/runtime.ts) the pod network is the runtime's own CNI (kts-cri0, set up by
// its RunPodSandbox), so the agent watches no --cni-bin-dir there: that test is Docker's only.
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { runCliProcess } from '../support/agent-process.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { itRuntime } from '../support/runtime.js';

const kTestMs = 45_000;
const kNotReady =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

type Raw = Record<string, unknown>;
const podOf = (name: string, spec: Raw = {}): Raw => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { suite: 'issue-13-readiness' } },
  spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }], ...spec },
});
type NodeObject = { status: { conditions: { type: string; status: string; reason: string; message: string }[] } };
type EventList = { items: { reason: string; message: string; type: string; involvedObject: { name: string } }[] };

describe.skipIf(!inject('dockerAvailable'))('issue 13: the pod network readiness of the node', () => {
  const start = useTestNodes();
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-issue13-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const post = (node: TestNode, body: unknown) =>
    node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const podNamed = async (node: TestNode, name: string): Promise<Pod | undefined> =>
    (await node.pods()).find((p) => p.metadata?.name === name);
  const condition = (n: NodeObject, type: string) => n.status.conditions.find((c) => c.type === type);

  itRuntime({
    containerd:
      "the pod network is containerd's own CNI (kts-cri0, set up by its RunPodSandbox): the agent checks no --cni-bin-dir, as the kubelet leaves CNI to a CRI runtime",
  })(
    'without the plugin binaries: Ready False and NetworkUnavailable True, pods wait with NetworkNotReady while hostNetwork pods run, all run once the plugins are there',
    async () => {
      const binDir = join(dir, 'bin');
      await mkdir(binDir);
      const node = await start({ cniBinDir: binDir });
      const n = (await (await node.api('/node')).json()) as NodeObject;
      expect(condition(n, 'Ready')).toMatchObject({ status: 'False', reason: 'KubeletNotReady' });
      expect(condition(n, 'Ready')?.message).toContain(kNotReady);
      expect(condition(n, 'Ready')?.message).toContain(`in --cni-bin-dir ${binDir}`);
      expect(condition(n, 'NetworkUnavailable')).toMatchObject({ status: 'True', reason: 'NetworkPluginNotReady' });

      expect((await post(node, podOf('pod-net'))).status).toBe(201);
      expect((await post(node, podOf('host-net', { hostNetwork: true }))).status).toBe(201);
      await waitFor(async () => (await podNamed(node, 'host-net'))?.status?.phase === 'Running', {
        timeoutMs: 30_000,
        description: 'hostNetwork pod Running',
      });
      const event = await waitFor(
        async () =>
          ((await (await node.api('/events')).json()) as EventList).items.find(
            (e) => e.involvedObject.name === 'pod-net' && e.reason === 'NetworkNotReady',
          ),
        { timeoutMs: 15_000, description: 'NetworkNotReady event' },
      );
      expect(event.type).toBe('Warning');
      expect(event.message.startsWith(`network is not ready: ${kNotReady}`)).toBe(true);
      const waiting = await podNamed(node, 'pod-net');
      expect(waiting?.status?.phase).toBe('Pending');
      expect(waiting?.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ContainerCreating');

      // The plugins arrive: the node becomes Ready (re-checked every 5 s) and the waiting pod starts.
      for (const f of await readdir('/usr/lib/cni')) await symlink(join('/usr/lib/cni', f), join(binDir, f));
      await waitFor(async () => (await podNamed(node, 'pod-net'))?.status?.phase === 'Running', {
        timeoutMs: 25_000,
        description: 'pod-net Running once the network is ready',
      });
      const ready = (await (await node.api('/node')).json()) as NodeObject;
      expect(condition(ready, 'Ready')).toMatchObject({ status: 'True', reason: 'KubeletReady' });
      expect(condition(ready, 'NetworkUnavailable')).toMatchObject({ status: 'False' });
    },
    kTestMs,
  );

  it(
    'refuses to start with a --pod-cidr that collides with the host, naming the flag',
    async () => {
      const root = join(dir, 'collide-root');
      const conf = join(dir, 'collide-conf');
      await mkdir(conf, { recursive: true });
      const r = await runCliProcess([
        '--root-dir',
        root,
        '--cni-conf-dir',
        conf,
        '--hostname-override',
        'issue13-collide',
        '--port',
        '0',
        '--pod-cidr',
        '127.0.0.0/24',
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stdout + r.stderr).toContain("--pod-cidr 127.0.0.0/24 collides with the host's loopback 127.0.0.0/8");
    },
    kTestMs,
  );

  it(
    'with --network-plugin none: no NetworkUnavailable, and a hostPort pod is refused at admission',
    async () => {
      const node = await start({ networkPlugin: 'none' });
      const n = (await (await node.api('/node')).json()) as NodeObject;
      expect(condition(n, 'NetworkUnavailable')).toBeUndefined();
      const pod = podOf('hostport', {
        containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['true'], ports: [{ containerPort: 80, hostPort: 8080 }] }],
      });
      expect((await post(node, pod)).status).toBe(201);
      const failed = await waitFor(
        async () => {
          const p = await podNamed(node, 'hostport');
          return p?.status?.phase === 'Failed' ? p : undefined;
        },
        { timeoutMs: 15_000, description: 'hostport pod Failed' },
      );
      expect(failed.status?.reason).toBe('HostPortNotSupported');
      expect(failed.status?.message).toContain('--network-plugin none');
    },
    kTestMs,
  );
});

// Tests of the pod network in the sync (issue 13): syncPod, killPod and gc on a worker handler with
// the FakeRuntime and a FakePodNetwork (test/fakes/fake-pod-network.ts) — ADD before any container
// starts, DEL before the sandbox stops, the ADD failure path, hostNetwork pods, SandboxChanged, the
// pod IP in the runtime pod and in the downward API.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { PROTOCOL_VERSION, type WorkerResult } from '../../../src/shared/thread-wire.js';
import type { GcResult, PodSyncResult, WorkerTask } from '../../../src/shared/sync-tasks.js';
import { kNoPodNetwork } from '../../../src/shared/node-settings.js';
import { newFakeRuntime, type FakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import type { ContainerRuntime } from '../../../src/workers/runtime/container/runtime.js';
import { createWorkerHandler } from '../../../src/workers/sync.worker.js';
import { criPortMappings } from '../../../src/workers/runtime/docker/docker-sandbox-network.js';
import { generatePodSandboxConfig } from '../../../src/workers/kuberuntime/sandbox-config.js';
import { newFakePodNetwork, type FakePodNetwork } from '../../fakes/fake-pod-network.js';
import { fakeWorkerBootstrap, syncPodTask } from '../../support/sync-worker.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The FakeRuntime with a pid on running containers (the netns of a sandbox is /proc/<pid>/ns/net). */
function withPids(fake: FakeRuntime): ContainerRuntime {
  return new Proxy(fake, {
    get(target, prop, receiver) {
      if (prop === 'inspectContainer') {
        return async (id: string) => {
          const d = await target.inspectContainer(id);
          return { ...d, pid: d.status === 'running' ? 4242 : 0 };
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}

function setUp(): { fake: FakeRuntime; net: FakePodNetwork; run: (t: object) => Promise<WorkerResult> } {
  const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-sync-net-'));
  dirs.push(rootDir);
  const fake = newFakeRuntime({ images: ['pause:1', 'busybox:1'] });
  const net = newFakePodNetwork(fake.calls);
  const handler = createWorkerHandler(
    fakeWorkerBootstrap(rootDir, { network: { ...kNoPodNetwork, hostPortIp: '127.0.0.1' } }),
    withPids(fake),
    { network: net },
  );
  return { fake, net, run: (t) => handler({ protocol: PROTOCOL_VERSION, ...t } as WorkerTask) };
}

function pod(over: Partial<NonNullable<Pod['spec']>> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid: 'uid-1' },
    spec: {
      restartPolicy: 'Always',
      containers: [
        {
          name: 'a',
          image: 'busybox:1',
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: 8080, hostPort: 18080, protocol: 'TCP' }],
          env: [{ name: 'MY_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } }],
        },
        { name: 'b', image: 'busybox:1', imagePullPolicy: 'IfNotPresent' },
      ],
      ...over,
    },
  } as Pod;
}

async function sync(run: (t: object) => Promise<WorkerResult>, p: Pod): Promise<PodSyncResult> {
  const r = await run(syncPodTask(p));
  if (!r.ok) throw new Error(r.error.message);
  return r.value as PodSyncResult;
}

describe('syncPod with a pod network', () => {
  it('sets the sandbox up (ADD with the hostPorts) before any container starts, and reports the pod IP', async () => {
    const { fake, net, run } = setUp();
    net.addDelayMs = 50; // an ADD that takes a while: a start that did not wait for it would come first
    const p = pod();
    p.spec!.containers.reverse();
    const r = await sync(run, p);
    const sandbox = r.runtimePod!.sandboxes[0];
    const add = fake.calls.indexOf(`net:add:${sandbox.id}`);
    expect(add).toBeGreaterThan(fake.calls.indexOf(`start:${sandbox.id}`));
    // Every container starts after the ADD finished (the first one was prepared while it ran).
    const added = fake.calls.indexOf(`net:added:${sandbox.id}`);
    for (const c of r.runtimePod!.containers) expect(fake.calls.indexOf(`start:${c.id}`)).toBeGreaterThan(added);
    expect(r.runtimePod!.containers.map((c) => c.state)).toEqual(['running', 'running']);
    expect(net.setUps[0]).toMatchObject({
      sandboxId: sandbox.id,
      podUid: 'uid-1',
      podName: 'web',
      podNamespace: 'default',
      netnsPath: '/proc/4242/ns/net',
    });
    expect(net.setUps[0].portMappings).toEqual([{ hostPort: 18080, containerPort: 8080, protocol: 'tcp', hostIP: '127.0.0.1' }]);
    expect(r.runtimePod!.podIp).toBe(net.ips.get(sandbox.id));
    expect(r.steps).toContainEqual({ action: 'CreatePodSandbox', target: 'POD', ok: true });
  });

  it('gives the downward API status.podIP the pod IP', async () => {
    const { fake, net, run } = setUp();
    const r = await sync(run, pod());
    const a = r.runtimePod!.containers.find((c) => c.name === 'a')!;
    expect(fake.specOf(a.id)?.env).toContain(`MY_IP=${net.ips.get(r.runtimePod!.sandboxes[0].id)}`);
  });

  it('on a failed ADD removes the sandbox, starts no container and fails the step with the kubelet wording', async () => {
    const { fake, net, run } = setUp();
    net.failNextAdd = 'failed to allocate for range 0: no IP addresses available in range set';
    const r = await sync(run, pod());
    const add = fake.calls.find((c) => c.startsWith('net:add:'))!;
    const id = add.slice('net:add:'.length);
    expect(fake.calls).toContain(`remove:${id}`);
    expect(fake.calls.filter((c) => c.startsWith('start:'))).toEqual([`start:${id}`]);
    expect(r.runtimePod?.sandboxes ?? []).toEqual([]);
    const message = `failed to set up sandbox container "${id}" network for pod "web": networkPlugin cni failed to set up pod "web_default" network: failed to allocate for range 0: no IP addresses available in range set`;
    expect(r.steps).toContainEqual({ action: 'CreatePodSandbox', target: 'POD', ok: false, reason: 'CreatePodSandboxError', message });
    expect(r.events).toContainEqual({
      type: 'Warning',
      reason: 'FailedCreatePodSandBox',
      message: `Failed to create pod sandbox: ${message}`,
    });
    expect(r.waiting.a?.reason).toBe('ContainerCreating');
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    // The next sync makes a new sandbox and it gets its network.
    const again = await sync(run, pod());
    expect(again.runtimePod!.podIp).not.toBe('');
  });

  it('never calls the network for a hostNetwork pod', async () => {
    const { net, run } = setUp();
    const p = pod({ hostNetwork: true });
    const r = await sync(run, p);
    expect(r.runtimePod!.containers.map((c) => c.state)).toEqual(['running', 'running']);
    await sync(run, p);
    const k = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: true, pod: p, hostIp: '127.0.0.1' });
    expect(k.ok).toBe(true);
    expect(net.calls.filter((c) => c.startsWith('net:'))).toEqual([]);
    expect(r.runtimePod!.podIp).toBe('');
  });

  it('re-creates a running sandbox without a pod IP (an ADD that never finished): SandboxChanged, attempt + 1', async () => {
    const { fake, net, run } = setUp();
    const first = await sync(run, pod());
    const old = first.runtimePod!.sandboxes[0];
    net.ips.delete(old.id); // as after a kill -9 of the agent in the middle of the ADD
    const r = await sync(run, pod());
    expect(r.events).toContainEqual({
      type: 'Normal',
      reason: 'SandboxChanged',
      message: 'Pod sandbox changed, it will be killed and re-created.',
    });
    const now = r.runtimePod!.sandboxes.find((s) => s.state === 'running')!;
    expect(now.id).not.toBe(old.id);
    expect(now.attempt).toBe(old.attempt + 1);
    expect(r.runtimePod!.podIp).toBe(net.ips.get(now.id));
    expect(fake.calls.indexOf(`net:del:${old.id}`)).toBeLessThan(fake.calls.indexOf(`stop:${old.id}`));
  });

  it('re-creates a sandbox whose network check fails (a lost network)', async () => {
    const { fake, net, run } = setUp();
    const first = await sync(run, pod());
    const old = first.runtimePod!.sandboxes[0];
    // The sandbox set up by this thread is checked quickly on the next syncs.
    const steady = await sync(run, pod());
    expect(steady.events.map((e) => e.reason)).not.toContain('SandboxChanged');
    expect(fake.calls).toContain(`net:check:${old.id}:quick`);
    net.lost.add(old.id);
    const r = await sync(run, pod());
    expect(r.events.map((e) => e.reason)).toContain('SandboxChanged');
    expect(r.runtimePod!.sandboxes.find((s) => s.state === 'running')!.id).not.toBe(old.id);
    expect(r.runtimePod!.podIp).not.toBe(first.runtimePod!.podIp);
  });

  it('checks an adopted sandbox (first seen by this thread) fully, then quickly', async () => {
    const { fake, net, run } = setUp();
    const first = await sync(run, pod());
    const id = first.runtimePod!.sandboxes[0].id;
    // A second thread (another handler on the same runtime and network state) adopts it.
    const handler2 = createWorkerHandler(
      fakeWorkerBootstrap(dirs[0], { network: { ...kNoPodNetwork, hostPortIp: '127.0.0.1' } }),
      withPids(fake),
      { network: { ...net, calls: net.calls } as FakePodNetwork },
    );
    const task = syncPodTask(pod());
    await handler2(task);
    await handler2(task);
    expect(fake.calls.filter((c) => c.startsWith(`net:check:${id}`)).slice(-2)).toEqual([`net:check:${id}:full`, `net:check:${id}:quick`]);
  });
});

describe('killPod and gc with a pod network', () => {
  it('tears the network down before the sandbox stops', async () => {
    const { fake, net, run } = setUp();
    const r = await sync(run, pod());
    const sb = r.runtimePod!.sandboxes[0].id;
    const k = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: true, pod: pod(), hostIp: '127.0.0.1' });
    expect(k.ok).toBe(true);
    expect(fake.calls.indexOf(`net:del:${sb}`)).toBeGreaterThan(-1);
    expect(fake.calls.indexOf(`net:del:${sb}`)).toBeLessThan(fake.calls.indexOf(`stop:${sb}`));
    expect(net.ips.size).toBe(0);
  });

  it('fails the kill when DEL fails, keeps the sandbox, and succeeds on the retry', async () => {
    const { fake, net, run } = setUp();
    const r = await sync(run, pod());
    const sb = r.runtimePod!.sandboxes[0].id;
    net.failDel = 'plugin type="bridge" failed (delete): netlink error';
    const k = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: true, pod: pod(), hostIp: '127.0.0.1' });
    expect(k.ok).toBe(false);
    if (!k.ok)
      expect(k.error.message).toContain('networkPlugin cni failed to teardown pod "web_default" network: plugin type="bridge" failed');
    expect(fake.calls).not.toContain(`remove:${sb}`);
    net.failDel = undefined;
    const retry = await run({ kind: 'killPod', podUid: 'uid-1', gracePeriodSeconds: 0, remove: true, pod: pod(), hostIp: '127.0.0.1' });
    expect(retry.ok).toBe(true);
    expect(fake.calls).toContain(`remove:${sb}`);
    expect(net.ips.size).toBe(0);
  });

  it('gc releases the leases of sandboxes that are gone (reconcile with the live sandbox IDs)', async () => {
    const { fake, net, run } = setUp();
    const r = await sync(run, pod());
    net.ips.set('f'.repeat(64), '10.250.0.200'); // a lease whose sandbox was removed behind the agent's back
    const g = await run({ kind: 'gc', maximumDeadContainersPerContainer: 1, activePodUids: ['uid-1'] });
    expect(g.ok).toBe(true);
    expect((g as { value: GcResult }).value.errors).toEqual([]);
    expect(fake.calls).toContain('net:reconcile:1');
    expect([...net.ips.keys()]).toEqual([r.runtimePod!.sandboxes[0].id]);
  });
});

describe('hostPorts to the pod network (generatePodSandboxConfig port_mappings → dockershim criPortMappings)', () => {
  // As upstream's generatePodSandboxConfig: the app containers' ports (init containers' are not mapped).
  it('collects every hostPort of the app containers, lower-cases the protocol and defaults the host IP', () => {
    const p = pod({
      initContainers: [{ name: 'i', image: 'busybox:1', ports: [{ containerPort: 1, hostPort: 1001 }] }],
    } as Partial<NonNullable<Pod['spec']>>);
    p.spec!.containers[1].ports = [
      { containerPort: 53, hostPort: 5353, protocol: 'UDP', hostIP: '127.0.0.2' },
      { containerPort: 54, protocol: 'UDP' },
    ];
    const config = generatePodSandboxConfig(p, 0, {
      nodeName: 'n',
      rootDir: '/var/lib/kts',
      podLogsDir: '/var/log/pods',
      clusterDomain: 'cluster.local',
      cgroupParent: '',
    });
    expect(criPortMappings(config.port_mappings, '127.0.0.1')).toEqual([
      { hostPort: 18080, containerPort: 8080, protocol: 'tcp', hostIP: '127.0.0.1' },
      { hostPort: 5353, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.2' },
    ]);
  });
});

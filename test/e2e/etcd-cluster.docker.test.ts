// End-to-end cluster mode: three agents (in-process) on one dockerd, all on the real three-member etcd cluster of tools/lib/etcd.sh — pods from etcd, status and node keys written back, etcd member failures and a full outage; plus a real agent process killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { etcdKeys } from '../../src/etcd/client.js';
import type { Node, Pod, PodStatus } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, docker, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { startMember, stopMember, useEtcd } from '../support/etcd.js';

const kRoot = join(import.meta.dirname, '../..');

function podJson(name: string, command = 'exec sleep 3600'): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', command] }] },
  });
}

/** The running app container IDs of one pod (by UID), sorted. */
async function runningContainerIds(uid: string): Promise<string[]> {
  const cs = await docker.listContainers({ filters: { label: [`io.kubernetes.pod.uid=${uid}`] } });
  return cs.map((c) => c.Id).sort();
}

describe.skipIf(!inject('dockerAvailable'))('cluster mode on a three-member etcd cluster', () => {
  // First, so that its afterAll (deleting the prefix, closing the admin client) runs after ours.
  const etcd = useEtcd({ cluster: true });
  const prefix = etcd.prefix('e2e');
  const keys = etcdKeys(prefix);
  const nodes: TestNode[] = [];
  const memberDown = new Set<string>();

  const statusOf = async (node: string, name: string): Promise<PodStatus | undefined> => {
    const s = await etcd.admin.get(keys.podStatus(node, 'default', name)).string();
    return s ? (JSON.parse(s) as PodStatus) : undefined;
  };
  const running = (node: string, name: string) =>
    waitFor(
      async () => {
        const s = await statusOf(node, name);
        return s?.phase === 'Running' && s.containerStatuses?.[0]?.ready ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: `status of ${name} on ${node} Running in etcd` },
    );
  const agentPod = async (n: TestNode, name: string): Promise<Pod | undefined> => (await n.pods()).find((p) => p.metadata?.name === name);

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      nodes.push(
        await startTestNode({
          etcdServers: etcd.servers,
          etcdPrefix: prefix,
          nodeStatusUpdateFrequencyMs: 1_000,
          nodeLeaseDurationSeconds: 10,
        } as never),
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const m of memberDown) startMember(m);
    await Promise.all(nodes.map((n) => n.cleanup()));
  }, 120_000);

  it("each agent runs only its own node's pods, writes their status and its node key, and follows put, change and delete", async () => {
    const [a, b, c] = nodes as [TestNode, TestNode, TestNode];
    for (const n of nodes)
      await etcd.admin
        .put(keys.pod(n.nodeName, 'default', `web-${n.nodeName}`))
        .value(podJson(`web-${n.nodeName}`))
        .exec();
    const statuses = await Promise.all(nodes.map((n) => running(n.nodeName, `web-${n.nodeName}`)));
    expect(statuses[0]!.containerStatuses![0]).toMatchObject({ name: 'main', ready: true, restartCount: 0 });
    expect(statuses[0]!.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');

    for (const n of nodes) {
      const pods = await n.pods();
      expect(pods.map((p) => p.metadata?.name)).toEqual([`web-${n.nodeName}`]);
      expect(pods[0]!.metadata?.annotations?.['kubernetes.io/config.source']).toBe('etcd');
      const containers = await docker.listContainers({
        all: true,
        filters: { label: [`io.kubernetes.pod.uid=${pods[0]!.metadata!.uid}`] },
      });
      expect(containers.length).toBeGreaterThanOrEqual(2); // sandbox + main
      expect(containers.every((x) => x.Labels['kubelet-ts.node-name'] === n.nodeName)).toBe(true);
      // The node key is written by the node status loop, which may come after the pod's first status write.
      const nodeText = await waitFor(
        () =>
          etcd.admin
            .get(keys.node(n.nodeName))
            .string()
            .then((t) => t ?? undefined),
        { timeoutMs: 60_000, description: `node key of ${n.nodeName}` },
      );
      const node = JSON.parse(nodeText) as Node;
      expect(node).toMatchObject({ kind: 'Node', metadata: { name: n.nodeName } });
      expect(node.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');
      expect(node.status?.nodeInfo?.kubeletVersion).toMatch(/^v/);
    }

    // Change a's pod: its container is recreated with the new command; b's and c's are untouched.
    const bIds = await runningContainerIds((await agentPod(b, `web-${b.nodeName}`))!.metadata!.uid!);
    const aUid = (await agentPod(a, `web-${a.nodeName}`))!.metadata!.uid!;
    const aBefore = (await statusOf(a.nodeName, `web-${a.nodeName}`))!.containerStatuses![0]!.containerID;
    await etcd.admin
      .put(keys.pod(a.nodeName, 'default', `web-${a.nodeName}`))
      .value(podJson(`web-${a.nodeName}`, 'echo v2; exec sleep 3600'))
      .exec();
    await waitFor(
      async () => {
        const s = await statusOf(a.nodeName, `web-${a.nodeName}`);
        const cs = s?.containerStatuses?.[0];
        return cs && cs.containerID !== aBefore && cs.ready ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, description: "a's pod recreated" },
    );
    expect((await agentPod(a, `web-${a.nodeName}`))!.metadata!.uid).toBe(aUid);
    expect(await runningContainerIds((await agentPod(b, `web-${b.nodeName}`))!.metadata!.uid!)).toEqual(bIds);

    // Delete c's pod: containers removed, status key removed.
    const cUid = (await agentPod(c, `web-${c.nodeName}`))!.metadata!.uid!;
    await etcd.admin
      .delete()
      .key(keys.pod(c.nodeName, 'default', `web-${c.nodeName}`))
      .exec();
    await waitFor(
      async () => (await runningContainerIds(cUid)).length === 0 && (await statusOf(c.nodeName, `web-${c.nodeName}`)) === undefined,
      { timeoutMs: 60_000, intervalMs: 200, description: "c's pod and status key removed" },
    );
    expect(await runningContainerIds((await agentPod(b, `web-${b.nodeName}`))!.metadata!.uid!)).toEqual(bIds);
  }, 180_000);

  it('one member killed changes nothing visible; all members down for 20 s loses no pod, restarts no container, and the watch catches up', async () => {
    const [a, b] = nodes as [TestNode, TestNode];
    const uids = await Promise.all([a, b].map(async (n) => (await agentPod(n, `web-${n.nodeName}`))!.metadata!.uid!));
    const idsBefore = await Promise.all(uids.map(runningContainerIds));
    const restartsBefore = await Promise.all(
      [a, b].map(async (n) => (await statusOf(n.nodeName, `web-${n.nodeName}`))?.containerStatuses?.[0]?.restartCount),
    );

    stopMember('c1', true);
    memberDown.add('c1');
    await etcd.admin
      .put(keys.pod(a.nodeName, 'default', 'after-kill'))
      .value(podJson('after-kill'))
      .exec();
    await running(a.nodeName, 'after-kill');
    expect(await Promise.all(uids.map(runningContainerIds))).toEqual(idsBefore);

    // A change made while the agents still reach the two surviving members, then the rest goes down
    // at once: whether or not an agent saw it before, it must be applied after the outage.
    await etcd.admin
      .put(keys.pod(b.nodeName, 'default', 'before-outage'))
      .value(podJson('before-outage'))
      .exec();
    stopMember('c2');
    memberDown.add('c2');
    stopMember('c3');
    memberDown.add('c3');
    await new Promise((r) => setTimeout(r, 5_000));
    const health = await fetch(`http://127.0.0.1:${a.agent.port}/healthz`);
    const text = await health.text();
    expect(health.status).not.toBe(200); // the agent reports etcd unreachable
    expect(text).toMatch(/etcd/);
    await new Promise((r) => setTimeout(r, 15_000));
    expect(await Promise.all(uids.map(runningContainerIds))).toEqual(idsBefore); // nothing killed while etcd was away
    for (const m of ['c1', 'c2', 'c3']) {
      startMember(m);
      memberDown.delete(m);
    }

    await running(b.nodeName, 'before-outage');
    await etcd.admin
      .put(keys.pod(a.nodeName, 'default', 'after-outage'))
      .value(podJson('after-outage'))
      .exec();
    await running(a.nodeName, 'after-outage');
    expect(await Promise.all(uids.map(runningContainerIds))).toEqual(idsBefore);
    for (const [i, n] of [a, b].entries()) {
      const s = await statusOf(n.nodeName, `web-${n.nodeName}`);
      expect(s?.containerStatuses?.[0]?.restartCount).toBe(restartsBefore[i]);
      await waitFor(async () => (await etcd.admin.get(keys.node(n.nodeName)).string()) !== null, {
        timeoutMs: 30_000,
        intervalMs: 200,
        description: `node key of ${n.nodeName} back`,
      });
    }
    await waitFor(async () => (await fetch(`http://127.0.0.1:${a.agent.port}/healthz`)).status === 200, {
      timeoutMs: 30_000,
      intervalMs: 200,
      description: 'healthz ok again',
    });
  }, 180_000);

  it('an agent process killed with SIGKILL has its node key removed when its lease expires', async () => {
    const node = `kill9-${Math.random().toString(16).slice(2, 10)}`;
    const root = await mkdtemp(join(tmpdir(), 'kubelet-ts-kill9-'));
    let child: ChildProcess | undefined = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(kRoot, 'src/main/index.ts'),
        '--runtime',
        'fake',
        '--port',
        '0',
        '--root-dir',
        root,
        '--hostname-override',
        node,
        '--etcd-servers',
        etcd.servers.join(','),
        '--etcd-prefix',
        prefix,
        '--node-lease-duration-seconds',
        '5',
        '--node-status-update-frequency',
        '1s',
      ],
      { cwd: kRoot, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    try {
      await waitFor(async () => (await etcd.admin.get(keys.node(node)).string()) !== null, {
        timeoutMs: 60_000,
        intervalMs: 200,
        description: `node key of the child agent (stderr: ${stderr.slice(-500)})`,
      });
      const leaseId = (await etcd.admin.kv.range({ key: Buffer.from(keys.node(node)) })).kvs[0]!.lease;
      const ttl = await etcd.admin.leaseClient.leaseTimeToLive({ ID: leaseId });
      expect(Number(ttl.grantedTTL)).toBe(5);
      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
      child = undefined;
      await waitFor(async () => (await etcd.admin.get(keys.node(node)).string()) === null, {
        timeoutMs: 30_000,
        intervalMs: 200,
        description: 'node key gone after the lease TTL',
      });
    } finally {
      child?.kill('SIGKILL');
      await rm(root, { recursive: true, force: true });
    }
  }, 120_000);
});

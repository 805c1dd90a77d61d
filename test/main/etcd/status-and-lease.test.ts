// Tests of src/main/status/etcd-status-writer.ts (status manager → etcd, rate-limited) and src/main/node/node-lease.ts (node registration and lease heartbeat) against the real etcd single member.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { etcdKeys } from '../../../src/etcd/client.js';
import { newEtcdStatusWriter } from '../../../src/main/status/etcd-status-writer.js';
import { newStatusManager } from '../../../src/main/status/status-manager.js';
import { newNodeLease } from '../../../src/main/node/node-lease.js';
import { buildNode, type NodeFacts, type NodeInputs } from '../../../src/main/node/node-status.js';
import type { Node, Pod, PodStatus } from '../../../src/shared/api.js';
import { useEtcd, waitForEtcd } from '../../support/etcd.js';

const logger = pino({ level: 'silent' });
// The node lease registers what src/main/node/node-status.ts buildNode builds (the one Node builder).
const facts: NodeFacts = {
  cpus: 2,
  memoryTotalBytes: 8 * 1024 ** 3,
  memoryAvailableBytes: 4 * 1024 ** 3,
  disk: { totalBytes: 100 * 1024 ** 3, availableBytes: 50 * 1024 ** 3 },
  pids: { running: 100, max: 32768 },
  osImage: 'Debian GNU/Linux 12 (bookworm)',
  kernelVersion: '6.1.0',
  architecture: 'amd64',
  operatingSystem: 'linux',
  machineID: 'm1',
  bootID: 'b1',
};
const nodeInputs = (over: Partial<NodeInputs>): NodeInputs => ({
  nodeName: 'n1',
  nodeIp: '127.0.0.1',
  maxPods: 110,
  kubeletVersion: 'v0.1.0',
  containerRuntimeVersion: '',
  health: { ok: true },
  port: 10250,
  facts,
  nowMs: Date.now(),
  ...over,
});

function pod(name: string, uid = `uid-${name}`): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'i' }] },
  };
}

describe('etcd status writer and node lease (real etcd)', () => {
  const etcd = useEtcd();

  it("writes each pod's latest status to its podstatus key, coalescing a burst to few writes, and removes the key of a deleted pod", async () => {
    const prefix = etcd.prefix('status');
    const keys = etcdKeys(prefix);
    const client = etcd.client();
    const sm = newStatusManager();
    // 2 writes per second, burst 1: a burst of 50 changes for 2 pods must coalesce.
    const writer = newEtcdStatusWriter({ nodeName: 'n1', prefix, qps: 2, burst: 1 }, { client, logger, statusManager: sm });
    etcd.defer(() => writer.stop(0));
    writer.start();
    for (let i = 0; i < 50; i++) {
      sm.setPodStatus(pod('a'), { phase: 'Pending', message: `a-${i}` });
      sm.setPodStatus(pod('b'), { phase: 'Pending', message: `b-${i}` });
    }
    sm.setPodStatus(pod('a'), { phase: 'Running' });
    await writer.idle();
    const a = JSON.parse((await etcd.admin.get(keys.podStatus('n1', 'default', 'a')).string())!) as PodStatus;
    const b = JSON.parse((await etcd.admin.get(keys.podStatus('n1', 'default', 'b')).string())!) as PodStatus;
    expect(a.phase).toBe('Running');
    expect(b.message).toBe('b-49');
    expect(writer.stats().puts).toBeLessThanOrEqual(6); // 101 changes, 2 pods: latest wins
    sm.deletePodStatus('uid-a');
    await waitForEtcd(async () => (await etcd.admin.get(keys.podStatus('n1', 'default', 'a')).string()) === null, 'status key removed');
    await writer.idle(); // the delete is counted once its request returns, which may be after etcd shows the key gone (failed once in CI)
    expect(writer.stats().deletes).toBe(1);
    writer.writeProblem('default', 'broken', 'spec.containers: Required value');
    await writer.idle();
    const broken = JSON.parse((await etcd.admin.get(keys.podStatus('n1', 'default', 'broken')).string())!) as PodStatus;
    expect(broken).toMatchObject({ reason: 'InvalidPod', message: 'spec.containers: Required value' });
  });

  it('reconcile removes the status keys of pods that no longer exist and keeps the others', async () => {
    const prefix = etcd.prefix('status');
    const keys = etcdKeys(prefix);
    const client = etcd.client();
    const writer = newEtcdStatusWriter({ nodeName: 'n1', prefix }, { client, logger, statusManager: newStatusManager() });
    etcd.defer(() => writer.stop(0));
    for (const name of ['gone', 'live'])
      await etcd.admin
        .put(keys.podStatus('n1', 'default', name))
        .value('{}')
        .exec();
    await etcd.admin
      .put(keys.podStatus('n2', 'default', 'gone'))
      .value('{}')
      .exec();
    writer.start();
    expect(await writer.reconcile((ns, name) => name === 'live')).toBe(1);
    await writer.idle();
    expect(Object.keys(await etcd.admin.getAll().prefix(keys.allPodStatusPrefix()).strings()).sort()).toEqual([
      keys.podStatus('n1', 'default', 'live'),
      keys.podStatus('n2', 'default', 'gone'),
    ]);
  });

  it('queues statuses while etcd is unreachable (latest per pod) and writes them when it returns', async () => {
    const prefix = etcd.prefix('status');
    const keys = etcdKeys(prefix);
    const proxy = await etcd.proxy();
    const client = etcd.client([proxy.url]);
    const sm = newStatusManager();
    const writer = newEtcdStatusWriter({ nodeName: 'n1', prefix }, { client, logger, statusManager: sm });
    etcd.defer(() => writer.stop(0));
    writer.start();
    await proxy.cut();
    for (let i = 0; i < 20; i++) sm.setPodStatus(pod(`p${i % 5}`), { phase: 'Pending', message: `m${i}` });
    await waitForEtcd(() => writer.healthy().ok === false, 'writer reports the failure');
    expect(writer.stats().queued).toBeLessThanOrEqual(5);
    await proxy.restore();
    await writer.idle();
    expect(writer.healthy().ok).toBe(true);
    const all = await etcd.admin.getAll().prefix(keys.podStatusPrefix('n1')).strings();
    expect(Object.keys(all)).toHaveLength(5);
    expect(JSON.parse(all[keys.podStatus('n1', 'default', 'p4')]!).message).toBe('m19');
  });

  it('registers the node on a lease, rewrites it when its conditions change, and revokes the lease on stop', async () => {
    const prefix = etcd.prefix('lease');
    const keys = etcdKeys(prefix);
    const client = etcd.client();
    let ready = true;
    const build = (): Node =>
      buildNode(
        nodeInputs({
          maxPods: 110,
          kubeletVersion: 'v0.1.0',
          containerRuntimeVersion: 'docker://20.10',
          health: { ok: ready, message: 'PLEG is not healthy' },
        }),
      );
    const lease = newNodeLease({ nodeName: 'n1', prefix, ttlSeconds: 5, updateFrequencyMs: 200 }, { client, logger, buildNode: build });
    etcd.defer(() => lease.stop());
    await lease.start();
    const node = JSON.parse((await etcd.admin.get(keys.node('n1')).string())!) as Node;
    expect(node.kind).toBe('Node');
    expect(node.metadata?.name).toBe('n1');
    expect(node.status?.conditions?.map((c) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
    expect(node.status?.capacity).toMatchObject({ pods: '110' });
    expect(node.status?.nodeInfo).toMatchObject({ kubeletVersion: 'v0.1.0', containerRuntimeVersion: 'docker://20.10' });
    const leaseId = lease.leaseId();
    const ttl = await client.leaseClient.leaseTimeToLive({ ID: leaseId, keys: true });
    expect(Number(ttl.TTL)).toBeGreaterThan(0);
    expect(ttl.keys.map((k) => k.toString())).toEqual([keys.node('n1')]);
    ready = false;
    await waitForEtcd(async () => {
      const n = JSON.parse((await etcd.admin.get(keys.node('n1')).string())!) as Node;
      return n.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'False';
    }, 'Ready=False written');
    await lease.stop();
    expect(await etcd.admin.get(keys.node('n1')).string()).toBeNull();
  });

  it('grants a new lease and registers again after an outage longer than the TTL', async () => {
    const prefix = etcd.prefix('lease');
    const keys = etcdKeys(prefix);
    const proxy = await etcd.proxy();
    const client = etcd.client([proxy.url]);
    const build = () =>
      buildNode(nodeInputs({ maxPods: 10, kubeletVersion: 'v0', containerRuntimeVersion: 'fake://0', health: { ok: true } }));
    const lease = newNodeLease({ nodeName: 'n1', prefix, ttlSeconds: 2, updateFrequencyMs: 300 }, { client, logger, buildNode: build });
    etcd.defer(() => lease.stop());
    await lease.start();
    const first = lease.leaseId();
    await proxy.cut();
    await waitForEtcd(async () => (await etcd.admin.get(keys.node('n1')).string()) === null, 'node key expired with the lease');
    expect(lease.healthy().ok).toBe(false);
    await proxy.restore();
    await waitForEtcd(async () => (await etcd.admin.get(keys.node('n1')).string()) !== null, 'node registered again');
    expect(lease.leaseId()).not.toBe(first);
    await waitForEtcd(() => lease.healthy().ok, 'heartbeat healthy again');
  });
});

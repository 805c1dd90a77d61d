// Tests of src/main/config/source-etcd.ts (pkg/kubelet/config apiserver source over etcd) against the real etcd single member started by tools/lib/etcd.sh.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { etcdKeys } from '../../../src/etcd/client.js';
import { newEtcdSource, podFromEtcd, podUidForEtcd, type EtcdPodProblem } from '../../../src/main/config/source-etcd.js';
import type { PodUpdate } from '../../../src/shared/pod-update.js';
import { useEtcd, waitForEtcd } from '../../support/etcd.js';

const logger = pino({ level: 'silent' });

function podJson(name: string, image = 'kubelet-ts/busybox:1.35', extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', ...extra },
    spec: { containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
  });
}

describe('podFromEtcd', () => {
  const where = { namespace: 'default', name: 'web', nodeName: 'n1' };
  it('gives source etcd, the node, defaults and a UID from key and create revision', () => {
    const pod = podFromEtcd({ key: '/r/pods/n1/default/web', value: podJson('web'), createRevision: '7' }, where);
    expect(pod.metadata?.uid).toBe(podUidForEtcd('/r/pods/n1/default/web', '7'));
    expect(pod.metadata?.annotations?.['kubernetes.io/config.source']).toBe('etcd');
    expect(pod.spec?.nodeName).toBe('n1');
    expect(pod.spec?.restartPolicy).toBe('Always');
    expect(podUidForEtcd('/r/pods/n1/default/web', '8')).not.toBe(pod.metadata?.uid);
  });
  it('keeps metadata.uid when set and takes the name from the key when absent', () => {
    const pod = podFromEtcd(
      {
        key: 'k',
        value: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { uid: 'u-1' },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        }),
        createRevision: '1',
      },
      where,
    );
    expect(pod.metadata?.uid).toBe('u-1');
    expect(pod.metadata?.name).toBe('web');
  });
  it('refuses a name that differs from the key, bad JSON and invalid specs, naming the problem', () => {
    expect(() => podFromEtcd({ key: 'k', value: podJson('other'), createRevision: '1' }, where)).toThrow(/does not match the key/);
    expect(() => podFromEtcd({ key: 'k', value: '{"apiVersion": "v1", ', createRevision: '1' }, where)).toThrow();
    expect(() => podFromEtcd({ key: 'k', value: podJson('web', ''), createRevision: '1' }, where)).toThrow(/image/);
  });
});

describe('etcd source (real etcd)', () => {
  const etcd = useEtcd();

  /** start builds an etcd source for `node` under `prefix` on `servers` (default: the single member), stopped after the test. */
  function start(prefix: string, node: string, servers?: string[]) {
    const client = etcd.client(servers);
    const updates: PodUpdate[] = [];
    const problems: EtcdPodProblem[] = [];
    const source = newEtcdSource(
      { nodeName: node, prefix, retryMs: 200 },
      { client, logger, onUpdate: (u) => updates.push(u), onProblem: (p) => problems.push(p) },
    );
    etcd.defer(() => source.stop());
    return { source, updates, problems };
  }

  /** The desired set the updates describe, by name → uid. */
  function desired(updates: PodUpdate[]): Map<string, string> {
    const m = new Map<string, string>();
    for (const u of updates) {
      if (u.op === 'SET') m.clear();
      for (const p of u.pods) {
        if (u.op === 'REMOVE') {
          if (m.get(p.metadata!.name!) === p.metadata!.uid) m.delete(p.metadata!.name!);
        } else m.set(p.metadata!.name!, p.metadata!.uid!);
      }
    }
    return m;
  }

  it("lists this node's pods into a SET, reports a bad value without disturbing the others, then follows puts and deletes", async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a'))
      .exec();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'bad'))
      .value('{not json')
      .exec();
    await etcd.admin
      .put(keys.pod('n2', 'default', 'other-node'))
      .value(podJson('other-node'))
      .exec();
    const { source, updates, problems } = start(prefix, 'n1');
    await source.start();
    expect(updates[0]?.op).toBe('SET');
    expect(updates[0]?.pods.map((p) => p.metadata?.name)).toEqual(['a']);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ namespace: 'default', name: 'bad' });
    expect(problems[0]!.message).toBeTruthy();

    const uidA = updates[0]!.pods[0]!.metadata!.uid!;
    await etcd.admin
      .put(keys.pod('n1', 'default', 'b'))
      .value(podJson('b'))
      .exec();
    await waitForEtcd(() => desired(updates).has('b'), 'ADD b');
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a', 'kubelet-ts/busybox:1.35', { labels: { v: '2' } }))
      .exec();
    const upd = await waitForEtcd(() => updates.find((u) => u.op === 'UPDATE'), 'UPDATE a');
    expect(upd.pods[0]!.metadata!.uid).toBe(uidA); // same key, same create revision → same UID
    expect(upd.pods[0]!.metadata!.labels).toEqual({ v: '2' });
    await etcd.admin
      .put(keys.pod('n1', 'default', 'bad'))
      .value(podJson('bad'))
      .exec();
    await waitForEtcd(() => desired(updates).has('bad'), 'fixed pod added');
    await waitForEtcd(() => problems.find((p) => p.name === 'bad' && p.message === null), 'problem cleared');
    await etcd.admin
      .delete()
      .key(keys.pod('n1', 'default', 'a'))
      .exec();
    await waitForEtcd(() => !desired(updates).has('a'), 'REMOVE a');
    expect([...desired(updates).keys()].sort()).toEqual(['b', 'bad']);
    expect(updates.every((u) => u.source === 'etcd')).toBe(true);
    expect(source.connected()).toBe(true);
  });

  it('applies every event of one revision (a prefix deleted in one transaction)', async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    const { source, updates } = start(prefix, 'n1');
    await source.start();
    for (const n of ['a', 'b', 'c'])
      await etcd.admin
        .put(keys.pod('n1', 'default', n))
        .value(podJson(n))
        .exec();
    await waitForEtcd(() => desired(updates).size === 3, 'three pods');
    await etcd.admin.delete().prefix(keys.podsPrefix('n1')).exec();
    await waitForEtcd(() => desired(updates).size === 0, 'all three removed');
    expect(updates.filter((u) => u.op === 'REMOVE')).toHaveLength(3);
  });

  it('keeps the last good pod when its value turns bad', async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a'))
      .exec();
    const { source, updates, problems } = start(prefix, 'n1');
    await source.start();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a', ''))
      .exec();
    await waitForEtcd(() => problems.find((p) => p.name === 'a' && p.message), 'problem reported');
    expect(desired(updates).has('a')).toBe(true);
    expect(updates.filter((u) => u.op === 'REMOVE')).toHaveLength(0);
  });

  it('sends no SET while etcd is unreachable at start, then lists when it answers', async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a'))
      .exec();
    const proxy = await etcd.proxy();
    await proxy.cut();
    const { source, updates } = start(prefix, 'n1', [proxy.url]);
    await source.start();
    expect(updates).toHaveLength(0);
    expect(source.connected()).toBe(false);
    await proxy.restore();
    const set = await waitForEtcd(() => updates.find((u) => u.op === 'SET'), 'SET after etcd returns');
    expect(set.pods.map((p) => p.metadata?.name)).toEqual(['a']);
  });

  it('resumes the watch after a disconnect from the last applied revision: every change made meanwhile arrives exactly once', async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    const proxy = await etcd.proxy();
    const { source, updates } = start(prefix, 'n1', [proxy.url]);
    await source.start();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a'))
      .exec();
    await waitForEtcd(() => desired(updates).has('a'), 'ADD a');
    await proxy.cut();
    await waitForEtcd(() => !source.connected(), 'disconnected');
    await etcd.admin
      .put(keys.pod('n1', 'default', 'b'))
      .value(podJson('b'))
      .exec();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'c'))
      .value(podJson('c'))
      .exec();
    await etcd.admin
      .delete()
      .key(keys.pod('n1', 'default', 'a'))
      .exec();
    await proxy.restore();
    await waitForEtcd(() => desired(updates).has('c') && !desired(updates).has('a'), 'changes made while disconnected');
    await etcd.admin
      .put(keys.pod('n1', 'default', 'd'))
      .value(podJson('d'))
      .exec();
    await waitForEtcd(() => desired(updates).has('d'), 'ADD d after the resume');
    const adds = updates.filter((u) => u.op === 'ADD').map((u) => u.pods[0]!.metadata!.name);
    expect(adds).toEqual(['a', 'b', 'c', 'd']); // none missed, none twice
    expect(updates.filter((u) => u.op === 'REMOVE')).toHaveLength(1);
    expect(updates.filter((u) => u.op === 'SET')).toHaveLength(1);
  });

  it('lists again and sends a SET when the revision it would resume from was compacted', async () => {
    const prefix = etcd.prefix('src');
    const keys = etcdKeys(prefix);
    const proxy = await etcd.proxy();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'a'))
      .value(podJson('a'))
      .exec();
    const { source, updates } = start(prefix, 'n1', [proxy.url]);
    await source.start();
    await proxy.cut();
    await waitForEtcd(() => !source.connected(), 'disconnected');
    await etcd.admin
      .delete()
      .key(keys.pod('n1', 'default', 'a'))
      .exec();
    await etcd.admin
      .put(keys.pod('n1', 'default', 'b'))
      .value(podJson('b'))
      .exec();
    const res = await etcd.admin.put(`${prefix}/filler`).value('x').exec();
    await etcd.admin.kv.compact({ revision: res.header.revision, physical: true });
    await proxy.restore();
    await waitForEtcd(() => updates.filter((u) => u.op === 'SET').length === 2, 'second SET');
    expect([...desired(updates).keys()]).toEqual(['b']);
    await etcd.admin
      .put(keys.pod('n1', 'default', 'c'))
      .value(podJson('c'))
      .exec();
    await waitForEtcd(() => desired(updates).has('c'), 'watch after the relist');
  });
});

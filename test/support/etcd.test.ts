// Tests of the etcd fixture of test/support/etcd.ts against the real etcd single member: what it deletes, when, and that it deletes nothing else.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEtcdClient, type Etcd3 } from '../../src/etcd/client.js';
import { etcdEndpoints, useEtcd } from './etcd.js';

describe('useEtcd', () => {
  let checker: Etcd3;
  const outside = `/kts-test-outside-${randomBytes(4).toString('hex')}`;
  const seen: { suitePrefix?: string; testPrefix?: string } = {};
  const order: string[] = [];
  beforeAll(() => {
    checker = newEtcdClient({ servers: [etcdEndpoints().single] });
  });
  // Registered before the inner suite's hooks, so it runs after them: the suite scope has ended.
  afterAll(async () => {
    try {
      expect(await checker.getAll().prefix(seen.suitePrefix!).keys()).toEqual([]);
      expect(await checker.get(outside).string()).toBe('kept');
    } finally {
      await checker.delete().key(outside).exec();
      checker.close();
    }
  });

  describe('one suite', () => {
    const etcd = useEtcd();
    const suitePrefix = etcd.prefix('fixture-suite');
    seen.suitePrefix = suitePrefix;

    it('hands out distinct prefixes under /kts-test/ and an admin client on the single member', async () => {
      const testPrefix = etcd.prefix('fixture-test');
      seen.testPrefix = testPrefix;
      expect(testPrefix).toMatch(/^\/kts-test\/fixture-test-[0-9a-f]{8}$/);
      expect(testPrefix).not.toBe(etcd.prefix('fixture-test'));
      expect(etcd.servers).toEqual([etcd.endpoints.single]);
      await etcd.admin.put(`${testPrefix}/k`).value('v').exec();
      await etcd.admin.put(`${suitePrefix}/k`).value('v').exec();
      await etcd.admin.put(outside).value('kept').exec();
      const client = etcd.client();
      etcd.defer(() => order.push('deferred after the client'));
      etcd.defer(async () => {
        expect(await client.get(`${testPrefix}/k`).string()).toBe('v'); // client still open, prefix not yet deleted
        order.push('deferred last');
      });
    });

    it('after a test: its prefix is deleted after its other cleanups ran (last first); the suite prefix and other keys are kept', async () => {
      expect(order).toEqual(['deferred last', 'deferred after the client']);
      expect(await etcd.admin.getAll().prefix(seen.testPrefix!).keys()).toEqual([]);
      expect(await etcd.admin.get(`${suitePrefix}/k`).string()).toBe('v');
      expect(await etcd.admin.get(outside).string()).toBe('kept');
    });
  });
});

// The etcd objects source's list retries on the agent's clock (src/main/config/source-etcd-objects.ts):
// a failed list of ConfigMaps or Secrets is tried again every retryMs until stop().
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Etcd3 } from 'etcd3';
import { newEtcdObjectSource } from '../../../src/main/config/source-etcd-objects.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

describe('etcd objects source: list retries', () => {
  it('lists each kind again every retryMs while etcd refuses, and arms nothing after stop()', async () => {
    const clock = new FakeClock();
    const lists: string[] = [];
    const client = {
      getAll: () => ({
        prefix: (p: string) => ({
          exec: () => {
            lists.push(p);
            return Promise.reject(new Error('etcd down'));
          },
        }),
      }),
    } as unknown as Etcd3;
    const source = newEtcdObjectSource({
      client,
      prefix: '/registry',
      logger: pino({ level: 'silent' }),
      onObjects: () => {},
      retryMs: 5_000,
      clock,
    });
    await source.start();
    expect(lists).toEqual(['/registry/configmaps/', '/registry/secrets/']);
    clock.step(4_999);
    await flush();
    expect(lists).toHaveLength(2);
    clock.step(1);
    await flush();
    expect(lists).toHaveLength(4);
    await source.stop();
    expect(clock.hasWaiters()).toBe(false);
    clock.step(60_000);
    await flush();
    expect(lists).toHaveLength(4);
  });
});

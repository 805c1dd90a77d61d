import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newPodWorkers, type PodWork } from '../../src/main/pod-workers.js';

const logger = pino({ level: 'silent' });

/** A controllable execute(): each call waits until the test releases it. */
function gate() {
  const calls: { uid: string; work: PodWork; release: (err?: Error) => void }[] = [];
  const execute = (uid: string, work: PodWork) => new Promise<void>((resolve, reject) => {
    calls.push({ uid, work, release: (err) => (err ? reject(err) : resolve()) });
  });
  return { calls, execute };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('pod workers', () => {
  it('runs one piece of work per pod at a time and coalesces waiting updates (latest wins)', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, execute: g.execute });
    workers.update('p1', { type: 'sync' });
    workers.update('p1', { type: 'sync' });
    workers.update('p1', { type: 'sync' });
    await tick();
    expect(g.calls).toHaveLength(1);
    g.calls[0].release();
    await tick();
    expect(g.calls).toHaveLength(2); // the three updates became one in flight + one coalesced
    g.calls[1].release();
    await tick();
    expect(g.calls).toHaveLength(2);
    expect(workers.busy('p1')).toBe(false);
  });

  it('a kill waiting is never replaced by a sync', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, execute: g.execute });
    workers.update('p1', { type: 'sync' });
    await tick();
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 30, remove: true });
    workers.update('p1', { type: 'sync' });
    g.calls[0].release();
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 30, remove: true });
  });

  it('two kills merge to the shorter grace period', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 10 }, { logger, execute: g.execute });
    workers.update('p1', { type: 'sync' });
    await tick();
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 30, remove: false });
    workers.update('p1', { type: 'kill', gracePeriodSeconds: 5, remove: true });
    g.calls[0].release();
    await tick();
    expect(g.calls[1].work).toEqual({ type: 'kill', gracePeriodSeconds: 5, remove: true });
  });

  it('different pods run in parallel up to maxInFlight, the rest in arrival order', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, execute: g.execute });
    for (const uid of ['a', 'b', 'c', 'd']) workers.update(uid, { type: 'sync' });
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b']);
    g.calls[1].release();
    await tick();
    expect(g.calls.map((c) => c.uid)).toEqual(['a', 'b', 'c']);
    expect(workers.stats().inFlight).toBe(2);
  });

  it('a failed sync is retried after the error backoff', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2, errorBackoffMs: 1 }, { logger, execute: g.execute });
    workers.update('p1', { type: 'sync' });
    await tick();
    g.calls[0].release(new Error('docker down'));
    await new Promise((r) => setTimeout(r, 20));
    expect(g.calls).toHaveLength(2);
    expect(g.calls[1].work.type).toBe('sync');
  });

  it('forget drops a waiting timer', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, execute: g.execute });
    workers.requeue('p1', 5);
    workers.forget('p1');
    await new Promise((r) => setTimeout(r, 20));
    expect(g.calls).toHaveLength(0);
  });

  it('stop waits for work in flight and refuses new work', async () => {
    const g = gate();
    const workers = newPodWorkers({ maxInFlight: 2 }, { logger, execute: g.execute });
    workers.update('p1', { type: 'sync' });
    await tick();
    let stopped = false;
    const done = workers.stop().then(() => (stopped = true));
    await tick();
    expect(stopped).toBe(false);
    workers.update('p2', { type: 'sync' });
    g.calls[0].release();
    await done;
    expect(g.calls.map((c) => c.uid)).toEqual(['p1']);
  });
});

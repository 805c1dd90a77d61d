// Issue #38 finding 7: the deadline of one runtime call (src/workers/runtime/cri/deadline.ts).
import { describe, expect, it } from 'vitest';
import { isDeadlineExceeded, withDeadline } from '../../../../src/workers/runtime/cri/deadline.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

describe('withDeadline', () => {
  it('rejects a call that never settles with a retriable "context deadline exceeded" naming the call, and aborts its signal', async () => {
    const clock = new FakeClock();
    let seen: AbortSignal | undefined;
    let err: unknown;
    void withDeadline(
      20,
      'create container k8s_x',
      (signal) => {
        seen = signal;
        return new Promise<never>(() => {});
      },
      clock,
    ).catch((e: unknown) => (err = e));
    await clock.advance(19);
    expect(err).toBeUndefined();
    expect(seen?.aborted).toBe(false);
    await clock.advance(1);
    expect(isDeadlineExceeded(err)).toBe(true);
    expect((err as Error).message).toBe('create container k8s_x: context deadline exceeded (--runtime-request-timeout 0.02s)');
    expect((err as { retriable?: boolean }).retriable).toBe(true);
    expect(seen?.aborted).toBe(true);
  });

  it('settles as the call does when it is in time (and clears its timer); 0 means no deadline (and no signal)', async () => {
    const clock = new FakeClock();
    await expect(withDeadline(10_000, 'x', async () => 7, clock)).resolves.toBe(7);
    expect(clock.hasWaiters()).toBe(false);
    await expect(
      withDeadline(10_000, 'x', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(withDeadline(0, 'x', async (signal) => signal)).resolves.toBeUndefined();
  });

  it('isDeadlineExceeded is false for other errors', () => {
    expect(isDeadlineExceeded(new Error('stop container a: no such container'))).toBe(false);
    expect(isDeadlineExceeded(undefined)).toBe(false);
  });
});

// The per-user bound of the streaming limiter and the room kept for system:masters (issue #38, F6).
import { describe, expect, it } from 'vitest';
import { kDefaultPortForwardLimits } from '../../../src/server/streaming/port-forward-ws.js';
import {
  kAdminReservedStreams,
  kDefaultStreamingOptions,
  kStreamRetryAfterSeconds,
  newIdleTimer,
  newStreamLimiter,
  type StreamRequester,
} from '../../../src/server/streaming/stream-limits.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const alice: StreamRequester = { name: 'alice', groups: ['system:authenticated'] };
const bob: StreamRequester = { name: 'bob', groups: ['system:authenticated'] };
const admin: StreamRequester = { name: 'kubelet-ts:admin', groups: ['system:masters'] };

/** fill takes `n` streams of `who`, each into its own pod (so the pod bound never speaks), and asserts each fitted. */
function fill(limiter: ReturnType<typeof newStreamLimiter>, who: StreamRequester, n: number, prefix: string): (() => void)[] {
  const held: (() => void)[] = [];
  for (let i = 0; i < n; i++) {
    expect(limiter.check(`${prefix}-${i}`, who)).toBeUndefined();
    held.push(limiter.acquire(`${prefix}-${i}`, who));
  }
  return held;
}

describe('stream limiter: per user', () => {
  it('defaults to a quarter of the node bound per user', () => {
    expect(kDefaultStreamingOptions.maxStreamsPerUser).toBe(kDefaultStreamingOptions.maxStreamsPerNode / 4);
  });

  it("refuses a user's stream past --max-streams-per-user with 429 naming the user and the bound, while another user still gets in", () => {
    const limiter = newStreamLimiter({ maxStreamsPerUser: 3, maxStreamsPerNode: 100, maxStreamsPerPod: 100 });
    const held = fill(limiter, alice, 3, 'a');
    const over = limiter.check('a-new', alice);
    expect(over).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: kStreamRetryAfterSeconds },
    });
    expect(over?.message).toContain('"alice"');
    expect(over?.message).toBe(
      'too many streams: user "alice" has 3 open, the most allowed (--max-streams-per-user=3); close one and try again',
    );
    expect(limiter.check('b-0', bob)).toBeUndefined();
    expect(limiter.openOf('alice')).toBe(3);
    held[0]();
    held[0](); // idempotent
    expect(limiter.openOf('alice')).toBe(2);
    expect(limiter.check('a-new', alice)).toBeUndefined();
  });

  it('does not bound system:masters per user', () => {
    const limiter = newStreamLimiter({ maxStreamsPerUser: 2, maxStreamsPerNode: 100, maxStreamsPerPod: 100 });
    fill(limiter, admin, 10, 'k');
    expect(limiter.openOf('kubelet-ts:admin')).toBe(0);
    expect(limiter.open).toBe(10);
  });

  it("does not hold system:masters to a pod's bound: a tenant's idle streams into its pod cannot lock the admin out of it (the third break test's finding)", () => {
    const limiter = newStreamLimiter({ maxStreamsPerUser: 64, maxStreamsPerNode: 256, maxStreamsPerPod: 16 });
    for (let i = 0; i < 16; i++) limiter.acquire('web', alice);
    expect(limiter.check('web', bob)).toMatchObject({
      code: 429,
      message: 'too many streams open into this pod (at most 16); close one and try again',
    });
    expect(limiter.check('web', admin)).toBeUndefined();
    limiter.acquire('web', admin);
    expect(limiter.check('web', admin)).toBeUndefined();
    // Without auth (in-process tests) the pod's bound holds as before.
    expect(limiter.check('web', undefined)).toMatchObject({ code: 429 });
  });

  it('keeps the last streams of the node for system:masters: users are refused once the node is within the reserve of its bound', () => {
    const node = 256;
    const limiter = newStreamLimiter({ maxStreamsPerUser: node, maxStreamsPerNode: node, maxStreamsPerPod: node });
    fill(limiter, alice, node - kAdminReservedStreams, 'a');
    const over = limiter.check('b-0', bob);
    expect(over).toMatchObject({ code: 429, reason: 'TooManyRequests' });
    expect(over?.message).toContain('system:masters');
    // The admin gets exactly the reserve, then the node bound speaks for everyone.
    fill(limiter, admin, kAdminReservedStreams, 'k');
    expect(limiter.check('k-more', admin)?.message).toContain(`at most ${node})`);
  });

  it('counts one user over all pods, and the ordinary user of the finding cannot take the node', () => {
    const limiter = newStreamLimiter();
    const held: (() => void)[] = [];
    let refused;
    for (let pod = 0; pod < 19 && !refused; pod++) {
      for (let i = 0; i < kDefaultStreamingOptions.maxStreamsPerPod; i++) {
        refused = limiter.check(`p${pod}`, alice);
        if (refused) break;
        held.push(limiter.acquire(`p${pod}`, alice));
      }
    }
    expect(held).toHaveLength(kDefaultStreamingOptions.maxStreamsPerUser);
    expect(refused?.message).toContain('--max-streams-per-user=64');
    expect(limiter.check('kube-system-pod', admin)).toBeUndefined();
  });

  it('words port-forward refusals with its own flag, and defaults port-forward to a quarter of its node bound', () => {
    expect(kDefaultPortForwardLimits.maxStreamsPerUser).toBe(kDefaultPortForwardLimits.maxStreamsPerNode / 4);
    const limiter = newStreamLimiter(
      { ...kDefaultPortForwardLimits, maxStreamsPerUser: 1 },
      { what: 'port-forward connections', userFlag: '--max-port-forwards-per-user' },
    );
    fill(limiter, alice, 1, 'a');
    expect(limiter.check('a-1', alice)?.message).toBe(
      'too many port-forward connections: user "alice" has 1 open, the most allowed (--max-port-forwards-per-user=1); close one and try again',
    );
  });

  it('without auth (no requester) applies only the pod and node bounds, as before', () => {
    const limiter = newStreamLimiter({ maxStreamsPerUser: 1, maxStreamsPerNode: 4, maxStreamsPerPod: 4 });
    fill(limiter, undefined, 4, 'x');
    expect(limiter.check('x-new')?.message).toContain('at most 4)');
  });
});

describe('idle timer (--streaming-connection-idle-timeout)', () => {
  it('fires once no touch came for idleMs, counted from the last touch, and never after stop()', () => {
    const clock = new FakeClock();
    let idle = 0;
    const t = newIdleTimer(4 * 3_600_000, () => idle++, clock);
    clock.step(3 * 3_600_000);
    t.touch(); // idle from here
    clock.step(4 * 3_600_000 - 1);
    expect(idle).toBe(0);
    clock.step(1);
    expect(idle).toBe(1);
    clock.step(10 * 3_600_000);
    expect(idle).toBe(1);
    expect(clock.hasWaiters()).toBe(false);
    const stopped = newIdleTimer(1_000, () => idle++, clock);
    stopped.stop();
    clock.step(5_000);
    expect(idle).toBe(1);
  });

  it('0 never fires and arms no timer', () => {
    const clock = new FakeClock();
    newIdleTimer(
      0,
      () => {
        throw new Error('fired');
      },
      clock,
    );
    expect(clock.hasWaiters()).toBe(false);
  });
});

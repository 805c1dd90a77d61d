// The adaptive Docker admission (src/workers/runtime/docker/adaptive-limit.ts, docker-admission.ts) against
// a simulated engine on a simulated clock: an engine with a knee of K operations (beyond K they
// queue inside it, and each one more in it makes all of them a little slower, as dockerd is slower at
// 32 concurrent starts than at 8). Behaviour asserted: the limit settles near the knee on a fast
// and on a slow engine, from below and from above, and a burst through it finishes about as fast
// as the best fixed limit, while a fixed 32 is measurably slower. Simulated milliseconds, no timers.
import { describe, expect, it } from 'vitest';
import { realClock, type Clock } from '../../../../src/shared/clock.js';
import { AdaptiveConcurrencyLimit } from '../../../../src/workers/runtime/docker/adaptive-limit.js';
import { kFixedLimitEnv, limitFromEnv, withDockerAdmission } from '../../../../src/workers/runtime/docker/docker-admission.js';
import {
  kDockerTypeLabel as kContainerTypeLabel,
  kDockerTypeSandbox as kContainerTypeSandbox,
} from '../../../../src/workers/runtime/docker/docker-cri-labels.js';
import { AgentError } from '../../../../src/shared/errors.js';
import { newFakeRuntime } from '../../../../src/workers/runtime/fake/fake-runtime.js';
import { withOverrides } from '../../../../src/workers/runtime/container/override.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

interface EngineModel {
  /** Operations the engine works on at once without queueing. */
  knee: number;
  /** Service time (simulated ms) of each op kind when nothing else runs. */
  costMs: Record<string, number>;
  /** Slowdown per operation in the engine beyond the knee (0.01 = 1 %). */
  contention: number;
}

/** A discrete-event simulation: a clock, timers, and an engine following `model`. */
class Sim {
  now = 0;
  #timers: { at: number; seq: number; fn: () => void }[] = [];
  #seq = 0;
  #inEngine = 0;
  #queue: (() => void)[] = [];
  #working = 0;
  constructor(readonly model: EngineModel) {}

  at(delayMs: number, fn: () => void): void {
    this.#timers.push({ at: this.now + delayMs, seq: this.#seq++, fn });
  }

  /** One engine call of kind `op`: resolves when the simulated engine finished it. */
  call(op: string): Promise<void> {
    return new Promise((resolve) => {
      this.#inEngine++;
      const begin = () => {
        this.#working++;
        const slow = 1 + this.model.contention * Math.max(0, this.#inEngine - this.model.knee);
        this.at(this.model.costMs[op]! * slow, () => {
          this.#working--;
          this.#inEngine--;
          this.#queue.shift()?.();
          resolve();
        });
      };
      if (this.#working < this.model.knee) begin();
      else this.#queue.push(begin);
    });
  }

  /** Runs until `done` settles: drains microtasks, then fires the earliest timer. */
  async run(done: Promise<unknown>): Promise<void> {
    let finished = false;
    void done.then(() => {
      finished = true;
    });
    for (;;) {
      for (let i = 0; i < 20; i++) await Promise.resolve();
      if (finished) return;
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers.shift();
      if (!next) throw new Error('simulation stalled: nothing scheduled and the burst is not done');
      this.now = next.at;
      next.fn();
    }
  }
}

const fast: EngineModel = { knee: 8, costMs: { create: 30, start: 120 }, contention: 0.01 };
const slow: EngineModel = { knee: 3, costMs: { create: 90, start: 400 }, contention: 0.02 };

/** The Clock of a simulation: its monotonic time is the simulated engine's (its own discrete-event timers drive it). */
const simClock = (sim: Sim): Clock => ({ ...realClock, monotonicMs: () => sim.now });

function newLimit(initial: number, sim: Sim) {
  return new AdaptiveConcurrencyLimit({ initialLimit: initial, minLimit: 1, maxLimit: 32 }, { clock: simClock(sim) });
}

describe('AdaptiveConcurrencyLimit against a simulated engine', () => {
  for (const [name, model] of [
    ['fast engine (knee 8)', fast],
    ['slow engine (knee 3)', slow],
  ] as const) {
    it(`${name}: settles near the knee from below and from above, and a burst is about as fast as at the best fixed limit`, async () => {
      const best = Math.min(...(await Promise.all([model.knee, model.knee + 2].map((k) => burstOn(new Sim(model), fixedLimit(k))))));
      const at32 = await burstOn(new Sim(model), fixedLimit(32));
      expect(at32).toBeGreaterThan(best * 1.1); // the model has a knee worth finding
      for (const initial of [2, 32]) {
        const sim = new Sim(model);
        const limit = newLimit(initial, sim);
        const r = await burstOn(sim, limit);
        expect(limit.limit, `from ${initial}`).toBeGreaterThanOrEqual(Math.max(1, Math.floor(model.knee / 2)));
        expect(limit.limit, `from ${initial}`).toBeLessThanOrEqual(model.knee * 2 + 4);
        expect(r, `from ${initial}: makespan ${r} vs best fixed ${best}`).toBeLessThanOrEqual(best * 1.1);
      }
    });
  }

  it('two threads, each with its own limit, share one engine and together stay below a fixed 32 each', async () => {
    const sim = new Sim(fast);
    const limits = [newLimit(4, sim), newLimit(4, sim)];
    const fixedBoth = await (async () => {
      const s = new Sim(fast);
      const f = [fixedLimit(32), fixedLimit(32)];
      await s.run(Promise.all(f.map((l) => drive(s, l, 150, 16))));
      return s.now;
    })();
    await sim.run(Promise.all(limits.map((l) => drive(sim, l, 150, 16))));
    expect(limits[0]!.limit + limits[1]!.limit).toBeLessThanOrEqual(fast.knee * 2 + 8);
    expect(sim.now).toBeLessThan(fixedBoth);
  });

  it('does not grow while fewer operations are asked for than it allows', async () => {
    const sim = new Sim(fast);
    const limit = newLimit(4, sim);
    await sim.run(drive(sim, limit, 200, 1));
    expect(limit.limit).toBe(4);
  });

  it('halves on overload, admits in FIFO order, and a release counts once', async () => {
    const clock = new FakeClock(0);
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 8, minLimit: 2, maxLimit: 8 }, { clock });
    const held = await Promise.all(Array.from({ length: 8 }, () => limit.acquire('start')));
    const order: number[] = [];
    const waiters = [1, 2, 3].map((i) =>
      limit.acquire('start').then((r) => {
        order.push(i);
        return r;
      }),
    );
    expect(limit.snapshot()).toMatchObject({ inFlight: 8, waiting: 3 });
    held[0]!('overload');
    held[0]!('overload'); // twice: counted once
    expect(limit.limit).toBe(4);
    for (const r of held.slice(1)) r('error');
    const woken = await Promise.all(waiters);
    expect(order).toEqual([1, 2, 3]);
    expect(limit.snapshot()).toMatchObject({ inFlight: 3, waiting: 0, limit: 4 });
    clock.step(10);
    for (const r of woken) r('ok');
    expect(limit.snapshot().inFlight).toBe(0);
  });

  it('gives a freed slot to the waiter of the highest priority, first come first served among equals', async () => {
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 1, minLimit: 1, maxLimit: 1 });
    const first = await limit.acquire('create');
    const order: string[] = [];
    const wait = (name: string, priority: number) =>
      limit.acquire('op', priority).then((release) => {
        order.push(name);
        release('ok');
      });
    const all = Promise.all([wait('low-1', 0), wait('high-1', 3), wait('mid', 1), wait('high-2', 3), wait('low-2', 0)]);
    expect(limit.snapshot()).toMatchObject({ inFlight: 1, waiting: 5 });
    first('ok');
    await all;
    expect(order).toEqual(['high-1', 'high-2', 'mid', 'low-1', 'low-2']);
    await expect(limit.acquire('op', 8)).rejects.toThrow('priority must be an integer 0..7, got 8');
    await expect(limit.acquire('op', 1.5)).rejects.toThrow(RangeError);
    expect(limit.snapshot()).toMatchObject({ inFlight: 0, waiting: 0 });
  });

  it('refuses bounds that are not integers with 1 <= min <= initial <= max', () => {
    expect(() => new AdaptiveConcurrencyLimit({ initialLimit: 0 })).toThrow(/initialLimit must be an integer >= 1, got 0/);
    expect(() => new AdaptiveConcurrencyLimit({ initialLimit: 40, maxLimit: 32 })).toThrow(/minLimit <= initialLimit <= maxLimit/);
  });
});

describe('withDockerAdmission', () => {
  it('gates create/start/remove, passes other calls through, and counts an unavailable engine as overload', async () => {
    const fake = newFakeRuntime();
    let failStart = false;
    const flaky = withOverrides(fake, {
      startContainer: async (id) => {
        if (failStart) throw new AgentError('ERR_RUNTIME_UNAVAILABLE', 'start: container runtime is unavailable', { retriable: true });
        return fake.startContainer(id);
      },
    });
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 8, minLimit: 2, maxLimit: 8 });
    const rt = withDockerAdmission(flaky, limit);
    const id = await rt.createContainer({ name: 'k8s_a', image: 'busybox', labels: {}, hostConfig: {} });
    await rt.startContainer(id);
    expect(fake.calls.filter((c) => /^(create|start)/.test(c))).toHaveLength(2);
    expect(limit.snapshot()).toMatchObject({ samples: 2, inFlight: 0 });
    failStart = true;
    await expect(rt.startContainer(id)).rejects.toThrow(/unavailable/);
    expect(limit.limit).toBe(4);
    await expect(rt.createContainer({ name: 'k8s_a', image: 'busybox', labels: {}, hostConfig: {} })).rejects.toThrow();
    expect(limit.limit).toBe(4); // a name conflict is neither a sample nor overload
    await rt.removeContainer(id);
    expect(limit.snapshot()).toMatchObject({ inFlight: 0, samples: 3 });
  });

  it('a call the engine never answers gives its slot back after maxHoldMs and the others go on', async () => {
    const fake = newFakeRuntime();
    const hung = withOverrides(fake, { startContainer: () => new Promise<void>(() => {}) });
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 2, minLimit: 1, maxLimit: 2 });
    const clock = new FakeClock();
    const rt = withDockerAdmission(hung, limit, 50, clock);
    void rt.startContainer('a');
    void rt.startContainer('b');
    expect(limit.snapshot()).toMatchObject({ inFlight: 2 });
    let id: string | undefined;
    const created = rt.createContainer({ name: 'k8s_after', image: 'busybox', labels: {}, hostConfig: {} }).then((x) => (id = x));
    await clock.advance(49);
    expect(limit.snapshot()).toMatchObject({ inFlight: 2, waiting: 1 }); // not a millisecond early
    await clock.advance(1);
    expect(id).toBeTruthy(); // admitted and created at maxHoldMs on the clock
    await created;
    expect(limit.snapshot()).toMatchObject({ inFlight: 0, limit: 1 });
  });

  it('the slots held at once share one hold timer (not one each), none is left once they are released, and a free slot is taken without waiting', async () => {
    const fake = newFakeRuntime();
    const gates: Array<() => void> = [];
    const gated = withOverrides(fake, { startContainer: () => new Promise<void>((resolve) => gates.push(resolve)) });
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 8, minLimit: 8, maxLimit: 8 });
    const clock = new FakeClock();
    const rt = withDockerAdmission(gated, limit, 30_000, clock);
    const starts = Array.from({ length: 6 }, (_, i) => rt.startContainer(`c${i}`));
    // Admitted in the same turn as the calls: no wait for a free slot.
    expect(limit.snapshot()).toMatchObject({ inFlight: 6, waiting: 0 });
    expect(gates).toHaveLength(6);
    expect(clock.timers.size).toBe(1);
    for (const open of gates) open();
    await Promise.all(starts);
    expect(limit.snapshot()).toMatchObject({ inFlight: 0, samples: 6 });
    expect(clock.hasWaiters()).toBe(false);
    const release = limit.tryAcquire('create', 2);
    expect(release).toBeTypeOf('function');
    expect(limit.snapshot().inFlight).toBe(1);
    release!('ok');
    expect(() => limit.tryAcquire('create', 8)).toThrow(RangeError);
  });

  it('admits the call furthest along in a pod start first: container start, container create, sandbox start, sandbox create', async () => {
    const fake = newFakeRuntime();
    const reached: string[] = [];
    const names = new Map<string, string>();
    let unblock!: () => void;
    const blocker = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    const observed = withOverrides(fake, {
      createContainer: async (spec) => {
        reached.push(`create ${spec.name}`);
        if (spec.name === 'k8s_blocker') await blocker;
        const id = await fake.createContainer(spec);
        names.set(id, spec.name);
        return id;
      },
      startContainer: async (id) => {
        reached.push(`start ${names.get(id)}`);
        return fake.startContainer(id);
      },
    });
    const limit = new AdaptiveConcurrencyLimit({ initialLimit: 1, minLimit: 1, maxLimit: 1 });
    const rt = withDockerAdmission(observed, limit);
    const sandbox = (name: string) => ({ name, image: 'pause', labels: { [kContainerTypeLabel]: kContainerTypeSandbox }, hostConfig: {} });
    const container = (name: string) => ({ name, image: 'busybox', labels: { [kContainerTypeLabel]: 'container' }, hostConfig: {} });
    // Made before the slot is held: one sandbox and one container to start later.
    const sbA = await rt.createContainer(sandbox('k8s_POD_a'));
    const cA = await rt.createContainer(container('k8s_main_a'));
    reached.length = 0;
    const holding = rt.createContainer(container('k8s_blocker'));
    const queued = Promise.all([
      rt.createContainer(sandbox('k8s_POD_b')),
      rt.startContainer(sbA),
      rt.createContainer(container('k8s_main_b')),
      rt.startContainer(cA),
    ]);
    expect(limit.snapshot()).toMatchObject({ inFlight: 1, waiting: 4 });
    unblock();
    await Promise.all([holding, queued]);
    expect(reached).toEqual(['create k8s_blocker', 'start k8s_main_a', 'create k8s_main_b', 'start k8s_POD_a', 'create k8s_POD_b']);
  });

  it(`${kFixedLimitEnv} fixes the limit; a bad value names the variable`, () => {
    expect(limitFromEnv({ [kFixedLimitEnv]: '6' }).snapshot()).toMatchObject({ limit: 6 });
    expect(limitFromEnv({}).limit).toBe(4);
    expect(() => limitFromEnv({ [kFixedLimitEnv]: 'many' })).toThrow(`${kFixedLimitEnv} must be an integer >= 1, got "many"`);
  });
});

function fixedLimit(n: number) {
  return new AdaptiveConcurrencyLimit({ initialLimit: n, minLimit: n, maxLimit: n });
}

async function burstOn(sim: Sim, limit: AdaptiveConcurrencyLimit): Promise<number> {
  await sim.run(drive(sim, limit, 300, 32));
  return sim.now;
}

/** `syncs` concurrent loops making `pods` create/start/create/start sequences through `limit` on `sim`. */
function drive(sim: Sim, limit: AdaptiveConcurrencyLimit, pods: number, syncs: number): Promise<unknown> {
  let next = 0;
  return Promise.all(
    Array.from({ length: syncs }, async () => {
      while (next < pods) {
        next++;
        for (const op of ['create', 'start', 'create', 'start']) {
          const release = await limit.acquire(op);
          await sim.call(op);
          release('ok');
        }
      }
    }),
  );
}

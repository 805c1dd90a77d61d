import { describe, expect, it } from 'vitest';
import { parseFakeFailureRates, parseFakeLatencies } from '../../../../src/shared/fake-runtime-tuning.js';
import { newFakeRuntime } from '../../../../src/workers/runtime/fake/fake-runtime.js';
import { withFakeTuning } from '../../../../src/workers/runtime/fake/fake-tuning.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

const spec = (name: string, uid = 'u1') => ({ name, image: 'img', labels: { 'io.kubernetes.pod.uid': uid }, hostConfig: {} });

describe('fake runtime tuning', () => {
  it('parses --fake-runtime-latency and --fake-runtime-failure-rate', () => {
    expect(parseFakeLatencies('create=5ms, start=1s')).toEqual({ create: 5, start: 1000 });
    expect(parseFakeFailureRates('start=0.25')).toEqual({ start: 0.25 });
    expect(() => parseFakeLatencies('boot=5ms')).toThrow(/--fake-runtime-latency: "boot=5ms" must be <op>=<value>/);
    expect(() => parseFakeFailureRates('start=2')).toThrow(/start=2 must be a number in 0..1/);
  });

  it('fails an operation at its failure rate with a retriable error and otherwise passes through', async () => {
    const fake = newFakeRuntime();
    let r = 0.9;
    const rt = withFakeTuning(fake, { failureRate: { start: 0.5 } }, () => r);
    const id = await rt.createContainer(spec('a'));
    await rt.startContainer(id); // 0.9 >= 0.5: passes
    r = 0.1;
    const fresh = await rt.createContainer(spec('b'));
    await expect(rt.startContainer(fresh)).rejects.toMatchObject({ code: 'ERR_RUNTIME', retriable: true });
    expect((await rt.inspectContainer(id)).running).toBe(true);
    expect((await rt.inspectContainer(fresh)).running).toBe(false);
  });

  it('waits each operation its latency on the clock it is given, then runs it', async () => {
    const clock = new FakeClock();
    const rt = withFakeTuning(newFakeRuntime(), { latencyMs: { create: 30 } }, Math.random, clock);
    let id: string | undefined;
    const created = rt.createContainer(spec('a')).then((x) => (id = x));
    await clock.advance(29);
    expect(id).toBeUndefined();
    await clock.advance(1);
    expect(id).toBeTruthy(); // created on the clock's time, not after a real wait
    await created;
    expect(await rt.listContainers({ labels: [] })).toHaveLength(1); // list has no latency: no wait
  });

  it('returns the runtime itself when nothing is tuned', () => {
    const fake = newFakeRuntime();
    expect(withFakeTuning(fake, {})).toBe(fake);
    expect(withFakeTuning(fake, undefined)).toBe(fake);
  });

  it('the fake finds containers by name and by pod UID through its indexes', async () => {
    const fake = newFakeRuntime({ recordCalls: false });
    const a = await fake.createContainer(spec('a', 'u1'));
    await fake.createContainer(spec('b', 'u2'));
    await expect(fake.createContainer(spec('a', 'u3'))).rejects.toMatchObject({ code: 'ERR_ALREADY_EXISTS' });
    expect((await fake.listContainers({ labels: ['io.kubernetes.pod.uid=u1'] })).map((c) => c.id)).toEqual([a]);
    expect((await fake.inspectContainer('a')).id).toBe(a);
    await fake.removeContainer(a);
    expect(await fake.listContainers({ labels: ['io.kubernetes.pod.uid=u1'] })).toEqual([]);
    await fake.createContainer(spec('a', 'u1')); // the name is free again
    expect(fake.calls).toEqual([]);
  });
});

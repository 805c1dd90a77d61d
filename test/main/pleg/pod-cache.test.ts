// The runtime pod cache (src/main/pleg/pod-cache.ts): generations instead of a per-sync replay of
// exits. A sync's read is stored "as of" the generation it was taken at; a death observed from an
// event after that generation is never undone by the older read.
import { describe, expect, it } from 'vitest';
import { newPodCache } from '../../../src/main/pleg/pod-cache.js';
import type { PodLifecycleEvent } from '../../../src/main/pleg/generic-pleg.js';
import type { Pod } from '../../../src/shared/api.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';

const running = (id: string, name = 'main'): RuntimeContainer => ({
  id,
  name,
  sandbox: false,
  attempt: 0,
  state: 'running',
  hash: 'h',
  restartCount: 0,
  image: 'i',
  imageId: '',
  createdAtMs: 1,
  startedAtMs: 1,
  finishedAtMs: 0,
  exitCode: 0,
  reason: '',
  message: '',
  sandboxId: 's',
});
const runtimePod = (...containers: RuntimeContainer[]): RuntimePod => ({
  uid: 'u',
  name: 'p',
  namespace: 'default',
  sandboxes: [{ ...running('s', 'POD'), sandbox: true, sandboxId: '' }],
  containers,
  podIp: '',
  terminationGracePeriodSeconds: 30,
});
const pod = (restartPolicy = 'Always'): Pod =>
  ({
    metadata: { name: 'p', uid: 'u' },
    spec: {
      restartPolicy,
      containers: [
        { name: 'main', image: 'i' },
        { name: 'side', image: 'i' },
      ],
    },
  }) as Pod;
const died = (containerId: string, exitCode = 1): PodLifecycleEvent => ({
  uid: 'u',
  type: 'ContainerDied',
  containerId,
  exit: { exitCode, finishedAtMs: 5, oomKilled: false },
});
const started = (containerId: string): PodLifecycleEvent => ({ uid: 'u', type: 'ContainerStarted', containerId });

describe('pod cache', () => {
  it('is empty and not current for an unknown pod', () => {
    const cache = newPodCache();
    expect(cache.get('u')).toBeNull();
    expect(cache.snapshot('u')).toEqual({ runtimePod: null, generation: 0, current: false, settled: false });
  });

  it('is current after a read until an event comes; any event makes it stale', () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(running('c1')), cache.snapshot('u').generation);
    expect(cache.snapshot('u').current).toBe(true);
    expect(cache.observeEvent('u', pod(), started('c2'))).toBe(false);
    expect(cache.snapshot('u')).toMatchObject({ current: false, generation: 1 });
    cache.set('u', runtimePod(running('c1'), running('c2', 'side')), 1);
    expect(cache.snapshot('u').current).toBe(true);
  });

  it('stays current for a ContainerStarted it already shows running (the sync read it back), and only then', () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(running('c1')), 0);
    expect(cache.observeEvent('u', pod(), started('c1'))).toBe(false);
    expect(cache.observeEvent('u', pod(), started('s'))).toBe(false);
    expect(cache.snapshot('u')).toMatchObject({ current: true, generation: 0 });
    // Shown exited (a death applied from its event): the start of the same ID is news — stale.
    cache.set('u', runtimePod({ ...running('c1'), state: 'exited' }), 0);
    cache.observeEvent('u', pod(), started('c1'));
    expect(cache.snapshot('u')).toMatchObject({ current: false, generation: 1 });
    // An entry already stale stays so (its view may predate the start).
    cache.observeEvent('u', pod(), started('c1'));
    expect(cache.snapshot('u').generation).toBe(2);
  });

  it('takes a read made while only ContainerStarted events came as current when it shows them running', () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(), 0);
    const g = cache.snapshot('u').generation;
    // A sync in flight starts c1 and c2; their events come before it reads back.
    cache.observeEvent('u', pod(), started('c1'));
    cache.observeEvent('u', pod(), started('c2'));
    cache.set('u', runtimePod(running('c1'), running('c2', 'side')), g);
    expect(cache.snapshot('u')).toMatchObject({ current: true, generation: 2 });
    // A read that misses one of the started containers is not.
    const g2 = cache.snapshot('u').generation;
    cache.observeEvent('u', pod(), started('c3'));
    cache.set('u', runtimePod(running('c1')), g2);
    expect(cache.snapshot('u').current).toBe(false);
    // Nor one taken while another kind of event came.
    const g3 = cache.snapshot('u').generation;
    cache.observeEvent('u', pod(), started('c4'));
    cache.observeEvent('u', pod(), { uid: 'u', type: 'ContainerRemoved', containerId: 'c0' });
    cache.set('u', runtimePod(running('c4')), g3);
    expect(cache.snapshot('u').current).toBe(false);
  });

  it("is settled only while current and as the read's sync said, and never with a death applied on top of the read", () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(), 0, true);
    const g = cache.snapshot('u').generation;
    // The start sync's own containers: their events come before its read-back is stored.
    cache.observeEvent('u', pod(), started('c1'));
    expect(cache.snapshot('u')).toMatchObject({ current: false, settled: false });
    cache.set('u', runtimePod(running('c1')), g, true);
    expect(cache.snapshot('u')).toMatchObject({ current: true, settled: true });
    // A start it already shows running says nothing new: still settled.
    cache.observeEvent('u', pod(), started('c1'));
    expect(cache.snapshot('u').settled).toBe(true);
    // A read whose sync did not say so is not.
    cache.set('u', runtimePod(running('c1')), cache.snapshot('u').generation);
    expect(cache.snapshot('u')).toMatchObject({ current: true, settled: false });
    // Any other event makes the entry stale, so not settled.
    cache.set('u', runtimePod(running('c1')), cache.snapshot('u').generation, true);
    const before = cache.snapshot('u').generation;
    cache.observeEvent('u', pod(), died('c1'));
    expect(cache.snapshot('u')).toMatchObject({ current: false, settled: false });
    // An older read stored with the death applied on top is not what its sync judged.
    cache.set('u', runtimePod(running('c1')), before, true);
    expect(cache.snapshot('u').settled).toBe(false);
  });

  it("applies a restarting container's death from its event at once (publish it), but not one that ends the container", () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(running('c1')), 0);
    expect(cache.observeEvent('u', pod('Always'), died('c1'))).toBe(true);
    expect(cache.get('u')!.containers[0]).toMatchObject({ state: 'exited', exitCode: 1, reason: 'Error' });

    const never = newPodCache();
    never.set('u', runtimePod(running('c1')), 0);
    expect(never.observeEvent('u', pod('Never'), died('c1'))).toBe(false);
    expect(never.get('u')!.containers[0].state).toBe('running');
  });

  it("keeps a death seen after a sync began when that sync's older read comes back showing the container running", () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(running('c1')), 0);
    const before = cache.snapshot('u'); // a sync starts here, reading at generation 0
    cache.observeEvent('u', pod(), died('c1')); // the container dies while the sync runs
    // The sync's read predates the death; it also started a new container the cache did not know.
    cache.set('u', runtimePod(running('c1'), running('c2', 'side')), before.generation);
    const after = cache.get('u')!;
    expect(after.containers.find((c) => c.id === 'c1')).toMatchObject({ state: 'exited', exitCode: 1 });
    expect(after.containers.find((c) => c.id === 'c2')?.state).toBe('running');
    expect(cache.snapshot('u').current).toBe(false); // an event came after the read
  });

  it("a restartPolicy Never pod: a start sync whose read predates its container's exit leaves the entry stale, so the sync the exit asked reads Docker again (issue #43)", () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(), 0);
    const start = cache.snapshot('u'); // the start sync reads at generation 0
    // It starts c1, which exits at once: both events come while the sync still runs.
    cache.observeEvent('u', pod('Never'), started('c1'));
    expect(cache.observeEvent('u', pod('Never'), died('c1'))).toBe(false); // a final death waits for the sync's termination message
    // The sync's read-back, taken before the exit, shows c1 running; it is stored after the events.
    cache.set('u', runtimePod(running('c1')), start.generation);
    expect(cache.snapshot('u')).toMatchObject({ current: false, generation: 2 });
    // The next sync (asked by the exit) re-reads and its read, at generation 2, is taken as it is.
    cache.set('u', runtimePod({ ...running('c1'), state: 'exited', exitCode: 1 }), cache.snapshot('u').generation);
    expect(cache.snapshot('u').current).toBe(true);
    expect(cache.get('u')!.containers[0].state).toBe('exited');
  });

  it('keeps a death of a container the cache did not yet hold (created by the sync in flight)', () => {
    const cache = newPodCache();
    const before = cache.snapshot('u');
    cache.observeEvent('u', pod(), died('c9'));
    cache.set('u', runtimePod(running('c9')), before.generation);
    expect(cache.get('u')!.containers[0]).toMatchObject({ id: 'c9', state: 'exited' });
  });

  it("takes a read at or after the death's generation as it is (the read saw it)", () => {
    const cache = newPodCache();
    cache.set('u', runtimePod(running('c1')), 0);
    cache.observeEvent('u', pod(), died('c1'));
    // A read taken after the event: the container was restarted meanwhile, the read is the truth.
    cache.set('u', runtimePod({ ...running('c1'), state: 'running', startedAtMs: 9 }), cache.snapshot('u').generation);
    expect(cache.get('u')!.containers[0].state).toBe('running');
    expect(cache.snapshot('u').current).toBe(true);
  });

  it('forgets a deleted pod and lists the cached runtime pods', () => {
    const cache = newPodCache();
    cache.set('a', runtimePod(running('c1')), 0);
    cache.set('b', null, 0);
    expect([...cache.runtimePods()]).toHaveLength(2);
    cache.delete('a');
    expect(cache.get('a')).toBeNull();
    expect([...cache.runtimePods()]).toEqual([null]);
  });
});

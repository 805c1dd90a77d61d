// SyncLoop ADD / UPDATE / REMOVE (src/main/lifecycle/sync-handler.ts) over the real PodConfig merge and
// pod manager, with the pod workers and the prober faked: a big update is handled in chunks, one
// per macrotask, strictly in arrival order; small ones with nothing queued are handled at once.
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newPodConfig } from '../../../src/main/config/pod-config.js';
import { newEventRecorder } from '../../../src/main/events/recorder.js';
import type { PodWork, PodWorkers } from '../../../src/main/lifecycle/pod-workers.js';
import { kKillOldCopyWork, newPodStartGate, type PodStartGate } from '../../../src/main/lifecycle/pod-start-gate.js';
import { kChangesPerChunk, newSyncHandler, type SyncHandler } from '../../../src/main/lifecycle/sync-handler.js';
import { shortenDeletion } from '../../../src/main/pod/graceful-deletion.js';
import { newPodAdmission, type PodAdmission } from '../../../src/main/pod/pod-admission.js';
import { newPodManager, type PodManager } from '../../../src/main/pod/pod-manager.js';
import type { ProberManager } from '../../../src/main/prober/prober-manager.js';
import { newStatusManager, type StatusManager } from '../../../src/main/status/status-manager.js';
import type { Pod } from '../../../src/shared/api.js';
import type { Logger } from '../../../src/shared/logging.js';

function pod(name: string, uid = `uid-${name}`): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'img:1' }] },
  };
}
const pods = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => pod(`${prefix}-${i}`));
const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Harness {
  lifecycle: SyncHandler;
  /** The pod workers' start gate (pod-start-gate.ts) over the faked pod workers. */
  gate: PodStartGate;
  admission: PodAdmission;
  /** A repeated DELETE as the intake sends it (pod/graceful-deletion.ts shortenDeletion), over this harness's parts. */
  shorten: (uid: string, gracePeriodSeconds: number | undefined) => Pod | undefined;
  /** UIDs the pod workers were asked to kill with remove (what shouldPodContentBeRemoved answers). */
  removing: Set<string>;
  podManager: PodManager;
  statusManager: StatusManager;
  /** Every piece of work asked of the pod workers, in order, as `<type> <uid>`. */
  work: string[];
}

function harness(
  oldRuntimeCopies?: (fullName: string, uid: string) => string[],
  maxPods = 100_000,
  logger: Logger = pino({ level: 'silent' }),
): Harness {
  const work: string[] = [];
  const removing = new Set<string>();
  const podManager = newPodManager();
  const update = (uid: string, w: PodWork) => {
    work.push(`${w.type} ${uid}`);
    if (w.type === 'kill' && w.remove) removing.add(uid);
  };
  const gate = newPodStartGate(
    { logger, podManager, runtime: oldRuntimeCopies && { oldRuntimeCopies } },
    { shouldPodContentBeRemoved: (uid) => removing.has(uid), killOldCopy: (uid) => update(uid, kKillOldCopyWork) },
  );
  const podWorkers: Pick<PodWorkers, 'update' | 'shouldPodContentBeRemoved' | 'setTerminated' | 'startGate'> = {
    update,
    shouldPodContentBeRemoved: (uid) => removing.has(uid),
    setTerminated: () => {},
    startGate: gate,
  };
  const prober = { removePod: () => {} } as unknown as ProberManager;
  const statusManager = newStatusManager();
  const admission = newPodAdmission({ capacity: { pods: maxPods, cpuMilli: 1_000_000, memoryBytes: 2 ** 50 } });
  const lifecycle = newSyncHandler({
    logger,
    config: newPodConfig(['file', 'api']),
    podManager,
    statusManager,
    events: newEventRecorder({ nodeName: 'n' }, { logger }),
    podWorkers,
    prober,
    admission,
    statusPublisher: { publish: (r) => statusManager.setPodStatus(r.pod, { phase: 'Pending' }) },
  });
  const shorten = (uid: string, grace: number | undefined) =>
    shortenDeletion({ logger, podManager, statusManager, podWorkers }, uid, grace);
  return { lifecycle, gate, admission, shorten, podManager, statusManager, work, removing };
}
const count = (pm: PodManager) => [...pm.all()].length;

describe('sync handler: handling config updates', () => {
  it('logs SyncLoop ADD, UPDATE and REMOVE at debug, as the kubelet at V(2): nothing at the default info level (issue #42)', async () => {
    const lines = (level: string) => {
      const out: string[] = [];
      const logger = pino({ level }, { write: (l: string) => void out.push(JSON.parse(l).msg) });
      const h = harness(undefined, 100_000, logger);
      const [pod] = pods(1, 'logged');
      void h.lifecycle.handleUpdate({ op: 'ADD', source: 'file', pods: [pod] });
      void h.lifecycle.handleUpdate({
        op: 'UPDATE',
        source: 'file',
        pods: [{ ...pod, metadata: { ...pod.metadata, labels: { a: 'b' } } }],
      });
      void h.lifecycle.handleUpdate({ op: 'REMOVE', source: 'file', pods: [pod] });
      return out.filter((m) => /^SyncLoop (ADD|UPDATE|REMOVE)$/.test(m));
    };
    expect(lines('info')).toEqual([]);
    expect(lines('debug')).toEqual(['SyncLoop ADD', 'SyncLoop UPDATE', 'SyncLoop REMOVE']);
  });

  it('handles a small update with nothing queued before handleUpdate returns', async () => {
    const h = harness();
    const done = h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: pods(3, 'small') });
    expect(count(h.podManager)).toBe(3);
    expect(h.work).toEqual(['sync uid-small-0', 'sync uid-small-1', 'sync uid-small-2']);
    expect(h.lifecycle.pending).toBe(false);
    await done;
  });

  it('handles a 1,000-pod SET across several macrotasks, in order, and resolves when all is handled', async () => {
    const h = harness();
    const set = pods(1000, 'big');
    let resolved = false;
    const done = h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: set }).then(() => {
      resolved = true;
    });
    // Merged now, handled from the next macrotask on, one chunk each: the thread is given back in between.
    expect(count(h.podManager)).toBe(0);
    expect(h.lifecycle.pending).toBe(true);
    await macrotask();
    const first = count(h.podManager);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(kChangesPerChunk);
    await macrotask();
    const second = count(h.podManager);
    expect(second).toBeGreaterThan(first);
    expect(second).toBeLessThan(1000);
    expect(resolved).toBe(false);
    await done;
    expect(count(h.podManager)).toBe(1000);
    expect(h.lifecycle.pending).toBe(false);
    expect(h.work).toEqual(set.map((p) => `sync ${p.metadata!.uid}`));
  });

  it('applies an update that arrives while a big one is being handled only after it, even a small one', async () => {
    const h = harness();
    const set = pods(1000, 'first');
    const order: string[] = [];
    const first = h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: set }).then(() => order.push('first'));
    // A small ADD from another source, and the removal of a pod of the big SET.
    const late = pod('late');
    const second = h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [late] }).then(() => order.push('second'));
    expect(h.podManager.get('uid-late')).toBeUndefined();
    const third = h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: set.slice(1) }).then(() => order.push('third'));
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
    expect(h.work).toEqual([...set.map((p) => `sync ${p.metadata!.uid}`), 'sync uid-late', 'kill uid-first-0']);
    expect(h.removing.has('uid-first-0')).toBe(true);
  });

  it('settled() resolves once everything queued so far is handled', async () => {
    const h = harness();
    void h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: pods(700, 'a') });
    void h.lifecycle.handleUpdate({ op: 'SET', source: 'api', pods: pods(300, 'b') });
    await h.lifecycle.settled();
    expect(count(h.podManager)).toBe(1000);
    expect(h.lifecycle.pending).toBe(false);
  });

  it('stop() drops the change sets not yet handled, resolves their promises and ignores later updates', async () => {
    const h = harness();
    const done = h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: pods(1000, 'x') });
    const queued = h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [pod('y')] });
    await macrotask();
    const handled = count(h.podManager);
    expect(handled).toBeGreaterThan(0);
    expect(handled).toBeLessThan(1000);
    h.lifecycle.stop();
    await Promise.all([done, queued]);
    await macrotask();
    await macrotask();
    expect(count(h.podManager)).toBe(handled);
    expect(h.lifecycle.pending).toBe(false);
    await h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [pod('after-stop')] });
    expect(h.podManager.get('uid-after-stop')).toBeUndefined();
    expect(h.work).toHaveLength(handled);
  });

  it('a pod whose name an old runtime copy holds (edited while the agent was down) waits until that copy is killed and gone', async () => {
    // The PLEG's index of copies found at start; the pod syncer tells it a copy is gone (observePodRemoved) before the pod workers open the gate.
    const gone = new Set<string>();
    const h = harness((fullName, uid) => (fullName === 'default/edited' && uid !== 'uid-old' && !gone.has('uid-old') ? ['uid-old'] : []));
    await h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: [pod('edited', 'uid-new'), pod('other')] });
    expect(h.work).toEqual(['kill uid-old', 'sync uid-other']);
    expect(h.podManager.get('uid-new')).toBeUndefined();
    h.gate.podTerminated('uid-unrelated');
    expect(h.podManager.get('uid-new')).toBeUndefined();
    gone.add('uid-old');
    h.gate.podTerminated('uid-old');
    expect(h.podManager.get('uid-new')).toBeDefined();
    expect(h.work).toEqual(['kill uid-old', 'sync uid-other', 'sync uid-new']);
  });
});

describe('sync handler: free pod slots (issue #11 finding 4)', () => {
  it('counts --max-pods minus admitted active pods and queued ADDs, and gives a slot back on release', async () => {
    const h = harness(undefined, 200);
    expect(h.lifecycle.freePodSlots()).toBe(200);
    await h.lifecycle.handleUpdate({ op: 'SET', source: 'file', pods: pods(3, 'small') });
    expect(h.lifecycle.freePodSlots()).toBe(197);
    // A big update is queued: its ADDs count before they are handled.
    const done = h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: pods(120, 'big') });
    expect(count(h.podManager)).toBe(3);
    expect(h.lifecycle.freePodSlots()).toBe(77);
    await done;
    expect(h.lifecycle.freePodSlots()).toBe(77);
    h.admission.release(h.podManager.get('uid-small-0')!);
    expect(h.lifecycle.freePodSlots()).toBe(78);
  });
});

describe('sync handler and graceful deletion: another DELETE of a terminating pod (issue #11 finding 6)', () => {
  const deleted = (p: Pod, grace: number): Pod => ({
    ...p,
    metadata: { ...p.metadata, deletionTimestamp: '2026-12-01T00:00:00Z', deletionGracePeriodSeconds: grace },
  });

  it('shortens the grace period shown and asks the pod workers for a kill with it; a longer or absent one changes nothing', async () => {
    const h = harness();
    const p = { ...pod('slow'), spec: { ...pod('slow').spec!, terminationGracePeriodSeconds: 300 } };
    await h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [p] });
    await h.lifecycle.handleUpdate({ op: 'REMOVE', source: 'api', pods: [deleted(p, 300)] });
    expect(h.work).toEqual(['sync uid-slow', 'kill uid-slow']);

    expect(h.shorten('uid-slow', undefined)?.metadata?.deletionGracePeriodSeconds).toBe(300);
    expect(h.shorten('uid-slow', 400)?.metadata?.deletionGracePeriodSeconds).toBe(300);
    expect(h.work).toHaveLength(2);
    const shortened = h.shorten('uid-slow', 0);
    expect(shortened?.metadata).toMatchObject({ deletionGracePeriodSeconds: 0, deletionTimestamp: '2026-12-01T00:00:00Z' });
    expect(h.podManager.get('uid-slow')?.pod).toBe(shortened);
    expect(h.work).toEqual(['sync uid-slow', 'kill uid-slow', 'kill uid-slow']);
  });

  it('puts each write of the pod object on the status feed at once: UPDATE, REMOVE with its deletion marks, a shorter grace period (issue #39)', async () => {
    const h = harness();
    const types: string[] = [];
    h.statusManager.subscribe((c) =>
      types.push(`${c.type} ${c.pod.metadata?.labels?.v ?? ''} ${c.pod.metadata?.deletionGracePeriodSeconds ?? ''}`.trim()),
    );
    const p = pod('w');
    await h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [p] });
    const labelled = { ...p, metadata: { ...p.metadata, labels: { v: '2' } } };
    // Handled synchronously: on the feed before handleUpdate returns.
    void h.lifecycle.handleUpdate({ op: 'UPDATE', source: 'api', pods: [labelled] });
    expect(types).toEqual(['ADDED', 'MODIFIED 2']);
    void h.lifecycle.handleUpdate({ op: 'REMOVE', source: 'api', pods: [deleted(labelled, 30)] });
    expect(types).toEqual(['ADDED', 'MODIFIED 2', 'MODIFIED 2 30']);
    h.shorten('uid-w', 1);
    expect(types).toEqual(['ADDED', 'MODIFIED 2', 'MODIFIED 2 30', 'MODIFIED 2 1']);
    expect(h.statusManager.getPodStatus('uid-w')).toEqual({ phase: 'Pending' });
  });

  it('answers undefined for a pod that is not being deleted, or not known', async () => {
    const h = harness();
    await h.lifecycle.handleUpdate({ op: 'ADD', source: 'api', pods: [pod('alive')] });
    expect(h.shorten('uid-alive', 0)).toBeUndefined();
    expect(h.shorten('uid-nobody', 0)).toBeUndefined();
    expect(h.work).toEqual(['sync uid-alive']);
  });
});

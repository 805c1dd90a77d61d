// bench watch-history: the heap the pods' watch history holds after N changes of pods of a given
// size (default 720 changes of 200 KB pods, issue #11 finding 4), with one watcher connected (the
// server then serializes each change's frame once, as WS /watch/pods does). A figure, not a test.
//
//   NODE_OPTIONS=--expose-gc npm run bench -- watch-history [--changes 720] [--pod-kb 200] [--pods 10]
//        [--history-bytes 67108864] [--src DIR]
//
// --src runs the same scenario against another checkout's src/ (e.g. --src /work/main to measure
// before a change). Prints one table row and writes bench/results/watch-history-*.json.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { positiveInt, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    changes: { type: 'string', default: '720' },
    'pod-kb': { type: 'string', default: '200' },
    pods: { type: 'string', default: '10' },
    'history-bytes': { type: 'string', default: String(64 * 1024 * 1024) },
    src: { type: 'string', default: resolve(import.meta.dirname, '..') },
  },
});
const changes = positiveInt('changes', args.changes);
const podKb = positiveInt('pod-kb', args['pod-kb']);
const pods = positiveInt('pods', args.pods);
const historyBytes = positiveInt('history-bytes', args['history-bytes']);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with NODE_OPTIONS=--expose-gc npm run bench -- watch-history (the heap is measured after a full GC)');

type StatusManagerModule = typeof import('../src/main/status/status-manager.js');
type WatchCacheModule = typeof import('../src/main/watch/watch-cache.js');
type WatchEventModule = typeof import('../src/server/host/watch-event.js');
const { newStatusManager } = (await import(`${args.src}/src/main/status/status-manager.ts`)) as StatusManagerModule;
const { newWatchCache } = (await import(`${args.src}/src/main/watch/watch-cache.ts`)) as WatchCacheModule;
const { watchFrame } = (await import(`${args.src}/src/server/host/watch-event.ts`)) as WatchEventModule;

const heap = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const sm = newStatusManager();
// historyBytes is ignored by a checkout that does not know it (the count bound alone).
const cache = newWatchCache(sm, { historyBytes } as Parameters<typeof newWatchCache>[1]);
cache.watch(0, (e) => void watchFrame(e)); // one connected watcher: each change's frame is made once
const before = heap();
for (let i = 0; i < changes; i++) {
  // Each change is a new version of one of `pods` pods (a PUT): a fresh podKb-sized annotation.
  const n = i % pods;
  sm.setPodStatus(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${n}`, namespace: 'default', uid: `u${n}`, annotations: { blob: randomBytes(podKb * 512).toString('hex') } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
    { phase: 'Running', message: `change ${i}` },
  );
}
const after = heap();
const usage = (cache as { historyUsage?: () => { changes: number; bytes: number } }).historyUsage?.();
const mib = (b: number) => (b / 1024 / 1024).toFixed(1);
const row = {
  src: args.src,
  changes,
  podKb,
  pods,
  historyBytes,
  heldChanges: usage?.changes ?? Math.min(changes, cache.resourceVersion() - cache.oldestResumableVersion()),
  heldFrameMiB: usage ? mib(usage.bytes) : 'n/a',
  heapGrowthMiB: mib(after - before),
};
process.stdout.write(
  `${table([
    ['src', 'changes', 'pod KB', 'changes held', 'frames held (MiB)', 'heap growth (MiB)'],
    [row.src, row.changes, row.podKb, row.heldChanges, row.heldFrameMiB, row.heapGrowthMiB],
  ])}\n`,
);
writeResult('watch-history', row);

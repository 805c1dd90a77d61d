// Starts the density benches' watch client on its own thread (bench/watch-client.worker.ts) and turns
// its messages back into the bench's PodTimes and onFrame calls. Not used by src/.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { profilingArgs } from '../src/main/pool/worker-entry.js';
import type { WatchClientControl, WatchClientMessage, WatchFrame } from './watch-frames.js';

/** PodTimes: when each pod UID was accepted, first Running, and removed, as the watch client received them (performance.now() ms of the bench's main thread). */
export interface PodTimes {
  accepted: Map<string, number>;
  running: Map<string, number>;
  removed: Set<string>;
  byName: Map<string, string>;
}

/** WatchClient: a connected watch of `/watch/pods` whose decoding runs off the bench's (and the agent's) main thread. */
export interface WatchClient {
  times: PodTimes;
  /** Calls `fn` with every whole frame when it arrived (performance.now() ms); whole frames cross the thread only while one is subscribed. Returns the unsubscribe. */
  onFrame(fn: (frame: WatchFrame, atMs: number) => void): () => void;
  /** Closes the watch (code 1000) and waits for the thread to end. */
  close(): Promise<void>;
}

/** workerThread: the client's thread, compiled (dist/bench/…js) or from source under tsx (as src/main/pool/worker-entry.ts startWorker does). */
function workerThread(url: string): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = fileURLToPath(new URL(`./watch-client.worker.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  if (!existsSync(filename)) throw new Error(`bench: ${filename} does not exist (build the project with npm run build)`);
  if (!fromSource) return new Worker(filename, { workerData: { url }, execArgv: profilingArgs(process.execArgv) });
  const tsxCjs = createRequire(import.meta.url).resolve('tsx/cjs/api');
  return new Worker(`require(${JSON.stringify(tsxCjs)}).register(); require(${JSON.stringify(filename)});`, {
    eval: true,
    workerData: { url },
  });
}

/**
 * startWatchClient connects a watch client to `ws://127.0.0.1:<port>/watch/pods` on a thread of its
 * own and resolves once the watch is open. A watch that closes with a code other than 1000/1005
 * is reported on stderr (figures after it are missing), as before.
 * @throws Error when the connection fails before it opens.
 */
export async function startWatchClient(port: number): Promise<WatchClient> {
  const worker = workerThread(`ws://127.0.0.1:${port}/watch/pods`);
  const times: PodTimes = { accepted: new Map(), running: new Map(), removed: new Set(), byName: new Map() };
  const listeners = new Set<(frame: WatchFrame, atMs: number) => void>();
  const control = (m: WatchClientControl) => worker.postMessage(m);
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: WatchClientMessage) => {
      if (m.kind === 'open') resolve();
      else if (m.kind === 'error') reject(new Error(`bench: the watch client: ${m.message}`));
      else if (m.kind === 'close') {
        if (m.code !== 1000 && m.code !== 1005)
          process.stderr.write(`bench: the watch closed with code ${m.code}; figures after this point are missing\n`);
      } else {
        const t = m.atEpochMs - performance.timeOrigin;
        if (m.type === 'ADDED' && !times.accepted.has(m.uid)) {
          times.accepted.set(m.uid, t);
          times.byName.set(m.name, m.uid);
        }
        if (m.type === 'DELETED') times.removed.add(m.uid);
        else if (m.running && !times.running.has(m.uid)) times.running.set(m.uid, t);
        if (m.frame) for (const fn of listeners) fn(m.frame, t);
      }
    });
  });
  worker.unref();
  return {
    times,
    onFrame(fn) {
      listeners.add(fn);
      if (listeners.size === 1) control({ kind: 'full', on: true });
      return () => {
        listeners.delete(fn);
        if (listeners.size === 0) control({ kind: 'full', on: false });
      };
    },
    async close() {
      control({ kind: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 5_000);
      await ended;
      clearTimeout(timer);
    },
  };
}

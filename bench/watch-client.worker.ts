// The density benches' watch client, on a thread of its own: it connects to an agent's `WS
// /watch/pods`, decodes each frame and posts what the bench reads (the frame's type, the pod's UID
// and name, whether it is Running, and when the frame arrived) to the bench's main thread. Run in the
// agent's own process but off its main thread, the client's decoding (JSON.parse of every frame,
// the `ws` receiver) is no longer counted as the agent's main-thread CPU: the thread announces itself
// as `bench-watch` on the agent's thread-roles channel (src/workers/thread-roles.ts), so
// bench/thread-cpu.ts files its CPU apart. Started by bench/watch-client.ts; not used by src/.
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { currentTid, kThreadRolesChannel } from '../src/workers/thread-roles.js';
import { isRunningPod, kBenchWatchRole, type WatchClientMessage, type WatchClientControl } from './watch-frames.js';
import type { Pod } from '../src/shared/api.js';

const port = parentPort!;
const { url } = workerData as { url: string };
const tid = currentTid();
if (tid !== undefined) {
  const channel = new BroadcastChannel(kThreadRolesChannel);
  channel.postMessage({ role: kBenchWatchRole, tid });
  channel.close();
}

/** Whether whole frames are posted too (a bench with onFrame listeners: relist, soak, at-density). */
let full = false;
const post = (m: WatchClientMessage) => port.postMessage(m);
const ws = new WebSocket(url, { perMessageDeflate: false });
ws.once('open', () => post({ kind: 'open' }));
ws.on('error', (err: Error) => post({ kind: 'error', message: err.message }));
ws.on('close', (code: number) => {
  post({ kind: 'close', code });
  port.close();
});
ws.on('message', (data: Buffer) => {
  const atEpochMs = performance.timeOrigin + performance.now();
  const frame = JSON.parse(data.toString('utf8')) as { type: string; object: Pod };
  const uid = frame.object?.metadata?.uid;
  if (!uid) return;
  post({
    kind: 'frame',
    atEpochMs,
    type: frame.type,
    uid,
    name: frame.object.metadata?.name ?? '',
    running: frame.type !== 'DELETED' && isRunningPod(frame.object),
    ...(full ? { frame } : {}),
  });
});
port.on('message', (m: WatchClientControl) => {
  if (m.kind === 'full') full = m.on;
  else if (m.kind === 'close') ws.close(1000);
});

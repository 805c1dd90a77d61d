// A main-thread stand-in for one port-forward connection of the streams worker: a MessageChannel whose far port the
// worker side (src/workers/streams/port-forward.ts startPortForward, cri-port-forward.ts startCriPortForward) relays on.
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { PortForwardOutbound } from '../../src/shared/port-forward-protocol.js';
import type { PortForwardPort } from '../../src/workers/streams/port-forward.js';

/** What the worker side posted on one connection: data, bytes written, the `end` (if any), and whether onDone ran. */
export interface PortForwardCollected {
  data: Buffer;
  written: number;
  end: { error?: string } | undefined;
  done: boolean;
}

/**
 * openPortForwardChannel starts one connection with `start` (given the worker's end of a
 * MessageChannel and the onDone callback) and collects what it posts; `port` is the main thread's
 * end (post `data`, `ack`, `closeWrite`, `close`; close it at the end of the test).
 */
export function openPortForwardChannel(start: (port: PortForwardPort, onDone: () => void) => () => void) {
  const { port1, port2 } = new MessageChannel();
  const got: PortForwardCollected = { data: Buffer.alloc(0), written: 0, end: undefined, done: false };
  port1.on('message', (m: PortForwardOutbound) => {
    if (m.t === 'data') got.data = Buffer.concat([got.data, Buffer.from(m.data)]);
    else if (m.t === 'written') got.written += m.bytes;
    else got.end = { error: m.error };
  });
  const stop = start(port2 as unknown as PortForwardPort, () => {
    got.done = true;
  });
  let acked = 0;
  /** ackReceived returns credit for every byte received and not yet acked (as the main thread does once its client took them). */
  const ackReceived = () => {
    if (got.data.length > acked) port1.postMessage({ t: 'ack', bytes: got.data.length - acked });
    acked = got.data.length;
  };
  return { port: port1 as MessagePort, got, stop, ackReceived };
}

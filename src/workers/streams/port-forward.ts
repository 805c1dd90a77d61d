/**
 * Counterpart of the CRI runtimes' PortForward (containerd's and CRI-O's: enter the sandbox's
 * network namespace, dial localhost:port, copy both ways; dockershim ran `nsenter -t <pid> -n
 * socat - TCP4:localhost:<port>`): one forwarded connection, run in the container-streams worker.
 *
 * How the port is reached (shared/port-forward-protocol.ts PortForwardReach):
 * - `direct` (hostNetwork pods: `127.0.0.1`, and a pod IP on the agent's bridge as a fallback):
 *   a node:net socket from this thread;
 * - `netns`: the static helper `kubelet-ts-netns-probe … relay localhost PORT` (tools/netns-probe)
 *   setns(2)s into `/proc/<sandbox pid>/ns/net` and relays its stdin/stdout to the socket.
 *
 * Cost of the helper, and why it is acceptable: each netns connection is one process for as long
 * as the connection lasts (a 770 KB static binary, about 700 KiB of RSS) and three pipe fds in the
 * agent; opening one costs about 2 ms more than a direct socket and 1 ms more of this thread's CPU
 * (5.2 ms against 3.0 ms per connect+echo+close, 1.7 against 0.6 ms CPU, 300 in a row on this
 * 2-core machine, 2026-12-02). Connections are long-lived and bounded in number, so this is paid
 * per connection, never per byte: the bytes go through pipes, which cost no more than a socket. Node cannot setns one thread without moving the
 * whole process (and every other pod's traffic) into the pod's namespace, and the CRI runtimes pay
 * the same price in their way (a goroutine locked to an OS thread that setns'd; dockershim a
 * nsenter+socat pair per connection). The bounds of stream-limits.ts cap how many run at once.
 *
 * Ends as containerd's PortForward: once one direction has ended, the other gets 1 s to end too
 * (the helper does this for netns; here for direct sockets), then the connection is closed.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import {
  kPortForwardWindowBytes,
  type PortForwardInbound,
  type PortForwardOutbound,
  type PortForwardSpec,
} from '../../shared/port-forward-protocol.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { isOwnedBy } from '../kubetypes/label-keys.js';
import { netnsProbeHelperPath } from '../probes/net-probe.js';
import type { ContainerRuntime } from '../runtime/container/runtime.js';

/** Connect timeout of a forwarded connection (ms); localhost answers at once, this bounds a SYN to a pod IP. */
export const kPortForwardDialTimeoutMs = 10_000;
/** After one direction ended, how long the other may go on (ms), as containerd's PortForward. */
const kHalfCloseGraceMs = 1000;

/** The part of a MessagePort a connection uses (tests pass a MessageChannel's port). */
export interface PortForwardPort {
  postMessage(m: PortForwardOutbound): void;
  on(event: 'message', fn: (m: PortForwardInbound) => void): unknown;
  close(): void;
}

/** What the relay needs of any kind of pod side (a socket, the netns helper, a CRI streaming connection). */
export interface PodSide {
  write(data: Buffer, done: () => void): void;
  /** closeWrite half-closes the pod's side once what was written is sent (FIN / the helper's stdin EOF). */
  closeWrite(): void;
  pause(): void;
  resume(): void;
  destroy(): void;
}

/** errnoText: a Node socket error in Go's words (`connection refused`), for the error channel. */
function errnoText(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by peer';
    case 'EHOSTUNREACH':
      return 'no route to host';
    case 'ENETUNREACH':
      return 'network is unreachable';
    case 'ETIMEDOUT':
      return 'i/o timeout';
    case 'EPIPE':
      return 'broken pipe';
    default:
      return e.message;
  }
}

/**
 * PodSideOpener: opens the pod's side of one connection; it hands the side to `attach` once it
 * exists (at once or later) or ends the connection with `finish(error)`. `fromPod` takes the pod's
 * bytes; `isClosed()` tells whether the connection was torn down meanwhile. Used by {@link relayPortForward}.
 */
export type PodSideOpener = (
  fromPod: (chunk: Buffer) => void,
  finish: (error?: string) => void,
  attach: (side: PodSide) => void,
  isClosed: () => boolean,
) => void;

/**
 * relayPortForward relays one connection between `port` (shared/port-forward-protocol.ts) and the
 * pod's side that `open` makes: client bytes written (`written` once taken), pod bytes posted under
 * the credit window, `closeWrite`, and the end (`end` last, unless the main thread closed first).
 * Messages that arrive before the side exists wait for it. Returns the idempotent teardown;
 * `onDone` runs once. Shared by {@link startPortForward} and cri-port-forward.ts. Never throws.
 */
export function relayPortForward(port: PortForwardPort, onDone: () => void, open: PodSideOpener): () => void {
  let closed = false;
  let side: PodSide | undefined;
  let unacked = 0;
  let paused = false;
  const early: PortForwardInbound[] = [];
  const finish = (error?: string, notify = true) => {
    if (closed) return;
    closed = true;
    side?.destroy();
    if (notify) port.postMessage({ t: 'end', error });
    port.close();
    onDone();
  };
  const fromPod = (chunk: Buffer) => {
    if (closed) return;
    unacked += chunk.length;
    port.postMessage({ t: 'data', data: new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) });
    if (!paused && unacked >= kPortForwardWindowBytes) {
      paused = true;
      side?.pause();
    }
  };
  const apply = (m: PortForwardInbound) => {
    if (closed || !side) return;
    if (m.t === 'data') {
      const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
      side.write(data, () => {
        if (!closed) port.postMessage({ t: 'written', bytes: data.length });
      });
    } else if (m.t === 'ack') {
      unacked -= m.bytes;
      if (paused && unacked < kPortForwardWindowBytes) {
        paused = false;
        side.resume();
      }
    } else if (m.t === 'closeWrite') side.closeWrite();
    else if (m.t === 'close') finish(undefined, false);
  };
  port.on('message', (m) => {
    if (m.t === 'close') return finish(undefined, false);
    if (!side) early.push(m);
    else apply(m);
  });
  const attach = (s: PodSide) => {
    if (closed) return s.destroy();
    side = s;
    for (const m of early.splice(0)) apply(m);
  };
  open(fromPod, finish, attach, () => closed);
  return () => finish(undefined, false);
}

/**
 * startPortForward opens the connection of `spec` and relays it over `port` until either side
 * ends; the last message on `port` is `end` (unless the main thread closed first). `nodeName`:
 * a netns sandbox must carry this agent's labels. Returns the function that tears it down
 * (idempotent); `onDone` runs once when the connection is gone either way. The dial timeout and
 * the half-close grace run on `clock` (default realClock). Never throws.
 */
export function startPortForward(
  runtime: ContainerRuntime,
  nodeName: string,
  port: PortForwardPort,
  spec: PortForwardSpec,
  onDone: () => void,
  helperPath = netnsProbeHelperPath(),
  clock: Clock = realClock,
): () => void {
  return relayPortForward(port, onDone, (fromPod, finish, attach, isClosed) => {
    const direct = (host: string) => attach(directSide(host, spec.port, fromPod, finish, clock));
    if (spec.reach.kind === 'direct') return direct(spec.reach.host);
    const { sandboxId, podIp } = spec.reach;
    runtime.inspectContainer(sandboxId).then(
      (d) => {
        if (isClosed()) return;
        if (!isOwnedBy(d.labels, nodeName)) return finish(`sandbox ${sandboxId.slice(0, 12)} is not a sandbox of this node`);
        if (!d.running || !d.pid) return finish(`sandbox ${sandboxId.slice(0, 12)} is not running`);
        if (!existsSync(helperPath)) {
          if (podIp) return direct(podIp);
          return finish(`the netns helper ${helperPath} is missing (tools/test or tools/up builds it)`);
        }
        attach(netnsSide(helperPath, `/proc/${d.pid}/ns/net`, spec.port, fromPod, finish));
      },
      (err: Error) => finish(`sandbox ${sandboxId.slice(0, 12)}: ${err.message}`),
    );
  });
}

/** directSide: a node:net connection to host:port; its timers on `clock`. */
function directSide(host: string, port: number, fromPod: (b: Buffer) => void, finish: (error?: string) => void, clock: Clock): PodSide {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const s = net.connect({ host, port, allowHalfOpen: true });
  let connected = false;
  let grace: TimerHandle | undefined;
  const dialTimer = clock.setTimeout(
    () => s.destroy(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })),
    kPortForwardDialTimeoutMs,
  );
  const startGrace = () => {
    grace ??= clock.setTimeout(() => s.destroy(), kHalfCloseGraceMs);
  };
  s.on('connect', () => {
    connected = true;
    clock.clearTimeout(dialTimer);
  });
  s.on('data', fromPod);
  s.on('end', () => {
    // The pod's side half-closed: pass nothing more to it after the grace, as containerd.
    startGrace();
  });
  s.on('error', (e: NodeJS.ErrnoException) => {
    clock.clearTimeout(dialTimer);
    clock.clearTimeout(grace);
    finish(connected ? `read tcp ${where}: ${errnoText(e)}` : `dial tcp ${where}: connect: ${errnoText(e)}`);
  });
  s.on('close', () => {
    clock.clearTimeout(dialTimer);
    clock.clearTimeout(grace);
    finish();
  });
  return {
    write: (data, done) => {
      if (!s.destroyed) s.write(data, () => done());
    },
    closeWrite: () => {
      if (s.destroyed) return;
      s.end();
      startGrace();
    },
    pause: () => s.pause(),
    resume: () => s.resume(),
    destroy: () => {
      clock.clearTimeout(dialTimer);
      clock.clearTimeout(grace);
      s.destroy();
    },
  };
}

/** netnsSide: the netns helper in relay mode; its exit ends the connection (stderr is the error). */
function netnsSide(
  helper: string,
  netnsPath: string,
  port: number,
  fromPod: (b: Buffer) => void,
  finish: (error?: string) => void,
): PodSide {
  const child = spawn(helper, [netnsPath, 'relay', 'localhost', String(port), String(kPortForwardDialTimeoutMs)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const err: Buffer[] = [];
  let errBytes = 0;
  child.stdout.on('data', fromPod);
  child.stderr.on('data', (b: Buffer) => {
    if (errBytes < 4096) err.push(b);
    errBytes += b.length;
  });
  child.stdin.on('error', () => {}); // EPIPE once the helper is gone: its exit reports why
  child.on('error', (e) => finish(`cannot run the netns helper ${helper}: ${e.message}`));
  child.on('close', (code, signal) => {
    const text = Buffer.concat(err).toString('utf8').trim();
    if (code === 0) finish();
    else finish(text || `the netns helper exited with ${code ?? signal}`);
  });
  return {
    write: (data, done) => {
      if (child.stdin.writable) child.stdin.write(data, () => done());
    },
    closeWrite: () => {
      if (child.stdin.writable) child.stdin.end();
    },
    pause: () => child.stdout.pause(),
    resume: () => child.stdout.resume(),
    destroy: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      // A paused stdout would hold its pipe (and 'close') open: drop what is left.
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
    },
  };
}

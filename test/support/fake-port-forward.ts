// A fake AgentHost for the port-forward endpoints' unit tests (port-forward-ws, port-forward-tunnel):
// one pod, `default/web` (uid `uid-1`, sandbox `sb1`), whose forwarded connections are recorded
// FakeSessions the test drives by hand: push() is the pod writing, end() the pod's side ending.
import type { AgentHost } from '../../src/server/host/agent-host.js';
import type { PortForwardSession } from '../../src/server/host/port-forward-host.js';
import type { PortForwardSpec } from '../../src/shared/port-forward-protocol.js';

/** FakeSession: one forwarded connection as the server used it. */
export interface FakeSession {
  spec: PortForwardSpec;
  /** Client bytes the server wrote to the pod. */
  written: Buffer[];
  /** Output credit the server returned (bytes). */
  acked: number;
  /** closeWrite() was called (the client half-closed). */
  halfClosed: boolean;
  closed: boolean;
  /** push: the pod sends `b`. */
  push(b: Buffer): void;
  /** end: the pod's side ends (with `error`, as the worker words it). */
  end(error?: string): void;
  /** refuseWrites: write() answers false (the pod is past the pending bound). */
  refuseWrites: boolean;
}

/** fakePortForwardHost: the host and the sessions it opened, in order. */
export function fakePortForwardHost(): { host: AgentHost; sessions: FakeSession[] } {
  const sessions: FakeSession[] = [];
  const host: AgentHost = {
    listPods: () => [],
    getPod: () => undefined,
    healthz: () => ({ ok: true, checks: [] }),
    portForwardTarget: (_ns, pod) => {
      if (pod !== 'web') throw Object.assign(new Error('pod does not exist'), { code: 'ERR_NOT_FOUND' });
      return { podUid: 'uid-1', sandboxId: 'sb1', reach: { kind: 'direct', host: '127.0.0.1' } };
    },
    openPortForward: (spec) => {
      let onData: ((c: Uint8Array) => void) | undefined;
      let onEnd: ((e?: string) => void) | undefined;
      const f: FakeSession = {
        spec,
        written: [],
        acked: 0,
        halfClosed: false,
        closed: false,
        refuseWrites: false,
        push: (b) => onData?.(new Uint8Array(b)),
        end: (e) => onEnd?.(e),
      };
      sessions.push(f);
      const s: PortForwardSession = {
        onData: (fn) => {
          onData = fn;
        },
        onEnd: (fn) => {
          onEnd = fn;
        },
        write: (c) => {
          if (f.refuseWrites) return false;
          f.written.push(Buffer.from(c));
          return true;
        },
        ack: (n) => {
          f.acked += n;
        },
        closeWrite: () => {
          f.halfClosed = true;
        },
        close: () => {
          f.closed = true;
        },
      };
      return s;
    },
  };
  return { host, sessions };
}

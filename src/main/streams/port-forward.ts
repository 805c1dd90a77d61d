/**
 * Counterpart of the kubelet's GetPortForward (pkg/kubelet/kubelet_pods.go: find the running pod,
 * then hand its sandbox to the runtime's PortForward), on the main thread: picks the sandbox and
 * the way to reach it, and turns a forwarded connection's MessagePort into a PortForwardSession.
 * The sockets and helper processes live in the container-streams worker (src/workers/streams/port-forward.ts).
 */
import type { MessagePort } from 'node:worker_threads';
import type { Pod } from '../../shared/api.js';
import { AgentError } from '../../shared/errors.js';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { kPortForwardMaxPendingBytes, type PortForwardInbound, type PortForwardOutbound } from '../../shared/port-forward-protocol.js';
import type { PortForwardSession, PortForwardTarget } from '../../server/host/port-forward-host.js';

/**
 * selectPortForwardTarget: the newest sandbox of `pod`, which must be running, and how to reach
 * it: a hostNetwork pod at `127.0.0.1` directly (its sandbox shares the node's namespace); any
 * other pod — on the agent's bridge or `network: none` — inside the sandbox's network namespace,
 * where localhost is the pod's own (as containerd's PortForward: a server bound to the pod's
 * 127.0.0.1 is reachable too, which dialling the pod IP would miss). Pure.
 * @throws AgentError ERR_INVALID_ARGUMENT (`pod "x" has no running sandbox`) when its newest sandbox is not running.
 */
export function selectPortForwardTarget(pod: Pod, uid: string, runtimePod: RuntimePod | null): PortForwardTarget {
  const name = pod.metadata?.name ?? '';
  const sandbox = (runtimePod?.sandboxes ?? [])[0];
  if (!sandbox || sandbox.state !== 'running')
    throw new AgentError(
      'ERR_INVALID_ARGUMENT',
      `pod "${name}" has no running sandbox (phase ${pod.status?.phase ?? 'Pending'}); port-forward needs a running pod`,
    );
  if (pod.spec?.hostNetwork) return { podUid: uid, sandboxId: sandbox.id, reach: { kind: 'direct', host: '127.0.0.1' } };
  const podIp = runtimePod?.podIp || undefined;
  return { podUid: uid, sandboxId: sandbox.id, reach: { kind: 'netns', sandboxId: sandbox.id, ...(podIp ? { podIp } : {}) } };
}

/**
 * portForwardTargetOf: the AgentHost.portForwardTarget of the agent: the pod by full name, then
 * {@link selectPortForwardTarget}.
 * @throws AgentError ERR_NOT_FOUND (`pod does not exist`, the kubelet's words) for an unknown pod.
 */
export function portForwardTargetOf(
  getByFullName: (fullName: string) => { pod: Pod; uid: string } | undefined,
  runtimePod: (uid: string) => RuntimePod | null,
): (namespace: string, pod: string) => PortForwardTarget {
  return (namespace, pod) => {
    const record = getByFullName(`${namespace}/${pod}`);
    if (!record) throw new AgentError('ERR_NOT_FOUND', 'pod does not exist');
    return selectPortForwardTarget(record.pod, record.uid, runtimePod(record.uid));
  };
}

/**
 * portForwardSession wraps the main thread's end of a connection's MessageChannel. `onGone` runs
 * once when the connection is over either way. The returned `fail` ends it with an error (the
 * worker died). Client bytes the worker has not reported `written` are counted; past
 * kPortForwardMaxPendingBytes write() returns false.
 */
export function portForwardSession(port: MessagePort, onGone: () => void): PortForwardSession & { fail(err: Error): void } {
  let onData: ((chunk: Uint8Array) => void) | undefined;
  let onEnd: ((error?: string) => void) | undefined;
  let ended: { error?: string } | undefined;
  let pending = 0;
  let done = false;
  const send = (m: PortForwardInbound) => {
    if (!done) port.postMessage(m);
  };
  const finish = (error: string | undefined, notify: boolean) => {
    if (done) return;
    done = true;
    port.close();
    onGone();
    if (!notify) return;
    ended = { error };
    onEnd?.(error);
  };
  port.on('message', (m: PortForwardOutbound) => {
    if (done) return;
    if (m.t === 'data') onData?.(m.data);
    else if (m.t === 'written') pending -= m.bytes;
    else if (m.t === 'end') finish(m.error, true);
  });
  // The worker closed its side without an `end` (it stopped): the connection is gone.
  port.on('close', () => finish('the port-forward connection was closed by the agent', true));
  return {
    onData: (fn) => {
      onData = fn;
    },
    onEnd: (fn) => {
      onEnd = fn;
      if (ended) fn(ended.error);
    },
    write(chunk) {
      if (done) return true;
      pending += chunk.byteLength;
      if (pending > kPortForwardMaxPendingBytes) return false;
      send({ t: 'data', data: chunk });
      return true;
    },
    ack: (bytes) => send({ t: 'ack', bytes }),
    closeWrite: () => send({ t: 'closeWrite' }),
    close() {
      if (done) return;
      send({ t: 'close' });
      finish(undefined, false);
    },
    fail: (err) => finish(err.message, true),
  };
}

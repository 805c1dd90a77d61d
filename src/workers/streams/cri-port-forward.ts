/**
 * Port-forward on a CRI runtime: the CRI side of port-forward.ts. One forwarded connection to
 * `port` of the sandbox `sandboxId`, through the URL the CRI's PortForward answers — what the
 * kubelet proxies `kubectl port-forward` to (pkg/kubelet/server/server.go getPortForward). The
 * runtime enters the sandbox's network namespace and dials localhost:port itself (containerd:
 * pkg/cri/server/sandbox_portforward_linux.go), so no netns helper runs here.
 *
 * The streaming server is spoken to as client-go's WebSocket port-forward client does
 * (server side: staging/src/k8s.io/kubelet/pkg/cri/streaming/portforward/websocket.go): the port
 * in the query (`?port=N`), sub-protocol `v4.channel.k8s.io`, channel 0 the data and channel 1
 * the error of that port, each opened by the server with the port as 2 bytes little-endian. The
 * connection ends when the runtime's copy ends (the pod's side closed, or the error channel
 * says why) or when the main thread closes it.
 *
 * Half-close: this protocol has no way to close the client's side alone (SPDY's stream FIN has no
 * WebSocket counterpart before the v2 port-forward protocol of Kubernetes 1.30+, which
 * containerd 1.6 does not serve), so `closeWrite` cannot reach the pod: the pod's side ends the
 * connection, or the client's close does. Flow control is port-forward.ts's (shared/port-forward-protocol.ts).
 */
import type { RuntimeService } from '../runtime/cri/services.js';
import { openChannelSocket, type ChannelSocket } from './cri-channel-socket.js';
import { relayPortForward, type PodSide, type PortForwardPort } from './port-forward.js';

/** The port-forward WebSocket sub-protocol of the CRI streaming server (binary channels). */
export const kPortForwardProtocol = 'v4.channel.k8s.io';
const kData = 0;
const kError = 1;

/** CriPortForwardSpec: the sandbox (a CRI pod sandbox ID of this node) and the port (1–65535) to reach in its network namespace. */
export interface CriPortForwardSpec {
  sandboxId: string;
  port: number;
}

/**
 * startCriPortForward opens one connection of `spec` through the runtime's PortForward and relays
 * it over `port` (the messages of shared/port-forward-protocol.ts, with port-forward.ts's relay)
 * until either side ends; the last message on `port` is `end` (with the runtime's error text, e.g.
 * `error forwarding port 8081 to pod …: dial tcp4 127.0.0.1:8081: connect: connection refused`),
 * unless the main thread closed first. Returns the function that tears it down (idempotent);
 * `onDone` runs once when the connection is gone either way. Never throws. The worker calls it in
 * place of port-forward.ts's `startPortForward` for a `netns` reach when the node's runtime is a
 * CRI runtime (a `direct` reach stays on port-forward.ts).
 */
export function startCriPortForward(runtime: RuntimeService, port: PortForwardPort, spec: CriPortForwardSpec, onDone: () => void): () => void {
  return relayPortForward(port, onDone, (fromPod, finish, attach, isClosed) => {
    let dataPrefix = 2;
    let errorPrefix = 2;
    let errorText = '';
    const onMessage = (channel: number, payload: Buffer) => {
      if (channel === kData) {
        // Each channel opens with the port, 2 bytes little-endian.
        const skip = Math.min(dataPrefix, payload.length);
        dataPrefix -= skip;
        if (payload.length > skip) fromPod(Buffer.from(payload.subarray(skip)));
      } else if (channel === kError) {
        const skip = Math.min(errorPrefix, payload.length);
        errorPrefix -= skip;
        if (errorText.length < 4096) errorText += payload.subarray(skip).toString('utf8');
      }
    };
    runtime.portForward({ pod_sandbox_id: spec.sandboxId, port: [spec.port] }).then(async ({ url }) => {
      if (isClosed()) return;
      const target = new URL(url);
      target.searchParams.set('port', String(spec.port));
      const s = await openChannelSocket(target.toString(), [kPortForwardProtocol], {
        onMessage,
        onClose: (err) => finish(errorText.trim() || err?.message),
      });
      attach(channelSide(s));
    }).catch((err: Error) => finish(`sandbox ${spec.sandboxId.slice(0, 12)}: ${err.message}`));
  });
}

/** channelSide: the data channel of a port-forward WebSocket as the relay's pod side (no half-close: see the module comment). */
function channelSide(s: ChannelSocket): PodSide {
  return {
    write: (data, done) => s.send(kData, data, done),
    closeWrite: () => {},
    pause: () => s.pause(),
    resume: () => s.resume(),
    destroy: () => s.close(),
  };
}

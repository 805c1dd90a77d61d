/**
 * Port-forward on a CRI runtime: the CRI side of port-forward.ts. One forwarded connection to
 * `port` of the sandbox `sandboxId`, through the URL the CRI's PortForward answers — what the
 * kubelet proxies `kubectl port-forward` to (pkg/kubelet/server/server.go getPortForward). The
 * runtime enters the sandbox's network namespace and dials localhost:port itself (containerd:
 * pkg/cri/server/sandbox_portforward_linux.go), so no netns helper runs here.
 *
 * The streaming server is spoken to as client-go's SPDY port-forward client does
 * (tools/portforward/portforward.go; server side staging/src/k8s.io/kubelet/pkg/cri/streaming/
 * portforward/httpstream.go): an upgrade to SPDY/3.1 with `X-Stream-Protocol-Version:
 * portforward.k8s.io`, then per connection an error stream (the client half-closes it at once)
 * and a data stream, both with headers `streamtype`, `port` and `requestid`. SPDY, not the
 * server's WebSocket port-forward (`v4.channel.k8s.io`, `?port=`): a WebSocket channel cannot be
 * half-closed, and `closeWrite` must reach the runtime as the data stream's FIN, as it does from
 * kubectl through the kubelet. containerd then ends the connection as its PortForward does: once
 * one direction has ended, the other gets 1 s, then its socket to the pod is closed (it does not
 * half-close it; port-forward.ts's netns helper does the same). The connection ends once the
 * server closed the data stream (the pod's side ended, or the error stream says why) and the
 * error stream. Nothing is written on the data stream before the server answered both streams.
 */
import type { RuntimeService } from '../runtime/cri/services.js';
import { openSpdySession, type SpdyClientStream, type SpdySession } from './cri-spdy-session.js';
import { relayPortForward, type PodSide, type PortForwardPort } from './port-forward.js';

/** The port-forward protocol of the CRI streaming server over SPDY. */
export const kPortForwardProtocol = 'portforward.k8s.io';

/** CriPortForwardSpec: the sandbox (a CRI pod sandbox ID of this node) and the port (1–65535) to reach in its network namespace. */
export interface CriPortForwardSpec {
  sandboxId: string;
  port: number;
}

/**
 * startCriPortForward opens one connection of `spec` through the runtime's PortForward and relays
 * it over `port` (the messages of shared/port-forward-protocol.ts, with port-forward.ts's relay)
 * until either side ends; the last message on `port` is `end` (with the runtime's error text, e.g.
 * `failed to execute portforward in network namespace …: dial tcp4 127.0.0.1:8081: connect: connection
 * refused …`, without the streaming server's `error forwarding port P to pod S, uid U: ` prefix, which
 * the agent's server puts back with the pod's UID: the runtime knows none),
 * unless the main thread closed first. Returns the function that tears it down (idempotent);
 * `onDone` runs once when the connection is gone either way. Never throws. The worker calls it in
 * place of port-forward.ts's `startPortForward` for a `netns` reach when the node's runtime is a
 * CRI runtime (a `direct` reach stays on port-forward.ts). `handshakeTimeoutMs`: milliseconds for
 * the streaming server's upgrade.
 */
export function startCriPortForward(
  runtime: RuntimeService,
  port: PortForwardPort,
  spec: CriPortForwardSpec,
  onDone: () => void,
  handshakeTimeoutMs = 30_000,
): () => void {
  return relayPortForward(port, onDone, (fromPod, finish, attach, isClosed) => {
    let errorText = '';
    const open = async () => {
      const { url } = await runtime.portForward({ pod_sandbox_id: spec.sandboxId, port: [spec.port] });
      if (isClosed()) return;
      const session = await openSpdySession(
        url,
        [kPortForwardProtocol],
        (err) => finish(runtimeCause(errorText) || err?.message),
        handshakeTimeoutMs,
      );
      try {
        const headers = { port: String(spec.port), requestid: '0' };
        const error = await session.openStream({ streamtype: 'error', ...headers });
        error.end();
        error.on('data', (c: Buffer) => {
          if (errorText.length < 4096) errorText += c.toString('utf8');
        });
        const data = await session.openStream({ streamtype: 'data', ...headers });
        data.on('data', (c: Buffer) => fromPod(c));
        // The server closes both streams when its copy ends; the error text (if any) comes first.
        void Promise.all([ended(error), ended(data)]).then(() => finish(runtimeCause(errorText) || undefined));
        // No byte goes to the pod before the server answered both streams (client-go's CreateStream waits for
        // each reply: tools/portforward/portforward.go handleConnection). A stream reset unanswered (a refused
        // port may be) ends the connection through `ended` above, with the error stream's text.
        await Promise.all([session.replied(error, 'error', { resetIsEnd: true }), session.replied(data, 'data', { resetIsEnd: true })]);
        attach(spdySide(session, data));
      } catch (err) {
        session.close();
        throw err;
      }
    };
    open().catch((err: Error) => finish(`sandbox ${spec.sandboxId.slice(0, 12)}: ${err.message}`));
  });
}

/**
 * runtimeCause: the error stream's text without the prefix the streaming server puts on it
 * (staging/src/k8s.io/kubelet/pkg/cri/streaming/portforward/httpstream.go: `error forwarding port
 * %d to pod %s, uid %v: %v`, with the sandbox ID and an empty UID), trimmed. Pure.
 */
export function runtimeCause(text: string): string {
  return text.trim().replace(/^error forwarding port \d+ to pod [^,]*, uid [^:]*: /, '');
}

/** ended resolves once `stream`'s remote side is done (FIN or reset). */
function ended(stream: SpdyClientStream): Promise<void> {
  return new Promise((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
  });
}

/** spdySide: the data stream as the relay's pod side; closeWrite sends its FIN. */
function spdySide(session: SpdySession, data: SpdyClientStream): PodSide {
  return {
    write: (chunk, done) => {
      if (data.writable) data.write(chunk, () => done());
    },
    closeWrite: () => {
      if (data.writable) data.end();
    },
    pause: () => session.pause(),
    resume: () => session.resume(),
    destroy: () => session.close(),
  };
}

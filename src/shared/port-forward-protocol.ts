/**
 * The wire protocol of one port-forward connection between the main thread and the
 * container-streams worker (src/workers/streams/port-forward.ts): the CRI's PortForward as the kubelet's
 * streaming server relays it (pkg/kubelet/cri/streaming/portforward: one data stream per port).
 * Plain structured-cloneable data only; each connection has its own MessagePort (transferred in
 * the `portForward` request of streams-protocol.ts), and closing the port ends the connection.
 *
 * Flow control, both ways, by byte credits (as the exec streams):
 * - pod → client: the worker stops reading the pod's side while more than
 *   {@link kPortForwardWindowBytes} it posted are not yet `ack`ed; the main thread acks a chunk once
 *   the WebSocket took it without backpressure (or on drain);
 * - client → pod: the worker answers `written` once the pod's side took a chunk; the main thread
 *   counts what is not yet written and closes a client that runs past
 *   {@link kPortForwardMaxPendingBytes} (uWebSockets.js cannot pause reading a WebSocket).
 */

/** kPortForwardWindowBytes: pod → client bytes in flight to the main thread before the worker stops reading the pod's side. */
export const kPortForwardWindowBytes = 256 * 1024;
/** kPortForwardMaxPendingBytes: client → pod bytes the pod has not taken yet past which the connection is closed with an error. */
export const kPortForwardMaxPendingBytes = 8 * 1024 * 1024;

/**
 * PortForwardReach: how the worker reaches the pod's port.
 * - `direct`: dial `host:port` from the worker (a hostNetwork pod: `127.0.0.1`, the node's own
 *   network namespace, as the CRI runtimes' setns into the host namespace amounts to);
 * - `netns`: dial localhost inside the network namespace of the running sandbox `sandboxId`
 *   through the netns helper (as containerd's and CRI-O's PortForward). `podIp`, when the pod
 *   has one on the agent's bridge, is dialled directly if the helper is missing.
 */
export type PortForwardReach = { kind: 'direct'; host: string } | { kind: 'netns'; sandboxId: string; podIp?: string };

/** PortForwardSpec: one connection to `port` (1–65535) of a pod. */
export interface PortForwardSpec {
  reach: PortForwardReach;
  port: number;
}

/**
 * PortForwardInbound: main → worker on a connection's port: bytes for the pod, output credit
 * returned, `closeWrite` (the client sends nothing more: the pod's side is half-closed after the
 * bytes before it, as containerd's PortForward does on the client stream's EOF), or the end.
 */
export type PortForwardInbound = { t: 'data'; data: Uint8Array } | { t: 'ack'; bytes: number } | { t: 'closeWrite' } | { t: 'close' };

/**
 * PortForwardOutbound: worker → main. `data` bytes from the pod; `written` client bytes the pod's
 * side took; `end` is the last message: the pod's side closed (no error), or the error that ended
 * or prevented the connection in Go's words (`dial tcp 127.0.0.1:80: connect: connection refused`).
 */
export type PortForwardOutbound = { t: 'data'; data: Uint8Array } | { t: 'written'; bytes: number } | { t: 'end'; error?: string };

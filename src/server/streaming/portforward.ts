/**
 * Counterpart of the kubelet's WebSocket port-forward protocol (pkg/kubelet/cri/streaming/portforward:
 * NewV4Options and websocket.go handleWebSocketStreams, over httpstream/wsstream): the `port`
 * query, sub-protocol negotiation, the channel layout and the messages of the error channel. Pure
 * functions only; port-forward-ws.ts drives them on uWebSockets.js.
 *
 * Channels: per requested port i (in query order) a data channel 2·i (read and write) and an error
 * channel 2·i+1 (server → client only). The first frame the server writes on each of them is the
 * port number as 2 bytes little-endian; then the data channel carries the connection's bytes both
 * ways, and the error channel the text of an error, if one ends the forwarding. A frame from the
 * client on a channel past the last closes the connection (wsstream: "frame N is not a valid
 * channel"); client frames on an error channel are ignored.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';
import type { NegotiatedProtocol } from './remotecommand.js';

/**
 * kPortForwardProtocols: the sub-protocols of the kubelet's WebSocket port-forward, most preferred
 * first; a client offering none gets the binary protocol named '' (wsstream's ""). Upstream's
 * `portforward.k8s.io` is the SPDY upgrade's name: the kubelet refuses it on a WebSocket, and
 * so does `/portForward`. `SPDY/3.1+portforward.k8s.io`, the apiserver's tunnel, is served on the
 * Kubernetes API's pods/portforward path (port-forward-tunnel.ts).
 */
export const kPortForwardProtocols: readonly string[] = Object.freeze(['v4.channel.k8s.io', 'v4.base64.channel.k8s.io']);

/** kMaxForwardedPorts: ports one request may name (each takes 2 of the 256 channel numbers of a frame's first byte). */
export const kMaxForwardedPorts = 128;

/**
 * negotiatePortForwardProtocol picks the first of `offered` (bearer-token protocols already
 * removed) that is served; none offered → the binary protocol ''.
 * @returns undefined when protocols were offered and none is served (the caller answers 400).
 */
export function negotiatePortForwardProtocol(offered: readonly string[]): NegotiatedProtocol | undefined {
  const list = offered.map((p) => p.trim()).filter((p) => p !== '');
  const name = list.length === 0 ? '' : list.find((p) => kPortForwardProtocols.includes(p));
  if (name === undefined) return undefined;
  return { name, statusVersion: 4, closeSignal: false, base64: name.includes('base64') };
}

function badPort(message: string, field: string): Status {
  return statusError(400, 'BadRequest', message, { causes: [{ field, reason: 'FieldValueInvalid', message }] });
}

/**
 * parsePortForwardQuery reads the ports of `?port=N[&port=M…]` (each value may also be a
 * comma-separated list, as NewV4Options): integers 1–65535, in order, repeats allowed (each one is
 * its own connection), at most {@link kMaxForwardedPorts}. Pure.
 * @param name the query parameter: `port` on the kubelet's `/portForward`, `ports` on the Kubernetes
 *   API's pods/portforward (core/v1 PodPortForwardOptions, which the apiserver turns into the
 *   kubelet's `port`: pkg/registry/core/pod/strategy.go PortForwardLocation).
 * @returns the ports, or a 400 Status naming the parameter in the kubelet's words (`query parameter
 *   "port" is required`, `unable to parse "x" as a port`, `port "0" must be > 0`).
 */
export function parsePortForwardQuery(query: URLSearchParams, name: 'port' | 'ports' = 'port'): number[] | Status {
  const values = query.getAll(name);
  if (values.length === 0)
    return statusError(400, 'BadRequest', `query parameter "${name}" is required`, {
      causes: [{ field: name, reason: 'FieldValueRequired', message: 'Required value' }],
    });
  const ports: number[] = [];
  for (const value of values) {
    if (value === '') return badPort(`query parameter "${name}" cannot be empty`, name);
    for (const p of value.split(',')) {
      if (!/^[0-9]{1,5}$/.test(p) || Number(p) > 65535)
        return badPort(`unable to parse ${JSON.stringify(value)} as a port: must be an integer in 1-65535`, name);
      if (Number(p) < 1) return badPort(`port ${JSON.stringify(value)} must be > 0`, name);
      ports.push(Number(p));
    }
  }
  if (ports.length > kMaxForwardedPorts) return badPort(`at most ${kMaxForwardedPorts} ports per request, got ${ports.length}`, name);
  return ports;
}

/** portPrefix: the first frame of a port's data and error channels: the port as 2 bytes little-endian. */
export function portPrefix(port: number): Uint8Array {
  return new Uint8Array([port & 0xff, (port >> 8) & 0xff]);
}

/**
 * portForwardError: the text written on a port's error channel, as the kubelet's websocket
 * handler writes it: `error forwarding port <port> to pod <sandbox ID>, uid <uid>: <cause>`.
 */
export function portForwardError(port: number, sandboxId: string, uid: string, cause: string): Uint8Array {
  return new TextEncoder().encode(`error forwarding port ${port} to pod ${sandboxId}, uid ${uid}: ${cause}`);
}

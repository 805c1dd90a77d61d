/**
 * Counterpart of `kubectl port-forward` (k8s.io/kubectl/pkg/cmd/portforward and client-go's
 * tools/portforward): `kubelet-ts port-forward POD [-n NS] LOCAL:REMOTE [LOCAL:REMOTE…]` listens
 * on 127.0.0.1:LOCAL for each mapping (`:REMOTE` or `0:REMOTE` picks a free local port, `PORT` is
 * the same on both sides), prints `Forwarding from 127.0.0.1:L -> R` as kubectl does, and forwards
 * every accepted connection (`Handling connection for L`) until interrupted (SIGINT/SIGTERM: exit 0).
 *
 * One WebSocket per accepted connection: kubectl opens one stream pair (data + error) per accepted
 * connection, multiplexed over its single SPDY connection (or, since 1.30, SPDY tunnelled through a
 * WebSocket, `SPDY/3.1+portforward.k8s.io`); the kubelet's own WebSocket protocol
 * (`v4.channel.k8s.io`, served here) has no per-connection streams — its channel pairs are fixed at
 * the upgrade — so a connection is a WebSocket of its own, with the same effect: connections are
 * independent and many may run at once. An error on a connection's error channel is printed
 * (`an error occurred forwarding L -> R: …`) and closes that connection only; kubectl ≥ 1.27 also
 * ends the whole session then, which we do not (the other connections go on). Only 127.0.0.1 is
 * bound (kubectl's default `--address localhost` binds ::1 too).
 */
import net from 'node:net';
import type { Argv, CommandModule } from 'yargs';
import WebSocket from 'ws';
import { wsTarget } from './transport.js';
import type { Pod, Status } from '../shared/api.js';
import type { CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  ClientError,
  clientFlags,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';

/** Local bytes are paused while more than this many wait in a WebSocket. */
const kHighWaterBytes = 1 << 20;
/** After the local client half-closed, how long its connection may still receive (ms). */
const kHalfCloseGraceMs = 1000;

/** PortMapping: a local port (0: pick a free one) forwarded to a remote port of the pod. */
export interface PortMapping {
  local: number;
  remote: number;
}

function parsePort(text: string, which: 'local' | 'remote'): number {
  const min = which === 'local' ? 0 : 1;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < min || Number(text) > 65535) {
    throw new ClientError(`error parsing ${which} port "${text}": must be an integer in ${min}-65535`);
  }
  return Number(text);
}

/**
 * parsePortMappings reads `LOCAL:REMOTE`, `:REMOTE` (or `0:REMOTE`: a free local port) and `PORT`
 * (the same on both sides), as kubectl's parsePorts. Pure.
 * @throws ClientError naming the bad port, or when none is given.
 */
export function parsePortMappings(specs: readonly string[]): PortMapping[] {
  if (specs.length === 0) throw new ClientError('TYPE/NAME and list of ports are required for port-forward');
  return specs.map((spec) => {
    const parts = spec.split(':');
    if (parts.length > 2) throw new ClientError(`invalid port format "${spec}": use LOCAL:REMOTE, :REMOTE or PORT`);
    if (parts.length === 1) {
      const port = parsePort(parts[0], 'remote');
      return { local: port, remote: port };
    }
    return { local: parts[0] === '' ? 0 : parsePort(parts[0], 'local'), remote: parsePort(parts[1], 'remote') };
  });
}

/** PortForwardOptions: what the command was asked. */
export interface PortForwardOptions {
  pod: string;
  namespace: string;
  mappings: PortMapping[];
}

/** statusMessage: the message of a refused upgrade's body (a Status), else its text. */
function statusMessage(text: string, fallback: string): string {
  try {
    const s = JSON.parse(text) as Status;
    if (s.message) return s.message;
  } catch {
    // not a Status
  }
  return text.trim() || fallback;
}

/** forwardConnection relays one accepted local connection over its own WebSocket to `remote`. */
function forwardConnection(
  flags: ClientFlags,
  opts: PortForwardOptions,
  m: { local: number; remote: number },
  conn: net.Socket,
  io: CliIo,
  live: Set<WebSocket>,
): void {
  const headers: Record<string, string> = {};
  if (flags.token) headers.Authorization = `Bearer ${flags.token}`;
  const target = wsTarget(
    flags,
    `/portForward/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(opts.pod)}?port=${m.remote}`,
    headers,
  );
  const ws = new WebSocket(target.url, ['v4.channel.k8s.io'], { ...target.options, perMessageDeflate: false });
  live.add(ws);
  const seen = new Set<number>();
  const early: Buffer[] = [];
  let errorText = '';
  const sendLocal = (chunk: Buffer) => {
    if (ws.readyState !== WebSocket.OPEN) return void early.push(chunk);
    ws.send(Buffer.concat([Buffer.from([0]), chunk]), () => {
      if (ws.bufferedAmount < kHighWaterBytes) conn.resume();
    });
    if (ws.bufferedAmount >= kHighWaterBytes) conn.pause();
  };
  conn.on('data', sendLocal);
  conn.on('error', () => {}); // a reset by the local client: 'close' follows
  // The local client half-closed. The WebSocket protocol has no half-close, so the connection ends
  // 1 s later (what arrives meanwhile is still delivered), as the kubelet's runtimes end a
  // forwarded connection 1 s after one direction ended (containerd's PortForward).
  conn.on('end', () => {
    setTimeout(() => {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    }, kHalfCloseGraceMs).unref();
  });
  conn.on('close', () => {
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  });
  conn.on('drain', () => ws.resume());
  ws.on('open', () => {
    for (const chunk of early.splice(0)) sendLocal(chunk);
  });
  ws.on('unexpected-response', (_req, res) => {
    const parts: Buffer[] = [];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => {
      io.stderr(
        `error: an error occurred forwarding ${m.local} -> ${m.remote}: ${statusMessage(Buffer.concat(parts).toString('utf8'), `${res.statusCode} ${res.statusMessage}`)}\n`,
      );
      ws.terminate();
      conn.destroy();
    });
  });
  ws.on('message', (data: Buffer) => {
    if (data.length === 0) return;
    const channel = data[0];
    // The first frame of each channel is the port number (2 bytes, little-endian).
    if (!seen.has(channel)) return void seen.add(channel);
    if (channel === 0) {
      if (!conn.write(data.subarray(1))) ws.pause();
    } else if (channel === 1) errorText += data.subarray(1).toString('utf8');
  });
  ws.on('error', (err) => {
    io.stderr(`error: an error occurred forwarding ${m.local} -> ${m.remote}: ${err.message}\n`);
    conn.destroy();
  });
  ws.on('close', () => {
    live.delete(ws);
    if (errorText !== '') {
      io.stderr(`error: an error occurred forwarding ${m.local} -> ${m.remote}: ${errorText}\n`);
      conn.destroy();
    } else conn.end();
  });
}

/**
 * runPortForward listens on every mapping and forwards until `signal` aborts; resolves 0 then.
 * @throws ClientError when the pod is unknown or not Running (kubectl's "unable to forward port
 *   because pod is not running"), or when no local port could be bound.
 */
export async function runPortForward(flags: ClientFlags, opts: PortForwardOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  const pod = await apiJson<Pod>(flags, 'GET', `/pods/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(opts.pod)}`);
  const phase = pod.status?.phase ?? 'Pending';
  if (phase !== 'Running') throw new ClientError(`unable to forward port because pod is not running. Current status=${phase}`);
  const live = new Set<WebSocket>();
  const servers: net.Server[] = [];
  for (const m of opts.mappings) {
    const server = net.createServer({ allowHalfOpen: true });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(m.local, '127.0.0.1', () => resolve());
      });
    } catch (err) {
      io.stderr(`Unable to listen on port ${m.local}: ${(err as Error).message}\n`);
      continue;
    }
    const local = (server.address() as net.AddressInfo).port;
    server.on('connection', (conn) => {
      io.stdout(`Handling connection for ${local}\n`);
      forwardConnection(flags, opts, { local, remote: m.remote }, conn, io, live);
    });
    servers.push(server);
    io.stdout(`Forwarding from 127.0.0.1:${local} -> ${m.remote}\n`);
  }
  if (servers.length === 0) throw new ClientError('unable to listen on any of the requested ports');
  await new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  for (const s of servers) s.close();
  for (const ws of live) ws.terminate();
  return 0;
}

/** portForwardCommand: the yargs module of `kubelet-ts port-forward POD [-n NS] LOCAL:REMOTE…`. */
export function portForwardCommand(select: SelectClient): CommandModule {
  return {
    command: 'port-forward <pod> [ports..]',
    describe: 'Forward local ports to a pod (kubectl port-forward): LOCAL:REMOTE, :REMOTE or PORT',
    builder: (y: Argv) =>
      addClientFlags(y)
        .positional('pod', { type: 'string', describe: 'Pod name' })
        .positional('ports', {
          type: 'string',
          array: true,
          describe: 'LOCAL:REMOTE, :REMOTE (a free local port) or PORT (the same on both sides)',
        })
        .option('namespace', kNamespaceOption),
    handler: clientHandler(select, async (a, io) => {
      const mappings = parsePortMappings(((a.ports as unknown[]) ?? []).map(String));
      const ac = new AbortController();
      const onSig = () => ac.abort();
      process.once('SIGINT', onSig);
      process.once('SIGTERM', onSig);
      try {
        return await runPortForward(clientFlags(a), { pod: String(a.pod), namespace: String(a.namespace), mappings }, io, ac.signal);
      } finally {
        process.off('SIGINT', onSig);
        process.off('SIGTERM', onSig);
      }
    }),
  };
}

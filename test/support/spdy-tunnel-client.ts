// A client of the SPDY-over-WebSocket port-forward tunnel (src/server/streaming/port-forward-tunnel.ts),
// as kubectl 1.31+ is one: the WebSocket handshake with sub-protocol SPDY/3.1+portforward.k8s.io,
// and a SPDY/3.1 client session (spdy-transport in client mode) over its binary messages. For the
// tunnel's unit and fuzz tests; the real kubectl is the e2e's client.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Duplex } from 'node:stream';
import transport from 'spdy-transport';
import WebSocket from 'ws';

/** The client's half of spdy-transport, which src/server/streaming/spdy-transport.d.ts leaves out. */
export interface ClientStream extends Duplex {
  id: number;
  _spdyState: { window: { send: { current: number; max: number; limit: number } } };
}
interface ClientConnection {
  start(version: number): void;
  request(
    options: { method: string; path: string; headers: Record<string, string> },
    cb: (err: Error | null, stream: ClientStream) => void,
  ): ClientStream;
  ping(cb: (err: Error | null) => void): void;
  on(event: string, fn: (...args: unknown[]) => void): void;
}

/**
 * openWs: a client WebSocket offering `protocols` verbatim. `ws` refuses `SPDY/3.1+portforward.k8s.io`
 * as a sub-protocol ('/' is not a token character; Go's client sends it anyway), so the handshake is
 * made here with node:http and the upgraded socket handed to `ws` as a client (masking its frames).
 * Resolves with the WebSocket, or with the refusal's status code and body.
 */
export function openWs(url: string, protocols: string[]): Promise<WebSocket | { code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url.replace(/^ws:/, 'http:'), {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...(protocols.length ? { 'Sec-WebSocket-Protocol': protocols.join(', ') } : {}),
      },
    });
    req.on('upgrade', (res, socket, head) => {
      if (res.headers['sec-websocket-protocol'] !== protocols[0])
        return reject(new Error(`negotiated ${res.headers['sec-websocket-protocol']}`));
      const ws = new WebSocket(null as unknown as string, undefined, { autoPong: true });
      (ws as unknown as { _isServer: boolean })._isServer = false; // a client: mask what it sends
      (ws as unknown as { setSocket(s: unknown, h: Buffer, o: object): void }).setSocket(socket, head, { maxPayload: 0 });
      resolve(ws);
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * spdyClient: a SPDY/3.1 client session over `ws` (whose close, `closed`, ends it): open() a stream
 * with headers, pair() a request's error and data streams as kubectl does, roundTrip() a PING.
 */
export function spdyClient(ws: WebSocket, closed: Promise<number>) {
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _e, cb) {
      if (ws.readyState === WebSocket.OPEN) ws.send(chunk, cb);
      else cb();
    },
  });
  ws.on('message', (m: Buffer) => duplex.push(Buffer.from(m)));
  void closed.then(() => duplex.push(null));
  const conn = (transport as unknown as { connection: { create(s: Duplex, o: object): ClientConnection } }).connection.create(duplex, {
    protocol: 'spdy',
    isServer: false,
  });
  conn.on('error', () => {});
  conn.start(3.1);
  const open = (headers: Record<string, string>) => {
    let markSent: () => void = () => {};
    const sent = new Promise<void>((resolve) => (markSent = resolve));
    // The SYN_STREAM goes out on a later tick: wait for it (sent) before ending a stream, or a
    // FIN of the next request could overtake it, and SPDY drops a stream ID lower than one seen.
    const stream = conn.request({ method: 'POST', path: '/', headers }, () => markSent());
    stream.on('error', () => {});
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    let answered = false;
    stream.on('response', () => (answered = true));
    const ended = new Promise<void>((resolve) => stream.on('end', () => resolve()));
    const gone = new Promise<void>((resolve) => stream.on('close', () => resolve()));
    return { stream, sent, text: () => text, answered: () => answered, ended, gone };
  };
  /** pair opens request `id`'s error stream (which the client closes at once, as kubectl) and its data stream. */
  const pair = async (id: string, port = '80') => {
    const error = open({ streamtype: 'error', port, requestid: id });
    await error.sent;
    error.stream.end();
    const data = open({ streamtype: 'data', port, requestid: id });
    await data.sent;
    return { error, data };
  };
  /** roundTrip: a PING answered, so the server has handled every frame sent before it. */
  const roundTrip = () => new Promise<void>((resolve, reject) => conn.ping((err) => (err ? reject(err) : resolve())));
  return { conn, open, pair, roundTrip };
}

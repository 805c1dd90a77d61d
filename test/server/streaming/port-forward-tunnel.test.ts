// The SPDY-over-WebSocket port-forward of the Kubernetes API (src/server/streaming/port-forward-tunnel.ts)
// on a real uWebSockets.js server with a fake host, driven by a SPDY/3.1 client (spdy-transport in
// client mode, over `ws`): stream pairs by requestid, the relay both ways with half-close, errors on
// the error stream in the kubelet's words, rejected and duplicate streams, the upgrade's refusals,
// and garbage in place of SPDY.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import { kPortForwardTunnelProtocol } from '../../../src/server/streaming/port-forward-tunnel.js';
import { newLogger } from '../../../src/shared/logging.js';
import { waitFor } from '../../support/docker.js';
import { fakePortForwardHost } from '../../support/fake-port-forward.js';
import { openWs, spdyClient } from '../../support/spdy-tunnel-client.js';

let server: AgentServer | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

async function start() {
  const { host, sessions } = fakePortForwardHost();
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  const url = (pod = 'web') => `ws://127.0.0.1:${server!.port}/api/v1/namespaces/default/pods/${pod}/portforward`;
  /** dial opens the tunnel and a SPDY client session over it. */
  const dial = async (pod = 'web') => {
    const ws = await openWs(url(pod), [kPortForwardTunnelProtocol]);
    if (!(ws instanceof WebSocket)) throw new Error(`upgrade refused: ${ws.code} ${ws.body}`);
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    const { open, pair } = spdyClient(ws, closed);
    return { ws, closed, open, pair };
  };
  const upgradeStatus = async (protocols: string[], pod = 'web') => {
    const r = await openWs(url(pod), protocols);
    if (r instanceof WebSocket) {
      r.close();
      return { code: 101, body: '' };
    }
    return r;
  };
  return { sessions, dial, upgradeStatus };
}

describe('WS /api/v1/namespaces/{ns}/pods/{pod}/portforward (SPDY/3.1 tunnel)', () => {
  it("relays a request's data stream to one pod connection both ways, half-closes it, and ends both streams when the pod does", async () => {
    const { sessions, dial } = await start();
    const t = await dial();
    const { error, data } = await t.pair('0', '8080');
    await waitFor(() => sessions.length === 1, { description: 'the pod connection opened once both streams came' });
    expect(sessions[0].spec).toEqual({ reach: { kind: 'direct', host: '127.0.0.1' }, port: 8080 });
    data.stream.write('hello pod');
    await waitFor(() => Buffer.concat(sessions[0].written).toString() === 'hello pod', { description: 'client bytes at the pod' });
    sessions[0].push(Buffer.from('hello client'));
    await waitFor(() => data.text() === 'hello client', { description: 'pod bytes at the client' });
    await waitFor(() => sessions[0].acked === 'hello client'.length, { description: 'credit returned once the tunnel took the bytes' });
    expect(sessions[0].halfClosed).toBe(false);
    data.stream.end();
    await waitFor(() => sessions[0].halfClosed, { description: 'the client FIN half-closes the pod side' });
    expect(sessions[0].closed).toBe(false);
    sessions[0].end();
    await data.ended;
    await error.ended;
    expect(error.text()).toBe('');
    t.ws.close();
  });

  it("writes the kubelet's error text on the error stream when the pod connection fails", async () => {
    const { sessions, dial } = await start();
    const t = await dial();
    const { error, data } = await t.pair('7', '7070');
    await waitFor(() => sessions.length === 1, { description: 'session' });
    sessions[0].end('dial tcp 127.0.0.1:7070: connect: connection refused');
    await error.ended;
    await data.ended;
    expect(error.text()).toBe('error forwarding port 7070 to pod sb1, uid uid-1: dial tcp 127.0.0.1:7070: connect: connection refused');
    t.ws.close();
  });

  it('pairs streams by requestid, so two requests are two pod connections', async () => {
    const { sessions, dial } = await start();
    const t = await dial();
    const a = await t.pair('1', '81');
    const b = await t.pair('2', '82');
    await waitFor(() => sessions.length === 2, { description: 'two sessions' });
    expect(sessions.map((s) => s.spec.port).sort()).toEqual([81, 82]);
    const s82 = sessions.find((s) => s.spec.port === 82)!;
    s82.push(Buffer.from('to b'));
    await waitFor(() => b.data.text() === 'to b', { description: 'b got its bytes' });
    expect(a.data.text()).toBe('');
    t.ws.close();
    await t.closed;
    await waitFor(() => sessions.every((s) => s.closed), { description: 'closing the WebSocket closes every pod connection' });
  });

  it('resets a stream of another type or without a valid port, and reports a second data stream of a request', async () => {
    const { sessions, dial } = await start();
    const t = await dial();
    const bogus = t.open({ streamtype: 'bogus', port: '80', requestid: '9' });
    await bogus.gone;
    const noPort = t.open({ streamtype: 'data', requestid: '9' });
    await noPort.gone;
    const bigPort = t.open({ streamtype: 'data', port: '70000', requestid: '9' });
    await bigPort.gone;
    const { error } = await t.pair('3');
    await waitFor(() => sessions.length === 1, { description: 'the valid pair still works' });
    t.open({ streamtype: 'data', port: '80', requestid: '3' });
    await waitFor(() => error.text().includes('already assigned'), { description: 'duplicate reported' });
    expect(error.text()).toBe('error processing stream for request 3: data stream already assigned');
    expect(sessions).toHaveLength(1);
    t.ws.close();
  });

  it('refuses an upgrade with no protocol it serves, for an unknown pod, and answers plain HTTP with 400', async () => {
    const { upgradeStatus } = await start();
    const other = await upgradeStatus(['portforward.k8s.io']);
    expect(other.code).toBe(400);
    expect(JSON.parse(other.body).message).toContain(`supports ${kPortForwardTunnelProtocol}, v4.channel.k8s.io, v4.base64.channel.k8s.io`);
    // v4.channel.k8s.io is served here too (issue 39), with its ports in ?ports=.
    const v4 = await upgradeStatus(['v4.channel.k8s.io']);
    expect(v4.code).toBe(400);
    expect(JSON.parse(v4.body).message).toBe('query parameter "ports" is required');
    expect((await upgradeStatus([kPortForwardTunnelProtocol], 'nope')).code).toBe(404);
    const plain = await fetch(`http://127.0.0.1:${server!.port}/api/v1/namespaces/default/pods/web/portforward`, { method: 'POST' });
    expect(plain.status).toBe(400);
    expect(((await plain.json()) as { message: string }).message).toContain('Upgrade request required');
  });

  it('closes a tunnel that carries garbage instead of SPDY, and goes on serving the next one', async () => {
    const { sessions, dial } = await start();
    const bad = await dial();
    bad.ws.send(Buffer.concat([Buffer.from([0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x20]), randomBytes(64)]));
    expect(await bad.closed).toBe(1002);
    const text = await dial();
    text.ws.send('not binary');
    expect(await text.closed).toBe(1003);
    const good = await dial();
    const { data } = await good.pair('0');
    await waitFor(() => sessions.length === 1, { description: 'a new tunnel works' });
    sessions[0].push(Buffer.from('ok'));
    await waitFor(() => data.text() === 'ok', { description: 'bytes' });
    good.ws.close();
  });
});

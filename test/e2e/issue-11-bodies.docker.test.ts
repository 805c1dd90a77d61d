// Regression tests of issue 11 (break-test findings), request bodies and protocol edges, against
// the real agent (in process) and dockerd.
// Finding 1: bodies are decoded off the main thread; a body that exhausts the decoder thread
// answers 413 and the next body gets a fresh thread. Finding 9: conflicting Content-Length
// headers answer 400; a slow upload answers the README's 408 Status; a sandbox name taken by a
// foreign container gets an event and a pod status that say so.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import type { Event, Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, docker, PAUSE_IMAGE, waitFor } from '../support/docker.js';
import { useTestNodes, type TestNode } from '../support/agent.js';

const smallPod = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }] },
  });

/** A ~960 KB YAML Pod with 70,000 labels: the yaml parser needs well over 16 MiB of heap for it. */
const heavyBody =
  'apiVersion: v1\nkind: Pod\nmetadata:\n  name: heavy\n  labels:\n' + Array.from({ length: 70_000 }, (_, i) => `    k${i}: v\n`).join('');

/**
 * rawRequest writes `head` (request line and headers, CRLF-separated, without the blank line) and
 * `body` to the agent over a plain socket, and resolves with what the agent sent before it closed
 * the connection or once one whole response (by its Content-Length) is in. The connection stays
 * open after the write, so a body shorter than its Content-Length is a slow upload.
 */
function rawRequest(node: TestNode, head: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(node.agent.port, '127.0.0.1');
    let got = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      got += d;
      // One response is enough: stop once its body (Content-Length) is in.
      const end = got.indexOf('\r\n\r\n');
      const len = /content-length: *(\d+)/i.exec(got.slice(0, end));
      if (end >= 0 && len && got.length - end - 4 >= Number(len[1])) socket.destroy();
    });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
    // As node.api: the node's administrator, so the request gets past authorization to the edge under test.
    socket.write(`${head}\r\nAuthorization: Bearer ${node.adminToken()}\r\nConnection: close\r\n\r\n${body}`);
  });
}

function parseResponse(raw: string): { code: number; headers: string; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  return { code: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0), headers: raw.slice(0, end), body: raw.slice(end + 4) };
}

describe.skipIf(!inject('dockerAvailable'))('issue 11: request bodies and protocol edges', () => {
  const start = useTestNodes();

  it('finding 1: a body that exhausts the decoder thread answers 413 with a Status, and the next POST gets a fresh thread (201) while /healthz stays 200', async () => {
    const node = await start({ bodyDecoderMaxHeapMb: 16 });
    const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: heavyBody });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect(node.warnings.some((w) => w.msg === 'Body decoder thread ended; a new one takes its place')).toBe(true);

    const ok = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: smallPod('after-oom') });
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { metadata: { name: string } }).metadata.name).toBe('after-oom');
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it.each([
    ['a self-referencing alias', 'a: &a [*a]\n'],
    ['an alias to an anchor defined later', 'a: *b\nb: &b x\n'],
  ])('finding 1: a body with %s answers 400 with a Status, and the agent stays healthy', async (_what, body) => {
    const node = await start();
    const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it('finding 9: two different Content-Length headers are refused with 400 and a Status; two equal ones are one', async () => {
    const node = await start();
    const body = smallPod('cl-twice');
    const two = parseResponse(
      await rawRequest(
        node,
        `POST /pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length - 5}`,
        body,
      ),
    );
    expect(two.code).toBe(400);
    expect(JSON.parse(two.body)).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(JSON.parse(two.body).message).toMatch(/Content-Length/);
    expect(node.agent.listPods().some((p) => p.metadata?.name === 'cl-twice')).toBe(false);
    const same = parseResponse(
      await rawRequest(
        node,
        `POST /pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: ${body.length}`,
        body,
      ),
    );
    expect(same.code).toBe(201);
  });

  it('finding 9: a body that does not arrive in time answers 408 with a Status (not a silent close)', async () => {
    const node = await start();
    // Announce 100 bytes, send 10, then nothing: the agent must answer, not drop the connection.
    const slow = parseResponse(
      await rawRequest(node, 'POST /pods HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100', '{"apiVersi'),
    );
    expect(slow.code).toBe(408);
    expect(JSON.parse(slow.body)).toMatchObject({ kind: 'Status', reason: 'Timeout', code: 408 });
  });

  it('finding 9: a pod whose sandbox name is taken by a foreign container gets an event and container statuses that say so, and the foreign container is left alone', async () => {
    const node = await start();
    const uid = randomUUID();
    // The name the agent will give the pod's first sandbox (DESIGN.md §4), held by a container of this test's own.
    const foreign = await docker.createContainer({
      name: `k8s_POD_squatted_default_${uid}_0`,
      Image: PAUSE_IMAGE,
      Labels: { 'kubelet-ts-test.issue-11-bodies': node.nodeName },
    });
    try {
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'squatted', uid },
        spec: { containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sleep', '3600'] }] },
      });
      expect((await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })).status).toBe(201);
      const event = await waitFor(
        async () => {
          const list = (await (await node.api('/events')).json()) as { items: Event[] };
          return list.items.find((e) => e.involvedObject?.name === 'squatted' && e.reason === 'FailedCreatePodSandBox');
        },
        { timeoutMs: 60_000 },
      );
      expect(event.message).toContain('did not create');
      expect(event.message).toContain(`k8s_POD_squatted_default_${uid}_0`);
      const pod = await waitFor(
        async () => {
          const p = (await (await node.api('/pods/default/squatted')).json()) as Pod;
          return p.status?.containerStatuses?.[0]?.state?.waiting?.message ? p : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(pod.status!.containerStatuses![0].state!.waiting).toMatchObject({
        reason: 'ContainerCreating',
        message: expect.stringContaining('did not create'),
      });
      // Untouched: still there, never started.
      expect((await foreign.inspect()).State.Status).toBe('created');
    } finally {
      await foreign.remove({ force: true });
    }
  });
});

// End-to-end (issue 39, items 1 and 2): a streamed answer (the API's `?watch=true`, `log?follow=true`
// on the API path and on the kubelet's `/containerLogs`) ends its header block at once and puts
// each chunk on the wire whole, its closing CRLF included, as the apiserver (net/http's chunked
// writer, flushed per event) does. Seen on a raw socket, and with the official Python client, whose
// urllib3 reads a chunk only once its CRLF is in.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE } from '../support/docker.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';
import { waitFor } from '../support/docker.js';

const kTestMs = 120_000;

/** ChunkedRead: what a raw socket holds of a chunked HTTP/1.1 answer: the header block (once whole), the whole chunks, and the bytes of an unfinished one. */
interface ChunkedRead {
  head?: string;
  chunks: string[];
  rest: Buffer;
  ended: boolean;
}

/** parseChunked splits `buf` into the header block, the complete chunks (size line, data and CRLF all in) and what is left. */
function parseChunked(buf: Buffer): ChunkedRead {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return { chunks: [], rest: buf, ended: false };
  const out: ChunkedRead = { head: buf.subarray(0, end).toString(), chunks: [], rest: Buffer.alloc(0), ended: false };
  let at = end + 4;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(buf.subarray(at, eol).toString().split(';')[0], 16);
    if (size === 0) {
      out.ended = true;
      return out;
    }
    if (buf.length < eol + 2 + size + 2) break;
    expect(buf.subarray(eol + 2 + size, eol + 4 + size).toString()).toBe('\r\n');
    out.chunks.push(buf.subarray(eol + 2, eol + 2 + size).toString());
    at = eol + 4 + size;
  }
  out.rest = buf.subarray(at);
  return out;
}

/** rawGet sends GET `path` with the admin token on a plain socket and keeps every byte it gets. */
function rawGet(node: TestNode, path: string) {
  const socket = net.connect(node.agent.port, '127.0.0.1');
  let buf = Buffer.alloc(0);
  socket.on('data', (c: Buffer) => (buf = Buffer.concat([buf, c])));
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${node.adminToken()}\r\n\r\n`);
  return { read: () => parseChunked(buf), close: () => socket.destroy() };
}

describe.skipIf(!inject('dockerAvailable'))('streams framed whole, headers at once (issue 39 items 1, 2)', () => {
  let node: TestNode;
  const label = `streams-${process.pid}`;
  const python = usePythonClient();
  const sockets: { close(): void }[] = [];

  const createPod = async (name: string, command: string, labels: Record<string, string> = {}) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { test: label, ...labels } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }],
      },
    };
    const res = await node.api('/api/v1/namespaces/default/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(pod),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  };
  const running = (name: string) =>
    waitFor(
      async () => {
        const res = await node.api(`/api/v1/namespaces/default/pods/${name}`);
        const pod = res.status === 200 ? await res.json() : undefined;
        return pod && isRunningAndReady(pod) ? pod : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` },
    );

  beforeAll(async () => {
    node = await startTestNode({ tlsPort: 0 });
    // One line, then silence: a follow must show the line with nothing written after it.
    await createPod('quiet', 'echo first-line; exec sleep 3600');
    await running('quiet');
  }, kTestMs);
  afterAll(async () => {
    for (const s of sockets.splice(0)) s.close();
    await node?.cleanup();
  });

  it(
    'a watch on an empty selector gets its whole header block before any event; each event is a whole chunk before the next exists',
    async () => {
      const raw = rawGet(node, `/api/v1/namespaces/default/pods?watch=true&labelSelector=${encodeURIComponent(`test=${label},w=one`)}`);
      sockets.push(raw);
      const head = await waitFor(() => raw.read().head, { timeoutMs: 10_000, description: 'the header block of a watch with no event' });
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
      expect(raw.read().chunks).toEqual([]);
      // Event 1 (ADDED): whole, CRLF included, before anything else is written.
      await createPod('watched', 'exec sleep 3600', { w: 'one' });
      const first = await waitFor(() => (raw.read().chunks.length > 0 ? raw.read() : undefined), {
        timeoutMs: 10_000,
        description: 'the ADDED chunk',
      });
      expect(JSON.parse(first.chunks[0]).type).toBe('ADDED');
      // Every chunk seen is complete; any later bytes belong to later events, each whole as it came.
      await running('watched');
      const later = await waitFor(() => (raw.read().chunks.length > first.chunks.length ? raw.read() : undefined), {
        timeoutMs: 30_000,
        description: 'MODIFIED chunks',
      });
      for (const c of later.chunks) expect(['ADDED', 'MODIFIED']).toContain(JSON.parse(c).type);
      // The pod is settled: nothing more is written, and nothing is held back of what was.
      await new Promise((r) => setTimeout(r, 1500));
      expect(raw.read().rest.length).toBe(0);
    },
    kTestMs,
  );

  it.each([
    ['the API path', '/api/v1/namespaces/default/pods/quiet/log?follow=true&container=main'],
    ['the kubelet path', '/containerLogs/default/quiet/main?follow=true'],
  ])(
    'a log follow of a container gone quiet shows its last line whole (%s)',
    async (_what, path) => {
      const raw = rawGet(node, path);
      sockets.push(raw);
      const read = await waitFor(() => (raw.read().chunks.join('').includes('first-line\n') ? raw.read() : undefined), {
        timeoutMs: 10_000,
        description: 'the line in whole chunks',
      });
      expect(read.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(read.rest.length).toBe(0);
    },
    kTestMs,
  );

  it(
    'a follow of a silent container gets its header block before any byte of the log',
    async () => {
      await createPod('silent', 'exec sleep 3600');
      await running('silent');
      const raw = rawGet(node, '/api/v1/namespaces/default/pods/silent/log?follow=true');
      sockets.push(raw);
      const head = await waitFor(() => raw.read().head, { timeoutMs: 10_000, description: 'the header block of a silent follow' });
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(raw.read().chunks).toEqual([]);
    },
    kTestMs,
  );

  describe.skipIf(!kHavePythonClient)('the official Python client', () => {
    it(
      'watch.Watch().stream(list_namespaced_pod) gets the ADDED of a settled pod and the MODIFIED of a label, each with nothing written after it',
      async () => {
        const settled = await running('quiet');
        const run = await python(
          node,
          `
from kubernetes import watch
import kts
w = watch.Watch()
for e in w.stream(kts.core().list_namespaced_pod, 'default', field_selector='metadata.name=quiet', timeout_seconds=60):
    kts.emit(e['type'], name=e['object'].metadata.name, labels=e['object'].metadata.labels, rv=e['object'].metadata.resource_version)
`,
        );
        await run.until((e) => e.event === 'ADDED' && e.name === 'quiet', 'ADDED quiet', 20_000);
        expect(settled.metadata.name).toBe('quiet');
        const patched = await node.api('/api/v1/namespaces/default/pods/quiet', {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/merge-patch+json' },
          body: JSON.stringify({ metadata: { labels: { seen: 'yes' } } }),
        });
        expect(patched.status).toBe(200);
        const modified = await run.until(
          (e) => e.event === 'MODIFIED' && (e.labels as Record<string, string>)?.seen === 'yes',
          'MODIFIED with the label',
          20_000,
        );
        expect(modified.name).toBe('quiet');
      },
      kTestMs,
    );

    it(
      'a watch that the server ends (timeout_seconds) and a log read to its end finish cleanly: the last chunk and its trailer parse',
      async () => {
        const run = await python(
          node,
          `
from kubernetes import watch
import kts
api = kts.core()
n = 0
for e in watch.Watch().stream(api.list_namespaced_pod, 'default', field_selector='metadata.name=quiet', timeout_seconds=2):
    n += 1
kts.emit('watch-ended', events=n)
kts.emit('log', text=api.read_namespaced_pod_log('quiet', 'default', container='main'))
kts.emit('again', text=api.read_namespaced_pod_log('quiet', 'default', container='main'))
`,
        );
        expect((await run.until((e) => e.event === 'watch-ended', 'the watch to end', 30_000)).events).toBe(1);
        expect((await run.until((e) => e.event === 'log', 'the whole log', 20_000)).text).toBe('first-line\n');
        // The same pooled connection serves the next request: nothing was left unread after the last chunk.
        expect((await run.until((e) => e.event === 'again', 'a second read', 20_000)).text).toBe('first-line\n');
      },
      kTestMs,
    );

    it(
      'read_namespaced_pod_log(follow=True, _preload_content=False) of a container that printed one line and sleeps shows that line',
      async () => {
        const run = await python(
          node,
          `
import kts
resp = kts.core().read_namespaced_pod_log('quiet', 'default', container='main', follow=True, _preload_content=False)
for chunk in resp.stream(decode_content=False):
    kts.emit('chunk', text=chunk.decode())
`,
        );
        const got = await run.until((e) => e.event === 'chunk' && String(e.text).includes('first-line'), 'the line', 20_000);
        expect(got.text).toBe('first-line\n');
      },
      kTestMs,
    );
  });
});

// The API's body decoder (src/main/serving/body-decoder.ts) on real threads (the manifest worker, task
// decodePodsBody), and how the server answers each of its refusals (issue 11, finding 1).
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { newBodyDecoder } from '../../../src/main/serving/body-decoder.js';
import { newBodyDecoderPool, type BodyDecoderPool } from '../../../src/main/pool/worker-pool.js';
import type { AgentHost } from '../../../src/server/host/agent-host.js';
import { decodeObjectBody } from '../../../src/shared/kube-protobuf.js';
import { createServer } from '../../../src/server/server.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { DecodedPodsBody } from '../../../src/shared/pods-body.js';

const pod = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
const logger = newLogger('silent');

describe('body decoder', () => {
  const decoders: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(decoders.map((d) => d.close()));
  });

  it('decodes a body on its thread: the pods defaulted, or the refusal as data', async () => {
    const d = newBodyDecoder({}, logger);
    decoders.push(d);
    const ok = await d.decode({ text: pod('web'), format: 'json' });
    expect(ok).toMatchObject({
      ok: true,
      single: true,
      pods: [{ metadata: { name: 'web', namespace: 'default' }, spec: { restartPolicy: 'Always' } }],
    });
    expect(await d.decode({ text: '[[[', format: 'yaml' })).toMatchObject({ ok: false, kind: 'unparsable' });
    expect(await d.decode({ text: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{}}', format: 'json' })).toMatchObject({
      ok: false,
      kind: 'invalid',
      name: 'x',
    });
  });

  it('decodes a protobuf body on its thread (task decodeProtobufBody) as this thread would, or refuses it as unparsable', async () => {
    const d = newBodyDecoder({}, logger);
    decoders.push(d);
    const body = readFileSync(new URL('../../fixtures/kubectl-debug/copy-to-pod.pb', import.meta.url));
    expect(await d.decodeProtobuf({ body, objectKind: 'Pod' })).toEqual({ ok: true, object: decodeObjectBody(body, 'Pod') });
    expect(await d.decodeProtobuf({ body: body.subarray(0, 60), objectKind: 'Pod' })).toMatchObject({
      ok: false,
      kind: 'unparsable',
      message: expect.stringContaining('could not be decoded'),
    });
  });

  it('refuses with busy (429) the bodies past the thread and its queue, decodes the rest, and takes bodies again afterwards', async () => {
    const d = newBodyDecoder({ threads: 1, maxQueue: 2 }, logger);
    decoders.push(d);
    // All submitted in one tick: none can finish before the last is queued.
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => d.decode({ text: pod(`p${i}`), format: 'json' })));
    const busy = results.filter((r) => !r.ok && r.kind === 'busy');
    expect(busy.length).toBe(7);
    expect(busy[0]).toMatchObject({ retryAfterSeconds: 1 });
    expect(results.filter((r) => r.ok).length).toBe(3);
    expect(results.every((r) => r.ok || r.kind === 'busy')).toBe(true);
    expect(await d.decode({ text: pod('later'), format: 'json' })).toMatchObject({ ok: true });
  });

  it('answers tooLarge when the thread runs out of memory, and the next body gets a fresh thread', async () => {
    let pool: BodyDecoderPool | undefined;
    const d = newBodyDecoder({ maxHeapMb: 16 }, logger, (o) => (pool = newBodyDecoderPool(o)));
    decoders.push(d);
    const heavy =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: heavy\n  labels:\n' +
      Array.from({ length: 70_000 }, (_, i) => `    k${i}: v\n`).join('');
    expect(await d.decode({ text: heavy, format: 'yaml' })).toMatchObject({
      ok: false,
      kind: 'tooLarge',
      message: expect.stringContaining('16 MiB'),
    });
    expect(pool).toBeDefined();
    expect(await d.decode({ text: pod('after'), format: 'json' })).toMatchObject({ ok: true, pods: [{ metadata: { name: 'after' } }] });
  });

  it('answers tooLarge when decoding takes longer than decodeTimeoutMs (its thread is ended)', async () => {
    const d = newBodyDecoder({ decodeTimeoutMs: 1 }, logger);
    decoders.push(d);
    const big =
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\n  labels:\n' +
      Array.from({ length: 30_000 }, (_, i) => `    k${i}: v\n`).join('');
    expect(await d.decode({ text: big, format: 'yaml' })).toMatchObject({
      ok: false,
      kind: 'tooLarge',
      message: expect.stringContaining('1 ms'),
    });
  });
});

describe('server answers to the decoder refusals', () => {
  it.each<[DecodedPodsBody, number, string, Record<string, string>]>([
    [
      { ok: false, kind: 'busy', message: 'Too many requests, please try again later', retryAfterSeconds: 1 },
      429,
      'TooManyRequests',
      { 'retry-after': '1' },
    ],
    [{ ok: false, kind: 'tooLarge', message: 'the request body is too large to decode' }, 413, 'RequestEntityTooLarge', {}],
    [{ ok: false, kind: 'unparsable', message: 'the request body could not be decoded: x' }, 400, 'BadRequest', {}],
  ])('a %j refusal answers %i %s with a Status', async (refusal, code, reason, headers) => {
    const host: AgentHost = {
      listPods: () => [],
      getPod: () => undefined,
      healthz: () => ({ ok: true, checks: [] }),
      decodePodsBody: async () => refusal,
      submitPods: async () => {
        throw new Error('a refused body reached submitPods');
      },
    };
    const server = await createServer(host, { address: '127.0.0.1', port: 0, logger });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/pods`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: pod('x'),
      });
      expect(res.status).toBe(code);
      for (const [k, v] of Object.entries(headers)) expect(res.headers.get(k)).toBe(v);
      expect(await res.json()).toMatchObject({ kind: 'Status', code, reason, message: (refusal as { message: string }).message });
    } finally {
      server.close();
    }
  });
});

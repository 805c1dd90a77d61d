// Break test (session 45), finding 7: protobuf request bodies are decoded on the main thread.
// `decodeObjectBody` (src/shared/kube-protobuf.ts) runs protobufjs and the JSON conversion
// synchronously in the request handler for the self reviews, Namespaces, ConfigMaps/Secrets and the
// protobuf Pod of `POST /api/v1/namespaces/{ns}/pods` (jsonRequestBody, before the body decoder
// thread). A body under the 1 MiB limit holding 499,500 empty `containers` entries takes about 1 s
// of the event loop to decode (measured in-process, 2026-12-07), and the self reviews accept it from
// any authenticated user, one bound to nothing. The README promises that request bodies never reach
// the main thread's parsers. Asserted by order, not by time: a /healthz sent after such bodies were
// fully received must not wait behind their decoding.
// Fixed (fixproto): the envelope's kind is read first, cheaply, and a body of another kind than the
// route's is refused (400) before any decoding; a body of the right kind is decoded on the body
// decoder thread. So the heavy body here is a SelfSubjectAccessReview (its spec's field selector
// holding 499,500 empty requirements): a Pod-kind one is now refused at once, and the order of
// /healthz after six cheap refusals would say nothing (the second case checks that refusal).
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestNode, type TestNode } from '../support/agent.js';

const kTestMs = 120_000;
const kNobody = 'break45-nobody-token-0123456789abcdef012';

/** varint encodes `n` as a protobuf base-128 varint. */
function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
/** field: a length-delimited protobuf field `f` holding `buf`. */
const field = (f: number, buf: Buffer) => Buffer.concat([varint((f << 3) | 2), varint(buf.length), buf]);

/** emptyEntries: `n` empty entries of length-delimited field 2 (0x12 0x00 each). */
function emptyEntries(n: number): Buffer {
  const out = Buffer.alloc(2 * n);
  for (let i = 0; i < out.length; i += 2) out[i] = 0x12;
  return out;
}

/** envelope: a `k8s\0` runtime.Unknown of `apiVersion` and `kind` around the object bytes `raw`. */
function envelope(apiVersion: string, kind: string, raw: Buffer): Buffer {
  const typeMeta = Buffer.concat([field(1, Buffer.from(apiVersion)), field(2, Buffer.from(kind))]);
  return Buffer.concat([Buffer.from('k8s\0'), field(1, typeMeta), field(2, raw)]);
}

/**
 * heavyReviewBody: a SelfSubjectAccessReview whose spec.resourceAttributes.fieldSelector holds
 * 499,500 empty requirements (SelfSubjectAccessReview.spec 2 → resourceAttributes 1 → fieldSelector 8 → requirements 2).
 */
function heavyReviewBody(): Buffer {
  return envelope('authorization.k8s.io/v1', 'SelfSubjectAccessReview', field(2, field(1, field(8, emptyEntries(499_500)))));
}

/** heavyPodBody: a runtime.Unknown envelope of kind Pod whose spec holds 499,500 empty containers (999,000 bytes of them). */
function heavyPodBody(): Buffer {
  return envelope('v1', 'Pod', field(2, emptyEntries(499_500)));
}

describe.skipIf(!inject('dockerAvailable'))('break 45: protobuf bodies and the main thread', () => {
  let node: TestNode;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-break45pb-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, `${kNobody},nobody,uid-nobody,""\n`);
    node = await startTestNode({ tokenAuthFile: tokens });
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'finding 7: /healthz is not held behind the decoding of protobuf review bodies of a user bound to nothing',
    async () => {
      const body = heavyReviewBody();
      expect(body.length).toBeLessThan(1024 * 1024);
      const order: string[] = [];
      const post = (i: number) =>
        new Promise<{ sent: Promise<void>; done: Promise<void> }>((resolveOuter) => {
          let sent!: () => void;
          const sentP = new Promise<void>((r) => (sent = r));
          const done = new Promise<void>((resolve) => {
            const req = httpRequest(
              {
                host: '127.0.0.1',
                port: node.agent.port,
                method: 'POST',
                path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
                headers: {
                  Authorization: `Bearer ${kNobody}`,
                  'Content-Type': 'application/vnd.kubernetes.protobuf',
                  'Content-Length': body.length,
                },
              },
              (res) => {
                res.resume();
                res.on('end', () => {
                  order.push(`review${i}:${res.statusCode}`);
                  resolve();
                });
              },
            );
            req.on('error', () => {
              order.push(`review${i}:error`);
              resolve();
            });
            req.end(body, () => sent());
          });
          resolveOuter({ sent: sentP, done });
        });
      const reviews = await Promise.all([0, 1, 2, 3, 4, 5].map(post));
      await Promise.all(reviews.map((r) => r.sent));
      const health = fetch(`http://127.0.0.1:${node.agent.port}/healthz`).then(async (r) => {
        order.push(`healthz:${r.status}:${await r.text()}`);
      });
      await Promise.all([health, ...reviews.map((r) => r.done)]);
      // Every review was answered; the health check must not have waited for most of them. (Not "for
      // all": a review's reply echoes its 499,500 requirements, ~3 MB, and the first one's can still be
      // arriving after /healthz even when every body was decoded on the main thread.)
      expect(order.filter((o) => o.startsWith('review'))).toHaveLength(6);
      expect(order.indexOf('healthz:200:ok')).toBeGreaterThanOrEqual(0);
      expect(order.indexOf('healthz:200:ok'), order.join(' ')).toBeLessThan(3);
    },
    kTestMs,
  );

  it(
    'finding 7: a review route refuses a protobuf body of another kind (400, naming it) before decoding it',
    async () => {
      const res = await fetch(`http://127.0.0.1:${node.agent.port}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${kNobody}`, 'Content-Type': 'application/vnd.kubernetes.protobuf' },
        body: new Uint8Array(heavyPodBody()),
      });
      const status = (await res.json()) as { code?: number; reason?: string; message?: string };
      expect(res.status).toBe(400);
      expect(status).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'the protobuf body holds a "Pod" (apiVersion "v1"), this request takes a SelfSubjectAccessReview',
      });
    },
    kTestMs,
  );
});

// Issue #39 item 8: protobuf request bodies decoded from the vendored k8s.io/api definitions
// (src/shared/kube-protobuf.ts, src/server/kube-api/protobuf-body.ts), with the bodies kubectl 1.32 really sent (captured by a small
// listener: test/fixtures/kubectl-debug/*.pb) and with messages encoded here from the same .proto
// files, for the apimachinery types whose JSON is not their message shape.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { decodeObjectBody, envelopeTypeMeta } from '../../../src/shared/kube-protobuf.js';
import { decodeBodyOffThread, jsonRequestBody } from '../../../src/server/kube-api/protobuf-body.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/kubectl-debug/${name}`, import.meta.url));
const kProtoDir = new URL('../../../src/shared/kube-proto/', import.meta.url);

/** encode: `object` (protobufjs's field shape) as a `k8s\0` envelope of `apiVersion`/`kind`, from the vendored definitions. */
function encode(apiVersion: string, kind: string, typeName: string, object: Record<string, unknown>): Buffer {
  const root = new protobuf.Root();
  root.resolvePath = (_o, target) => (target.startsWith('/') ? target : fileURLToPath(new URL(target, kProtoDir)));
  root.loadSync('k8s.io/api/core/v1/generated.proto', { keepCase: true });
  const type = root.lookupType(typeName);
  const raw = type.encode(type.fromObject(object)).finish();
  const unknown = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const env = unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })).finish();
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(env)]);
}

describe('protobuf request bodies (k8s.io/api generated.proto)', () => {
  it('decodes the Pod of `kubectl debug --copy-to` as its JSON: inline fields, no empty strings, Quantities as strings', () => {
    const pod = decodeObjectBody(fixture('copy-to-pod.pb'), 'Pod');
    expect(pod).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-copy', namespace: 'default' },
      spec: { terminationGracePeriodSeconds: 1 },
    });
    const spec = pod.spec as { containers: Record<string, unknown>[] };
    expect(spec.containers).toHaveLength(2);
    expect(spec.containers[0]).toMatchObject({
      name: 'main',
      command: ['sleep', '3600'],
      ports: [{ containerPort: 8080, protocol: 'TCP' }],
      resources: { limits: { cpu: '250m', memory: '64Mi' } },
    });
    expect(spec.containers[1]).toMatchObject({
      name: 'dbg',
      image: 'kubelet-ts/busybox:1.35',
      command: ['true'],
      terminationMessagePolicy: 'File',
    });
    expect(JSON.stringify(pod)).not.toContain('""');
    expect(pod.metadata).not.toHaveProperty('creationTimestamp');
  });

  it('decodes the Pod of `kubectl debug node/NAME`: host namespaces and the hostPath volume inline', () => {
    const pod = decodeObjectBody(fixture('node-debug-pod.pb'));
    expect(pod.spec).toMatchObject({
      hostPID: true,
      hostNetwork: true,
      hostIPC: true,
      nodeName: 'node-a',
      restartPolicy: 'Never',
      tolerations: [{ operator: 'Exists' }],
      volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
      containers: [{ name: 'debugger', volumeMounts: [{ name: 'host-root', mountPath: '/host', readOnly: false }] }],
    });
    expect((pod.spec as { volumes: object[] }).volumes[0]).not.toHaveProperty('volumeSource');
  });

  it("maps Time, IntOrString, Quantity, bytes and ephemeral containers as apimachinery's JSON does", () => {
    const body = encode('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'p', creationTimestamp: { seconds: 1796601600, nanos: 0 }, deletionTimestamp: {} },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'i',
            readinessProbe: { handler: { httpGet: { port: { type: 1, strVal: 'http' }, path: '/' } } },
            livenessProbe: { handler: { tcpSocket: { port: { type: 0, intVal: 8080 } } } },
            resources: { requests: { cpu: { string: '100m' } } },
          },
        ],
        ephemeralContainers: [{ ephemeralContainerCommon: { name: 'dbg', image: 'busybox', stdin: true }, targetContainerName: 'c' }],
        securityContext: { runAsUser: 0 },
      },
    });
    const pod = decodeObjectBody(body);
    expect(pod.metadata).toEqual({ name: 'p', creationTimestamp: '2026-12-07T00:00:00Z' });
    expect(pod.spec).toMatchObject({
      containers: [
        {
          readinessProbe: { httpGet: { port: 'http', path: '/' } },
          livenessProbe: { tcpSocket: { port: 8080 } },
          resources: { requests: { cpu: '100m' } },
        },
      ],
      ephemeralContainers: [{ name: 'dbg', image: 'busybox', stdin: true, targetContainerName: 'c' }],
      securityContext: { runAsUser: 0 },
    });
    const secret = decodeObjectBody(
      encode('v1', 'Secret', 'k8s.io.api.core.v1.Secret', {
        metadata: { name: 's' },
        data: { key: Buffer.from('hi\0there') },
        stringData: { empty: '' },
      }),
    );
    expect(secret).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { key: Buffer.from('hi\0there').toString('base64') },
      stringData: { empty: '' },
    });
  });

  it("decodes a projected volume's downwardAPI source as the struct it is ({items}), not as a named slice (the kube-api-access volume kubectl debug --copy-to sends back)", () => {
    const body = encode('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'p' },
      spec: {
        containers: [{ name: 'c', image: 'i' }],
        volumes: [
          {
            name: 'kube-api-access-abcde',
            volumeSource: {
              projected: {
                defaultMode: 420,
                sources: [
                  { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
                  { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
                ],
              },
            },
          },
        ],
      },
    });
    expect((decodeObjectBody(body).spec as { volumes: unknown[] }).volumes).toEqual([
      {
        name: 'kube-api-access-abcde',
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
            { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
          ],
        },
      },
    ]);
  });

  it('refuses, naming what failed: no envelope, another kind, a type it has no definition of, bytes that are not the message', async () => {
    expect(() => decodeObjectBody(Buffer.from('{"kind":"Pod"}'))).toThrow(/magic prefix "k8s\\0"/);
    expect(() => decodeObjectBody(fixture('copy-to-pod.pb'), 'Namespace')).toThrow(
      'the protobuf body holds a "Pod" (apiVersion "v1"), this request takes a Namespace',
    );
    expect(() => decodeObjectBody(encode('apps/v1', 'Deployment', 'k8s.io.api.core.v1.Pod', {}))).toThrow(
      /apiVersion "apps\/v1" and kind "Deployment" are not a type this node decodes/,
    );
    const truncated = fixture('copy-to-pod.pb').subarray(0, 60);
    expect(() => decodeObjectBody(truncated)).toThrow(/could not be decoded/);
    const reply = await jsonRequestBody({}, truncated, 'application/vnd.kubernetes.protobuf', 'Pod');
    expect(reply).toMatchObject({
      kind: 'Status',
      code: 400,
      reason: 'BadRequest',
      message: expect.stringContaining('the protobuf body cannot be handled as a Pod:'),
    });
    expect(await jsonRequestBody({}, Buffer.from('{}'), 'application/json', 'Pod')).toEqual({
      body: Buffer.from('{}'),
      contentType: 'application/json',
    });
  });

  it("reads the envelope's kind without decoding the object, and refuses another kind before the decoder thread sees it", async () => {
    const pod = fixture('copy-to-pod.pb');
    expect(envelopeTypeMeta(pod)).toEqual({ apiVersion: 'v1', kind: 'Pod' });
    expect(() => envelopeTypeMeta(Buffer.from('k8s\0\x0a\x7f'))).toThrow(/runtime.Unknown envelope/);
    const seen: string[] = [];
    const host = {
      decodeProtobufBody: async ({ body, objectKind }: { body: Uint8Array; objectKind: string }) => {
        seen.push(objectKind);
        return { ok: true as const, object: decodeObjectBody(body, objectKind) };
      },
    };
    expect(await decodeBodyOffThread(host, pod, ['SelfSubjectAccessReview'])).toMatchObject({
      kind: 'Status',
      code: 400,
      message: 'the protobuf body holds a "Pod" (apiVersion "v1"), this request takes a SelfSubjectAccessReview',
    });
    expect(seen).toEqual([]);
    expect(await decodeBodyOffThread(host, pod, ['Pod'])).toEqual(decodeObjectBody(pod, 'Pod'));
    expect(seen).toEqual(['Pod']);
    const busy = { decodeProtobufBody: async () => ({ ok: false as const, kind: 'busy' as const, message: 'busy', retryAfterSeconds: 1 }) };
    expect(await decodeBodyOffThread(busy, pod, ['Pod'])).toMatchObject({ code: 429, reason: 'TooManyRequests' });
    const tooLarge = { decodeProtobufBody: async () => ({ ok: false as const, kind: 'tooLarge' as const, message: 'too large' }) };
    expect(await decodeBodyOffThread(tooLarge, pod, ['Pod'], 'as a Pod: ')).toMatchObject({ code: 413, message: 'as a Pod: too large' });
  });
});

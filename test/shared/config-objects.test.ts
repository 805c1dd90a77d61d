import { describe, expect, it } from 'vitest';
import {
  configKeyErrors,
  kLastAppliedAnnotation,
  normalizeConfigObject,
  podObjectRefs,
  redactConfigObject,
  validateConfigObjectUpdate,
  withoutAppliedValues,
  type ConfigObject,
} from '../../src/shared/config-objects.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { normalizeObjectEntries, parseManifestDocuments, parseManifests } from '../../src/shared/manifest.js';
import { decodePodsBody } from '../../src/shared/pods-body.js';
import type { Pod } from '../../src/shared/api.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const errorsOf = (raw: unknown) => (normalizeConfigObject(raw).errors ?? []).map(formatFieldError);

describe('normalizeConfigObject', () => {
  it('defaults the namespace and a Secret type, and merges stringData into data (stringData wins)', () => {
    const r = normalizeConfigObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { a: b64('old'), b: b64('keep') },
      stringData: { a: 'new' },
    });
    expect(r.errors).toBeUndefined();
    const s = r.object as ConfigObject & { kind: 'Secret' };
    expect(s.metadata?.namespace).toBe('default');
    expect(s.type).toBe('Opaque');
    expect(s.data).toEqual({ a: b64('new'), b: b64('keep') });
    expect('stringData' in s).toBe(false);
  });

  it.each([
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Bad_Name' } }, 'metadata.name: Invalid value: "Bad_Name"'],
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { 'bad key': 'x' } },
      'data: Invalid value: "bad key": a valid config key',
    ],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { '..x': 'x' } }, "must not start with '..'"],
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'x' }, binaryData: { k: b64('y') } },
      'duplicate of key present in binaryData',
    ],
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { k: 'x'.repeat(1024 * 1024 + 1) } },
      'Too long: must have at most 1048576 bytes',
    ],
    [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'not base64!' } },
      'data[k]: Invalid value: "<value omitted>": must be base64 encoded',
    ],
    [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'kubernetes.io/dockerconfigjson' },
      'data[.dockerconfigjson]: Required value',
    ],
    [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 's' },
        type: 'kubernetes.io/dockerconfigjson',
        stringData: { '.dockerconfigjson': '{nope' },
      },
      'invalid JSON',
    ],
    [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': 'c' } },
      'data[tls.key]: Required value',
    ],
    [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, extra: 1 }, 'extra: Not supported'],
    // issue #39: labels and annotations as every object's (ValidateObjectMeta)
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { 'bad key!': 'x' } } },
      'metadata.labels: Invalid value: "bad key!"',
    ],
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { k: 'bad value!' } } },
      'metadata.labels: Invalid value: "bad value!"',
    ],
    [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { a: 'x'.repeat(256 * 1024) } } },
      'metadata.annotations: Too long: must have at most 262144 bytes',
    ],
  ])('refuses %j with "%s"', (raw, message) => {
    expect(errorsOf(raw).join('\n')).toContain(message);
  });

  it('never quotes a Secret value in an error', () => {
    const errs = errorsOf({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { k: 'hunter2-not-b64!' },
      stringData: { j: 42 },
    }).join('\n');
    expect(errs).not.toContain('hunter2');
    expect(errs).not.toContain('42');
  });

  it('accepts the config key forms of IsConfigMapKey', () => {
    for (const k of ['key.name', 'KEY_NAME', 'key-name', '.dotfile', 'a'.repeat(253)]) expect(configKeyErrors(k)).toEqual([]);
    expect(configKeyErrors('a'.repeat(254))).not.toEqual([]);
  });
});

describe('validateConfigObjectUpdate', () => {
  const cm = (data: Record<string, string>, immutable?: boolean) =>
    normalizeConfigObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data, immutable }).object!;
  it('forbids changing the data or the flag of an immutable object, allows the same data', () => {
    expect(validateConfigObjectUpdate(cm({ a: '2' }, true), cm({ a: '1' }, true)).map(formatFieldError)).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(validateConfigObjectUpdate(cm({ a: '1' }), cm({ a: '1' }, true)).map(formatFieldError)).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect(validateConfigObjectUpdate(cm({ a: '1' }, true), cm({ a: '1' }, true))).toEqual([]);
    expect(validateConfigObjectUpdate(cm({ a: '2' }), cm({ a: '1' }))).toEqual([]);
  });
  it("forbids changing a Secret's type", () => {
    const s = (type: string) =>
      normalizeConfigObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, type, stringData: { 'ssh-privatekey': 'k' } })
        .object!;
    expect(validateConfigObjectUpdate(s('kubernetes.io/ssh-auth'), s('Opaque')).map(formatFieldError)).toEqual([
      'type: Invalid value: "kubernetes.io/ssh-auth": field is immutable',
    ]);
  });
});

describe('redactConfigObject', () => {
  it("drops a Secret's data and lists its keys; keeps a ConfigMap whole", () => {
    const s = normalizeConfigObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { b: 'x', a: 'y' } }).object!;
    const r = redactConfigObject(s);
    expect(JSON.stringify(r)).not.toContain(b64('x'));
    expect(r.metadata?.annotations?.['kubelet-ts/secret-keys']).toBe('a,b');
    const c = normalizeConfigObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } }).object!;
    expect(redactConfigObject(c)).toBe(c);
  });

  it("issue #39: blanks the values of kubectl apply's last-applied annotation of a Secret, keeps its keys; drops one that does not parse", () => {
    const applied = `${JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: b64('data-secret') }, stringData: { b: 'string-secret' } })}\n`;
    const s = normalizeConfigObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', annotations: { [kLastAppliedAnnotation]: applied } },
      data: { a: b64('data-secret') },
    }).object!;
    const r = redactConfigObject(s);
    expect(JSON.stringify(r)).not.toContain('data-secret');
    expect(JSON.stringify(r)).not.toContain(b64('data-secret'));
    expect(JSON.stringify(r)).not.toContain('string-secret');
    expect(r.metadata?.annotations?.[kLastAppliedAnnotation]).toBe(
      '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":""},"stringData":{"b":""}}\n',
    );
    const bad = normalizeConfigObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', annotations: { [kLastAppliedAnnotation]: 'not json data-secret' } },
    }).object!;
    expect(redactConfigObject(bad).metadata?.annotations).toEqual({ 'kubelet-ts/secret-keys': '' });
  });

  it("break 45 finding 2: withoutAppliedValues blanks a Secret's last-applied values (as stored), keeps its data and a ConfigMap whole", () => {
    const applied = `${JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { b: 'string-secret' } })}\n`;
    const s = normalizeConfigObject({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', annotations: { [kLastAppliedAnnotation]: applied, other: 'o' } },
      stringData: { b: 'string-secret' },
    }).object!;
    const w = withoutAppliedValues(s);
    expect(w.data).toEqual({ b: b64('string-secret') });
    expect(w.metadata?.annotations).toEqual({
      other: 'o',
      [kLastAppliedAnnotation]: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"b":""}}\n',
    });
    expect(withoutAppliedValues(w)).toEqual(w);
    const c = normalizeConfigObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', annotations: { [kLastAppliedAnnotation]: '{"data":{"a":"1"}}' } },
      data: { a: '1' },
    }).object!;
    expect(withoutAppliedValues(c)).toBe(c);
  });
});

describe('podObjectRefs', () => {
  it('finds every reference once: volumes, projected sources, env, envFrom of init and app containers, imagePullSecrets, claims', () => {
    const pod = {
      metadata: { name: 'p', namespace: 'ns' },
      spec: {
        volumes: [
          { name: 'a', configMap: { name: 'cm1' } },
          { name: 'b', secret: { secretName: 's1' } },
          { name: 'c', projected: { sources: [{ configMap: { name: 'cm2' } }, { secret: { name: 's2' } }] } },
          { name: 'd', persistentVolumeClaim: { claimName: 'pvc1' } },
          { name: 'e', persistentVolumeClaim: { claimName: 'pvc1' } },
        ],
        initContainers: [{ name: 'i', image: 'x', envFrom: [{ configMapRef: { name: 'cm3' } }, { secretRef: { name: 's3' } }] }],
        containers: [
          {
            name: 'c',
            image: 'x',
            env: [
              { name: 'A', valueFrom: { configMapKeyRef: { name: 'cm1', key: 'k' } } },
              { name: 'B', valueFrom: { secretKeyRef: { name: 's4', key: 'k' } } },
            ],
          },
        ],
        imagePullSecrets: [{ name: 'pull' }],
      },
    } as Pod;
    expect(podObjectRefs(pod)).toEqual({
      namespace: 'ns',
      configMaps: ['cm1', 'cm2', 'cm3'],
      secrets: ['s1', 's2', 's3', 's4', 'pull'],
      claims: ['pvc1'],
    });
  });
  it('tolerates any shape', () => {
    expect(
      podObjectRefs({
        spec: { volumes: 'x', containers: [null, { env: [{ valueFrom: { configMapKeyRef: { name: 7 } } }] }] },
      } as unknown as Pod),
    ).toEqual({ namespace: 'default', configMaps: [], secrets: [], claims: [] });
  });
});

describe('manifests with ConfigMaps and Secrets', () => {
  const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
data: {a: "1"}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {p: pw}}
- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}
`;
  it('parseManifestDocuments takes them beside pods, with their paths', () => {
    const r = parseManifestDocuments(text, 'f');
    expect(r.pods.map((e) => e.path)).toEqual(['[1].items[1]']);
    expect(r.objects.map((e) => [e.object.kind, e.path])).toEqual([
      ['ConfigMap', '[0]'],
      ['Secret', '[1].items[0]'],
    ]);
  });
  it('parseManifests (pods only) still refuses them by kind', () => {
    expect(() => parseManifests(text, 'f')).toThrow('[0].kind: Unsupported value: "ConfigMap": supported values: "Pod"');
  });
  it('normalizeObjectEntries refuses a duplicate in one manifest', () => {
    const { errors } = normalizeObjectEntries(
      parseManifestDocuments(`${text}---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}\n`, 'f').objects,
    );
    expect(errors.map(formatFieldError)).toEqual(['[2].metadata.name: Duplicate value: "cm": also at [0]']);
  });
  it('decodePodsBody returns pods and normalised objects; a lone object is single', () => {
    const r = decodePodsBody({ text, format: 'yaml' });
    expect(r.ok && r.objects.map((o) => o.kind)).toEqual(['ConfigMap', 'Secret']);
    expect(r.ok && r.pods.length).toBe(1);
    const lone = decodePodsBody({ text: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}', format: 'json' });
    expect(lone.ok && lone.single && lone.pods.length === 0).toBe(true);
    const bad = decodePodsBody({ text: '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"!!"}}', format: 'json' });
    expect(bad.ok === false && bad.kind === 'invalid' && bad.name).toBe('s');
  });
});

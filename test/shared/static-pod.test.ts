import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { formatFieldError, InvalidManifestError } from '../../src/shared/errors.js';
import { parseManifests } from '../../src/shared/manifest.js';
import { podContentHash } from '../../src/shared/hash.js';
import { loadStaticPods, makeStaticPod, podUidForStatic, staticPodContentHash } from '../../src/shared/static-pod.js';
import { validatePod } from '../../src/shared/validation.js';

const yamlA = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  containers:
  - name: main
    image: kubelet-ts/busybox:1.35
    command: [sleep, "3600"]
`;
// The same pod with its keys in another order.
const yamlB = `kind: Pod
spec:
  containers:
  - command: [sleep, "3600"]
    image: kubelet-ts/busybox:1.35
    name: main
metadata:
  labels: {app: web}
  name: web
apiVersion: v1
`;

const opts = {
  nodeName: 'Node-1',
  source: 'file' as const,
  origin: '/etc/kubelet.d/web.yaml',
  seenAt: new Date('2024-05-01T10:00:00.000Z'),
};
const read = (text: string): Pod => parseManifests(text, 'web.yaml')[0];

// Golden values computed at commit 4e876e0, before the pod content hash was shared: a changed
// static pod UID would restart every running static pod on upgrade.
describe('static pod identity across versions', () => {
  it('keeps the UID of a known manifest bit-identical', () => {
    expect(podUidForStatic(read(yamlA), 'node-1', opts.origin)).toBe('30a947c6816cd96193c26c6352f41dea');
    expect(makeStaticPod(read(yamlA), opts).metadata!.uid).toBe('30a947c6816cd96193c26c6352f41dea');
  });

  it('hashes its content as PodConfig and the file source did (staticPodContentHash is podContentHash)', () => {
    const pod = makeStaticPod(read(yamlA), opts);
    expect(podContentHash(pod)).toBe('55cce6ea932ac4d3');
    expect(staticPodContentHash(pod)).toBe('55cce6ea932ac4d3');
  });
});

describe('makeStaticPod', () => {
  it('names, places and annotates the pod, and defaults it', () => {
    const pod = makeStaticPod(read(yamlA), opts);
    const uid = pod.metadata!.uid!;
    expect(uid).toMatch(/^[0-9a-f]{32}$/);
    expect(pod.metadata).toMatchObject({
      name: 'web-node-1',
      namespace: 'default',
      labels: { app: 'web' },
      annotations: {
        'kubernetes.io/config.hash': uid,
        'kubernetes.io/config.source': 'file',
        'kubernetes.io/config.seen': '2024-05-01T10:00:00.000Z',
      },
    });
    expect(pod.spec).toMatchObject({ nodeName: 'node-1', restartPolicy: 'Always', terminationGracePeriodSeconds: 30 });
    expect(pod.spec!.containers[0].imagePullPolicy).toBe('IfNotPresent');
  });

  it('keeps a namespace and other annotations', () => {
    const raw = read(yamlA.replace('  name: web\n', '  name: web\n  namespace: kube-system\n  annotations: {a: b}\n'));
    const pod = makeStaticPod(raw, { ...opts, source: 'http' });
    expect(pod.metadata!.namespace).toBe('kube-system');
    expect(pod.metadata!.annotations).toMatchObject({ a: 'b', 'kubernetes.io/config.source': 'http' });
  });

  it('does not modify its input', () => {
    const raw = read(yamlA);
    const before = structuredClone(raw);
    makeStaticPod(raw, opts);
    expect(raw).toEqual(before);
  });

  it('uses the seen time "now" by default', () => {
    const before = Date.now();
    const seen = Date.parse(makeStaticPod(read(yamlA), { ...opts, seenAt: undefined }).metadata!.annotations!['kubernetes.io/config.seen']);
    expect(seen).toBeGreaterThanOrEqual(before);
    expect(seen).toBeLessThanOrEqual(Date.now());
  });

  it.each<[string, string, Partial<typeof opts>, boolean]>([
    ['the same content', yamlA, {}, true],
    ['the same content with other key order', yamlB, {}, true],
    ['another seen time', yamlA, { seenAt: new Date('2030-01-01T00:00:00Z') }, true],
    ['a changed image', yamlA.replace('busybox:1.35', 'busybox:1.36'), {}, false],
    ['a changed label', yamlA.replace('{app: web}', '{app: web2}'), {}, false],
    ['another node', yamlA, { nodeName: 'node-2' }, false],
    ['the node name in another case', yamlA, { nodeName: 'NODE-1' }, true],
    ['another file', yamlA, { origin: '/etc/kubelet.d/other.yaml' }, false],
  ])('gives %s the same UID: %s', (_name, text, over, same) => {
    const a = makeStaticPod(read(yamlA), opts).metadata!.uid;
    const b = makeStaticPod(read(text), { ...opts, ...over }).metadata!.uid;
    expect(a === b).toBe(same);
  });

  it('derives the UID from the pod as read', () => {
    const raw = read(yamlA);
    expect(makeStaticPod(raw, opts).metadata!.uid).toBe(podUidForStatic(raw, 'node-1', opts.origin));
  });

  it("keeps the manifest's own uid, as the kubelet does", () => {
    const pod = makeStaticPod(read(yamlA.replace('  name: web\n', '  name: web\n  uid: fixed-uid\n')), opts);
    expect(pod.metadata!.uid).toBe('fixed-uid');
    expect(pod.metadata!.annotations!['kubernetes.io/config.hash']).toBe('fixed-uid');
  });

  it.each([
    [{ nodeName: '' }, 'opts.nodeName must be a non-empty string'],
    [{ origin: '' }, 'opts.origin must be a non-empty string'],
  ])('rejects bad options %j', (over, message) => {
    expect(() => makeStaticPod(read(yamlA), { ...opts, ...over })).toThrow(message);
  });

  it('leaves a suffixed name that grows too long for validation to catch', () => {
    const pod = makeStaticPod(read(yamlA.replace('name: web\n', `name: ${'w'.repeat(250)}\n`)), opts);
    expect(validatePod(pod).map(formatFieldError)).toEqual([
      expect.stringMatching(/^metadata\.name: Invalid value: "w+-node-1": must be no more than 253 characters$/),
    ]);
  });

  it('leaves a missing name empty', () => {
    const pod = makeStaticPod(read(yamlA.replace('  name: web\n', '')), opts);
    expect(validatePod(pod).map(formatFieldError)).toEqual(['metadata.name: Required value: name or generateName is required']);
  });
});

describe('loadStaticPods', () => {
  it('loads every pod of a stream as static pods', () => {
    const pods = loadStaticPods(`${yamlA}---\n${yamlA.replace('name: web', 'name: db')}`, opts);
    expect(pods.map((p) => p.metadata!.name)).toEqual(['web-node-1', 'db-node-1']);
    expect(new Set(pods.map((p) => p.metadata!.uid)).size).toBe(2);
  });

  it('throws every validation error, prefixed by document', () => {
    try {
      loadStaticPods(`${yamlA}---\n${yamlA.replace('    image: kubelet-ts/busybox:1.35\n', '')}`, opts);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidManifestError);
      expect((e as InvalidManifestError).source).toBe(opts.origin);
      expect((e as InvalidManifestError).errors.map(formatFieldError)).toEqual(['[1].spec.containers[0].image: Required value']);
    }
  });
});

import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { podContentHash, stableHash } from '../../src/shared/hash.js';
import { parseManifests } from '../../src/shared/manifest.js';
import { makeStaticPod, podUidForStatic, staticPodContentHash } from '../../src/shared/static-pod.js';

// Golden values computed with the three separate hashes before podContentHash was shared
// (commit 4e876e0: pod-config.ts contentHash, source-intake.ts contentHash, static-pod.ts
// staticPodContentHash). A changed static pod UID would restart every static pod on upgrade, and
// a changed intake config.hash would make every stored intake pod look edited.
const manifest = `apiVersion: v1
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
const opts = { nodeName: 'Node-1', source: 'file' as const, origin: '/etc/kubelet.d/web.yaml', seenAt: new Date('2024-05-01T10:00:00.000Z') };
const intakePod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'api',
    namespace: 'default',
    uid: '0b4c2a52-1d4e-4f5c-9a43-7d6f00c1e001',
    annotations: { a: 'b', 'kubernetes.io/config.seen': '2024-05-01T10:00:00.000Z', 'kubernetes.io/config.hash': 'stale', 'kubernetes.io/config.source': 'api' },
  },
  spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
  status: { phase: 'Running' },
} as Pod;

describe('podContentHash', () => {
  const raw = parseManifests(manifest, 'web.yaml')[0];

  it('leaves the static pod UID bit-identical', () => {
    expect(podUidForStatic(raw, 'node-1', opts.origin)).toBe('30a947c6816cd96193c26c6352f41dea');
    expect(makeStaticPod(raw, opts).metadata!.uid).toBe('30a947c6816cd96193c26c6352f41dea');
  });

  it('gives the values the separate hashes gave', () => {
    const pod = makeStaticPod(raw, opts);
    expect(podContentHash(pod)).toBe('55cce6ea932ac4d3'); // PodConfig's
    expect(staticPodContentHash(pod)).toBe('55cce6ea932ac4d3'); // the file source's
    expect(podContentHash(intakePod)).toBe('d984c8de1213a657');
    const { 'kubernetes.io/config.hash': _old, ...annotations } = intakePod.metadata!.annotations!;
    expect(podContentHash({ ...intakePod, metadata: { ...intakePod.metadata, annotations } }, 32)).toBe('b7075d8b92be289867324ea80b4e5e34'); // intake's config.hash
  });

  it('ignores config.seen and status, and nothing else', () => {
    const pod = makeStaticPod(raw, opts);
    const seenLater = { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata!.annotations, 'kubernetes.io/config.seen': '2025-01-01T00:00:00.000Z' } } };
    expect(podContentHash(seenLater)).toBe(podContentHash(pod));
    expect(podContentHash({ ...pod, status: { phase: 'Failed' } } as Pod)).toBe(podContentHash(pod));
    expect(podContentHash({ ...pod, metadata: { ...pod.metadata, labels: { app: 'other' } } })).not.toBe(podContentHash(pod));
    expect(podContentHash(pod, 32)).toHaveLength(32);
    expect(podContentHash(pod, 32).startsWith(podContentHash(pod))).toBe(true);
    expect(stableHash({ ...pod, status: undefined })).not.toBe(podContentHash(pod)); // config.seen counts for stableHash
  });
});

// Issue 38 finding 10: YAML is read as Kubernetes reads it (1.1, sigs.k8s.io/yaml over go-yaml v2)
// at every reader — the manifest decoder, the request body decoder, server-side apply — and written
// so that it reads back the same (`get -o yaml`).
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Pod } from '../../src/shared/api.js';
import { decodePodsBody } from '../../src/shared/pods-body.js';
import { patchPod } from '../../src/server/kube-api/patch.js';
import { formatPods } from '../../src/cli/get.js';
import { kKubernetesYaml } from '../../src/shared/yaml-options.js';

const body = (extra: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  terminationGracePeriodSeconds: 010\n  activeDeadlineSeconds: 0o17\n  containers: [{name: c, image: i}]\n${extra}`;

describe('YAML as Kubernetes reads it', () => {
  it('a request body: 010 is 8, 0o17 is 15', () => {
    const r = decodePodsBody({ text: body(''), format: 'yaml' });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.pods[0].spec).toMatchObject({ terminationGracePeriodSeconds: 8, activeDeadlineSeconds: 15 });
  });

  it('a request body with yes where a string is expected is refused, naming the field', () => {
    const r = decodePodsBody({ text: body('  hostname: yes\n'), format: 'yaml' });
    expect(r).toMatchObject({
      ok: false,
      kind: 'invalid',
      errors: [{ field: 'spec.hostname', type: 'Invalid value', value: true, detail: 'must be a string' }],
    });
  });

  it('server-side apply (application/apply-patch+yaml) reads 010 as 8 and on as true', () => {
    const live: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    };
    const out = patchPod(live, 'application/apply-patch+yaml', `${body('')}  enableServiceLinks: on\n`, { fieldManager: 'm' });
    expect(out.spec).toMatchObject({ terminationGracePeriodSeconds: 8, activeDeadlineSeconds: 15, enableServiceLinks: true });
  });

  it('get -o yaml quotes the strings that YAML 1.1 would read otherwise, so they read back as strings', () => {
    const pod: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'y', namespace: 'default', annotations: { a: 'yes', b: 'on', c: '0o17', d: '010', e: 'n' } },
      spec: { containers: [] },
    };
    const text = formatPods([pod], { output: 'yaml', namespace: 'default', name: 'y', noHeaders: false }, 0);
    expect((parse(text, kKubernetesYaml) as Pod).metadata!.annotations).toEqual(pod.metadata!.annotations);
  });
});

// Issue 38 finding 10: a metadata.uid the node cannot name its containers and directories by
// (`a_b_c`: the Docker names split on `_`) is refused by every source's decoder, naming the field.
import { describe, expect, it } from 'vitest';
import { podFromEtcd } from '../../../src/main/config/source-etcd.js';
import { loadPods } from '../../../src/shared/manifest.js';
import { decodePodsBody } from '../../../src/shared/pods-body.js';

const pod = (uid: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid },
    spec: { containers: [{ name: 'c', image: 'busybox:1' }] },
  });
const kWhy = "must consist of letters, digits or '-' (e.g. a UUID): the node's container names split on '_' and its pod directories on '/'";

describe('metadata.uid a_b_c is refused by every source', () => {
  it('a manifest file (file and http sources)', () => {
    expect(() => loadPods(pod('a_b_c'), 'web.json', 'json')).toThrow(`metadata.uid: Invalid value: "a_b_c": ${kWhy}`);
  });

  it('a request body (intake and the Kubernetes API)', () => {
    expect(decodePodsBody({ text: pod('a_b_c'), format: 'json' })).toMatchObject({
      ok: false,
      kind: 'invalid',
      errors: [{ field: 'metadata.uid', type: 'Invalid value', value: 'a_b_c' }],
    });
  });

  it('an etcd value', () => {
    expect(() =>
      podFromEtcd(
        { key: '/registry/pods/n1/default/web', value: pod('a_b_c'), createRevision: '7' },
        { namespace: 'default', name: 'web', nodeName: 'n1' },
      ),
    ).toThrow(`metadata.uid: Invalid value: "a_b_c": ${kWhy}`);
  });

  it('a UUID, as the apiserver writes, is accepted everywhere', () => {
    const uid = '0b4c2a52-1d4e-4f5c-9a43-7d6f00c1e001';
    expect(loadPods(pod(uid), 'web.json', 'json')[0].metadata?.uid).toBe(uid);
    expect(
      podFromEtcd(
        { key: '/registry/pods/n1/default/web', value: pod(uid), createRevision: '7' },
        { namespace: 'default', name: 'web', nodeName: 'n1' },
      ).metadata?.uid,
    ).toBe(uid);
  });
});

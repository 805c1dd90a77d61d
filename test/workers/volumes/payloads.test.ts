import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { configMapPayload, formatMap, secretPayload, volumePayload } from '../../../src/workers/volumes/payloads.js';
import { memoryVolumeSizeBytes, podMemoryLimitBytes } from '../../../src/workers/volumes/pod-volumes.js';

const objects = {
  configMaps: { cfg: { data: { 'a.conf': 'A', b: 'B' }, binaryData: { bin: Buffer.from([1, 2]).toString('base64') } }, gone: null },
  secrets: { pw: { data: { password: Buffer.from('s3cret').toString('base64') } } },
};
const ctx = { nodeName: 'n1', rootDir: '/r', hostIp: '10.0.0.1', sandboxId: '' };
const text = (p: Record<string, { data: Buffer; mode: number }>) =>
  Object.fromEntries(Object.entries(p).map(([k, v]) => [k, [v.data.toString('utf8'), v.mode.toString(8)]]));

describe('volume payloads', () => {
  it('configMap: every key (data and binaryData) with defaultMode, or the items at their paths and modes', () => {
    expect(Object.keys(configMapPayload({ name: 'cfg' }, objects as never, 0o644)).sort()).toEqual(['a.conf', 'b', 'bin']);
    expect(configMapPayload({ name: 'cfg' }, objects as never, 0o644).bin.data).toEqual(Buffer.from([1, 2]));
    expect(text(configMapPayload({ name: 'cfg', items: [{ key: 'b', path: 'x/b', mode: 0o400 }] }, objects as never, 0o644))).toEqual({
      'x/b': ['B', '400'],
    });
  });

  it("missing objects and keys: the kubelet's messages, nothing when optional", () => {
    expect(() => configMapPayload({ name: 'gone' }, objects as never, 0o644)).toThrow('configmap "gone" not found');
    expect(() => configMapPayload({ name: 'never-seen' }, undefined, 0o644)).toThrow('configmap "never-seen" not found');
    expect(configMapPayload({ name: 'gone', optional: true }, objects as never, 0o644)).toEqual({});
    expect(() => configMapPayload({ name: 'cfg', items: [{ key: 'zz', path: 'z' }] }, objects as never, 0o644)).toThrow(
      'configmap references non-existent config key: zz',
    );
    expect(configMapPayload({ name: 'cfg', optional: true, items: [{ key: 'zz', path: 'z' }] }, objects as never, 0o644)).toEqual({});
    expect(() => secretPayload('nope', {}, objects as never, 0o644)).toThrow('secret "nope" not found');
    expect(() => secretPayload('pw', { items: [{ key: 'user', path: 'u' }] }, objects as never, 0o644)).toThrow(
      'references non-existent secret key: user',
    );
  });

  it('secret data is base64-decoded', () => {
    expect(text(secretPayload('pw', {}, objects as never, 0o600))).toEqual({ password: ['s3cret', '600'] });
  });

  it('downwardAPI: labels and annotations as FormatMap, fields, resources; projected merges its sources with defaultMode', () => {
    const pod: Pod = {
      metadata: { name: 'p', namespace: 'ns', uid: 'u1', labels: { b: '2', a: 'x"y' }, annotations: { k: 'v' } },
      spec: { containers: [{ name: 'c', image: 'i', resources: { limits: { memory: '64Mi', cpu: '1500m' } } }] },
    };
    expect(formatMap(pod.metadata!.labels)).toBe('a="x\\"y"\nb="2"');
    const vol = {
      name: 'd',
      downwardAPI: {
        items: [
          { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
          { path: 'ann', fieldRef: { fieldPath: 'metadata.annotations' } },
          { path: 'uid', fieldRef: { fieldPath: 'metadata.uid' } },
          { path: 'one', fieldRef: { fieldPath: "metadata.labels['b']" } },
          { path: 'mem', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1Mi' } },
          { path: 'cpu', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' } },
        ],
      },
    };
    expect(text(volumePayload(vol, pod, undefined, ctx, 'spec.volumes[0]')!)).toEqual({
      labels: ['a="x\\"y"\nb="2"', '644'],
      ann: ['k="v"', '644'],
      uid: ['u1', '644'],
      one: ['2', '644'],
      mem: ['64', '644'],
      cpu: ['2', '644'],
    });
    const projected = {
      name: 'pr',
      projected: {
        defaultMode: 0o440,
        sources: [
          { configMap: { name: 'cfg', items: [{ key: 'b', path: 'cfg/b' }] } },
          { secret: { name: 'pw' } },
          { downwardAPI: { items: [{ path: 'name', fieldRef: { fieldPath: 'metadata.name' } }] } },
        ],
      },
    };
    expect(text(volumePayload(projected, pod, objects as never, ctx, 'spec.volumes[1]')!)).toEqual({
      'cfg/b': ['B', '440'],
      password: ['s3cret', '440'],
      name: ['p', '440'],
    });
  });

  it("projected serviceAccountToken: the token the task carries for `<volume>/<source index>` at its path with the volume's mode; none carried is a FailedMount", () => {
    const pod: Pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    const vol = {
      name: 'kube-api-access-abcde',
      projected: {
        defaultMode: 0o644,
        sources: [
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
          { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
        ],
      },
    };
    const withToken = { configMaps: {}, secrets: {}, serviceAccountTokens: { 'kube-api-access-abcde/1': 'eyJ.header.sig' } };
    expect(text(volumePayload(vol, pod, withToken, ctx, 'spec.volumes[0]')!)).toEqual({
      namespace: ['ns', '644'],
      token: ['eyJ.header.sig', '644'],
    });
    expect(() => volumePayload(vol, pod, { configMaps: {}, secrets: {} }, ctx, 'spec.volumes[0]')).toThrow('failed to fetch token');
  });

  it('memory-backed volume size: sizeLimit, else the pod memory limit when every container has one, else node memory', () => {
    const node = 8 * 2 ** 30;
    const limited: Pod = {
      spec: {
        containers: [
          { name: 'a', resources: { limits: { memory: '100Mi' } } },
          { name: 'b', resources: { limits: { memory: '28Mi' } } },
        ],
      },
    };
    const open: Pod = { spec: { containers: [{ name: 'a', resources: { limits: { memory: '100Mi' } } }, { name: 'b' }] } };
    expect(podMemoryLimitBytes(limited)).toBe(128 * 2 ** 20);
    expect(podMemoryLimitBytes(open)).toBeUndefined();
    expect(memoryVolumeSizeBytes(limited, { name: 'm', emptyDir: { medium: 'Memory' } }, node)).toBe(128 * 2 ** 20);
    expect(memoryVolumeSizeBytes(limited, { name: 'm', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } }, node)).toBe(8 * 2 ** 20);
    expect(memoryVolumeSizeBytes(open, { name: 'm', emptyDir: { medium: 'Memory' } }, node)).toBe(node);
  });
});

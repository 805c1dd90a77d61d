// How a port-forward reaches a pod (src/main/streams/port-forward.ts selectPortForwardTarget, portForwardTargetOf).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import type { RuntimePod } from '../../../src/shared/runtime-pod.js';
import { portForwardTargetOf, selectPortForwardTarget } from '../../../src/main/streams/port-forward.js';

const sandbox = (id: string, state: string) => ({ id, name: 'POD', sandbox: true, state }) as unknown as RuntimePod['sandboxes'][number];
const runtimePod = (sandboxes: RuntimePod['sandboxes'], podIp = ''): RuntimePod => ({
  uid: 'u1',
  name: 'web',
  namespace: 'default',
  sandboxes,
  containers: [],
  podIp,
  terminationGracePeriodSeconds: 30,
});
const pod = (hostNetwork = false): Pod => ({
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { hostNetwork, containers: [{ name: 'c', image: 'i' }] },
  status: { phase: 'Running' },
});

describe('selectPortForwardTarget', () => {
  it('a hostNetwork pod: 127.0.0.1 directly', () => {
    expect(selectPortForwardTarget(pod(true), 'u1', runtimePod([sandbox('s2', 'running'), sandbox('s1', 'exited')]))).toEqual({
      podUid: 'u1',
      sandboxId: 's2',
      reach: { kind: 'direct', host: '127.0.0.1' },
    });
  });

  it("a network-none pod: inside the newest sandbox's namespace; a pod IP is kept as the fallback", () => {
    expect(selectPortForwardTarget(pod(), 'u1', runtimePod([sandbox('s2', 'running')]))).toEqual({
      podUid: 'u1',
      sandboxId: 's2',
      reach: { kind: 'netns', sandboxId: 's2' },
    });
    expect(selectPortForwardTarget(pod(), 'u1', runtimePod([sandbox('s2', 'running')], '10.88.0.5')).reach).toEqual({
      kind: 'netns',
      sandboxId: 's2',
      podIp: '10.88.0.5',
    });
  });

  it('refuses a pod whose newest sandbox is not running, or that has none', () => {
    expect(() => selectPortForwardTarget(pod(), 'u1', runtimePod([sandbox('s2', 'exited'), sandbox('s1', 'running')]))).toThrow(
      'pod "web" has no running sandbox',
    );
    expect(() => selectPortForwardTarget(pod(), 'u1', null)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });

  it('an unknown pod is ERR_NOT_FOUND "pod does not exist", as the kubelet', () => {
    const target = portForwardTargetOf(
      () => undefined,
      () => null,
    );
    expect(() => target('default', 'nope')).toThrow(expect.objectContaining({ code: 'ERR_NOT_FOUND', message: 'pod does not exist' }));
  });
});

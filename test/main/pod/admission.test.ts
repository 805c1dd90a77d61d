import { describe, expect, it } from 'vitest';
import { admitHostPorts, admitPod, podRequests } from '../../../src/main/pod/admission.js';
import type { Pod } from '../../../src/shared/api.js';

const pod = (requests: Record<string, string>[], init: { requests: Record<string, string>; sidecar?: boolean }[] = []): Pod => ({
  metadata: { name: 'p', uid: 'u' },
  spec: {
    containers: requests.map((r, i) => ({ name: `c${i}`, resources: { requests: r } })),
    initContainers: init.map((c, i) => ({
      name: `i${i}`,
      resources: { requests: c.requests },
      ...(c.sidecar ? { restartPolicy: 'Always' } : {}),
    })),
  },
});
const capacity = { pods: 3, cpuMilli: 2000, memoryBytes: 1024 ** 3 };
const none = { pods: 0, cpuMilli: 0, memoryBytes: 0 };

describe('pod admission', () => {
  it.each([
    ['fits', pod([{ cpu: '500m', memory: '128Mi' }]), none, { admit: true }],
    [
      'too many pods',
      pod([{}]),
      { ...none, pods: 3 },
      { admit: false, reason: 'OutOfpods', message: "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3" },
    ],
    [
      'cpu beyond the node',
      pod([{ cpu: '1000' }]),
      none,
      { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 1000000, used: 0, capacity: 2000" },
    ],
    [
      'cpu beyond what is left',
      pod([{ cpu: '1' }]),
      { ...none, pods: 1, cpuMilli: 1500 },
      { admit: false, reason: 'OutOfcpu', message: "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000" },
    ],
    [
      'memory beyond the node',
      pod([{ memory: '100Ti' }]),
      none,
      {
        admit: false,
        reason: 'OutOfmemory',
        message: `Node didn't have enough resource: memory, requested: ${100 * 1024 ** 4}, used: 0, capacity: ${1024 ** 3}`,
      },
    ],
    ['best effort always fits while pods are left', pod([{}]), { pods: 2, cpuMilli: 2000, memoryBytes: 1024 ** 3 }, { admit: true }],
  ])('%s', (_name, p, used, want) => {
    expect(admitPod(p, used, capacity)).toEqual(want);
  });

  it('counts the largest init container or the sum of app containers and sidecars, whichever is more', () => {
    expect(podRequests(pod([{ cpu: '100m' }, { cpu: '200m' }], [{ requests: { cpu: '1' } }]))).toEqual({ cpuMilli: 1000, memoryBytes: 0 });
    expect(podRequests(pod([{ cpu: '100m' }], [{ requests: { cpu: '50m' } }, { requests: { cpu: '300m' }, sidecar: true }]))).toEqual({
      cpuMilli: 400,
      memoryBytes: 0,
    });
  });
});

describe('admitHostPorts', () => {
  const withPort = (extra: Record<string, unknown> = {}) =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: {
        containers: [
          { name: 'a', image: 'i' },
          { name: 'b', image: 'i', ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 8081 }] },
        ],
        ...extra,
      },
    }) as Pod;

  it('admits a hostPort with the pod network (portmap publishes it) and with hostNetwork', () => {
    expect(admitHostPorts(withPort(), true)).toEqual({ admit: true });
    expect(admitHostPorts(withPort({ hostNetwork: true }), false)).toEqual({ admit: true });
  });

  it('refuses a hostPort with --network-plugin none, naming the port and the flag', () => {
    expect(admitHostPorts(withPort(), false)).toEqual({
      admit: false,
      reason: 'HostPortNotSupported',
      message:
        'spec.containers[1].ports[1].hostPort 8081: hostPort needs the pod network, and this node runs with --network-plugin none; use hostNetwork: true (where hostPort equals containerPort) or --network-plugin cni',
    });
    const noHostPort = withPort();
    noHostPort.spec!.containers[1].ports = [{ containerPort: 80 }];
    expect(admitHostPorts(noHostPort, false)).toEqual({ admit: true });
  });
});

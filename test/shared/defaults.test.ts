import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults, defaultImagePullPolicy } from '../../src/shared/defaults.js';

function pod(spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'p' }): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec } as unknown as Pod;
}

describe('applyPodDefaults', () => {
  it('fills the pod-level defaults of the apiserver', () => {
    const out = applyPodDefaults(pod({ containers: [{ name: 'c', image: 'busybox:1.35' }] }));
    expect(out.metadata?.namespace).toBe('default');
    expect(out.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
    });
  });

  it('keeps values that are set, including a grace period of 0', () => {
    const out = applyPodDefaults(
      pod(
        {
          restartPolicy: 'Never',
          dnsPolicy: 'Default',
          terminationGracePeriodSeconds: 0,
          schedulerName: 's',
          enableServiceLinks: false,
          containers: [],
        },
        { name: 'p', namespace: 'kube-system' },
      ),
    );
    expect(out.metadata?.namespace).toBe('kube-system');
    expect(out.spec).toMatchObject({
      restartPolicy: 'Never',
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 0,
      schedulerName: 's',
      enableServiceLinks: false,
    });
  });

  it('fills the container defaults for containers and init containers', () => {
    const c = {
      name: 'c',
      image: 'busybox:1.35',
      ports: [{ containerPort: 80 }],
      env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    };
    const out = applyPodDefaults(pod({ containers: [c], initContainers: [{ ...c, name: 'i' }] }));
    for (const ctr of [out.spec!.containers[0], out.spec!.initContainers![0]]) {
      expect(ctr).toMatchObject({
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        ports: [{ containerPort: 80, protocol: 'TCP' }],
        env: [{ name: 'N', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }],
      });
      expect(ctr.ports![0].hostPort).toBeUndefined();
    }
  });

  it('sets hostPort = containerPort with hostNetwork', () => {
    const out = applyPodDefaults(
      pod({
        hostNetwork: true,
        containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9091 }] }],
      }),
    );
    expect(out.spec!.containers[0].ports!.map((p) => p.hostPort)).toEqual([8080, 9091]);
  });

  it.each([
    ['busybox', 'Always'],
    ['busybox:latest', 'Always'],
    ['busybox:1.35', 'IfNotPresent'],
    ['127.0.0.1:5000/busybox', 'Always'],
    ['127.0.0.1:5000/busybox:1.35', 'IfNotPresent'],
    ['busybox@sha256:0123', 'IfNotPresent'],
    ['busybox:latest@sha256:0123', 'Always'],
    ['kubelet-ts/busybox:1.35', 'IfNotPresent'],
  ])('imagePullPolicy for %s is %s', (image, policy) => {
    expect(defaultImagePullPolicy(image)).toBe(policy);
    const out = applyPodDefaults(pod({ containers: [{ name: 'c', image }] }));
    expect(out.spec!.containers[0].imagePullPolicy).toBe(policy);
  });

  it('keeps an explicit imagePullPolicy', () => {
    const out = applyPodDefaults(pod({ containers: [{ name: 'c', image: 'busybox', imagePullPolicy: 'Never' }] }));
    expect(out.spec!.containers[0].imagePullPolicy).toBe('Never');
  });

  it.each(['livenessProbe', 'readinessProbe', 'startupProbe'])('fills %s defaults, httpGet path and scheme', (probe) => {
    const out = applyPodDefaults(pod({ containers: [{ name: 'c', image: 'i:1', [probe]: { httpGet: { port: 80 } } }] }));
    expect((out.spec!.containers[0] as unknown as Record<string, unknown>)[probe]).toEqual({
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });

  it('defaults a grpc probe\'s service to "" and keeps a set one', () => {
    const out = applyPodDefaults(
      pod({
        containers: [
          {
            name: 'c',
            image: 'i:1',
            readinessProbe: { grpc: { port: 9090 } },
            livenessProbe: { grpc: { port: 9090, service: 'live' } },
          },
        ],
      }),
    );
    expect(out.spec!.containers[0].readinessProbe!.grpc).toEqual({ port: 9090, service: '' });
    expect(out.spec!.containers[0].livenessProbe!.grpc).toEqual({ port: 9090, service: 'live' });
  });

  it('keeps set probe values and defaults lifecycle httpGet', () => {
    const out = applyPodDefaults(
      pod({
        containers: [
          {
            name: 'c',
            image: 'i:1',
            livenessProbe: { exec: { command: ['true'] }, timeoutSeconds: 5, periodSeconds: 2, failureThreshold: 7 },
            lifecycle: { preStop: { httpGet: { port: 80, path: '/stop' } } },
          },
        ],
      }),
    );
    const c = out.spec!.containers[0];
    expect(c.livenessProbe).toMatchObject({ timeoutSeconds: 5, periodSeconds: 2, successThreshold: 1, failureThreshold: 7 });
    expect(c.lifecycle!.preStop!.httpGet).toEqual({ port: 80, path: '/stop', scheme: 'HTTP' });
  });

  it('copies limits into missing requests, resource by resource', () => {
    const out = applyPodDefaults(
      pod({
        containers: [
          { name: 'a', image: 'i:1', resources: { limits: { cpu: '1', memory: '128Mi' } } },
          { name: 'b', image: 'i:1', resources: { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '250m' } } },
          { name: 'c', image: 'i:1', resources: { requests: { cpu: '250m' } } },
        ],
      }),
    );
    expect(out.spec!.containers.map((c) => c.resources)).toEqual([
      { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '1', memory: '128Mi' } },
      { limits: { cpu: '1', memory: '128Mi' }, requests: { cpu: '250m', memory: '128Mi' } },
      { requests: { cpu: '250m' } },
    ]);
  });

  it('gives a volume without a source an emptyDir, and hostPath an empty type', () => {
    const out = applyPodDefaults(
      pod({
        containers: [],
        volumes: [
          { name: 'a' },
          { name: 'b', hostPath: { path: '/x' } },
          { name: 'c', configMap: { name: 'cm' } },
          { name: 'd', emptyDir: { medium: 'Memory' } },
        ],
      }),
    );
    expect(out.spec!.volumes).toEqual([
      { name: 'a', emptyDir: {} },
      { name: 'b', hostPath: { path: '/x', type: '' } },
      { name: 'c', configMap: { name: 'cm' } },
      { name: 'd', emptyDir: { medium: 'Memory' } },
    ]);
  });

  it('returns a deep copy and leaves the input alone', () => {
    const input = pod({ containers: [{ name: 'c', image: 'i:1', ports: [{ containerPort: 1 }] }] });
    const before = structuredClone(input);
    const out = applyPodDefaults(input);
    expect(input).toEqual(before);
    expect(out.spec!.containers[0]).not.toBe(input.spec!.containers[0]);
  });

  it('tolerates malformed input and leaves it for validation', () => {
    const out = applyPodDefaults({ metadata: 'x', spec: { containers: 'nope', volumes: [3] } } as unknown as Pod);
    expect(out).toMatchObject({ metadata: 'x', spec: { containers: 'nope', volumes: [3], restartPolicy: 'Always' } });
    expect(applyPodDefaults({} as Pod).spec).toMatchObject({ restartPolicy: 'Always' });
  });
});

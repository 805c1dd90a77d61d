import os from 'node:os';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { cpuQuotaFromLimit, cpuSharesFromRequest } from '../../../src/workers/cm/cpu-quota.js';
import { expandCommand, makeEnvironmentVariables, makeVolumeMounts } from '../../../src/workers/kuberuntime/run-container-options.js';
import { emptyDirPath, podDir } from '../../../src/workers/kubetypes/pod-dirs.js';
import { setUpPodVolumes } from '../../../src/workers/volumes/pod-volumes.js';

const ctx = { nodeName: 'node-a', rootDir: '/var/lib/kubelet-ts', hostIp: '127.0.0.1', sandboxId: 'sb123' };

function mkPod(containers: Container[], spec: Partial<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'web', namespace: 'prod', uid: 'u-1', labels: { app: 'web' }, annotations: { 'example.com/x': 'y' } },
    spec: { containers, serviceAccountName: 'sa', ...spec },
  };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('makeEnvironmentVariables (makeEnvironmentVariables / downward API)', () => {
  it('expands $(VAR) from variables defined before, leaves later and unknown ones, honours $$', () => {
    const c: Container = {
      name: 'a',
      env: [
        { name: 'B', value: 'x-$(A)' },
        { name: 'A', value: 'one' },
        { name: 'C', value: '$(A)/$(B)/$(NOPE)/$$(A)' },
      ],
    };
    expect(makeEnvironmentVariables(mkPod([c]), c, ctx, 'spec.containers[0]')).toEqual([
      ['B', 'x-$(A)'],
      ['A', 'one'],
      ['C', 'one/x-$(A)/$(NOPE)/$(A)'],
    ]);
  });

  it('resolves fieldRef paths', () => {
    const paths = [
      'metadata.name',
      'metadata.namespace',
      'metadata.uid',
      "metadata.labels['app']",
      "metadata.annotations['example.com/x']",
      'spec.nodeName',
      'spec.serviceAccountName',
      'status.hostIP',
      'status.podIP',
    ];
    const c: Container = { name: 'a', env: paths.map((p, i) => ({ name: `V${i}`, valueFrom: { fieldRef: { fieldPath: p } } })) };
    const env = makeEnvironmentVariables(mkPod([c]), c, ctx, 'spec.containers[0]');
    expect(env.map(([, v]) => v)).toEqual(['web', 'prod', 'u-1', 'web', 'y', 'node-a', 'sa', '127.0.0.1', '']);
    const hostNet = makeEnvironmentVariables(mkPod([c], { hostNetwork: true }), c, ctx, 'spec.containers[0]');
    expect(hostNet.at(-1)).toEqual(['V8', '127.0.0.1']);
  });

  it('resolves resourceFieldRef with divisors, rounding up', () => {
    const c: Container = {
      name: 'a',
      resources: { limits: { cpu: '1500m', memory: '129Mi' }, requests: { cpu: '250m' } },
      env: [
        { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu' } } },
        { name: 'CPU_M', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
        { name: 'REQ', valueFrom: { resourceFieldRef: { resource: 'requests.cpu' } } },
        { name: 'MEM_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
        { name: 'MEM_GI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Gi' } } },
      ],
    };
    expect(makeEnvironmentVariables(mkPod([c]), c, ctx, 'spec.containers[0]')).toEqual([
      ['CPU', '2'],
      ['CPU_M', '1500'],
      ['REQ', '1'],
      ['MEM_MI', '129'],
      ['MEM_GI', '1'],
    ]);
  });

  it.each([
    [
      'an unsupported fieldPath',
      { name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } },
      /spec\.containers\[0\]\.env\[0\]\.valueFrom\.fieldRef\.fieldPath: Unsupported value/,
    ],
    [
      'a required secretKeyRef of a missing Secret',
      { name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
      /^secret "s" not found$/,
    ],
    [
      'a required configMapKeyRef of a missing ConfigMap',
      { name: 'X', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } },
      /^configmap "c" not found$/,
    ],
  ])('rejects %s with CreateContainerConfigError', (_n, env, msg) => {
    const c: Container = { name: 'a', env: [env] };
    let err: unknown;
    try {
      makeEnvironmentVariables(mkPod([c]), c, ctx, 'spec.containers[0]');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ reason: 'CreateContainerConfigError' });
    expect((err as Error).message).toMatch(msg);
  });
});

describe('makeEnvironmentVariables with ConfigMaps and Secrets (kubelet_pods.go)', () => {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const objects = {
    configMaps: {
      cm: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cm', namespace: 'prod' },
        data: { A: 'a', 'bad key': 'x', '1st': 'y', B: 'b' },
      },
      gone: null,
    },
    secrets: {
      sec: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec', namespace: 'prod' }, data: { PASS: b64('pw'), 'no.t': b64('z') } },
    },
  } as const;
  const objCtx = (warnings: string[]) => ({
    ...ctx,
    configObjects: objects as never,
    warn: (reason: string, message: string) => warnings.push(`${reason}: ${message}`),
  });

  it("envFrom (with prefix) first, then env overriding; invalid keys skipped with the kubelet's event", () => {
    const warnings: string[] = [];
    const c: Container = {
      name: 'a',
      envFrom: [
        { configMapRef: { name: 'cm' } },
        { secretRef: { name: 'sec' }, prefix: 'S_' },
        { configMapRef: { name: 'gone', optional: true } },
      ],
      env: [
        { name: 'B', value: 'override $(A)' },
        { name: 'K', valueFrom: { configMapKeyRef: { name: 'cm', key: 'A' } } },
        { name: 'P', valueFrom: { secretKeyRef: { name: 'sec', key: 'PASS' } } },
        { name: 'OPT', valueFrom: { secretKeyRef: { name: 'sec', key: 'nokey', optional: true } } },
        { name: 'OPT2', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k', optional: true } } },
      ],
    };
    expect(makeEnvironmentVariables(mkPod([c]), c, objCtx(warnings), 'spec.containers[0]')).toEqual([
      ['A', 'a'],
      ['B', 'override a'],
      ['S_PASS', 'pw'],
      ['S_no.t', 'z'],
      ['K', 'a'],
      ['P', 'pw'],
    ]);
    expect(warnings).toEqual([
      'InvalidEnvironmentVariableNames: Keys [1st, bad key] from the EnvFrom configMap prod/cm were skipped since they are considered invalid environment variable names.',
    ]);
  });

  it.each([
    [
      'a missing key of a ConfigMap',
      { name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nope' } } },
      "couldn't find key nope in ConfigMap prod/cm",
    ],
    [
      'a missing key of a Secret',
      { name: 'X', valueFrom: { secretKeyRef: { name: 'sec', key: 'nope' } } },
      "couldn't find key nope in Secret prod/sec",
    ],
    [
      'a ConfigMap referenced but absent',
      { name: 'X', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k' } } },
      'configmap "gone" not found',
    ],
  ])("refuses %s with CreateContainerConfigError and the kubelet's message", (_n, env, message) => {
    const c: Container = { name: 'a', env: [env] };
    expect(() => makeEnvironmentVariables(mkPod([c]), c, objCtx([]), 'spec.containers[0]')).toThrow(
      expect.objectContaining({ reason: 'CreateContainerConfigError', message }),
    );
  });

  it('a required envFrom of a missing Secret is refused', () => {
    const c: Container = { name: 'a', envFrom: [{ secretRef: { name: 'other' } }] };
    expect(() => makeEnvironmentVariables(mkPod([c]), c, objCtx([]), 'spec.containers[0]')).toThrow('secret "other" not found');
  });
});

describe('container resources (kubelet cm helpers)', () => {
  it.each([
    [0, 2],
    [1, 2],
    [100, 102],
    [250, 256],
    [1000, 1024],
    [2500, 2560],
    // Capped at the kubelet's maxShares: runc refuses more than 262144.
    [256_000, 262_144],
    [1e15, 262_144],
  ])('requests.cpu %im → cpu shares %i', (milli, shares) => expect(cpuSharesFromRequest(milli)).toBe(shares));
  it.each([
    [0, 0],
    [1, 1000],
    [500, 50_000],
    [1500, 150_000],
  ])('limits.cpu %im → CFS quota %iµs per 100ms', (milli, quota) => expect(cpuQuotaFromLimit(milli)).toBe(quota));
});

describe('expandCommand (ExpandContainerCommandAndArgs)', () => {
  it('expands command and args from the container env, leaving them undefined when absent', () => {
    expect(expandCommand({ name: 'a', command: ['echo', '$(MSG)'], args: ['$(NOPE)', '$$(MSG)'] }, [['MSG', 'hi']])).toEqual({
      command: ['echo', 'hi'],
      args: ['$(NOPE)', '$(MSG)'],
    });
    expect(expandCommand({ name: 'a' }, [])).toEqual({ command: undefined, args: undefined });
  });
});

describe('volume mounts (makeMounts)', () => {
  it('resolves emptyDir and hostPath mounts to host paths (the emptyDir set up 0777 by the volume manager, the hostPath created), read-only as asked', async () => {
    const rootDir = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-cc-'));
    dirs.push(rootDir);
    const hostDir = path.join(rootDir, 'host-data');
    const c: Container = {
      name: 'app',
      image: 'img:1',
      volumeMounts: [
        { name: 'scratch', mountPath: '/s' },
        { name: 'host', mountPath: '/h', readOnly: true, mountPropagation: 'HostToContainer' },
      ],
    };
    const pod = mkPod([c], {
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'host', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
      ],
    });
    const scratch = emptyDirPath(rootDir, 'u-1', 'scratch');
    // The emptyDir is the volume manager's (setUpPodVolumes, earlier in the same sync).
    await setUpPodVolumes(pod, undefined, { rootDir, nodeName: 'node-a', hostIp: '127.0.0.1' });
    expect(await makeVolumeMounts(pod, c, rootDir, 'spec.containers[0]')).toEqual([
      { hostPath: scratch, containerPath: '/s', readOnly: false, propagation: undefined },
      { hostPath: hostDir, containerPath: '/h', readOnly: true, propagation: 'HostToContainer' },
    ]);
    expect(statSync(scratch).mode & 0o777).toBe(0o777);
    expect(statSync(hostDir).isDirectory()).toBe(true);
  });

  it.each([
    [
      'a missing hostPath Directory',
      { name: 'v', hostPath: { path: '/nonexistent/kubelet-ts-test', type: 'Directory' } },
      /is not a directory/,
    ],
    [
      'an unsupported volume type',
      { name: 'v', nfs: { server: 'x', path: '/' } },
      /only emptyDir, hostPath, configMap, secret, downwardAPI, projected and persistentVolumeClaim/,
    ],
  ])('fails with CreateContainerConfigError for %s', async (_n, volume, msg) => {
    const pod = mkPod([{ name: 'a', image: 'i', volumeMounts: [{ name: 'v', mountPath: '/v' }] }], { volumes: [volume] });
    await expect(makeVolumeMounts(pod, pod.spec!.containers[0], ctx.rootDir, 'spec.containers[0]')).rejects.toMatchObject({
      reason: 'CreateContainerConfigError',
      message: expect.stringMatching(msg),
    });
  });

  it('refuses pod UIDs that are not a single path segment', () => {
    expect(() => podDir('/root', '../etc')).toThrow(/metadata\.uid/);
    expect(() => podDir('/root', '')).toThrow(/metadata\.uid/);
    expect(podDir('/root', 'abc')).toBe('/root/pods/abc');
  });
});

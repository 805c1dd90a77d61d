// The CRI builders (issue #40 item 1): PodSandboxConfig and ContainerConfig from a pod, table-tested, no runtime.
import os from 'node:os';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { generatePodSandboxConfig, type SandboxConfigContext } from '../../../src/workers/kuberuntime/sandbox-config.js';
import {
  generateContainerConfig,
  generateRunContainerOptions,
  type CriContainerContext,
} from '../../../src/workers/kuberuntime/container-config.js';
import {
  determineEffectiveSecurityContext,
  kDefaultMaskedPaths,
  namespacesForPod,
} from '../../../src/workers/kuberuntime/security-context.js';
import { getContainerInfoFromAnnotations, nodeSelector } from '../../../src/workers/kuberuntime/labels.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmpRoot(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-cri-config-'));
  dirs.push(d);
  return d;
}
function mkPod(containers: Container[], spec: Partial<Pod['spec']> = {}, meta: Partial<Pod['metadata']> = {}): Pod {
  return { metadata: { name: 'web', namespace: 'prod', uid: 'u-1', ...meta }, spec: { containers, ...spec } };
}
const sbCtx = (over: Partial<SandboxConfigContext> = {}): SandboxConfigContext => ({
  nodeName: 'node-a',
  rootDir: '/var/lib/kts',
  podLogsDir: '/var/log/pods',
  clusterDomain: 'cluster.local',
  cgroupParent: '/kubelet-ts/kubepods/besteffort/podu-1',
  ...over,
});
const cCtx = (rootDir: string, over: Partial<CriContainerContext> = {}): CriContainerContext => ({
  nodeName: 'node-a',
  rootDir,
  hostIp: '10.0.0.5',
  podIp: '10.1.0.7',
  sandboxId: 'sb-1',
  image: { uid: 0 },
  etcHostsFile: '',
  memoryCapacityBytes: 8 * 1024 ** 3,
  ...over,
});

describe('generatePodSandboxConfig', () => {
  it('fills metadata, hostname, log directory, DNS, cgroup parent, labels and annotations', () => {
    const pod = mkPod([{ name: 'a', image: 'busybox' }], {}, { labels: { app: 'web' }, annotations: { note: 'x' } });
    const c = generatePodSandboxConfig(
      pod,
      2,
      sbCtx({ dns: { servers: ['10.96.0.10'], searches: ['prod.svc.cluster.local'], options: ['ndots:5'] } }),
    );
    expect(c.metadata).toEqual({ name: 'web', namespace: 'prod', uid: 'u-1', attempt: 2 });
    expect(c.hostname).toBe('web');
    expect(c.log_directory).toBe('/var/log/pods/prod_web_u-1');
    expect(c.dns_config).toEqual({ servers: ['10.96.0.10'], searches: ['prod.svc.cluster.local'], options: ['ndots:5'] });
    expect(c.labels).toEqual({
      app: 'web',
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'prod',
      'io.kubernetes.pod.uid': 'u-1',
      'kubelet-ts.node-name': 'node-a',
    });
    expect(c.annotations).toMatchObject({ note: 'x', 'io.kubernetes.pod.terminationGracePeriod': '30' });
    expect(c.annotations['io.kubernetes.container.hash']).toMatch(/^[0-9a-f]+$/);
    expect(c.linux?.cgroup_parent).toBe('/kubelet-ts/kubepods/besteffort/podu-1');
    expect(c.linux?.security_context?.namespace_options).toMatchObject({ network: 'POD', pid: 'CONTAINER', ipc: 'POD' });
    expect(c.linux?.security_context?.seccomp).toEqual({ profile_type: 'RuntimeDefault', localhost_ref: '' });
    expect(c.linux?.security_context?.privileged).toBe(false);
  });

  it.each([
    ['hostNetwork: no hostname, network NODE', { hostNetwork: true }, '', { network: 'NODE', pid: 'CONTAINER', ipc: 'POD' }],
    ['hostPID and hostIPC', { hostPID: true, hostIPC: true }, 'web', { network: 'POD', pid: 'NODE', ipc: 'NODE' }],
    ['shareProcessNamespace: pid POD', { shareProcessNamespace: true }, 'web', { network: 'POD', pid: 'POD', ipc: 'POD' }],
    ['spec.hostname', { hostname: 'front' }, 'front', { network: 'POD', pid: 'CONTAINER', ipc: 'POD' }],
    [
      'setHostnameAsFQDN with a subdomain',
      { hostname: 'h', subdomain: 'sub', setHostnameAsFQDN: true },
      'h.sub.prod.svc.cluster.local',
      { network: 'POD', pid: 'CONTAINER', ipc: 'POD' },
    ],
  ] as const)('%s', (_name, spec, hostname, ns) => {
    const c = generatePodSandboxConfig(mkPod([{ name: 'a', image: 'i' }], spec as Partial<Pod['spec']>), 0, sbCtx());
    expect(c.hostname).toBe(hostname);
    expect(c.linux?.security_context?.namespace_options).toMatchObject(ns);
  });

  it('maps ports, the pod security context, sysctls and privileged containers', () => {
    const pod = mkPod(
      [
        {
          name: 'a',
          image: 'i',
          ports: [
            { containerPort: 80, hostPort: 8080 },
            { containerPort: 53, protocol: 'UDP', hostIP: '127.0.0.1' },
          ],
        },
        { name: 'b', image: 'i', securityContext: { privileged: true } },
      ],
      {
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 3000,
          fsGroup: 2000,
          supplementalGroups: [4000, 2000],
          sysctls: [{ name: 'net/ipv4/ip_unprivileged_port_start', value: '0' }],
          seccompProfile: { type: 'Unconfined' },
          seLinuxOptions: { level: 's0:c1' },
        },
      },
    );
    const c = generatePodSandboxConfig(pod, 0, sbCtx());
    expect(c.port_mappings).toEqual([
      { protocol: 'TCP', container_port: 80, host_port: 8080, host_ip: '' },
      { protocol: 'UDP', container_port: 53, host_port: 0, host_ip: '127.0.0.1' },
    ]);
    const sc = c.linux!.security_context!;
    expect(sc.run_as_user).toEqual({ value: 1000 });
    expect(sc.run_as_group).toEqual({ value: 3000 });
    expect(sc.supplemental_groups).toEqual([2000, 4000]);
    expect(sc.privileged).toBe(true);
    expect(sc.seccomp).toEqual({ profile_type: 'Unconfined', localhost_ref: '' });
    expect(sc.selinux_options).toEqual({ user: '', role: '', type: '', level: 's0:c1' });
    expect(c.linux!.sysctls).toEqual({ 'net.ipv4.ip_unprivileged_port_start': '0' });
  });

  it('refuses an FQDN over 64 characters and a seccomp profile outside the profile root', () => {
    expect(() =>
      generatePodSandboxConfig(
        mkPod([{ name: 'a', image: 'i' }], { hostname: 'h'.repeat(40), subdomain: 's'.repeat(20), setHostnameAsFQDN: true }),
        0,
        sbCtx(),
      ),
    ).toThrow(/FQDN .* is too long/);
    expect(() =>
      generatePodSandboxConfig(
        mkPod([{ name: 'a', image: 'i' }], { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../x.json' } } }),
        0,
        sbCtx(),
      ),
    ).toThrow(/spec.securityContext.seccompProfile.localhostProfile: "..\/x.json" must be a file under/);
  });
});

describe('generateContainerConfig', () => {
  it('builds metadata, image, command with $(VAR), env, mounts, labels, annotations, log path and resources', async () => {
    const root = tmpRoot();
    const container: Container = {
      name: 'app',
      image: 'busybox:1.35',
      command: ['sh', '-c'],
      args: ['echo $(GREETING) $(MISSING)'],
      workingDir: '/w',
      stdin: true,
      tty: true,
      env: [{ name: 'GREETING', value: 'hi' }],
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } },
      volumeMounts: [
        { name: 'data', mountPath: '/data', mountPropagation: 'HostToContainer' },
        { name: 'hp', mountPath: '/hp', readOnly: true },
      ],
      resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '250m', memory: '64Mi' } },
    };
    const pod = mkPod([container], {
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'hp', hostPath: { path: root } },
      ],
      terminationGracePeriodSeconds: 5,
    });
    const ctx = cCtx(root, { etcHostsFile: path.join(root, 'etc-hosts') });
    const opts = await generateRunContainerOptions(pod, container, 'spec.containers[0]', 3, ctx);
    const c = generateContainerConfig(pod, container, 'spec.containers[0]', 'abc123', 3, 'sha256:img', opts, ctx);
    expect(c.metadata).toEqual({ name: 'app', attempt: 3 });
    expect(c.image).toMatchObject({ image: 'sha256:img', user_specified_image: 'busybox:1.35' });
    expect(c.command).toEqual(['sh', '-c']);
    expect(c.args).toEqual(['echo hi $(MISSING)']);
    expect(c.working_dir).toBe('/w');
    expect(c.envs).toEqual([{ key: 'GREETING', value: 'hi' }]);
    expect(c.mounts.map((m) => [m.container_path, m.readonly, m.propagation])).toEqual([
      ['/data', false, 'PROPAGATION_HOST_TO_CONTAINER'],
      ['/hp', true, 'PROPAGATION_PRIVATE'],
      ['/etc/hosts', false, 'PROPAGATION_PRIVATE'],
      ['/dev/termination-log', false, 'PROPAGATION_PRIVATE'],
    ]);
    const tm = c.mounts.find((m) => m.container_path === '/dev/termination-log')!;
    expect(tm.host_path).toBe(path.join(root, 'pods', 'u-1', 'containers', 'app', '3'));
    expect(existsSync(tm.host_path)).toBe(true);
    expect(c.labels).toEqual({
      'io.kubernetes.pod.name': 'web',
      'io.kubernetes.pod.namespace': 'prod',
      'io.kubernetes.pod.uid': 'u-1',
      'io.kubernetes.container.name': 'app',
      'kubelet-ts.node-name': 'node-a',
    });
    expect(c.annotations).toEqual({
      'io.kubernetes.container.hash': 'abc123',
      'io.kubernetes.container.restartCount': '3',
      'io.kubernetes.pod.terminationGracePeriod': '5',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.container.preStopHandler': JSON.stringify({ exec: { command: ['sleep', '1'] } }),
      'io.kubernetes.container.ports': JSON.stringify([{ containerPort: 80, protocol: 'TCP' }]),
    });
    expect(getContainerInfoFromAnnotations(c.annotations)).toMatchObject({
      hash: 'abc123',
      restartCount: 3,
      terminationMessagePath: '/dev/termination-log',
      terminationGracePeriodSeconds: 5,
    });
    expect(c.log_path).toBe('app/3.log');
    expect([c.stdin, c.stdin_once, c.tty]).toEqual([true, false, true]);
    expect(c.linux?.resources).toMatchObject({
      cpu_period: 100_000,
      cpu_quota: 50_000,
      cpu_shares: 256,
      memory_limit_in_bytes: 64 * 1024 * 1024,
    });
  });

  it.each([
    ['BestEffort', {}, { cpu_period: 0, cpu_quota: 0, cpu_shares: 2, memory_limit_in_bytes: 0, oom_score_adj: 1000 }],
    [
      'Guaranteed',
      { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } },
      { cpu_period: 100_000, cpu_quota: 100_000, cpu_shares: 1024, memory_limit_in_bytes: 1024 ** 3, oom_score_adj: -997 },
    ],
    [
      'Burstable, limit only on cpu',
      { limits: { cpu: '2' }, requests: { memory: '2Gi' } },
      { cpu_quota: 200_000, cpu_shares: 2048, oom_score_adj: 750 },
    ],
  ] as const)('resources: %s', async (_n, resources, want) => {
    const container: Container = { name: 'a', image: 'i', resources: resources as Container['resources'] };
    const pod = mkPod([container]);
    const ctx = cCtx(tmpRoot());
    const c = generateContainerConfig(pod, container, 'spec.containers[0]', 'h', 0, 'i', { envs: [], mounts: [] }, ctx);
    expect(c.linux?.resources).toMatchObject(want);
  });

  it('raises oom_score_adj to the floor the runtime can set', () => {
    const container: Container = {
      name: 'a',
      image: 'i',
      resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1', memory: '1Gi' } },
    };
    const c = generateContainerConfig(
      mkPod([container]),
      container,
      'f',
      'h',
      0,
      'i',
      { envs: [], mounts: [] },
      cCtx('/r', { oomScoreAdjFloor: 0 }),
    );
    expect(c.linux?.resources?.oom_score_adj).toBe(0);
  });

  it('refuses a bad quantity naming the field', () => {
    const container: Container = { name: 'a', image: 'i', resources: { limits: { memory: 'lots' } } };
    expect(() =>
      generateContainerConfig(mkPod([container]), container, 'spec.containers[0]', 'h', 0, 'i', { envs: [], mounts: [] }, cCtx('/r')),
    ).toThrow(/spec.containers\[0\].resources.limits.memory/);
  });
});

describe('determineEffectiveSecurityContext', () => {
  const sc = (c: Partial<Container>, spec: Partial<Pod['spec']> = {}, image = { uid: 0 } as { uid?: number; username?: string }) => {
    const container = { name: 'a', image: 'i', ...c } as Container;
    return determineEffectiveSecurityContext(mkPod([container], spec), container, image, '/var/lib/kts', 'spec.containers[0]');
  };

  it('defaults: image root user, RuntimeDefault seccomp, masked /proc paths, pod namespaces', () => {
    const s = sc({});
    expect(s.run_as_user).toEqual({ value: 0 });
    expect(s.run_as_username).toBe('');
    expect(s.seccomp).toEqual({ profile_type: 'RuntimeDefault', localhost_ref: '' });
    expect(s.apparmor).toBeNull();
    expect(s.masked_paths).toEqual(kDefaultMaskedPaths);
    expect(s.readonly_paths).toContain('/proc/sys');
    expect(s.no_new_privs).toBe(false);
    expect(s.privileged).toBe(false);
    expect(s.capabilities).toBeNull();
  });

  it.each([
    [
      'the container wins over the pod',
      { securityContext: { runAsUser: 5, runAsGroup: 6 } },
      { securityContext: { runAsUser: 1, runAsGroup: 2 } },
      { run_as_user: { value: 5 }, run_as_group: { value: 6 } },
    ],
    [
      'the pod applies',
      {},
      { securityContext: { runAsUser: 1, fsGroup: 9, supplementalGroups: [7] } },
      { run_as_user: { value: 1 }, supplemental_groups: [9, 7] },
    ],
    [
      'capabilities without CAP_',
      { securityContext: { capabilities: { add: ['CAP_NET_ADMIN'], drop: ['ALL'] } } },
      {},
      { capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['ALL'], add_ambient_capabilities: [] } },
    ],
    [
      'privileged, read-only root, no new privileges',
      { securityContext: { privileged: false, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false } },
      {},
      { privileged: false, readonly_rootfs: true, no_new_privs: true },
    ],
    ['procMount Unmasked', { securityContext: { procMount: 'Unmasked' } }, { hostUsers: false }, { masked_paths: [], readonly_paths: [] }],
    [
      'Localhost seccomp under <root>/seccomp',
      { securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: 'p/audit.json' } } },
      {},
      { seccomp: { profile_type: 'Localhost', localhost_ref: '/var/lib/kts/seccomp/p/audit.json' } },
    ],
    [
      'AppArmor Localhost',
      { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-x' } } },
      {},
      { apparmor: { profile_type: 'Localhost', localhost_ref: 'k8s-x' }, apparmor_profile: 'localhost/k8s-x' },
    ],
    ['hostPID', {}, { hostPID: true }, { namespace_options: { ...namespacesForPod(mkPod([], { hostPID: true })) } }],
  ] as const)('%s', (_n, c, spec, want) => {
    expect(sc(c as Partial<Container>, spec as Partial<Pod['spec']>)).toMatchObject(want);
  });

  it('uses the image user name when neither runAsUser nor a numeric image user is set', () => {
    const s = sc({}, {}, { username: 'nobody' });
    expect(s.run_as_user).toBeNull();
    expect(s.run_as_username).toBe('nobody');
  });

  it('nodeSelector selects this node, and one pod', () => {
    expect(nodeSelector('n')).toEqual({ 'kubelet-ts.node-name': 'n' });
    expect(nodeSelector('n', 'u')).toEqual({ 'kubelet-ts.node-name': 'n', 'io.kubernetes.pod.uid': 'u' });
  });
});

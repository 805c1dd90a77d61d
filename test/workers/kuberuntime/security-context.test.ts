// The securityContext → Docker create spec mapping (issue #12 part A): unit tests, no Docker.
import os from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { buildContainerSpec, buildSandboxSpec } from '../../../src/workers/kuberuntime/container-config.js';
import { emptyDirPath } from '../../../src/workers/kuberuntime/pod-dirs.js';
import { imageUid, sandboxSecurityConfig, verifyRunAsNonRoot } from '../../../src/workers/kuberuntime/security-context.js';
import { admitPodSecurity, checkAllowedUnsafeSysctls } from '../../../src/main/pod/security-admission.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmpRoot(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'kubelet-ts-sc-'));
  dirs.push(d);
  return d;
}
function mkPod(containers: Container[], spec: Partial<Pod['spec']> = {}, annotations: Record<string, string> = {}): Pod {
  return { metadata: { name: 'web', namespace: 'prod', uid: 'u-1', annotations }, spec: { containers, ...spec } };
}
const ctx = (rootDir: string, imageUser = '') => ({ nodeName: 'n', rootDir, hostIp: '127.0.0.1', sandboxId: 'sb', imageUser });

describe('container securityContext → Docker', () => {
  it('maps user, groups, privileged, read-only root, capabilities and no-new-privileges', async () => {
    const root = tmpRoot();
    const pod = mkPod(
      [
        {
          name: 'a',
          image: 'i',
          securityContext: {
            runAsUser: 1000,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { add: ['cap_net_admin'], drop: ['ALL'] },
          },
        },
      ],
      { securityContext: { runAsUser: 1, runAsGroup: 3000, supplementalGroups: [4000, 2000], fsGroup: 2000 } },
    );
    const spec = await buildContainerSpec(pod, 0, 'h', 0, 'i', ctx(root));
    expect(spec.user).toBe('1000:3000');
    expect(spec.hostConfig).toMatchObject({
      readonlyRootfs: true,
      capAdd: ['NET_ADMIN'],
      capDrop: ['ALL'],
      securityOpt: ['no-new-privileges'],
      groupAdd: ['4000', '2000'],
      networkMode: 'container:sb',
    });
    expect(spec.hostConfig.privileged).toBeUndefined();
  });

  it('keeps the image user when only runAsGroup is set, and no user when neither is', async () => {
    const root = tmpRoot();
    const group = mkPod([{ name: 'a', image: 'i' }], { securityContext: { runAsGroup: 5 } });
    expect((await buildContainerSpec(group, 0, 'h', 0, 'i', ctx(root, 'nobody'))).user).toBe('nobody:5');
    expect((await buildContainerSpec(group, 0, 'h', 0, 'i', ctx(root, ''))).user).toBe('0:5');
    expect((await buildContainerSpec(mkPod([{ name: 'a', image: 'i' }]), 0, 'h', 0, 'i', ctx(root))).user).toBeUndefined();
  });

  it('maps seccomp: Unconfined, RuntimeDefault (Docker default), Localhost from <root>/seccomp; privileged drops it', async () => {
    const root = tmpRoot();
    mkdirSync(path.join(root, 'seccomp', 'profiles'), { recursive: true });
    writeFileSync(path.join(root, 'seccomp', 'profiles', 'audit.json'), '{ "defaultAction": "SCMP_ACT_LOG" }');
    symlinkSync('/etc/hostname', path.join(root, 'seccomp', 'escape.json'));
    const build = (sc: Container['securityContext'], psc?: Partial<NonNullable<Pod['spec']>>) =>
      buildContainerSpec(mkPod([{ name: 'a', image: 'i', securityContext: sc }], psc), 0, 'h', 0, 'i', ctx(root));
    expect((await build({ seccompProfile: { type: 'Unconfined' } })).hostConfig.securityOpt).toEqual(['seccomp=unconfined']);
    expect((await build({ seccompProfile: { type: 'RuntimeDefault' } })).hostConfig.securityOpt).toEqual([]);
    expect((await build(undefined, { securityContext: { seccompProfile: { type: 'Unconfined' } } })).hostConfig.securityOpt).toEqual([
      'seccomp=unconfined',
    ]);
    expect(
      (await build({ seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/audit.json' } })).hostConfig.securityOpt,
    ).toEqual(['seccomp={"defaultAction":"SCMP_ACT_LOG"}']);
    expect((await build({ privileged: true, seccompProfile: { type: 'Unconfined' } })).hostConfig).toMatchObject({
      privileged: true,
      securityOpt: [],
    });
    await expect(build({ seccompProfile: { type: 'Localhost', localhostProfile: 'missing.json' } })).rejects.toMatchObject({
      reason: 'CreateContainerConfigError',
      message: expect.stringMatching(
        /spec\.containers\[0\]\.securityContext\.seccompProfile\.localhostProfile: cannot load seccomp profile .*missing\.json/,
      ),
    });
    await expect(build({ seccompProfile: { type: 'Localhost', localhostProfile: 'escape.json' } })).rejects.toMatchObject({
      message: expect.stringMatching(/resolves to \/etc\/hostname, outside/),
    });
    await expect(build({ seccompProfile: { type: 'Localhost', localhostProfile: '../admin.token' } })).rejects.toMatchObject({
      message: expect.stringMatching(/must be a file under/),
    });
  });

  it('gives an emptyDir the fsGroup with setgid and group write', async () => {
    const root = tmpRoot();
    const pod = mkPod([{ name: 'a', image: 'i', volumeMounts: [{ name: 'd', mountPath: '/d' }] }], {
      volumes: [{ name: 'd', emptyDir: {} }],
      securityContext: { fsGroup: 2345 },
    });
    await buildContainerSpec(pod, 0, 'h', 0, 'i', ctx(root));
    const st = statSync(emptyDirPath(root, 'u-1', 'd'));
    if (process.getuid?.() === 0) expect(st.gid).toBe(2345);
    expect(st.mode & 0o2000).toBe(0o2000);
  });
});

describe('runAsNonRoot (verifyRunAsNonRoot)', () => {
  const nonRoot = (sc: Container['securityContext'] = {}) =>
    mkPod([{ name: 'c', image: 'i', securityContext: { runAsNonRoot: true, ...sc } }]);
  it.each<[string, Pod, string, RegExp | null]>([
    [
      'image root, no runAsUser',
      nonRoot(),
      '',
      /^container has runAsNonRoot and image will run as root \(pod: "web_prod\(u-1\)", container: c\)$/,
    ],
    ['image uid 0:0', nonRoot(), '0:0', /image will run as root/],
    [
      'image user name',
      nonRoot(),
      'nobody',
      /^container has runAsNonRoot and image has non-numeric user \(nobody\), cannot verify user is non-root/,
    ],
    ['runAsUser 0', nonRoot({ runAsUser: 0 }), '1000', /^container's runAsUser breaks non-root policy/],
    ['runAsUser 65534', nonRoot({ runAsUser: 65534 }), '', null],
    ['image uid 1000', nonRoot(), '1000', null],
    ['runAsNonRoot false', mkPod([{ name: 'c', image: 'i', securityContext: { runAsNonRoot: false } }]), '', null],
  ])('%s', (_n, pod, imageUser, msg) => {
    const run = () => verifyRunAsNonRoot(pod, pod.spec!.containers[0], imageUser);
    if (msg) expect(run).toThrow(msg);
    else expect(run).not.toThrow();
  });
  it('reads the image user as dockershim', () => {
    expect(imageUid('')).toEqual({ uid: 0 });
    expect(imageUid('65534:65534')).toEqual({ uid: 65534 });
    expect(imageUid('nobody')).toEqual({ username: 'nobody' });
  });
});

describe('sandbox securityContext', () => {
  it('puts the pod user, groups and sysctls on the sandbox', async () => {
    const pod = mkPod([{ name: 'a', image: 'i' }], {
      securityContext: {
        runAsUser: 65534,
        supplementalGroups: [7],
        sysctls: [{ name: 'net/ipv4/ip_unprivileged_port_start', value: '0' }],
      },
    });
    const spec = buildSandboxSpec(pod, 0, 'n', 'pause', undefined, await sandboxSecurityConfig(pod, tmpRoot()));
    expect(spec.user).toBe('65534');
    expect(spec.hostConfig).toMatchObject({
      networkMode: 'none',
      ipcMode: 'shareable',
      groupAdd: ['7'],
      sysctls: { 'net.ipv4.ip_unprivileged_port_start': '0' },
    });
  });
});

describe('security admission (sysctl allow-list, AppArmor, SELinux)', () => {
  const host = { allowedUnsafeSysctls: [], appArmorEnabled: false, seLinuxEnabled: false };
  it('admits the safe sysctls and refuses the rest unless allowed', () => {
    const pod = (name: string) => mkPod([{ name: 'a', image: 'i' }], { securityContext: { sysctls: [{ name, value: '1' }] } });
    expect(admitPodSecurity(pod('kernel.shm_rmid_forced'), host)).toEqual({ admit: true });
    expect(admitPodSecurity(pod('net.core.somaxconn'), host)).toEqual({
      admit: false,
      reason: 'SysctlForbidden',
      message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted',
    });
    expect(admitPodSecurity(pod('net.core.somaxconn'), { ...host, allowedUnsafeSysctls: ['net.core.*'] })).toEqual({ admit: true });
  });
  it('refuses AppArmor profiles (not Unconfined) and seLinuxOptions on a host without them', () => {
    const aa = mkPod([{ name: 'a', image: 'i' }], {}, { 'container.apparmor.security.beta.kubernetes.io/a': 'runtime/default' });
    expect(admitPodSecurity(aa, host)).toMatchObject({
      admit: false,
      reason: 'AppArmor',
      message: expect.stringMatching(/^Cannot enforce AppArmor: AppArmor is not enabled on the host/),
    });
    expect(admitPodSecurity(aa, { ...host, appArmorEnabled: true })).toEqual({ admit: true });
    expect(
      admitPodSecurity(mkPod([{ name: 'a', image: 'i', securityContext: { appArmorProfile: { type: 'Unconfined' } } }]), host),
    ).toEqual({ admit: true });
    expect(
      admitPodSecurity(mkPod([{ name: 'a', image: 'i', securityContext: { seLinuxOptions: { level: 's0:c1' } } }]), host),
    ).toMatchObject({ admit: false, reason: 'SELinux' });
  });
  it('checks --allowed-unsafe-sysctls as the kubelet: namespaced only', () => {
    expect(checkAllowedUnsafeSysctls(['net.core.*', 'kernel.msgmax', 'kernel.shm*', 'fs.mqueue.*'])).toBeUndefined();
    expect(checkAllowedUnsafeSysctls(['vm.swappiness'])).toMatch(/"vm.swappiness" is not known to be namespaced/);
    expect(checkAllowedUnsafeSysctls(['kernel.*'])).toMatch(/not known to be namespaced/);
  });
});

describe('sandboxHash and the pod securityContext', () => {
  it('is unchanged for a pod without pod-level security settings, and changes with its sysctls or user', async () => {
    const { sandboxHash } = await import('../../../src/workers/kuberuntime/labels.js');
    const { stableHash } = await import('../../../src/shared/hash.js');
    const plain = mkPod([{ name: 'a', image: 'i' }], { securityContext: {} });
    expect(sandboxHash(plain)).toBe(stableHash({ hostNetwork: false, hostIPC: false, hostPID: false }, 8));
    expect(sandboxHash(mkPod([{ name: 'a', image: 'i' }], { securityContext: { supplementalGroups: [] } }))).toBe(sandboxHash(plain));
    const sysctl = mkPod([{ name: 'a', image: 'i' }], { securityContext: { sysctls: [{ name: 'kernel.shm_rmid_forced', value: '1' }] } });
    const user = mkPod([{ name: 'a', image: 'i' }], { securityContext: { runAsUser: 7 } });
    expect(new Set([sandboxHash(plain), sandboxHash(sysctl), sandboxHash(user)]).size).toBe(3);
  });
});

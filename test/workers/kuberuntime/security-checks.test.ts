// The securityContext → Docker create spec mapping (issue #12 part A): unit tests, no Docker.
import os from 'node:os';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Container, Pod } from '../../../src/shared/api.js';
import { makeVolumeMounts } from '../../../src/workers/kuberuntime/run-container-options.js';
import { emptyDirPath } from '../../../src/workers/kubetypes/pod-dirs.js';
import { setUpPodVolumes } from '../../../src/workers/volumes/pod-volumes.js';
import { imageUid, verifyRunAsNonRoot } from '../../../src/workers/kuberuntime/security-checks.js';
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

describe('emptyDir under an fsGroup (SetVolumeOwnership)', () => {
  it('gives an emptyDir the fsGroup with setgid and group write', async () => {
    const root = tmpRoot();
    const pod = mkPod([{ name: 'a', image: 'i', volumeMounts: [{ name: 'd', mountPath: '/d' }] }], {
      volumes: [{ name: 'd', emptyDir: {} }],
      securityContext: { fsGroup: 2345 },
    });
    await setUpPodVolumes(pod, undefined, { rootDir: root, nodeName: 'node-a', hostIp: '127.0.0.1' });
    await makeVolumeMounts(pod, pod.spec!.containers[0], root, 'spec.containers[0]');
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
  it('reads the image user as getImageUser: a number is a uid, a name a username, unset is root', () => {
    expect(imageUid('')).toEqual({ uid: 0 });
    expect(imageUid('65534:65534')).toEqual({ uid: 65534 });
    expect(imageUid('nobody')).toEqual({ username: 'nobody' });
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
    const { sandboxHash } = await import('../../../src/workers/kubetypes/label-keys.js');
    const { stableHash } = await import('../../../src/shared/hash.js');
    const plain = mkPod([{ name: 'a', image: 'i' }], { securityContext: {} });
    expect(sandboxHash(plain)).toBe(stableHash({ hostNetwork: false, hostIPC: false, hostPID: false }, 8));
    expect(sandboxHash(mkPod([{ name: 'a', image: 'i' }], { securityContext: { supplementalGroups: [] } }))).toBe(sandboxHash(plain));
    const sysctl = mkPod([{ name: 'a', image: 'i' }], { securityContext: { sysctls: [{ name: 'kernel.shm_rmid_forced', value: '1' }] } });
    const user = mkPod([{ name: 'a', image: 'i' }], { securityContext: { runAsUser: 7 } });
    expect(new Set([sandboxHash(plain), sandboxHash(sysctl), sandboxHash(user)]).size).toBe(3);
  });
});

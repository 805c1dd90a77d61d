// The Pod Security Standards checks, table-driven, with cases and messages taken from upstream's
// policy tests (staging/src/k8s.io/pod-security-admission/policy/check_*_test.go) — issue #38 finding 8.
import { describe, expect, it } from 'vitest';
import { evaluatePod, forbiddenReasons, parseVersion, type Level } from '../../../src/shared/pod-security/policy.js';

type Spec = Record<string, unknown>;
const c = (name: string, extra: Spec = {}): Spec => ({ name, image: 'i', ...extra });
const sc = (name: string, securityContext: Spec, extra: Spec = {}): Spec => c(name, { securityContext, ...extra });
const pod = (spec: Spec, metadata: Spec = {}) => ({
  metadata: { name: 'p', namespace: 'default', ...metadata },
  spec: { containers: [c('c')], ...spec },
});
/** The message a level at a version gives `p`: '' when allowed. */
const at = (level: Level, p: unknown, version = 'latest') => {
  const v = parseVersion(version);
  return forbiddenReasons(evaluatePod({ level, version: v.version, minor: v.minor }, p));
};
/** A container that passes every restricted check. */
const kRestrictedOk = {
  allowPrivilegeEscalation: false,
  runAsNonRoot: true,
  seccompProfile: { type: 'RuntimeDefault' },
  capabilities: { drop: ['ALL'] },
};

describe("baseline: refused, with upstream's reason and detail", () => {
  const cases: Array<[string, unknown, string, string?]> = [
    [
      'host namespaces',
      pod({ hostNetwork: true, hostPID: true, hostIPC: true }),
      'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)',
    ],
    [
      'privileged',
      pod({ containers: [sc('a', { privileged: true }), sc('b', { privileged: true }), sc('d', { privileged: false })] }),
      'privileged (containers "a", "b" must not set securityContext.privileged=true)',
    ],
    [
      'privileged init container',
      pod({ initContainers: [sc('i', { privileged: true })] }),
      'privileged (container "i" must not set securityContext.privileged=true)',
    ],
    [
      'non-default capabilities',
      pod({
        containers: [
          sc('a', { capabilities: { add: ['CHOWN', 'SYS_ADMIN', 'NET_RAW'] } }),
          sc('b', { capabilities: { add: ['NET_RAW'] } }),
        ],
      }),
      'non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    [
      'capability ALL',
      pod({ containers: [sc('a', { capabilities: { add: ['ALL'] } })] }),
      'non-default capabilities (container "a" must not include "ALL" in securityContext.capabilities.add)',
    ],
    [
      'hostPath volumes',
      pod({
        volumes: [
          { name: 'a', hostPath: { path: '/' } },
          { name: 'e', emptyDir: {} },
          { name: 'b', hostPath: { path: '/proc' } },
        ],
      }),
      'hostPath volumes (volumes "a", "b")',
    ],
    [
      'one hostPort',
      pod({ containers: [c('c', { ports: [{ containerPort: 80, hostPort: 12080 }] })] }),
      'hostPort (container "c" uses hostPort 12080)',
    ],
    [
      'hostPorts',
      pod({
        containers: [
          c('a', { ports: [{ containerPort: 80, hostPort: 12080 }] }),
          c('b', { ports: [{ containerPort: 1, hostPort: 8080 }, { containerPort: 2, hostPort: 9090 }, { containerPort: 3 }] }),
        ],
      }),
      'hostPort (containers "a", "b" use hostPorts 12080, 8080, 9090)',
    ],
    [
      "hostPorts (upstream's multiple containers case)",
      pod({
        containers: [
          c('a', { ports: [{ hostPort: 0 }] }),
          c('b', { ports: [{ hostPort: 0 }, { hostPort: 10 }, { hostPort: 20 }] }),
          c('c', { ports: [{ hostPort: 0 }, { hostPort: 10 }, { hostPort: 30 }] }),
        ],
      }),
      'hostPort (containers "b", "c" use hostPorts 10, 20, 30)',
    ],
    [
      'AppArmor Unconfined (fields and annotation)',
      pod(
        {
          securityContext: { appArmorProfile: { type: 'Unconfined' } },
          containers: [sc('a', { appArmorProfile: { type: 'Unconfined' } }), sc('b', { appArmorProfile: { type: 'RuntimeDefault' } })],
        },
        { annotations: { 'container.apparmor.security.beta.kubernetes.io/b': 'unconfined' } },
      ),
      'forbidden AppArmor profiles (pod and container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/b=\\"unconfined\\"")',
    ],
    [
      'AppArmor Unconfined (container)',
      pod({ containers: [sc('a', { appArmorProfile: { type: 'Unconfined' } })] }),
      'forbidden AppArmor profile (container "a" must not set AppArmor profile type to "Unconfined")',
    ],
    [
      'seLinuxOptions (pod and containers)',
      pod({
        securityContext: { seLinuxOptions: { type: 'foo', user: 'bar', role: 'baz' } },
        containers: [
          sc('a', { seLinuxOptions: { type: 'container_t' } }),
          sc('b', { seLinuxOptions: { type: 'container_init_t' } }),
          sc('c', { seLinuxOptions: { type: 'container_kvm_t' } }),
          sc('d', { seLinuxOptions: { type: 'container_engine_t' } }),
          sc('e', { seLinuxOptions: { type: 'bar' } }),
          sc('f', { seLinuxOptions: { user: 'bar' } }),
          sc('g', { seLinuxOptions: { role: 'baz' } }),
        ],
      }),
      'seLinuxOptions (pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: types "bar", "foo"; user may not be set; role may not be set)',
    ],
    [
      'seLinuxOptions user only',
      pod({ securityContext: { seLinuxOptions: { user: 'bad' } } }),
      'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: user may not be set)',
    ],
    [
      'seLinuxOptions container_engine_t before 1.31',
      pod({ containers: [sc('d', { seLinuxOptions: { type: 'container_engine_t' } })] }),
      'seLinuxOptions (container "d" set forbidden securityContext.seLinuxOptions: type "container_engine_t")',
      'v1.30',
    ],
    [
      'procMount Unmasked',
      pod({ containers: [sc('a', { procMount: 'Unmasked' }), sc('b', { procMount: 'Default' })] }),
      'procMount (container "a" must not set securityContext.procMount to "Unmasked")',
    ],
    [
      'seccomp Unconfined',
      pod({
        securityContext: { seccompProfile: { type: 'Unconfined' } },
        containers: [sc('a', { seccompProfile: { type: 'RuntimeDefault' } }), sc('b', { seccompProfile: { type: 'Unconfined' } })],
      }),
      'seccompProfile (pod and container "b" must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    [
      'seccomp annotations before 1.19',
      pod(
        {},
        {
          annotations: {
            'seccomp.security.alpha.kubernetes.io/pod': 'unconfined',
            'container.seccomp.security.alpha.kubernetes.io/c': 'docker/default',
          },
        },
      ),
      'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
      'v1.18',
    ],
    [
      'unsafe sysctls',
      pod({
        securityContext: {
          sysctls: [
            { name: 'kernel.msgmax', value: '1' },
            { name: 'net.ipv4.tcp_syncookies', value: '1' },
            { name: 'net.core.somaxconn', value: '1' },
          ],
        },
      }),
      'forbidden sysctls (kernel.msgmax, net.core.somaxconn)',
    ],
    [
      'sysctls newer than the version',
      pod({
        securityContext: {
          sysctls: [
            { name: 'net.ipv4.tcp_rmem', value: '1' },
            { name: 'net.ipv4.tcp_keepalive_time', value: '1' },
          ],
        },
      }),
      'forbidden sysctls (net.ipv4.tcp_rmem, net.ipv4.tcp_keepalive_time)',
      'v1.28',
    ],
    [
      'hostProcess',
      pod({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [sc('a', { windowsOptions: { hostProcess: true } })] }),
      'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)',
    ],
    [
      'probe or lifecycle host',
      pod({
        containers: [
          c('a', {
            livenessProbe: { httpGet: { host: 'example.com', port: 80 } },
            lifecycle: { preStop: { tcpSocket: { host: '10.0.0.1', port: 1 } } },
          }),
        ],
      }),
      'probe or lifecycle host (container "a" uses probe or lifecycle hosts "10.0.0.1", "example.com")',
    ],
    [
      "several checks, in upstream's order",
      pod({ hostNetwork: true, containers: [sc('c', { privileged: true }, { ports: [{ containerPort: 80, hostPort: 80 }] })] }),
      'host namespaces (hostNetwork=true), hostPort (container "c" uses hostPort 80), privileged (container "c" must not set securityContext.privileged=true)',
    ],
  ];
  it.each(cases)('%s', (_name, p, message, version) => {
    expect(at('baseline', p, version)).toBe(message);
    // Restricted runs every baseline check too (hostPath volumes under its own name).
    expect(at('restricted', p, version)).not.toBe('');
  });
});

describe('baseline: allowed', () => {
  const cases: Array<[string, unknown, string?]> = [
    ['a plain pod', pod({})],
    [
      'default capabilities',
      pod({
        containers: [
          sc('a', {
            capabilities: {
              add: [
                'AUDIT_WRITE',
                'CHOWN',
                'DAC_OVERRIDE',
                'FOWNER',
                'FSETID',
                'KILL',
                'MKNOD',
                'NET_BIND_SERVICE',
                'SETFCAP',
                'SETGID',
                'SETPCAP',
                'SETUID',
                'SYS_CHROOT',
              ],
              drop: ['NET_RAW'],
            },
          }),
        ],
      }),
    ],
    ['host namespaces false', pod({ hostNetwork: false, hostPID: false, hostIPC: false })],
    [
      'volumes other than hostPath',
      pod({
        volumes: [
          { name: 'e', emptyDir: {} },
          { name: 'm', configMap: { name: 'x' } },
          { name: 'n', nfs: { server: 's', path: '/' } },
        ],
      }),
    ],
    [
      'container ports without hostPort',
      pod({ containers: [c('c', { ports: [{ containerPort: 80 }, { containerPort: 81, hostPort: 0 }] })] }),
    ],
    [
      'AppArmor RuntimeDefault and Localhost',
      pod(
        {
          securityContext: { appArmorProfile: { type: 'RuntimeDefault' } },
          containers: [sc('a', { appArmorProfile: { type: 'Localhost', localhostProfile: 'x' } })],
        },
        {
          annotations: {
            'container.apparmor.security.beta.kubernetes.io/a': 'localhost/x',
            'container.apparmor.security.beta.kubernetes.io/b': 'runtime/default',
          },
        },
      ),
    ],
    [
      'seLinux types allowed',
      pod({
        securityContext: { seLinuxOptions: { level: 's0:c1,c2' } },
        containers: [sc('a', { seLinuxOptions: { type: 'container_t' } }), sc('b', { seLinuxOptions: { type: 'container_engine_t' } })],
      }),
    ],
    ['procMount Default', pod({ containers: [sc('a', { procMount: 'Default' })] })],
    [
      'seccomp RuntimeDefault and Localhost',
      pod({
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [sc('a', { seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' } })],
      }),
    ],
    ['seccomp field ignored before 1.19', pod({ securityContext: { seccompProfile: { type: 'Unconfined' } } }), 'v1.18'],
    [
      'safe sysctls',
      pod({
        securityContext: {
          sysctls: [
            'kernel.shm_rmid_forced',
            'net.ipv4.ip_local_port_range',
            'net.ipv4.tcp_syncookies',
            'net.ipv4.ping_group_range',
            'net.ipv4.ip_unprivileged_port_start',
            'net.ipv4.ip_local_reserved_ports',
            'net.ipv4.tcp_keepalive_time',
            'net.ipv4.tcp_fin_timeout',
            'net.ipv4.tcp_keepalive_intvl',
            'net.ipv4.tcp_keepalive_probes',
            'net.ipv4.tcp_rmem',
            'net.ipv4.tcp_wmem',
          ].map((name) => ({ name, value: '1' })),
        },
      }),
    ],
    ['probe host before 1.34', pod({ containers: [c('a', { livenessProbe: { httpGet: { host: 'example.com', port: 80 } } })] }), 'v1.33'],
    ['privileged false', pod({ containers: [sc('a', { privileged: false })] })],
  ];
  it.each(cases)('%s', (_name, p, version) => {
    expect(at('baseline', p, version)).toBe('');
  });
  it('privileged allows everything', () => {
    expect(at('privileged', pod({ hostNetwork: true, containers: [sc('c', { privileged: true })] }))).toBe('');
  });
});

describe("restricted: refused, with upstream's reason and detail", () => {
  const cases: Array<[string, unknown, string, string?]> = [
    [
      'a plain pod',
      pod({}),
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ],
    [
      'allowPrivilegeEscalation true',
      pod({ containers: [sc('a', { ...kRestrictedOk, allowPrivilegeEscalation: true }), sc('b', kRestrictedOk)] }),
      'allowPrivilegeEscalation != false (container "a" must set securityContext.allowPrivilegeEscalation=false)',
    ],
    [
      'runAsUser 0 (pod and container)',
      pod({
        securityContext: { runAsUser: 0 },
        containers: [sc('a', { ...kRestrictedOk, runAsUser: 0 }), sc('b', { ...kRestrictedOk, runAsUser: 1000 })],
      }),
      'runAsUser=0 (pod and container "a" must not set runAsUser=0)',
    ],
    [
      'runAsNonRoot false',
      pod({
        securityContext: { runAsNonRoot: true },
        containers: [sc('a', { ...kRestrictedOk, runAsNonRoot: false }), sc('b', { ...kRestrictedOk, runAsNonRoot: undefined })],
      }),
      'runAsNonRoot != true (container "a" must not set securityContext.runAsNonRoot=false)',
    ],
    [
      'runAsNonRoot pod false',
      pod({ securityContext: { runAsNonRoot: false }, containers: [sc('a', kRestrictedOk)] }),
      'runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)',
    ],
    [
      'restricted volume types',
      pod({
        containers: [sc('a', kRestrictedOk)],
        volumes: [
          { name: 'h', hostPath: { path: '/' } },
          { name: 'n', nfs: { server: 's', path: '/' } },
          { name: 's', secret: { secretName: 'x' } },
          { name: 'u', somethingElse: {} },
        ],
      }),
      'restricted volume types (volumes "h", "n", "u" use restricted volume types "hostPath", "nfs", "unknown")',
    ],
    [
      'capabilities: drop without ALL, add more than NET_BIND_SERVICE',
      pod({ containers: [sc('a', { ...kRestrictedOk, capabilities: { drop: ['NET_RAW'], add: ['NET_BIND_SERVICE', 'CHOWN'] } })] }),
      'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; container "a" must not include "CHOWN" in securityContext.capabilities.add)',
    ],
    [
      'seccomp Unconfined on the container',
      pod({
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [sc('a', { ...kRestrictedOk, seccompProfile: { type: 'Unconfined' } })],
      }),
      'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")',
    ],
    [
      "added capabilities: restricted's check replaces baseline's",
      pod({ containers: [sc('a', { ...kRestrictedOk, capabilities: { drop: ['ALL'], add: ['SYS_ADMIN'] } })] }),
      'unrestricted capabilities (container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
    ],
    [
      "added capabilities before 1.22: baseline's check",
      pod({
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [sc('a', { allowPrivilegeEscalation: false, capabilities: { add: ['SYS_ADMIN'] } })],
      }),
      'non-default capabilities (container "a" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
      'v1.21',
    ],
  ];
  it.each(cases)('%s', (_name, p, message, version) => {
    expect(at('restricted', p, version)).toBe(message);
  });
});

describe('restricted: allowed', () => {
  const cases: Array<[string, unknown, string?]> = [
    [
      'every container restricted',
      pod({
        containers: [sc('a', kRestrictedOk)],
        initContainers: [sc('i', { ...kRestrictedOk, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] } })],
      }),
    ],
    [
      'pod-level runAsNonRoot and seccomp',
      pod({
        securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'Localhost', localhostProfile: 'p' } },
        containers: [sc('a', { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } })],
      }),
    ],
    [
      'allowed volume types',
      pod({
        containers: [sc('a', kRestrictedOk)],
        volumes: ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'].map((k) => ({
          name: k.toLowerCase(),
          [k]: {},
        })),
      }),
    ],
    [
      'capabilities not checked before 1.22',
      pod({
        securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [sc('a', { allowPrivilegeEscalation: false })],
      }),
      'v1.21',
    ],
    ['runAsUser 0 not checked before 1.23', pod({ securityContext: { runAsUser: 0 }, containers: [sc('a', kRestrictedOk)] }), 'v1.22'],
    ['Windows pods skip the Linux-only checks from 1.25', pod({ os: { name: 'windows' }, securityContext: { runAsNonRoot: true } })],
  ];
  it.each(cases)('%s', (_name, p, version) => {
    expect(at('restricted', p, version)).toBe('');
  });
});

describe('robustness', () => {
  it('never throws on fields of the wrong shape', () => {
    const odd = {
      metadata: { annotations: 'x' },
      spec: { containers: [null, 'x', { name: 1, securityContext: 'y', ports: 'z' }], volumes: {}, securityContext: { sysctls: 'a' } },
    };
    expect(() => at('restricted', odd)).not.toThrow();
    expect(() => at('restricted', null)).not.toThrow();
  });
});

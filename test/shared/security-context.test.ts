// securityContext validation, node refusals, merge and the privileged-field list (issue #12 part A).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { effectiveSecurityContext, normalizeSysctlName, sysctlAllowed, sysctlNamespace } from '../../src/shared/security-context.js';
import { validatePod, validatePodForNode } from '../../src/shared/validation.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;
const pod = (spec: Raw, meta: Raw = {}): Pod =>
  applyPodDefaults({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', ...meta }, spec } as never);
const errs = (p: Pod, fn = validatePod) => fn(p).map(formatFieldError);

describe('securityContext validation', () => {
  it.each<[string, Raw, string[]]>([
    [
      'all pod-level fields',
      {
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 3000,
          runAsNonRoot: true,
          supplementalGroups: [4000],
          supplementalGroupsPolicy: 'Merge',
          fsGroup: 2000,
          fsGroupChangePolicy: 'OnRootMismatch',
          sysctls: [{ name: 'kernel.shm_rmid_forced', value: '1' }],
          seccompProfile: { type: 'RuntimeDefault' },
        },
        containers: [{ name: 'c', image: 'i' }],
      },
      [],
    ],
    [
      'all container fields',
      {
        containers: [
          {
            name: 'c',
            image: 'i',
            securityContext: {
              runAsUser: 1,
              runAsGroup: 2,
              runAsNonRoot: true,
              readOnlyRootFilesystem: true,
              privileged: false,
              allowPrivilegeEscalation: false,
              capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] },
              seccompProfile: { type: 'Localhost', localhostProfile: 'p.json' },
              procMount: 'Default',
            },
          },
        ],
      },
      [],
    ],
    [
      'negative and too large ids',
      { securityContext: { runAsUser: -1, fsGroup: 2147483648 }, containers: [{ name: 'c', image: 'i' }] },
      [
        'spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive',
        'spec.securityContext.fsGroup: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive',
      ],
    ],
    [
      'bad policies',
      { securityContext: { supplementalGroupsPolicy: 'Loose', fsGroupChangePolicy: 'Never' }, containers: [{ name: 'c', image: 'i' }] },
      [
        'spec.securityContext.supplementalGroupsPolicy: Unsupported value: "Loose": supported values: "Merge", "Strict"',
        'spec.securityContext.fsGroupChangePolicy: Unsupported value: "Never": supported values: "OnRootMismatch", "Always"',
      ],
    ],
    [
      'Localhost without a profile, absolute and escaping profiles',
      {
        containers: [
          { name: 'a', image: 'i', securityContext: { seccompProfile: { type: 'Localhost' } } },
          { name: 'b', image: 'i', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '/etc/x.json' } } },
          { name: 'c', image: 'i', securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../x.json' } } },
        ],
      },
      [
        'spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set when the type is Localhost',
        'spec.containers[1].securityContext.seccompProfile.localhostProfile: Invalid value: "/etc/x.json": must be a relative path',
        'spec.containers[2].securityContext.seccompProfile.localhostProfile: Invalid value: "../x.json": must not contain \'..\'',
      ],
    ],
    [
      'allowPrivilegeEscalation false with privileged',
      { containers: [{ name: 'c', image: 'i', securityContext: { privileged: true, allowPrivilegeEscalation: false } }] },
      [
        'spec.containers[0].securityContext.allowPrivilegeEscalation: Invalid value: false: cannot set `allowPrivilegeEscalation` to false and `privileged` to true',
      ],
    ],
    [
      'sysctl: bad name, duplicate, net with hostNetwork',
      {
        hostNetwork: true,
        securityContext: {
          sysctls: [
            { name: 'Kernel.X', value: '1' },
            { name: 'kernel.shm_rmid_forced', value: '1' },
            { name: 'kernel/shm_rmid_forced', value: '1' },
            { name: 'net.ipv4.tcp_syncookies', value: '1' },
          ],
        },
        containers: [{ name: 'c', image: 'i' }],
      },
      [
        'spec.securityContext.sysctls[0].name: Invalid value: "Kernel.X": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$',
        'spec.securityContext.sysctls[2].name: Duplicate value: "kernel/shm_rmid_forced"',
        'spec.securityContext.sysctls[3].name: Invalid value: "net.ipv4.tcp_syncookies": may not be specified when \'hostNetwork\' is true',
      ],
    ],
    [
      'procMount value',
      { containers: [{ name: 'c', image: 'i', securityContext: { procMount: 'Weird' } }] },
      ['spec.containers[0].securityContext.procMount: Unsupported value: "Weird": supported values: "Default", "Unmasked"'],
    ],
    ['AppArmor annotation: unknown container and bad value', { containers: [{ name: 'c', image: 'i' }] }, []],
  ])('%s', (_n, spec, expected) => {
    expect(errs(pod(spec))).toEqual(expected);
  });

  it('checks the legacy AppArmor annotation', () => {
    const p = pod(
      { containers: [{ name: 'c', image: 'i' }] },
      {
        annotations: {
          'container.apparmor.security.beta.kubernetes.io/c': 'bogus',
          'container.apparmor.security.beta.kubernetes.io/x': 'runtime/default',
        },
      },
    );
    expect(errs(p)).toEqual([
      'metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Invalid value: "bogus": invalid AppArmor profile name: must be "runtime/default", "unconfined" or "localhost/<profile>"',
      'metadata.annotations[container.apparmor.security.beta.kubernetes.io/x]: Invalid value: "container.apparmor.security.beta.kubernetes.io/x": container not found',
    ]);
  });
});

describe('validatePodForNode security refusals', () => {
  it("refuses what Docker cannot run here, by name with the reason (a hostPort is admission's: main/pod/admission.ts)", () => {
    const p = pod({
      hostUsers: false,
      securityContext: { supplementalGroupsPolicy: 'Strict', windowsOptions: { runAsUserName: 'x' } },
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 8080 }], securityContext: { procMount: 'Unmasked' } }],
    });
    expect(errs(p, validatePodForNode)).toEqual([
      'spec.hostUsers: Not supported: needs a runtime with user namespaces: containerd 2; Docker cannot (its userns-remap is daemon-wide, not per pod), nor can containerd 1.6',
      "spec.securityContext.supplementalGroupsPolicy: Not supported: Strict: Docker always adds the groups the image's /etc/group gives the user; only Merge can be run",
      'spec.securityContext.windowsOptions: Not supported: this is a Linux node',
      'spec.containers[0].securityContext.procMount: Not supported: Unmasked needs a user namespace (hostUsers: false), which this node cannot run',
    ]);
  });

  it('keeps hostUsers: true, hostPort with hostNetwork and procMount Default', () => {
    const p = pod({
      hostUsers: true,
      hostNetwork: true,
      containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 8080, hostPort: 8080 }], securityContext: { procMount: 'Default' } }],
    });
    expect(errs(p, validatePodForNode)).toEqual([]);
    const bad = pod({ hostNetwork: true, containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 8080, hostPort: 9090 }] }] });
    expect(errs(bad, validatePodForNode)).toEqual([
      'spec.containers[0].ports[0].hostPort: Invalid value: 9090: must match `containerPort` when `hostNetwork` is true',
    ]);
  });
});

describe('effectiveSecurityContext', () => {
  it('lets the container win over the pod, field by field', () => {
    const p = pod({
      securityContext: { runAsUser: 1, runAsGroup: 2, runAsNonRoot: true, seccompProfile: { type: 'Unconfined' } },
      containers: [{ name: 'c', image: 'i', securityContext: { runAsUser: 10, readOnlyRootFilesystem: true } }],
    });
    expect(effectiveSecurityContext(p, p.spec!.containers[0])).toEqual({
      runAsUser: 10,
      runAsGroup: 2,
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'Unconfined' },
    });
  });
  it('reads the AppArmor annotation when no field is set', () => {
    const p = pod(
      { containers: [{ name: 'c', image: 'i' }] },
      { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'localhost/prof' } },
    );
    expect(effectiveSecurityContext(p, p.spec!.containers[0]).appArmorProfile).toEqual({ type: 'Localhost', localhostProfile: 'prof' });
  });
});

describe('sysctls', () => {
  it('knows namespaces, the safe set and patterns', () => {
    expect(normalizeSysctlName('net/ipv4/ip_forward')).toBe('net.ipv4.ip_forward');
    expect(normalizeSysctlName('net.ipv4.conf.eth0/1.rp_filter')).toBe('net.ipv4.conf.eth0/1.rp_filter');
    expect(sysctlNamespace('kernel.msgmax')).toBe('ipc');
    expect(sysctlNamespace('net.core.somaxconn')).toBe('net');
    expect(sysctlNamespace('vm.swappiness')).toBeUndefined();
    expect(sysctlAllowed('net.ipv4.ip_unprivileged_port_start', [])).toBe(true);
    expect(sysctlAllowed('net.core.somaxconn', [])).toBe(false);
    expect(sysctlAllowed('net.core.somaxconn', ['net.core.*'])).toBe(true);
    expect(sysctlAllowed('kernel.msgmax', ['kernel.msgmax'])).toBe(true);
  });
});

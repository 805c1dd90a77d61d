// The Docker create bodies of the CRI translation (docker-container-create.ts) against the bodies the syncer built before the CRI seam: fixtures/syncer-create-specs.json is buildSandboxSpec / buildContainerSpec's output at f94dbcf for the three pods below, as dockershim's docker_container_test.go / docker_sandbox_test.go check theirs.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fixtures from './fixtures/syncer-create-specs.json' with { type: 'json' };
import type { ContainerConfig, CriInput, PodSandboxConfig } from '../../../../src/workers/runtime/cri/types.js';
import {
  containerCreateSpec,
  mountBinds,
  sandboxCreateSpec,
  withResolvConf,
  type DockerCreateSettings,
} from '../../../../src/workers/runtime/docker/docker-container-create.js';
import { extractLabels, parseDockerName } from '../../../../src/workers/runtime/docker/docker-cri-labels.js';

const kRoot = '/var/lib/kubelet-ts';
const kLogRotation = { maxSizeBytes: 10485760, maxFiles: 5 };
const kBusyboxId = `sha256:${'b'.repeat(64)}`;

/** The labels and annotations kuberuntime gives a sandbox of pod `name` (node-a), as newPodLabels / newPodAnnotations plus the agent's node label. */
function podLabels(name: string, ns: string, uid: string): Record<string, string> {
  return {
    'io.kubernetes.pod.name': name,
    'io.kubernetes.pod.namespace': ns,
    'io.kubernetes.pod.uid': uid,
    'kubelet-ts.node-name': 'node-a',
  };
}

const kDns = { servers: ['10.0.0.10'], searches: ['prod.svc.cluster.local'], options: ['ndots:5'] };

interface Case {
  what: string;
  settings: DockerCreateSettings;
  sandbox: CriInput<PodSandboxConfig>;
  container: CriInput<ContainerConfig>;
  imageUser?: string;
}

// The configs as the kubelet (kuberuntime_sandbox.go generatePodSandboxConfig, kuberuntime_container.go generateContainerConfig) sends them for the pods of the fixture.
const cases: Case[] = [
  {
    what: 'a pod on the pod network in its pod cgroup: limits, env, a read-only HostToContainer hostPath, hosts file, termination log, resolv.conf',
    settings: { podInfraImage: 'kubelet-ts/pause:1.0', logRotation: kLogRotation, podPidsLimit: 1024, oomScoreAdjFloor: -1000 },
    sandbox: {
      metadata: { name: 'web', namespace: 'prod', uid: 'u-1', attempt: 1 },
      hostname: 'web',
      log_directory: '/var/log/pods/prod_web_u-1',
      dns_config: kDns,
      labels: podLabels('web', 'prod', 'u-1'),
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '30',
        'io.kubernetes.container.hash': 'e85a0cbe',
        'io.kubernetes.container.restartCount': '1',
      },
      linux: {
        cgroup_parent: '/kubepods/burstable/podu-1',
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    },
    container: {
      metadata: { name: 'app', attempt: 2 },
      image: { image: kBusyboxId, user_specified_image: 'kubelet-ts/busybox:1.35' },
      command: ['sh', '-c'],
      args: ['sleep 3600'],
      working_dir: '/w',
      envs: [{ key: 'A', value: '1' }],
      mounts: [
        { container_path: '/data', host_path: '/srv/data', readonly: true, propagation: 'PROPAGATION_HOST_TO_CONTAINER' },
        { container_path: '/etc/hosts', host_path: `${kRoot}/pods/u-1/etc-hosts` },
        { container_path: '/dev/termination-log', host_path: `${kRoot}/pods/u-1/containers/app/2` },
      ],
      labels: { ...podLabels('web', 'prod', 'u-1'), 'io.kubernetes.container.name': 'app' },
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '30',
        'io.kubernetes.container.hash': 'abc123',
        'io.kubernetes.container.restartCount': '2',
        'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
        'io.kubernetes.container.terminationMessagePolicy': 'File',
      },
      log_path: 'app/2.log',
      linux: {
        resources: { cpu_period: 100000, cpu_quota: 50000, cpu_shares: 256, memory_limit_in_bytes: 67108864, oom_score_adj: 993 },
        security_context: { namespace_options: { network: 'POD', pid: 'CONTAINER', ipc: 'POD' } },
      },
    },
  },
  {
    what: 'a host-network, host-PID, host-IPC pod without a pod cgroup (--pod-max-pids per container), its security context, an oom floor of 0',
    settings: { podInfraImage: 'kubelet-ts/pause:1.0', logRotation: kLogRotation, podPidsLimit: 1024, oomScoreAdjFloor: 0 },
    sandbox: {
      metadata: { name: 'host', namespace: 'kube-system', uid: 'u-2', attempt: 1 },
      hostname: '',
      dns_config: kDns,
      labels: podLabels('host', 'kube-system', 'u-2'),
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '5',
        'io.kubernetes.container.hash': 'c2b270bb',
        'io.kubernetes.container.restartCount': '1',
      },
      linux: {
        cgroup_parent: '',
        security_context: {
          namespace_options: { network: 'NODE', pid: 'NODE', ipc: 'NODE' },
          run_as_user: { value: 1000 },
          run_as_group: { value: 3000 },
          supplemental_groups: [4000, 2000],
          seccomp: { profile_type: 'Unconfined' },
        },
      },
    },
    container: {
      metadata: { name: 'c', attempt: 2 },
      image: { image: kBusyboxId, user_specified_image: 'kubelet-ts/busybox:1.35' },
      tty: true,
      stdin: true,
      stdin_once: true,
      mounts: [{ container_path: '/etc/hosts', host_path: `${kRoot}/pods/u-2/etc-hosts` }],
      labels: { ...podLabels('host', 'kube-system', 'u-2'), 'io.kubernetes.container.name': 'c' },
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '5',
        'io.kubernetes.container.hash': 'abc123',
        'io.kubernetes.container.restartCount': '2',
      },
      linux: {
        resources: { cpu_shares: 2, oom_score_adj: 1000 },
        security_context: {
          namespace_options: { network: 'NODE', pid: 'NODE', ipc: 'NODE' },
          run_as_user: { value: 1000 },
          run_as_group: { value: 3000 },
          supplemental_groups: [4000, 2000],
          readonly_rootfs: true,
          no_new_privs: true,
          seccomp: { profile_type: 'Unconfined' },
          capabilities: { add_capabilities: ['NET_ADMIN'], drop_capabilities: ['ALL'] },
        },
      },
    },
  },
  {
    what: 'a shareProcessNamespace pod with a sysctl, no dns_config, and a privileged container with only runAsGroup (the image user kept: root)',
    settings: { podInfraImage: 'kubelet-ts/pause:1.0', logRotation: kLogRotation, podPidsLimit: 1024, oomScoreAdjFloor: -1000 },
    sandbox: {
      metadata: { name: 'priv', namespace: 'default', uid: 'u-3', attempt: 1 },
      hostname: 'priv',
      labels: podLabels('priv', 'default', 'u-3'),
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '30',
        'io.kubernetes.container.hash': '85211ac0',
        'io.kubernetes.container.restartCount': '1',
      },
      linux: {
        cgroup_parent: '/kubepods/besteffort/podu-3',
        sysctls: { 'net.core.somaxconn': '1024' },
        security_context: { namespace_options: { network: 'POD', pid: 'POD', ipc: 'POD' } },
      },
    },
    container: {
      metadata: { name: 'p', attempt: 2 },
      image: { image: kBusyboxId, user_specified_image: 'kubelet-ts/busybox:1.35' },
      mounts: [{ container_path: '/etc/hosts', host_path: `${kRoot}/pods/u-3/etc-hosts` }],
      labels: { ...podLabels('priv', 'default', 'u-3'), 'io.kubernetes.container.name': 'p' },
      annotations: {
        'io.kubernetes.pod.terminationGracePeriod': '30',
        'io.kubernetes.container.hash': 'abc123',
        'io.kubernetes.container.restartCount': '2',
      },
      linux: {
        resources: { cpu_shares: 2, oom_score_adj: 1000 },
        security_context: {
          namespace_options: { network: 'POD', pid: 'POD', ipc: 'POD' },
          privileged: true,
          run_as_group: { value: 50 },
          seccomp: { profile_type: 'RuntimeDefault' },
          masked_paths: ['/proc/kcore'],
        },
      },
    },
    imageUser: '',
  },
];

describe('the CRI → Docker create translation gives the bodies the syncer built before the CRI seam', () => {
  it.each(cases.map((c, i) => [c.what, c, fixtures[i]] as const))('%s', async (_what, c, today) => {
    expect(await sandboxCreateSpec(c.sandbox, c.settings)).toEqual(today.sandbox);
    const resolvConf = c.sandbox.dns_config ? `${kRoot}/pods/${c.sandbox.metadata!.uid}/resolv.conf` : '';
    const spec = await containerCreateSpec(c.container, c.sandbox, c.settings, {
      sandboxId: 'SANDBOX',
      resolvConfFile: resolvConf,
      imageUser: async () => c.imageUser ?? '',
    });
    expect(spec).toEqual(today.container);
  });
});

describe('labels, names and binds read back', () => {
  it('splits the Docker labels back into the CRI labels and annotations, dropping the internal ones', () => {
    const { sandbox, container } = fixtures[0] as {
      sandbox: { labels: Record<string, string> };
      container: { name: string; labels: Record<string, string> };
    };
    expect(extractLabels(sandbox.labels)).toEqual({ labels: cases[0].sandbox.labels, annotations: cases[0].sandbox.annotations });
    expect(extractLabels(container.labels)).toEqual({ labels: cases[0].container.labels, annotations: cases[0].container.annotations });
    expect(parseDockerName(container.name)).toEqual({ containerName: 'app', podName: 'web', namespace: 'prod', uid: 'u-1', attempt: 2 });
    expect(parseDockerName('not_ours')).toBeNull();
  });

  it('words mounts as Docker binds and puts the pod resolv.conf after /etc/hosts unless a mount has the path', () => {
    expect(
      mountBinds([{ host_path: '/a', container_path: '/b', propagation: 'PROPAGATION_BIDIRECTIONAL', selinux_relabel: true }]),
    ).toEqual(['/a:/b:Z,rshared']);
    expect(withResolvConf(['/v:/v', '/h:/etc/hosts', '/t:/t'], '/r')).toEqual(['/v:/v', '/h:/etc/hosts', '/r:/etc/resolv.conf', '/t:/t']);
    expect(withResolvConf(['/x:/etc/resolv.conf'], '/r')).toEqual(['/x:/etc/resolv.conf']);
    expect(withResolvConf(['/v:/v'], '')).toEqual(['/v:/v']);
  });

  it("puts an ephemeral container with pid TARGET in its target container's PID namespace (cri-dockerd modifyPIDNamespaceOverrides)", async () => {
    const c = cases[0];
    const target = {
      ...c.container,
      linux: {
        ...c.container.linux,
        security_context: { namespace_options: { network: 'POD', pid: 'TARGET', ipc: 'POD', target_id: 'TARGETID' } },
      },
    } as CriInput<ContainerConfig>;
    const spec = await containerCreateSpec(target, c.sandbox, c.settings, {
      sandboxId: 'SANDBOX',
      resolvConfFile: '',
      imageUser: async () => '',
    });
    expect(spec.hostConfig?.pidMode).toBe('container:TARGETID');
  });

  it('refuses a config without metadata or image, naming the field', async () => {
    const s = cases[0].settings;
    await expect(sandboxCreateSpec({ metadata: { name: 'x', namespace: 'y' } }, s)).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'PodSandboxConfig.metadata.uid is empty',
    });
    const ctx = { sandboxId: 'S', resolvConfFile: '', imageUser: async () => '' };
    await expect(containerCreateSpec({ metadata: { name: 'c' } }, cases[0].sandbox, s, ctx)).rejects.toMatchObject({
      code: 'ERR_INVALID_ARGUMENT',
      message: 'ContainerConfig.image.image of container "c" is empty',
    });
  });

  it('inlines a Localhost seccomp profile and names the file it cannot load', async () => {
    const c = {
      ...cases[0].container,
      linux: { security_context: { seccomp: { profile_type: 'Localhost' as const, localhost_ref: '/nonexistent/kts-profile.json' } } },
    };
    const ctx = { sandboxId: 'S', resolvConfFile: '', imageUser: async () => '' };
    await expect(containerCreateSpec(c, cases[0].sandbox, cases[0].settings, ctx)).rejects.toMatchObject({
      code: 'ERR_RUNTIME',
      message:
        'failed to generate security options for container "app": cannot load seccomp profile "/nonexistent/kts-profile.json": no such file',
    });
  });

  it('refuses a Localhost seccomp profile that a symlink leads out of <root-dir>/seccomp, and inlines one inside it', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'kts-seccomp-'));
    try {
      const seccompRoot = path.join(root, 'seccomp');
      mkdirSync(seccompRoot);
      writeFileSync(path.join(seccompRoot, 'audit.json'), '{ "defaultAction": "SCMP_ACT_LOG" }');
      writeFileSync(path.join(root, 'secret.json'), '{ "not": "a profile" }');
      symlinkSync(path.join(root, 'secret.json'), path.join(seccompRoot, 'escape.json'));
      const settings = { ...cases[0].settings, seccompRoot };
      const ctx = { sandboxId: 'S', resolvConfFile: '', imageUser: async () => '' };
      const withProfile = (file: string) => ({
        ...cases[0].container,
        linux: { security_context: { seccomp: { profile_type: 'Localhost' as const, localhost_ref: path.join(seccompRoot, file) } } },
      });
      const ok = await containerCreateSpec(withProfile('audit.json'), cases[0].sandbox, settings, ctx);
      expect(ok.hostConfig.securityOpt).toContain('seccomp={"defaultAction":"SCMP_ACT_LOG"}');
      await expect(containerCreateSpec(withProfile('escape.json'), cases[0].sandbox, settings, ctx)).rejects.toMatchObject({
        code: 'ERR_RUNTIME',
        message: expect.stringMatching(/cannot load seccomp profile .*escape\.json": it resolves to .*secret\.json, outside/),
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

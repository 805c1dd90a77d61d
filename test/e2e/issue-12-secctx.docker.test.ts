// Issue 12 part A (items 1, 2 and 8): securityContext against the real dockerd. One agent, few pods:
// each container checks one thing in /proc or the filesystem and exits; the test reads the logs.
// On main before this part, every securityContext field was refused (422 Not supported).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';

const kTestMs = 90_000;
const kUserToken = 'secctx-user-token-0123456789';
const kCapNetRawBit = 13n;

type Raw = Record<string, unknown>;
const podOf = (name: string, spec: Raw): Raw => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { suite: 'issue-12-secctx' } },
  spec: { terminationGracePeriodSeconds: 0, restartPolicy: 'Never', ...spec },
});
const sh = (name: string, script: string, securityContext?: Raw, extra: Raw = {}): Raw => ({
  name,
  image: BUSYBOX_IMAGE,
  command: ['sh', '-c', script],
  ...(securityContext ? { securityContext } : {}),
  ...extra,
});

describe.skipIf(!inject('dockerAvailable'))('issue 12 part A: securityContext runs as the kubelet maps it', () => {
  let node: TestNode;
  let dir: string;
  const post = (body: unknown, token?: string) =>
    node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  const podNamed = async (name: string): Promise<Pod | undefined> => (await node.pods()).find((p) => p.metadata?.name === name);
  const logs = async (pod: string, container: string) =>
    (await (await node.api(`/containerLogs/default/${pod}/${container}`)).text()).trim();
  const waitTerminated = (name: string, count: number) =>
    waitFor(
      async () => {
        const p = await podNamed(name);
        const done = (p?.status?.containerStatuses ?? []).filter((s) => s.state?.terminated);
        return done.length >= count ? p : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, description: `pod ${name}: ${count} containers terminated` },
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-secctx-'));
    const tokenFile = join(dir, 'tokens.csv');
    await writeFile(tokenFile, `${kUserToken},alice,alice-uid,"developers"\n`);
    // The developers may post pods through the kubelet's own path (nodes/proxy), nothing more (RBAC, issue 38).
    const policyFile = join(dir, 'policy.yaml');
    await writeFile(
      policyFile,
      `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: node-proxy}
rules: [{verbs: [get, create], apiGroups: [""], resources: [nodes/proxy]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: developers-node-proxy}
subjects: [{kind: Group, name: developers}]
roleRef: {kind: ClusterRole, name: node-proxy, apiGroup: rbac.authorization.k8s.io}
`,
    );
    node = await startTestNode({ tokenAuthFile: tokenFile, authorizationPolicyFile: policyFile });
    await mkdir(join(node.rootDir, 'seccomp', 'profiles'), { recursive: true });
    await writeFile(join(node.rootDir, 'seccomp', 'profiles', 'allow.json'), JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW' }));
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs each setting for real: user and groups, fsGroup emptyDir, read-only root, capabilities, no_new_privs, seccomp, sysctls',
    async () => {
      const pod = podOf('sec', {
        securityContext: {
          runAsUser: 65534,
          runAsGroup: 65534,
          supplementalGroups: [4000],
          fsGroup: 2000,
          sysctls: [
            { name: 'kernel.shm_rmid_forced', value: '1' },
            { name: 'net.ipv4.ip_unprivileged_port_start', value: '0' },
          ],
        },
        volumes: [{ name: 'data', emptyDir: {} }],
        containers: [
          sh(
            'ids',
            'id -u; id -g; id -G; touch /data/f && stat -c "%g %A" /data /data/f; cat /proc/sys/kernel/shm_rmid_forced /proc/sys/net/ipv4/ip_unprivileged_port_start',
            undefined,
            { volumeMounts: [{ name: 'data', mountPath: '/data' }] },
          ),
          sh(
            'confined',
            'touch /probe 2>/dev/null && echo writable || echo read-only; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status',
            { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, seccompProfile: { type: 'RuntimeDefault' } },
          ),
          sh('caps', 'grep -E "^Cap(Eff|Bnd)" /proc/self/status', { runAsUser: 0, capabilities: { drop: ['NET_RAW'] } }),
          sh('seccomp-unconfined', 'grep "^Seccomp:" /proc/self/status', { seccompProfile: { type: 'Unconfined' } }),
          sh('seccomp-localhost', 'grep "^Seccomp:" /proc/self/status', {
            seccompProfile: { type: 'Localhost', localhostProfile: 'profiles/allow.json' },
          }),
        ],
      });
      const res = await post(pod);
      expect(res.status, await res.clone().text()).toBe(201);
      await waitTerminated('sec', 5);

      const ids = (await logs('sec', 'ids')).split('\n');
      expect(ids[0]).toBe('65534');
      expect(ids[1]).toBe('65534');
      expect(ids[2].split(' ').sort()).toEqual(['2000', '4000', '65534']);
      // The emptyDir: group fsGroup with setgid (drwxrwsrwx); a new file inherits the group.
      expect(ids[3]).toBe('2000 drwxrwsrwx');
      expect(ids[4]).toMatch(/^2000 /);
      // Pod sysctls, set on the sandbox whose namespaces the containers join.
      expect(ids.slice(5)).toEqual(['1', '0']);
      const confined = (await logs('sec', 'confined')).split('\n');
      expect(confined[0]).toBe('read-only');
      expect(confined[1]).toMatch(/^NoNewPrivs:\s+1$/);
      expect(confined[2]).toMatch(/^Seccomp:\s+2$/);
      const caps = Object.fromEntries((await logs('sec', 'caps')).split('\n').map((l) => l.split(/:\s+/)));
      for (const k of ['CapEff', 'CapBnd']) {
        const mask = BigInt(`0x${caps[k]}`);
        expect((mask >> kCapNetRawBit) & 1n, `${k} ${caps[k]} still has CAP_NET_RAW`).toBe(0n);
        expect(mask & (1n << 0n), `${k} keeps CAP_CHOWN`).toBe(1n);
      }
      expect(await logs('sec', 'seccomp-unconfined')).toMatch(/^Seccomp:\s+0$/);
      expect(await logs('sec', 'seccomp-localhost')).toMatch(/^Seccomp:\s+2$/);
    },
    kTestMs,
  );

  it(
    'runAsNonRoot: busybox (root) gets CreateContainerConfigError with the kubelet message; runAsUser 65534 runs; a token user may post it',
    async () => {
      const pod = podOf('nonroot', {
        securityContext: { runAsNonRoot: true },
        containers: [sh('root', 'id -u'), sh('ok', 'id -u', { runAsUser: 65534 })],
      });
      const res = await post(pod, kUserToken);
      expect(res.status, await res.clone().text()).toBe(201);
      const p = await waitFor(
        async () => {
          const got = await podNamed('nonroot');
          const st = got?.status?.containerStatuses ?? [];
          const root = st.find((s) => s.name === 'root');
          const ok = st.find((s) => s.name === 'ok');
          return root?.state?.waiting?.reason === 'CreateContainerConfigError' && ok?.state?.terminated ? got : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, description: 'nonroot pod statuses' },
      );
      const root = p.status!.containerStatuses!.find((s) => s.name === 'root')!;
      expect(root.state!.waiting!.message).toMatch(
        /^container has runAsNonRoot and image will run as root \(pod: "nonroot_default\(.+\)", container: root\)$/,
      );
      expect(await logs('nonroot', 'ok')).toBe('65534');
    },
    kTestMs,
  );

  it(
    'who may ask: privileged, added capabilities, hostPath and hostNetwork are refused by Pod Security Admission (baseline) to a user outside system:masters; the admin token may',
    async () => {
      const cases: Array<[Raw, string]> = [
        [
          { containers: [sh('c', 'true', { privileged: true })] },
          'privileged (container "c" must not set securityContext.privileged=true)',
        ],
        [
          { containers: [sh('c', 'true', { capabilities: { add: ['SYS_ADMIN'] } })] },
          'non-default capabilities (container "c" must not include "SYS_ADMIN" in securityContext.capabilities.add)',
        ],
        [
          {
            volumes: [{ name: 'root', hostPath: { path: '/' } }],
            containers: [sh('c', 'true', undefined, { volumeMounts: [{ name: 'root', mountPath: '/host' }] })],
          },
          'hostPath volumes (volume "root")',
        ],
        [{ hostNetwork: true, containers: [sh('c', 'true')] }, 'host namespaces (hostNetwork=true)'],
      ];
      for (const [spec, reason] of cases) {
        const res = await post(podOf('priv', spec), kUserToken);
        expect(res.status).toBe(403);
        const status = (await res.json()) as { reason: string; message: string };
        expect(status.reason).toBe('Forbidden');
        expect(status.message).toBe(`pods "priv" is forbidden: violates PodSecurity "baseline:latest": ${reason}`);
      }
      expect(await podNamed('priv')).toBeUndefined();
      // The admin token may ask. (A privileged container cannot start on this machine: its dockerd's
      // own bounding set lacks CAP_SYS_RESOURCE, so runc fails to apply "all caps"; the 201 is the point.)
      expect((await post(podOf('priv', { containers: [sh('c', 'true', { privileged: true })] }))).status).toBe(201);
      const admin = await post(
        podOf('cap-add', { containers: [sh('c', 'grep "^CapEff" /proc/self/status', { capabilities: { add: ['SYS_ADMIN'] } })] }),
      );
      expect(admin.status).toBe(201);
      await waitTerminated('cap-add', 1);
      // The added capability really: CAP_SYS_ADMIN (bit 21), outside Docker's default set, is effective.
      const eff = BigInt(`0x${(await logs('cap-add', 'c')).split(/:\s+/)[1]}`);
      expect((eff >> 21n) & 1n).toBe(1n);
    },
    kTestMs,
  );

  it(
    'refuses clearly what it cannot run: unsafe sysctl, AppArmor on this host, hostUsers false',
    async () => {
      const sysctl = await post(
        podOf('unsafe-sysctl', {
          securityContext: { sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
          containers: [sh('c', 'true')],
        }),
      );
      expect(sysctl.status).toBe(201);
      const failed = await waitFor(
        async () => {
          const p = await podNamed('unsafe-sysctl');
          return p?.status?.phase === 'Failed' ? p : undefined;
        },
        { timeoutMs: 30_000, description: 'unsafe-sysctl pod Failed' },
      );
      expect(failed.status).toMatchObject({ reason: 'SysctlForbidden', message: 'forbidden sysctl: "net.core.somaxconn" not allowlisted' });

      const appArmorOnHost = await import('node:fs').then((fs) => {
        try {
          return fs.readFileSync('/sys/module/apparmor/parameters/enabled', 'utf8').trim() === 'Y';
        } catch {
          return false;
        }
      });
      if (!appArmorOnHost) {
        const aa = await post(podOf('apparmor', { containers: [sh('c', 'true', { appArmorProfile: { type: 'RuntimeDefault' } })] }));
        expect(aa.status).toBe(201);
        const p = await waitFor(
          async () => {
            const got = await podNamed('apparmor');
            return got?.status?.phase === 'Failed' ? got : undefined;
          },
          { timeoutMs: 30_000, description: 'apparmor pod Failed' },
        );
        expect(p.status?.reason).toBe('AppArmor');
        expect(p.status?.message).toMatch(/^Cannot enforce AppArmor: AppArmor is not enabled on the host/);
      }

      // hostPort without hostNetwork: admitted with the pod network (issue 13), refused at admission
      // with --network-plugin none (issue-13-readiness.docker.test.ts); run by portmap: issue-13-network.docker.test.ts.
      const userns = await post(podOf('userns', { hostUsers: false, containers: [sh('c', 'true')] }));
      expect(userns.status).toBe(422);
      expect(JSON.stringify(await userns.json())).toContain('spec.hostUsers');
    },
    kTestMs,
  );
});

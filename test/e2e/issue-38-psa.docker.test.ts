// Issue #38 findings 2 and 8 against the real agent, the real Docker engine and the real kubectl:
// Pod Security Admission (baseline by default for everyone but system:masters; the namespace's
// pod-security.kubernetes.io labels; kubectl's warnings) and the refusal, for every identity, of a
// hostPort on the agent's own port.
//
// The ordinary user is a --token-auth-file user in group "psa-e2e" (not system:masters): the
// policy file binds that group to `edit` (pods through the Kubernetes API) and to create on
// nodes/proxy (the kubelet's own POST /pods), so what refuses its pods here is admission alone.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 120_000;
const kUserToken = 'psa-user-token-0123456789abcdef';

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)("issue 38: Pod Security Admission and the agent's own ports", () => {
  let node: TestNode;
  let dir: string;
  const { kubectl } = kubectlFor(
    () => node,
    () => dir,
  );
  const label = `psa-${process.pid}`;
  const podOf = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: label }, ...metadata },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'c', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
      ...spec,
    },
  });
  /** POST to the Kubernetes API's pod create as `token` (default: the admin token). */
  const create = (namespace: string, pod: unknown, token?: string, query = '') =>
    node.api(`/api/v1/namespaces/${namespace}/pods${query}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(pod),
    });
  const statusOf = async (res: Response) => ({
    code: res.status,
    ...((await res.json()) as { reason?: string; message?: string; details?: { causes?: Array<{ field?: string }> } }),
  });
  const podExists = async (namespace: string, name: string) =>
    (await node.api(`/api/v1/namespaces/${namespace}/pods/${name}`)).status === 200;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-psa-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, `${kUserToken},alice,alice-uid,"psa-e2e"\n`);
    const policy = join(dir, 'policy.yaml');
    await writeFile(
      policy,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: {name: psa-e2e-edit}',
        'subjects: [{kind: Group, name: psa-e2e, apiGroup: rbac.authorization.k8s.io}]',
        'roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata: {name: kubelet-intake}',
        'rules: [{verbs: [create, get], apiGroups: [""], resources: [nodes/proxy]}]',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: {name: psa-e2e-intake}',
        'subjects: [{kind: Group, name: psa-e2e, apiGroup: rbac.authorization.k8s.io}]',
        'roleRef: {kind: ClusterRole, name: kubelet-intake, apiGroup: rbac.authorization.k8s.io}',
        '',
      ].join('\n'),
    );
    node = await startTestNode({ tokenAuthFile: tokens, authorizationPolicyFile: policy, tlsPort: 0 });
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    "an ordinary user is refused a hostPort pod with the apiserver's PodSecurity answer (baseline by default), on both write paths",
    async () => {
      const pod = podOf('hp', {
        containers: [
          {
            name: 'c',
            image: BUSYBOX_IMAGE,
            imagePullPolicy: 'Never',
            command: ['sleep', '3600'],
            ports: [{ containerPort: 80, hostPort: 18080 }],
          },
        ],
      });
      const refused = await statusOf(await create('default', pod, kUserToken));
      expect(refused).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message: 'pods "hp" is forbidden: violates PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 18080)',
      });
      const legacy = await node.api('/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${kUserToken}` },
        body: JSON.stringify({ ...pod, metadata: { ...pod.metadata, namespace: 'default' } }),
      });
      expect(await statusOf(legacy)).toMatchObject({
        code: 403,
        message: 'pods "hp" is forbidden: violates PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 18080)',
      });
      expect(await podExists('default', 'hp')).toBe(false);
      // The admin (system:masters) is exempt.
      expect((await create('default', pod, undefined, '?dryRun=All')).status).toBe(201);
    },
    kTestMs,
  );

  it(
    'an ordinary user is refused seccomp and AppArmor Unconfined and an unmasked /proc',
    async () => {
      const seccomp = await statusOf(
        await create('default', podOf('sc', { securityContext: { seccompProfile: { type: 'Unconfined' } } }), kUserToken),
      );
      expect(seccomp).toMatchObject({
        code: 403,
        message:
          'pods "sc" is forbidden: violates PodSecurity "baseline:latest": seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
      });
      const apparmor = await statusOf(
        await create(
          'default',
          podOf('aa', {}, { annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } }),
          kUserToken,
        ),
      );
      expect(apparmor).toMatchObject({
        code: 403,
        message:
          'pods "aa" is forbidden: violates PodSecurity "baseline:latest": forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c=\\"unconfined\\"")',
      });
      const sysctl = await statusOf(
        await create('default', podOf('sy', { securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '65536' }] } }), kUserToken),
      );
      expect(sysctl).toMatchObject({
        code: 403,
        message: 'pods "sy" is forbidden: violates PodSecurity "baseline:latest": forbidden sysctls (kernel.msgmax)',
      });
      // procMount Unmasked: this node cannot run it for anyone (validation, 422, before admission); never admitted.
      const unmasked = await create(
        'default',
        podOf('pm', { containers: [{ name: 'c', image: BUSYBOX_IMAGE, securityContext: { procMount: 'Unmasked' } }] }),
        kUserToken,
      );
      expect([403, 422]).toContain(unmasked.status);
      for (const name of ['sc', 'aa', 'sy', 'pm']) expect(await podExists('default', name)).toBe(false);
    },
    kTestMs,
  );

  it(
    "no identity, the admin's included, may take the agent's own port as a hostPort (422 naming the field)",
    async () => {
      for (const port of [node.agent.port, node.agent.tlsPort]) {
        for (const hostIP of [undefined, '127.0.0.1', '0.0.0.0']) {
          const pod = podOf('squat', {
            containers: [
              {
                name: 'c',
                image: BUSYBOX_IMAGE,
                command: ['sleep', '3600'],
                ports: [{ containerPort: 80, hostPort: port, ...(hostIP ? { hostIP } : {}) }],
              },
            ],
          });
          const refused = await statusOf(await create('default', pod, undefined, '?dryRun=All'));
          expect(refused).toMatchObject({ code: 422, reason: 'Invalid' });
          expect(refused.details?.causes?.map((c) => c.field)).toEqual(['spec.containers[0].ports[0].hostPort']);
          expect(refused.message).toContain(`spec.containers[0].ports[0].hostPort: Invalid value: ${port}`);
        }
      }
      expect(await podExists('default', 'squat')).toBe(false);
    },
    kTestMs,
  );

  it(
    "kubectl: labels on a namespace choose the levels; warn prints the apiserver's warning; enforce=restricted refuses a root pod; invalid values are refused",
    async () => {
      expect((await kubectl(['create', 'namespace', 'team-a'])).code).toBe(0);
      const warn = await kubectl(['label', 'namespace', 'team-a', 'pod-security.kubernetes.io/warn=restricted']);
      expect(warn.stderr).toBe('');
      expect(warn.stdout).toBe('namespace/team-a labeled\n');
      const yaml = `apiVersion: v1\nkind: Pod\nmetadata: {name: plain, namespace: team-a}\nspec:\n  containers: [{name: c, image: ${BUSYBOX_IMAGE}, command: [sleep, "3600"]}]\n`;
      const applied = await kubectl(['apply', '--dry-run=server', '-f', '-'], { token: kUserToken, input: yaml });
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).toContain(
        'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
      );

      // A Namespace in `kubectl apply -f` (it exists: a patch) sets the enforce level.
      const ns =
        'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels:\n    pod-security.kubernetes.io/enforce: restricted\n';
      const nsApplied = await kubectl(['apply', '-f', '-'], { input: ns });
      expect(nsApplied.code, nsApplied.stderr).toBe(0);
      const labels = JSON.parse((await kubectl(['get', 'namespace', 'team-a', '-o', 'json'])).stdout) as {
        metadata: { labels: Record<string, string> };
      };
      expect(labels.metadata.labels).toMatchObject({
        'pod-security.kubernetes.io/enforce': 'restricted',
        'kubernetes.io/metadata.name': 'team-a',
      });

      const root = podOf('root', { securityContext: { runAsUser: 0 } });
      const refused = await statusOf(await create('team-a', root, kUserToken));
      expect(refused.code).toBe(403);
      expect(refused.message).toMatch(
        /^pods "root" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false .*runAsUser=0 \(pod must not set runAsUser=0\)/,
      );
      expect(await podExists('team-a', 'root')).toBe(false);
      expect((await create('team-a', root, undefined, '?dryRun=All')).status).toBe(201);
      // A pod that meets restricted is admitted.
      const restricted = podOf('ok', {
        securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: 'RuntimeDefault' } },
        containers: [
          {
            name: 'c',
            image: BUSYBOX_IMAGE,
            command: ['sleep', '3600'],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
          },
        ],
      });
      expect((await create('team-a', restricted, kUserToken, '?dryRun=All')).status).toBe(201);

      const bogus = await kubectl(['label', 'namespace', 'team-a', '--overwrite', 'pod-security.kubernetes.io/enforce=strict']);
      expect(bogus.code).not.toBe(0);
      expect(bogus.stderr).toContain(
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      );
      // Back to privileged: the hostPort pod the default refused is now admitted in team-a.
      expect(
        (
          await kubectl([
            'label',
            'namespace',
            'team-a',
            '--overwrite',
            'pod-security.kubernetes.io/enforce=privileged',
            'pod-security.kubernetes.io/warn-',
          ])
        ).code,
      ).toBe(0);
      const hp = podOf('hp', {
        containers: [{ name: 'c', image: BUSYBOX_IMAGE, command: ['sleep', '3600'], ports: [{ containerPort: 80, hostPort: 18080 }] }],
      });
      const admitted = await create('team-a', hp, kUserToken, '?dryRun=All');
      expect(admitted.status).toBe(201);
      // The warn label removed, warn falls back to the node default (baseline): admitted, with the apiserver's Warning header.
      expect(admitted.headers.get('warning')).toBe(
        '299 - "would violate PodSecurity \\"baseline:latest\\": hostPort (container \\"c\\" uses hostPort 18080)"',
      );
    },
    kTestMs,
  );
});

// Issue #39 item 8 against the real agent, the real Docker engine and the real kubectl 1.32:
// `kubectl debug` in its three modes. `--copy-to` and `debug node/NAME` POST the Pod as
// `application/vnd.kubernetes.protobuf` (decoded from the vendored k8s.io/api definitions,
// kube-api/protobuf.ts); `debug node/NAME`'s pod (host namespaces, a hostPath `/`) is the admin's
// only: an ordinary user gets the apiserver's Pod Security 403. `debug POD --target C` adds an
// ephemeral container through `pods/{name}/ephemeralcontainers`, which the kubelet runs in the pod's
// namespaces (the target's processes visible) and reports in `ephemeralContainerStatuses`.
//
// The ordinary user is a --token-auth-file user in group "debug-e2e", bound to `edit` (pods, their
// ephemeralcontainers and attach) and to `get` on nodes, so that what refuses its node debugger is
// admission alone.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 150_000;
const kUserToken = 'debug-user-token-0123456789abcdef';

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('issue 39: kubectl debug (ephemeral containers, --copy-to, node/NAME)', () => {
  let node: TestNode;
  let dir: string;
  const { kubectl, start } = kubectlFor(
    () => node,
    () => dir,
  );
  /**
   * interactive: kubectl with `input` written to its stdin, kept open until `until` is on its
   * stdout (or 90 s pass), so that no answer depends on when the stdin's end reaches the stream.
   */
  const interactive = async (args: string[], input: string, until: string) => {
    const run = start(args, { keepStdinOpen: true });
    run.child.stdin.write(input);
    try {
      await waitFor(() => run.out().includes(until), { timeoutMs: 90_000 }).catch(() => undefined);
    } finally {
      run.child.stdin.end();
    }
    const timer = setTimeout(() => run.child.kill('SIGTERM'), 30_000);
    try {
      return await run.done;
    } finally {
      clearTimeout(timer);
    }
  };
  const getPod = async (name: string): Promise<Pod | undefined> => {
    const r = await kubectl(['get', 'pod', name, '-o', 'json']);
    return r.code === 0 ? (JSON.parse(r.stdout) as Pod) : undefined;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-debug-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, `${kUserToken},dora,dora-uid,"debug-e2e"\n`);
    const policy = join(dir, 'policy.yaml');
    await writeFile(
      policy,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: {name: debug-e2e-edit}',
        'subjects: [{kind: Group, name: debug-e2e, apiGroup: rbac.authorization.k8s.io}]',
        'roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata: {name: node-reader}',
        'rules: [{verbs: [get, list], apiGroups: [""], resources: [nodes]}]',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata: {name: debug-e2e-nodes}',
        'subjects: [{kind: Group, name: debug-e2e, apiGroup: rbac.authorization.k8s.io}]',
        'roleRef: {kind: ClusterRole, name: node-reader, apiGroup: rbac.authorization.k8s.io}',
        '',
      ].join('\n'),
    );
    node = await startTestNode({ tokenAuthFile: tokens, authorizationPolicyFile: policy, tlsPort: 0 });
    await writeFile(
      join(dir, 'web.yaml'),
      `apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: main, image: ${BUSYBOX_IMAGE}, imagePullPolicy: Never, command: [sh, -c, 'exec sleep 3600']}
`,
    );
    const created = await kubectl(['create', '-f', join(dir, 'web.yaml')]);
    if (created.code !== 0) throw new Error(`kubectl create: ${created.stderr}`);
    await waitFor(async () => (await getPod('web'))?.status?.phase === 'Running', { timeoutMs: 90_000 });
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    'debug --copy-to creates the copy with the debug container (a protobuf POST)',
    async () => {
      const r = await kubectl([
        'debug',
        'web',
        '--copy-to',
        'web-copy',
        '--image',
        BUSYBOX_IMAGE,
        '--image-pull-policy',
        'Never',
        '--container',
        'dbg',
        '--',
        'sh',
        '-c',
        'echo from-the-copy; exec sleep 3600',
      ]);
      expect(r.stderr).not.toMatch(/UnsupportedMediaType|error/i);
      expect(r.code).toBe(0);
      const copy = await getPod('web-copy');
      expect(copy?.spec?.containers.map((c) => c.name)).toEqual(['main', 'dbg']);
      expect(copy?.metadata?.labels).toBeUndefined();
      await waitFor(async () => (await kubectl(['logs', 'web-copy', '-c', 'dbg'])).stdout.includes('from-the-copy'), { timeoutMs: 90_000 });
    },
    kTestMs,
  );

  it(
    'debug node/NAME runs a host-namespace pod for the admin, and an ordinary user gets the Pod Security 403',
    async () => {
      const refused = await kubectl(['debug', `node/${node.nodeName}`, '--image', BUSYBOX_IMAGE, '--', 'true'], { token: kUserToken });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain(
        'is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true, hostPID=true, hostIPC=true), hostPath volumes (volume "host-root")',
      );
      const r = await interactive(
        [
          'debug',
          `node/${node.nodeName}`,
          '-i',
          '--image',
          BUSYBOX_IMAGE,
          '--image-pull-policy',
          'Never',
          '--',
          'chroot',
          '/host',
          'sh',
          '-c',
          `read line; echo "host-$line"; test -d ${dir} && echo sees-the-host-root`,
        ],
        'hello\n',
        'sees-the-host-root',
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('host-hello');
      expect(r.stdout).toContain('sees-the-host-root');
      const pods = JSON.parse((await kubectl(['get', 'pods', '-o', 'json'])).stdout) as { items: Pod[] };
      const debugger_ = pods.items.find((p) => p.metadata?.name?.startsWith(`node-debugger-${node.nodeName}-`));
      expect(debugger_?.spec).toMatchObject({
        hostPID: true,
        hostNetwork: true,
        hostIPC: true,
        nodeName: node.nodeName,
        volumes: expect.arrayContaining([expect.objectContaining({ name: 'host-root', hostPath: expect.objectContaining({ path: '/' }) })]),
      });
      // Admitted as any API pod: the default service account's token volume beside the host's root.
      expect(debugger_?.spec?.serviceAccountName).toBe('default');
    },
    kTestMs,
  );

  it(
    "debug POD --target C runs an ephemeral container in the pod's namespaces, sees the target's processes, and reports its status",
    async () => {
      const r = await interactive(
        [
          'debug',
          'web',
          '-i',
          '--image',
          BUSYBOX_IMAGE,
          '--image-pull-policy',
          'Never',
          '--target',
          'main',
          '-c',
          'dbg',
          '--',
          'sh',
          '-c',
          'read line; echo "got-$line"; ps -o pid,args; echo ps-done',
        ],
        'hello\n',
        'ps-done',
      );
      expect(r.stdout, r.stderr).toContain('got-hello');
      // The target's PID namespace: its `sleep 3600` is among the processes.
      expect(r.stdout).toMatch(/^\s*1 +sleep 3600$/m);
      let pod: Pod | undefined;
      await waitFor(async () => (pod = await getPod('web'))?.status?.ephemeralContainerStatuses?.[0]?.state?.terminated !== undefined, {
        timeoutMs: 60_000,
      });
      expect(pod?.spec?.ephemeralContainers).toMatchObject([
        { name: 'dbg', image: BUSYBOX_IMAGE, targetContainerName: 'main', stdin: true },
      ]);
      expect(pod?.status?.ephemeralContainerStatuses).toMatchObject([
        { name: 'dbg', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } },
      ]);
      // The app container was not restarted, and the pod runs on; the ephemeral one is not started again.
      expect(pod?.status).toMatchObject({
        phase: 'Running',
        containerStatuses: [{ name: 'main', restartCount: 0, state: { running: {} } }],
      });
      expect((await kubectl(['logs', 'web', '-c', 'dbg'])).stdout).toContain('got-hello');
    },
    kTestMs,
  );

  it(
    'a running ephemeral container takes exec and logs; existing ones may not change; static pods refuse the subresource',
    async () => {
      const added = await kubectl([
        'debug',
        'web',
        '--image',
        BUSYBOX_IMAGE,
        '--image-pull-policy',
        'Never',
        '-c',
        'idle',
        '--',
        'sh',
        '-c',
        'echo idle-up; exec sleep 3599',
      ]);
      expect(added.code, added.stderr).toBe(0);
      await waitFor(
        async () => (await getPod('web'))?.status?.ephemeralContainerStatuses?.find((s) => s.name === 'idle')?.state?.running !== undefined,
        { timeoutMs: 60_000 },
      );
      const exec = await kubectl(['exec', 'web', '-c', 'idle', '--', 'sh', '-c', 'echo exec-in-$((6*7)); ps -o pid,args']);
      expect(exec.stdout, exec.stderr).toContain('exec-in-42');
      // No --target: the pod's own PID namespace is not shared, so PID 1 is the ephemeral container's own.
      expect(exec.stdout).toMatch(/^\s*1 +sleep 3599$/m);
      expect(exec.stdout).not.toContain('sleep 3600');
      expect((await kubectl(['logs', 'web', '-c', 'idle'])).stdout).toContain('idle-up');

      // Authorized as pods/ephemeralcontainers, which `edit` does not grant (as upstream: it would bypass admission made before it).
      const denied = await kubectl(['debug', 'web', '--image', BUSYBOX_IMAGE, '-c', 'not-allowed', '--', 'true'], { token: kUserToken });
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain('cannot patch resource "pods/ephemeralcontainers" in API group "" in the namespace "default"');

      const path = '/api/v1/namespaces/default/pods/web/ephemeralcontainers';
      const patch = (body: unknown, p = path) =>
        node.api(p, { method: 'PATCH', headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: JSON.stringify(body) });
      const changed = await patch({ spec: { ephemeralContainers: [{ name: 'idle', image: 'kubelet-ts/pause:1.0' }] } });
      expect(changed.status).toBe(422);
      expect(((await changed.json()) as { message: string }).message).toContain(
        'spec.ephemeralContainers[1]: Forbidden: existing ephemeral containers "idle" may not be changed',
      );
      const ports = await patch({
        spec: { ephemeralContainers: [{ name: 'web-port', image: BUSYBOX_IMAGE, ports: [{ containerPort: 80 }] }] },
      });
      expect(ports.status).toBe(422);
      expect(((await ports.json()) as { message: string }).message).toContain('ports: Forbidden: cannot be set for an Ephemeral Container');
      const clash = await patch({ spec: { ephemeralContainers: [{ name: 'main', image: BUSYBOX_IMAGE }] } });
      expect(clash.status).toBe(422);
      expect(((await clash.json()) as { message: string }).message).toContain('Duplicate value: "main"');

      await node.writeManifest(
        'static.yaml',
        `apiVersion: v1
kind: Pod
metadata: {name: fixed}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: ${BUSYBOX_IMAGE}, imagePullPolicy: Never, command: [sleep, '3600']}
`,
      );
      // An agent restart keeps the ephemeral containers (the intake's store) and starts none again.
      const before = (await getPod('web'))?.status?.ephemeralContainerStatuses;
      await node.restart();
      await waitFor(async () => (await getPod('web'))?.status?.ephemeralContainerStatuses?.length === 2, { timeoutMs: 60_000 });
      const after = await getPod('web');
      expect(after?.spec?.ephemeralContainers?.map((c) => c.name)).toEqual(['dbg', 'idle']);
      expect(after?.status?.ephemeralContainerStatuses?.map((c) => c.containerID)).toEqual(before?.map((c) => c.containerID));
      expect(after?.status?.ephemeralContainerStatuses?.[0]?.state?.terminated).toBeDefined();

      const staticName = `fixed-${node.nodeName}`;
      await waitFor(async () => (await getPod(staticName)) !== undefined, { timeoutMs: 60_000 });
      const refused = await patch(
        { spec: { ephemeralContainers: [{ name: 'dbg', image: BUSYBOX_IMAGE }] } },
        `/api/v1/namespaces/default/pods/${staticName}/ephemeralcontainers`,
      );
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { message: string }).message).toContain(
        `pods "${staticName}" is forbidden: cannot patch a mirror pod`,
      );
    },
    kTestMs,
  );
});

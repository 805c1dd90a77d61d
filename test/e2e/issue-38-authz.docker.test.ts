// End-to-end (issue 38, finding 3): authorization as Kubernetes has it, against a real agent whose
// pods run in Docker, with the real kubectl over TLS. Before, any authenticated user could exec,
// attach, run and port-forward into every pod (a kube-system static pod mounting host `/` gave an
// ordinary token user the admin token). Now an identity bound to nothing gets the apiserver's 403
// on POST /run, the kubelet's WebSocket exec and the API's exec; a RoleBinding to `edit` in
// team-a allows exec there and nowhere else; `kubectl auth can-i --list` shows exactly what the
// policy grants; and a bad policy file stops the start, naming the file, document and field.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { runCliProcess } from '../support/agent-process.js';
import { createNamespacedSleeper, kHaveKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 120_000;
const kAlice = 'alice-token-0123456789abcdef0123456789';
const kBob = 'bob-token-0123456789abcdef01234567890';
const kCarol = 'carol-token-0123456789abcdef012345678';

const kPolicy = `# bob edits team-a; carol reads pods and their logs there.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-edit, namespace: team-a}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: team-a}
rules:
  - {verbs: [get, list], apiGroups: [""], resources: [pods]}
  - {verbs: [get], apiGroups: [""], resources: [pods/log], resourceNames: [web]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: carol-reads, namespace: team-a}
subjects: [{kind: User, name: carol}]
roleRef: {kind: Role, name: pod-reader, apiGroup: rbac.authorization.k8s.io}
`;

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('authorization by RBAC (issue 38, finding 3)', () => {
  let node: TestNode;
  let dir: string;
  let staticPod: string;
  const { kubectl } = kubectlFor(
    () => node,
    () => dir,
  );

  /** wsStatus: the HTTP status a WebSocket upgrade of `path` gets with `token` (101 when accepted), and the body of a refusal. */
  const wsStatus = (path: string, token: string) =>
    new Promise<{ code: number; body: string }>((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}${path}`, ['v5.channel.k8s.io'], {
        headers: { Authorization: `Bearer ${token}` },
      });
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      ws.on('open', () => {
        ws.terminate();
        resolve({ code: 101, body: '' });
      });
      ws.on('error', (err) => {
        if (!String(err).includes('Unexpected server response')) reject(err);
      });
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-authz-'));
    await writeFile(join(dir, 'tokens.csv'), `${kAlice},alice,11\n${kBob},bob,12\n${kCarol},carol,13\n`);
    await writeFile(join(dir, 'policy.yaml'), kPolicy);
    node = await startTestNode({
      tokenAuthFile: join(dir, 'tokens.csv'),
      authorizationPolicyFile: join(dir, 'policy.yaml'),
      tlsPort: 0,
      networkPlugin: 'none',
    });
    await node.writeManifest(
      'static.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: st, namespace: kube-system}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    await createNamespacedSleeper(kubectl, dir, 'team-a', 'web', BUSYBOX_IMAGE);
    staticPod = `st-${node.nodeName}`;
    await waitForPod(node, 'st', isRunningAndReady, 90_000);
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    "refuses an identity bound to nothing: POST /run, the kubelet's WebSocket exec and the API exec into a kube-system static pod",
    async () => {
      const run = await node.api(`/run/kube-system/${staticPod}/main?cmd=cat%20/etc/hostname`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${kAlice}` },
      });
      expect(run.status).toBe(403);
      expect(await run.json()).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        code: 403,
        message: `nodes "${node.nodeName}" is forbidden: User "alice" cannot create resource "nodes/proxy" in API group "" at the cluster scope`,
      });
      const ws = await wsStatus(`/exec/kube-system/${staticPod}/main?command=id&stdout=1`, kAlice);
      expect(ws.code).toBe(403);
      expect(JSON.parse(ws.body)).toMatchObject({
        reason: 'Forbidden',
        message: expect.stringContaining('User "alice" cannot create resource "nodes/proxy"'),
      });
      const apiWs = await wsStatus(`/api/v1/namespaces/kube-system/pods/${staticPod}/exec?command=id&stdout=true`, kAlice);
      expect(apiWs.code).toBe(403);
      expect(JSON.parse(apiWs.body)).toMatchObject({
        reason: 'Forbidden',
        details: { kind: 'pods', name: staticPod },
        message: `pods "${staticPod}" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"`,
      });
      // Every other upgrade goes through the same check: attach, both port-forwards, the watch.
      for (const path of [
        `/attach/kube-system/${staticPod}/main?stdout=1`,
        `/portForward/kube-system/${staticPod}?port=80`,
        `/api/v1/namespaces/kube-system/pods/${staticPod}/attach?stdout=true`,
        `/api/v1/namespaces/kube-system/pods/${staticPod}/portforward`,
        '/watch/pods',
      ]) {
        expect((await wsStatus(path, kAlice)).code, path).toBe(403);
      }
      // kubectl reads the pod first: that is refused already.
      const exec = await kubectl(['exec', '-n', 'kube-system', staticPod, '--', 'id'], { token: kAlice });
      expect(exec.code).not.toBe(0);
      expect(exec.stderr).toContain(
        `pods "${staticPod}" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "kube-system"`,
      );
      // Nor may it read pods, nor anything of the kubelet's own paths.
      expect((await node.api('/pods', { headers: { Authorization: `Bearer ${kAlice}` } })).status).toBe(403);
      expect((await kubectl(['get', 'pods', '-A'], { token: kAlice })).stderr).toContain(
        'User "alice" cannot list resource "pods" in API group "" at the cluster scope',
      );
      // The admin (system:masters) still may.
      expect((await kubectl(['exec', '-n', 'kube-system', staticPod, '--', 'echo', 'admin-ok'])).stdout).toBe('admin-ok\n');
    },
    kTestMs,
  );

  it(
    'lets a RoleBinding to edit in team-a exec there, and nowhere else',
    async () => {
      expect(await kubectl(['exec', '-n', 'team-a', 'web', '--', 'echo', 'bob-in-team-a'], { token: kBob })).toMatchObject({
        code: 0,
        stdout: 'bob-in-team-a\n',
      });
      const other = await wsStatus(`/api/v1/namespaces/kube-system/pods/${staticPod}/exec?command=id&stdout=true`, kBob);
      expect(other.code).toBe(403);
      expect(JSON.parse(other.body).message).toBe(
        `pods "${staticPod}" is forbidden: User "bob" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"`,
      );
      expect((await kubectl(['exec', '-n', 'kube-system', staticPod, '--', 'id'], { token: kBob })).stderr).toContain(
        'Error from server (Forbidden)',
      );
      // carol may read team-a's pods but not exec into them: kubectl gets the apiserver's 403 for pods/exec.
      const carol = await kubectl(['exec', '-n', 'team-a', 'web', '--', 'id'], { token: kCarol });
      expect(carol.code).not.toBe(0);
      expect(carol.stderr).toContain(
        'pods "web" is forbidden: User "carol" cannot create resource "pods/exec" in API group "" in the namespace "team-a"',
      );
      // Not the kubelet's paths either: edit grants nothing on nodes/proxy.
      expect((await wsStatus(`/exec/team-a/web/main?command=id&stdout=1`, kBob)).code).toBe(403);
      expect((await kubectl(['auth', 'can-i', 'create', 'pods/exec', '-n', 'team-a'], { token: kBob })).stdout).toBe('yes\n');
      expect((await kubectl(['auth', 'can-i', 'create', 'pods/exec', '-n', 'kube-system'], { token: kBob })).stdout).toMatch(/^no/);
    },
    kTestMs,
  );

  it(
    'kubectl auth can-i --list shows exactly what the policy grants',
    async () => {
      const discovery = [
        '/api/*',
        '/api',
        '/apis/*',
        '/apis',
        '/healthz',
        '/livez',
        '/openapi/*',
        '/openapi',
        '/readyz',
        '/version/',
        '/version',
      ];
      const table = (rows: string[][]) => rows.map((r) => r.join(' ')).join('\n');
      // kubectl prints the header, then the rules in an order of its own: compared as a header and a set of rows.
      const squeeze = (out: string) => {
        const [head, ...rows] = out
          .trim()
          .split('\n')
          .map((l) => l.trim().split(/\s+/).join(' '));
        return [head, ...rows.sort()].join('\n');
      };
      const selfReviews = [
        ['selfsubjectreviews.authentication.k8s.io', '[]', '[]', '[create]'],
        ['selfsubjectaccessreviews.authorization.k8s.io', '[]', '[]', '[create]'],
        ['selfsubjectrulesreviews.authorization.k8s.io', '[]', '[]', '[create]'],
      ];
      const carol = await kubectl(['auth', 'can-i', '--list', '-n', 'team-a'], { token: kCarol });
      expect(carol.code).toBe(0);
      const rows = [
        ...selfReviews,
        ...discovery.map((u) => ['', `[${u}]`, '[]', '[get]']),
        ['pods/log', '[]', '[web]', '[get]'],
        ['pods', '[]', '[]', '[get list]'],
      ];
      expect(squeeze(carol.stdout)).toBe(
        table([
          ['Resources', 'Non-Resource', 'URLs', 'Resource', 'Names', 'Verbs'],
          ...rows.map((r) => r.filter((c) => c !== '')).sort((a, b) => (a.join(' ') < b.join(' ') ? -1 : 1)),
        ]),
      );
      // Elsewhere carol has only what every identity has.
      const elsewhere = await kubectl(['auth', 'can-i', '--list', '-n', 'kube-system'], { token: kCarol });
      expect(squeeze(elsewhere.stdout)).not.toContain('pods');
      expect(squeeze(elsewhere.stdout).split('\n')).toHaveLength(1 + selfReviews.length + discovery.length);
      // And it holds: carol reads pods in team-a, not the log of another pod, and not in kube-system.
      expect((await kubectl(['get', 'pods', '-n', 'team-a', '-o', 'name'], { token: kCarol })).stdout).toBe('pod/web\n');
      expect((await kubectl(['get', 'pods', '-n', 'kube-system'], { token: kCarol })).stderr).toContain('Forbidden');
    },
    kTestMs,
  );

  it(
    'refuses to start with a bad policy file, naming the file, the document and the field',
    async () => {
      const bad = join(dir, 'bad.yaml');
      await writeFile(
        bad,
        `${kPolicy}---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: typo}
subjects: [{kind: Usr, name: dave}]
roleRef: {kind: ClusterRole, name: view, apiGroup: rbac.authorization.k8s.io}
`,
      );
      const root = join(dir, 'bad-root');
      const r = await runCliProcess([
        '--root-dir',
        root,
        '--hostname-override',
        'issue38-bad-policy',
        '--port',
        '0',
        '--runtime',
        'fake',
        '--authorization-policy-file',
        bad,
      ]);
      // A refused start input is one `kubelet-ts: …` line and exit 2, as every option error (src/main/index.ts).
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n')).toContain(
        `kubelet-ts: --authorization-policy-file ${bad}: document 4 (ClusterRoleBinding "typo"): subjects[0].kind: Unsupported value: "Usr": supported values: "ServiceAccount", "User", "Group"`,
      );
    },
    kTestMs,
  );
});

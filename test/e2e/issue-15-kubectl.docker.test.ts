// End-to-end (issue 15, part 1): the REAL kubectl (/usr/bin/kubectl, v1.32) drives a test agent
// through its Kubernetes API slice over TLS (--tls-port; kubectl sends a token only over TLS):
// discovery, get (table, wide, yaml, jsonpath, -l, --field-selector, -A), get -w, wait, create,
// describe, logs, exec, delete, nodes, events, auth whoami / can-i, top, a static pod shown as a
// mirror pod that refuses a delete, and `kubelet-ts kubeconfig`.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../../src/main/cli.js';
import type { CliIo } from '../../src/cli/io.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kKubectl, kubectlFor, type KubectlRun } from '../support/kubectl.js';
import type { Pod } from '../../src/shared/api.js';

const kTestMs = 120_000;
if (!kHaveKubectl) console.warn(`issue-15-kubectl: skipped: ${kKubectl} is not installed`);

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('the real kubectl drives the node (issue 15)', () => {
  let node: TestNode;
  let dir: string;
  let staticPod: string;
  const label = `kubectl-${process.pid}`;

  const { flags, start, kubectl, background } = kubectlFor(
    () => node,
    () => dir,
  );
  const podYaml = (name: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {test: ${label}, app: ${name}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      command: [sh, -c, "echo main-started; trap 'exit 0' TERM; while true; do sleep 1; done"]
    - name: side
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      command: [sh, -c, "echo side-line-1; echo side-line-2; trap 'exit 0' TERM; while true; do sleep 1; done"]
${extra}`;
  const createPod = async (name: string) => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, podYaml(name));
    // kubectl validates against the served OpenAPI (no --validate=false).
    const r = await kubectl(['create', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`pod/${name} created\n`);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-kubectl-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, 'view-token-0123456789abcdef0123456789,viewer,2,"kubelet-ts:read-only"\n');
    node = await startTestNode({ tokenAuthFile: tokens, tlsPort: 0, housekeepingIntervalMs: 1_000 });
    await node.writeManifest(
      'static.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: st, labels: {test: ${label}-static}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    await waitForPod(node, 'st', isRunningAndReady, 90_000);
    staticPod = `st-${node.nodeName}`;
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, kTestMs);

  it(
    'discovery works without an error or a warning, and unknown resources are refused clearly',
    async () => {
      const r = await kubectl(['get', 'pods', '-v=6']);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/couldn't get|error|warning|failed/i);
      const res = await kubectl(['api-resources', '--no-headers']);
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(/^pods\s+po\s+v1\s+true\s+Pod$/m);
      expect(res.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
      const dep = await kubectl(['get', 'deployments']);
      expect(dep.code).toBe(1);
      expect(dep.stderr).toContain('the server doesn\'t have a resource type "deployments"');
      const v = await kubectl(['version', '-o', 'json']);
      expect(JSON.parse(v.stdout).serverVersion.minor).toBe('32');
    },
    kTestMs,
  );

  it(
    'a static pod reads as a mirror pod and refuses a delete with a Forbidden Status',
    async () => {
      const y = await kubectl(['get', 'pod', staticPod, '-o', 'yaml']);
      expect(y.code).toBe(0);
      expect(y.stdout).toMatch(/kubernetes\.io\/config\.mirror: [0-9a-f]+/);
      const d = await kubectl(['delete', 'pod', staticPod, '--wait=false']);
      expect(d.code).toBe(1);
      expect(d.stderr).toContain(`Error from server (Forbidden): pods "${staticPod}" is forbidden: cannot delete a mirror pod`);
      expect((await kubectl(['get', 'pod', staticPod, '-o', 'name'])).stdout).toBe(`pod/${staticPod}\n`);
    },
    kTestMs,
  );

  it('create -f, wait, get in every output, get -w, describe, logs, exec and delete', async () => {
    const watch = background(['get', 'pods', '-w', '--output-watch-events', '-l', `test=${label}`]);
    await createPod('web');
    const w = await kubectl(['wait', '--for=condition=Ready', 'pod/web', '--timeout=90s']);
    expect(w.stdout).toBe('pod/web condition met\n');

    const table = await kubectl(['get', 'pods', '-l', `test=${label}`]);
    expect(table.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\n/);
    expect(table.stdout).toMatch(/^web\s+2\/2\s+Running\s+0\s+\d+s$/m);
    expect(table.stdout).not.toContain(staticPod);
    const wide = await kubectl(['get', 'pod', 'web', '-o', 'wide']);
    expect(wide.stdout).toMatch(/IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES/);
    expect(wide.stdout).toMatch(new RegExp(`^web\\s+2/2\\s+Running\\s+0\\s+\\S+\\s+[0-9.]+\\s+${node.nodeName}\\s+<none>\\s+<none>$`, 'm'));
    const yaml = await kubectl(['get', 'pod', 'web', '-o', 'yaml']);
    expect(yaml.stdout).toMatch(/^kind: Pod$/m);
    expect(yaml.stdout).toMatch(/^ {2}resourceVersion: "\d+"$/m);
    const jp = await kubectl(['get', 'pods', '-l', `test=${label}`, '-o', 'jsonpath={.items[*].spec.containers[*].name}']);
    expect(jp.stdout).toBe('main side');
    const fs = await kubectl([
      'get',
      'pods',
      '-A',
      '--field-selector',
      `metadata.name=web,spec.nodeName=${node.nodeName},status.phase=Running`,
    ]);
    expect(fs.stdout).toMatch(/^NAMESPACE\s+NAME\s+READY/);
    expect(fs.stdout).toMatch(/^default\s+web\s+2\/2\s+Running/m);
    expect(fs.stdout.trim().split('\n')).toHaveLength(2);
    const badFs = await kubectl(['get', 'pods', '--field-selector', 'spec.image=x']);
    expect(badFs.code).toBe(1);
    expect(badFs.stderr).toContain('field label not supported: spec.image');

    const desc = await kubectl(['describe', 'pod', 'web']);
    expect(desc.stdout).toMatch(/^Events:/m);
    expect(desc.stdout).toMatch(/Normal\s+Started\s+\S+\s+kubelet\s+Started container main/);
    expect(desc.stdout).not.toContain(staticPod);

    const logs = await kubectl(['logs', 'web', '-c', 'side']);
    expect(logs.stdout).toBe('side-line-1\nside-line-2\n');
    const tail = await kubectl(['logs', 'web', '-c', 'side', '--tail=1', '--timestamps']);
    expect(tail.stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+ side-line-2\n$/);
    const follow = background(['logs', '-f', 'web', '-c', 'main']);
    await waitFor(() => follow.out().includes('main-started'), { timeoutMs: 30_000 });
    await follow.stop();

    const ex = await kubectl(['exec', 'web', '-c', 'main', '--', 'sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect(ex.code).toBe(7);
    expect(ex.stdout).toBe('out\n');
    expect(ex.stderr).toContain('err\n');
    expect(ex.stderr).toContain('command terminated with exit code 7');
    const cat = await kubectl(['exec', '-i', 'web', '-c', 'main', '--', 'tr', 'a-z', 'A-Z'], { input: 'hello stdin\n' });
    expect(cat.code).toBe(0);
    expect(cat.stdout).toBe('HELLO STDIN\n');

    const del = await kubectl(['delete', 'pod', 'web', '--grace-period=1']);
    expect(del.stdout).toBe('pod "web" deleted\n');
    const gone = await kubectl(['get', 'pod', 'web']);
    expect(gone.stderr).toBe('Error from server (NotFound): pods "web" not found\n');
    await waitFor(() => /^DELETED\s+web\s/m.test(watch.out()), { timeoutMs: 30_000 });
    const events = (await watch.stop()).stdout;
    expect(events).toMatch(/^ADDED\s+web\s+0\/2/m);
    expect(events).toMatch(/^MODIFIED\s+web\s+2\/2\s+Running/m);
  }, 240_000);

  it('exec -it runs under a pty, logs --previous shows the dead attempt, and plain HTTP without a token gets nothing (anonymous off)', async () => {
    const file = join(dir, 'crash.yaml');
    await writeFile(
      file,
      `apiVersion: v1
kind: Pod
metadata: {name: crash, labels: {test: ${label}-crash}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, imagePullPolicy: Never, command: [sh, -c, "echo attempt-$RANDOM$RANDOM; sleep 1; exit 1"]}
    - {name: shell, image: ${BUSYBOX_IMAGE}, imagePullPolicy: Never, command: [sleep, "3600"]}
`,
    );
    expect((await kubectl(['create', '-f', file, '--validate=false'])).code).toBe(0);
    // `script` gives kubectl a terminal, so -t is honoured (kubectl drops -t without one).
    const cmd = `${kKubectl} ${flags(node.adminToken()).join(' ')} exec -it crash -c shell -- sh -c 'tty; exit 4'`;
    const pty = await waitFor(
      async () => {
        const child = spawn('script', ['-qec', cmd, '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', HOME: dir, TERM: 'dumb' },
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        return /\/dev\/pts\/\d+/.test(out) ? { code, out } : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(pty.out).toContain('command terminated with exit code 4');
    expect(pty.code).toBe(4);
    const previous = await waitFor(
      async () => {
        const r = await kubectl(['logs', 'crash', '-c', 'main', '--previous']);
        return r.code === 0 && /^attempt-\d+\n$/.test(r.stdout) ? r : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const current = await kubectl(['logs', 'crash', '-c', 'main']);
    expect(current.stdout).not.toBe(previous.stdout);
    const anon = ['--server', `http://127.0.0.1:${node.agent.port}`];
    const read = await new Promise<KubectlRun>((resolve) => {
      const c = spawn(kKubectl, [...anon, 'get', 'pod', 'crash', '-o', 'name'], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    // Anonymous requests are off by default (the KubeletConfiguration default, issue #38): no read either.
    expect(read.code).toBe(1);
    expect(read.stderr).toMatch(/Unauthorized|must be logged in/);
    const write = await new Promise<KubectlRun>((resolve) => {
      const c = spawn(kKubectl, [...anon, 'delete', 'pod', 'crash'], { env: { PATH: process.env.PATH ?? '', HOME: dir } });
      let stderr = '';
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.on('close', (code) => resolve({ code, stdout: '', stderr }));
    });
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/Unauthorized|must be logged in/);
    expect((await kubectl(['delete', 'pod', 'crash', '--grace-period=1'])).code).toBe(0);
  }, 180_000);

  // On containerd (SPDY, stdin): the agent's client once wrote stdin before the streaming server had answered
  // every stream, and the attached process's reply was lost 1 run in 3; it now waits for the replies as client-go does.
  it(
    "attach -i reaches the container's stdin, and delete -f removes what create -f made",
    async () => {
      const file = join(dir, 'att.yaml');
      await writeFile(
        file,
        `apiVersion: v1
kind: Pod
metadata: {name: att, labels: {test: ${label}-att}}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, imagePullPolicy: Never, stdin: true, stdinOnce: true, command: [sh, -c, "while read l; do echo got:$l; done; echo bye"]}
`,
      );
      expect((await kubectl(['create', '-f', file, '--validate=false'])).code).toBe(0);
      await kubectl(['wait', '--for=condition=Ready', 'pod/att', '--timeout=90s']);
      const r = await kubectl(['attach', '-i', 'att', '-c', 'main'], { input: 'one\ntwo\n' });
      expect(r.stdout).toContain('got:one\ngot:two\n');
      const d = await kubectl(['delete', '-f', file, '--grace-period=1']);
      expect(d.stdout).toBe('pod "att" deleted\n');
      expect((await kubectl(['get', '-f', file])).stderr).toContain('pods "att" not found');
    },
    kTestMs,
  );

  it(
    'delete -l removes only the selected pods',
    async () => {
      await createPod('sel-a');
      await createPod('sel-b');
      await kubectl(['wait', '--for=condition=Ready', 'pod/sel-a', 'pod/sel-b', '--timeout=90s']);
      const d = await kubectl(['delete', 'pods', '-l', 'app=sel-a', '--grace-period=0', '--force']);
      expect(d.stdout).toContain('pod "sel-a" force deleted');
      const left = await kubectl(['get', 'pods', '-l', `test=${label}`, '-o', 'name']);
      expect(left.stdout).toBe('pod/sel-b\n');
      expect((await kubectl(['delete', 'pod', 'sel-b', '--grace-period=1'])).code).toBe(0);
    },
    kTestMs,
  );

  it(
    'explain reads the OpenAPI; apply -f, a changed command and the three patch kinds go through PATCH; --dry-run=server changes nothing; eviction deletes',
    async () => {
      const ex = await kubectl(['explain', 'pod.spec.containers.command']);
      expect(ex).toMatchObject({ code: 0 });
      expect(ex.stdout).toContain('FIELD: command');
      const file = join(dir, 'ap.yaml');
      await writeFile(file, podYaml('ap'));
      expect((await kubectl(['apply', '-f', file])).stdout).toBe('pod/ap created\n');
      await kubectl(['wait', '--for=condition=Ready', 'pod/ap', '--timeout=90s']);
      const before = JSON.parse((await kubectl(['get', 'pod', 'ap', '-o', 'json'])).stdout) as Pod;
      // A changed command of one container: kubectl sends a strategic merge patch; the pod's spec changes.
      await writeFile(file, podYaml('ap').replace('echo main-started;', 'echo main-applied;'));
      const applied = await kubectl(['apply', '-f', file]);
      expect(applied).toMatchObject({ code: 0, stdout: 'pod/ap configured\n' });
      const after = JSON.parse((await kubectl(['get', 'pod', 'ap', '-o', 'json'])).stdout) as Pod;
      expect(after.spec!.containers.find((c) => c.name === 'main')!.command!.join(' ')).toContain('echo main-applied;');
      expect(after.spec!.containers.find((c) => c.name === 'side')).toEqual(before.spec!.containers.find((c) => c.name === 'side'));
      for (const [type, patch] of [
        ['merge', '{"metadata":{"labels":{"kind":"merge"}}}'],
        ['strategic', '{"metadata":{"labels":{"kind":"strategic"}}}'],
        ['json', '[{"op":"add","path":"/metadata/labels/kind","value":"json"}]'],
      ]) {
        expect(await kubectl(['patch', 'pod', 'ap', '--type', type, '-p', patch])).toMatchObject({ code: 0, stdout: 'pod/ap patched\n' });
        expect((await kubectl(['get', 'pod', 'ap', '-o', 'jsonpath={.metadata.labels.kind}'])).stdout).toBe(type);
      }
      // kubectl's default --validate=strict asks the server (fieldValidation=Strict): a misspelt field is refused by name.
      const typo = join(dir, 'typo.yaml');
      await writeFile(typo, podYaml('typo').replace('imagePullPolicy: Never', 'imagePullPolicyy: Never'));
      const refused = await kubectl(['apply', '-f', typo]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('unknown field "spec.containers[0].imagePullPolicyy"');
      // edit: kubectl GETs the pod, runs $EDITOR on it and PATCHes what changed (a strategic merge patch).
      const editor = join(dir, 'editor.sh');
      await writeFile(editor, '#!/bin/sh\nsed -i \'s/^    kind: json$/    kind: edited/\' "$1"\n', { mode: 0o755 });
      const edited = await start(['edit', 'pod', 'ap'], { env: { EDITOR: editor, KUBE_EDITOR: editor } }).done;
      expect(edited).toMatchObject({ code: 0, stdout: 'pod/ap edited\n' });
      expect((await kubectl(['get', 'pod', 'ap', '-o', 'jsonpath={.metadata.labels.kind}'])).stdout).toBe('edited');
      // apply --server-side: the agent keeps managedFields per manager; another manager's field is a conflict until forced.
      const ssa = join(dir, 'ssa.yaml');
      await writeFile(ssa, `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ap\n  labels: {kind: ssa}\n`);
      const conflict = await kubectl(['apply', '--server-side', '-f', ssa]);
      expect(conflict.code).not.toBe(0);
      expect(conflict.stderr).toContain('conflict');
      expect(await kubectl(['apply', '--server-side', '--force-conflicts', '-f', ssa])).toMatchObject({
        code: 0,
        stdout: 'pod/ap serverside-applied\n',
      });
      expect((await kubectl(['get', 'pod', 'ap', '-o', 'jsonpath={.metadata.labels.kind}'])).stdout).toBe('ssa');
      const bad = await kubectl(['patch', 'pod', 'ap', '--type', 'json', '-p', '{"op":"add"}']);
      expect(bad.code).not.toBe(0);
      // --dry-run=server (dryRun=All): the answers of a create, a changed apply and a delete, and nothing changes.
      const uid = JSON.parse((await kubectl(['get', 'pod', 'ap', '-o', 'json'])).stdout).metadata.uid as string;
      await writeFile(file, podYaml('ap').replace('echo main-started;', 'echo main-dry;'));
      expect(await kubectl(['apply', '--dry-run=server', '-f', file])).toMatchObject({
        code: 0,
        stdout: 'pod/ap configured (server dry run)\n',
      });
      const dryNew = join(dir, 'dry-new.yaml');
      await writeFile(dryNew, podYaml('dry-new'));
      expect(await kubectl(['apply', '--dry-run=server', '-f', dryNew])).toMatchObject({
        code: 0,
        stdout: 'pod/dry-new created (server dry run)\n',
      });
      expect(await kubectl(['delete', 'pod', 'ap', '--dry-run=server'])).toMatchObject({
        code: 0,
        stdout: 'pod "ap" deleted (server dry run)\n',
      });
      const still = JSON.parse((await kubectl(['get', 'pod', 'ap', '-o', 'json'])).stdout) as Pod;
      expect(still.metadata).toMatchObject({ uid });
      expect(still.metadata?.deletionTimestamp).toBeUndefined();
      expect(still.spec!.containers.find((c) => c.name === 'main')!.command!.join(' ')).toContain('echo main-applied;');
      expect((await kubectl(['get', 'pod', 'dry-new'])).stderr).toContain('pods "dry-new" not found');
      // pods/eviction (what kubectl drain posts), through kubectl's raw POST: 201 Success, and the pod goes.
      const evictionFile = join(dir, 'eviction.json');
      await writeFile(
        evictionFile,
        JSON.stringify({
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'ap', namespace: 'default' },
          deleteOptions: { gracePeriodSeconds: 1 },
        }),
      );
      const evicted = await kubectl(['create', '--raw', '/api/v1/namespaces/default/pods/ap/eviction', '-f', evictionFile]);
      expect(evicted.code).toBe(0);
      expect(JSON.parse(evicted.stdout)).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
      expect(await kubectl(['wait', '--for=delete', 'pod/ap', '--timeout=90s'])).toMatchObject({ code: 0 });
    },
    kTestMs,
  );

  it(
    'nodes, namespaces and events',
    async () => {
      const n = await kubectl(['get', 'nodes']);
      expect(n.stdout).toMatch(new RegExp(`^NAME\\s+STATUS\\s+ROLES\\s+AGE\\s+VERSION\\n${node.nodeName}\\s+Ready\\s+<none>`));
      const dn = await kubectl(['describe', 'node', node.nodeName]);
      expect(dn.code).toBe(0);
      expect(dn.stdout).toMatch(/^Conditions:/m);
      expect(dn.stdout).toContain(staticPod);
      const ns = await kubectl(['get', 'ns']);
      expect(ns.stdout).toMatch(/^default\s+Active/m);
      expect(ns.stdout).toMatch(/^kube-system\s+Active/m);
      // An empty namespace: created, listed, deleted (kubectl then waits for it to be gone); the system ones stay.
      // kubectl's typed client sends this create as protobuf.
      expect(await kubectl(['create', 'namespace', 'team-a'])).toMatchObject({ code: 0, stdout: 'namespace/team-a created\n' });
      await writeFile(join(dir, 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata: {name: team-b, labels: {team: b}}\n');
      expect(await kubectl(['apply', '-f', join(dir, 'ns.yaml')])).toMatchObject({ code: 0, stdout: 'namespace/team-b created\n' });
      expect((await kubectl(['get', 'ns', '-l', 'team=b', '-o', 'name'])).stdout).toBe('namespace/team-b\n');
      expect((await kubectl(['get', 'ns', 'team-a'])).stdout).toMatch(/^team-a\s+Active\s+\d+s$/m);
      expect(await kubectl(['delete', 'namespace', 'team-a', 'team-b'])).toMatchObject({
        code: 0,
        stdout: 'namespace "team-a" deleted\nnamespace "team-b" deleted\n',
      });
      expect((await kubectl(['get', 'ns', 'team-a'])).stderr).toBe('Error from server (NotFound): namespaces "team-a" not found\n');
      expect((await kubectl(['delete', 'ns', 'default'])).stderr).toContain(
        'namespaces "default" is forbidden: this namespace may not be deleted',
      );
      const ev = await kubectl(['get', 'events', '--field-selector', `involvedObject.name=${staticPod}`]);
      expect(ev.stdout).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
      expect(ev.stdout).toMatch(new RegExp(`Normal\\s+Started\\s+pod/${staticPod}\\s+Started container main`));
    },
    kTestMs,
  );

  it(
    'auth whoami and can-i answer truthfully for the admin and a read-only identity',
    async () => {
      const admin = await kubectl(['auth', 'whoami']);
      expect(admin.stdout).toMatch(/Username\s+kubelet-ts:admin/);
      expect(admin.stdout).toContain('system:masters');
      const viewer = 'view-token-0123456789abcdef0123456789';
      const who = await kubectl(['auth', 'whoami'], { token: viewer });
      expect(who.stdout).toMatch(/Username\s+viewer/);
      expect((await kubectl(['auth', 'can-i', 'create', 'pods'])).stdout).toBe('yes\n');
      expect((await kubectl(['auth', 'can-i', 'list', 'pods'], { token: viewer })).stdout).toBe('yes\n');
      const no = await kubectl(['auth', 'can-i', 'create', 'pods'], { token: viewer });
      expect(no.code).toBe(1);
      expect(no.stdout).toMatch(/^no/);
      expect((await kubectl(['auth', 'can-i', 'create', 'pods/exec'], { token: viewer })).stdout).toMatch(/^no/);
      // And what it says holds: the read-only identity's delete is refused.
      const del = await kubectl(['delete', 'pod', staticPod, '--wait=false'], { token: viewer });
      expect(del.stderr).toContain('Error from server (Forbidden)');
    },
    kTestMs,
  );

  it(
    'top pod and top node read metrics.k8s.io',
    async () => {
      const top = await waitFor(
        async () => {
          const r = await kubectl(['top', 'pod', staticPod]);
          return r.code === 0 ? r : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(top.stdout).toMatch(new RegExp(`^NAME\\s+CPU\\(cores\\)\\s+MEMORY\\(bytes\\)\\s*\\n${staticPod}\\s+\\d+m\\s+\\d+Mi`));
      const topNode = await kubectl(['top', 'node']);
      expect(topNode.stdout).toMatch(new RegExp(`^${node.nodeName}\\s+\\d+m\\s+\\d+%\\s+\\d+Mi\\s+\\d+%`, 'm'));
    },
    kTestMs,
  );

  it(
    'kubelet-ts kubeconfig writes a kubeconfig kubectl uses as is',
    async () => {
      const r = { stdout: '', stderr: '', code: -1 };
      const io: CliIo = { stdout: (t) => (r.stdout += t), stderr: (t) => (r.stderr += t), exit: (c) => (r.code = c) };
      await runCli(['kubeconfig', '--server', `https://127.0.0.1:${node.agent.tlsPort}`, '--root-dir', node.rootDir], {}, io);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain(`current-context: ${node.nodeName}`);
      const file = join(dir, 'kubeconfig');
      await writeFile(file, r.stdout);
      const child = spawn(kKubectl, ['--kubeconfig', file, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
        env: { PATH: process.env.PATH ?? '', HOME: dir },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      await new Promise((resolve) => child.on('close', resolve));
      expect(out).toBe('kubelet-ts:admin');
    },
    kTestMs,
  );
});

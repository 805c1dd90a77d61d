// Issue #38 findings 4, 9 and 10 (first item), against the real agent process and the real dockerd:
// the modes of the root dir and pods/ as the local user kts-tester sees them; what a restore of the
// intake store trusts (another owner, a loose mode, a FIFO, torn files); pod names of 253 characters.
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import type { Event, Pod, PodList } from '../../src/shared/api.js';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { kNodeLabel, isRunningAndReady } from '../support/agent.js';
import { killAgentProcesses, startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { BUSYBOX_IMAGE, docker, removeLabeledContainers, waitFor } from '../support/docker.js';
import { releaseNodeNetwork } from '../support/network.js';

const kWaitMs = 180_000;
const kTestMs = 400_000;

/** The local non-root user of the least-privilege tests (tools/lib/test-user.sh), or undefined. */
function testUser(): { uid: number; gid: number } | undefined {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'kts-tester']).toString().trim()),
      gid: Number(execFileSync('id', ['-g', 'kts-tester']).toString().trim()),
    };
  } catch {
    return undefined;
  }
}

/** asTester runs `cmd` as kts-tester; its exit status and stderr. */
function asTester(user: { uid: number; gid: number }, cmd: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(cmd[0], cmd.slice(1), { uid: user.uid, gid: user.gid, encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  return { status: r.status, stderr: r.stderr };
}

interface FilesNode {
  nodeName: string;
  base: string;
  rootDir: string;
  agent: AgentProcess;
  start(): Promise<AgentProcess>;
  post(path: string, body: unknown): Promise<Response>;
  pods(): Promise<Pod[]>;
  events(): Promise<Event[]>;
  /** The node's containers in Docker, running or not. */
  containers(): Promise<{ Id: string; State: string; Labels: Record<string, string> }[]>;
}

/**
 * newNode: a node name and a root dir under a base dir made world-traversable (0755, as /var/lib
 * is), its first agent started. Registered on the test: every agent process started on it is
 * killed (also one still starting), its containers removed, mounts under the base undone, the base removed.
 */
async function newNode(prepare?: (rootDir: string) => Promise<void>): Promise<FilesNode> {
  const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-files-'));
  await chmod(base, 0o755);
  const rootDir = join(base, 'root');
  const children = new Set<ChildProcess>();
  const nodeName = `e2e-files-${randomBytes(3).toString('hex')}`;
  onTestFinished(async () => {
    await killAgentProcesses((c) => children.has(c));
    await removeLabeledContainers(kNodeLabel, nodeName);
    await releaseNodeNetwork(rootDir);
    await unmountUnder(base).catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  }, kTestMs);
  await mkdir(rootDir);
  await prepare?.(rootDir);
  const node: FilesNode = {
    nodeName,
    base,
    rootDir,
    agent: undefined as unknown as AgentProcess,
    async start() {
      node.agent = await startAgentProcess(
        ['--hostname-override', nodeName, '--root-dir', rootDir, '--relist-period', '1s', '--sync-frequency', '10s'],
        undefined,
        { onSpawn: (c) => children.add(c) },
      );
      return node.agent;
    },
    post(path, body) {
      return node.agent.api(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(45_000),
      });
    },
    async pods() {
      return ((await (await node.agent.api('/pods')).json()) as PodList).items;
    },
    async events() {
      return ((await (await node.agent.api('/events')).json()) as { items: Event[] }).items;
    },
    async containers() {
      return docker.listContainers({ all: true, filters: { label: [`${kNodeLabel}=${nodeName}`] } });
    },
  };
  await node.start();
  return node;
}

function podJson(name: string, extra: Partial<NonNullable<Pod['spec']>> = {}, command = 'exec sleep 3600'): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', command] }],
      ...extra,
    },
  } as Pod;
}

async function running(node: FilesNode, name: string): Promise<Pod> {
  return waitFor(
    async () => {
      const p = (await node.pods()).find((x) => x.metadata?.name === name);
      return p && isRunningAndReady(p) ? p : undefined;
    },
    { timeoutMs: kWaitMs, intervalMs: 300, description: `pod ${name} Running` },
  );
}

/** The intake store's files (any naming), sorted. */
async function storeFiles(rootDir: string): Promise<string[]> {
  return (await readdir(join(rootDir, 'intake'))).filter((n) => n.endsWith('.json')).sort();
}

const kHasUser = testUser() !== undefined;

describe.skipIf(!inject('dockerAvailable'))('issue #38 finding 4: modes of the root dir and pods/', () => {
  it.skipIf(!kHasUser)(
    "kts-tester cannot read a Secret volume file nor create a file in an emptyDir of a running pod, though the root dir's parent is world-traversable and an earlier run left the root dir 0755",
    { timeout: kTestMs },
    async () => {
      const user = testUser()!;
      // An earlier run (or an admin) left the root dir and pods/ wide open: the agent narrows them at start.
      const node = await newNode(async (rootDir) => {
        await chmod(rootDir, 0o755);
        await mkdir(join(rootDir, 'pods'), { mode: 0o755 });
        await chmod(join(rootDir, 'pods'), 0o755);
      });
      const list = {
        apiVersion: 'v1',
        kind: 'List',
        items: [
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'creds', namespace: 'default' },
            data: { password: Buffer.from('s3cret').toString('base64') },
          },
          podJson('holder', {
            volumes: [
              { name: 'sec', secret: { secretName: 'creds' } },
              { name: 'scratch', emptyDir: {} },
            ],
            containers: [
              {
                name: 'main',
                image: BUSYBOX_IMAGE,
                command: ['sh', '-c', 'exec sleep 3600'],
                volumeMounts: [
                  { name: 'sec', mountPath: '/sec' },
                  { name: 'scratch', mountPath: '/scratch' },
                ],
              },
            ],
          } as Partial<NonNullable<Pod['spec']>>),
        ],
      };
      // A pod first: its answer waits for the sources' start (the store of ConfigMaps and Secrets included).
      expect((await node.post('/pods', podJson('first'))).status).toBe(201);
      const res = await node.post('/pods', list);
      expect(res.status, await res.text()).toBe(201);
      const pod = await running(node, 'holder');
      const podDir = join(node.rootDir, 'pods', pod.metadata!.uid!);
      const secretFile = join(podDir, 'volumes', 'kubernetes.io~secret', 'sec', 'password');
      const emptyDir = join(podDir, 'volumes', 'kubernetes.io~empty-dir', 'scratch');
      // The files are there, and their own modes would let anyone read / write (0644 file, 0777 emptyDir, as upstream):
      // only the directories above keep kts-tester out.
      expect(await readFile(secretFile, 'utf8')).toBe('s3cret');
      expect((await stat(emptyDir)).mode & 0o777).toBe(0o777);
      // The test really reaches the agent's modes: kts-tester may traverse the base above the root dir.
      expect(asTester(user, ['ls', node.base]).status).toBe(0);

      const read = asTester(user, ['cat', secretFile]);
      expect(read.status).not.toBe(0);
      expect(read.stderr).toMatch(/Permission denied/);
      const write = asTester(user, ['touch', join(emptyDir, 'planted')]);
      expect(write.status).not.toBe(0);
      expect(write.stderr).toMatch(/Permission denied/);
      expect((await stat(node.rootDir)).mode & 0o777).toBe(0o750);
      expect((await stat(join(node.rootDir, 'pods'))).mode & 0o777).toBe(0o750);
      expect(node.agent.output()).toContain('Narrowed the mode of a directory under --root-dir');
    },
  );
});

describe.skipIf(!inject('dockerAvailable'))('issue #38 finding 9: what the restore of the intake store trusts', () => {
  it.skipIf(!kHasUser)(
    'a stored pod changed while the agent was down (owned by another user, mode 0666, hostPath / added) is refused, set aside and never run; an event says so',
    { timeout: kTestMs },
    async () => {
      const user = testUser()!;
      const node = await newNode();
      expect((await node.post('/pods', podJson('victim'))).status).toBe(201);
      const before = await running(node, 'victim');
      const ids = (await node.containers()).map((c) => c.Id).sort();
      await node.agent.stop('SIGKILL');
      // Every stored copy of the pod is changed the same way (whatever the store's layout).
      for (const name of await storeFiles(node.rootDir)) {
        const file = join(node.rootDir, 'intake', name);
        const pod = JSON.parse(await readFile(file, 'utf8')) as Pod;
        const spec = pod.spec as NonNullable<Pod['spec']> & { volumes?: unknown[] };
        spec.volumes = [{ name: 'host', hostPath: { path: '/' } }];
        spec.containers[0].volumeMounts = [{ name: 'host', mountPath: '/host' }];
        spec.containers[0].image = `${BUSYBOX_IMAGE}`;
        spec.containers[0].command = ['sh', '-c', 'exec sleep 3601'];
        await writeFile(file, JSON.stringify(pod));
        await chown(file, user.uid, user.gid);
        await chmod(file, 0o666);
      }
      await node.start();
      const event = await waitFor(
        async () => (await node.events()).find((e) => e.reason === 'FailedRestore' && /Refused/.test(e.message ?? '')),
        { timeoutMs: kWaitMs, intervalMs: 300, description: 'a FailedRestore event' },
      );
      expect(event.type).toBe('Warning');
      expect(event.message).toContain('owned by uid');
      // Set aside, not deleted; not run: no container mounts the host's /, the pod is not listed.
      expect((await readdir(join(node.rootDir, 'intake-set-aside'))).length).toBeGreaterThan(0);
      expect(await storeFiles(node.rootDir)).toEqual([]);
      expect((await node.pods()).map((p) => p.metadata?.name)).not.toContain('victim');
      for (const c of await node.containers()) {
        const mounts = (await docker.getContainer(c.Id).inspect()).Mounts;
        expect(mounts.filter((m) => m.Source === '/')).toEqual([]);
      }
      // The acknowledged pod's running containers were left alone (started from the trusted copy).
      expect(
        (await node.containers())
          .filter((c) => c.State === 'running')
          .map((c) => c.Id)
          .sort(),
      ).toEqual(ids);
      expect(before.metadata?.uid).toBeTruthy();
    },
  );

  it('a FIFO in intake/ does not wedge the restore: a POST after the restart is answered 201', { timeout: kTestMs }, async () => {
    const node = await newNode();
    expect((await node.post('/pods', podJson('before'))).status).toBe(201);
    await node.agent.stop('SIGKILL');
    execFileSync('mkfifo', [join(node.rootDir, 'intake', 'default_fifo.json')]);
    execFileSync('mkfifo', [join(node.rootDir, 'intake', 'a-fifo.json')]);
    await node.start();
    expect((await node.post('/pods', podJson('after'))).status).toBe(201);
    expect((await node.pods()).map((p) => p.metadata?.name).sort()).toEqual(['after', 'before']);
    expect(node.agent.output()).toContain('Skipped a special file in the intake store without opening it');
  });

  it(
    'a truncated stored file: the pod keeps running from its second copy; with no copy readable its containers are left alone and an event says so',
    { timeout: kTestMs },
    async () => {
      const node = await newNode();
      for (const name of ['torn', 'lost', 'gone']) expect((await node.post('/pods', podJson(name))).status).toBe(201);
      const pods = await Promise.all(['torn', 'lost', 'gone'].map((n) => running(node, n)));
      const uidOf = (name: string) => pods.find((p) => p.metadata?.name === name)!.metadata!.uid!;
      const idsOf = async (uid: string) =>
        (await node.containers())
          .filter((c) => c.Labels['io.kubernetes.pod.uid'] === uid && c.State === 'running')
          .map((c) => c.Id)
          .sort();
      const tornIds = await idsOf(uidOf('torn'));
      const lostIds = await idsOf(uidOf('lost'));
      await node.agent.stop('SIGKILL');
      const filesOf = async (name: string) => {
        const out: string[] = [];
        for (const f of await storeFiles(node.rootDir)) {
          if ((await readFile(join(node.rootDir, 'intake', f), 'utf8')).includes(`"name": "${name}"`)) out.push(f);
        }
        return out;
      };
      // torn: its first file cut short; lost: every file cut short; gone: its files removed (deleted
      // while the agent was down: its containers are orphans, cleaned up by housekeeping).
      const [tornFirst] = await filesOf('torn');
      const lostFiles = await filesOf('lost');
      const goneFiles = await filesOf('gone');
      await truncate(join(node.rootDir, 'intake', tornFirst), 40);
      for (const f of lostFiles) await truncate(join(node.rootDir, 'intake', f), 40);
      for (const f of goneFiles) await unlink(join(node.rootDir, 'intake', f));
      await node.start();
      // Housekeeping has run once the orphan's containers are gone.
      await waitFor(async () => (await node.containers()).every((c) => c.Labels['io.kubernetes.pod.uid'] !== uidOf('gone')), {
        timeoutMs: kWaitMs,
        intervalMs: 300,
        description: 'the orphan cleaned up',
      });
      const torn = await running(node, 'torn');
      expect(torn.metadata?.uid).toBe(uidOf('torn'));
      expect(await idsOf(uidOf('torn'))).toEqual(tornIds);
      expect(await idsOf(uidOf('lost'))).toEqual(lostIds);
      const event = (await node.events()).find((e) => e.reason === 'FailedRestore');
      expect(event?.message).toContain('left alone');
    },
  );
});

describe.skipIf(!inject('dockerAvailable'))('issue #38 finding 10: pod names of 229-253 characters', () => {
  it('a 253-character name is answered 201 with dryRun=All and without, runs, and survives a restart', { timeout: kTestMs }, async () => {
    const node = await newNode();
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    expect(long).toHaveLength(253);
    const path = '/api/v1/namespaces/default/pods';
    expect((await node.post(`${path}?dryRun=All`, podJson(long))).status).toBe(201);
    const res = await node.post(path, podJson(long));
    expect(res.status).toBe(201);
    await running(node, long);
    await node.agent.stop('SIGKILL');
    await node.start();
    await running(node, long);
  });
});

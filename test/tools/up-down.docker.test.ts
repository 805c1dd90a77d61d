// tools/up and tools/down as a user runs them, two agents from one checkout (a new user's trial,
// 2026-12-07, #41 item 6): each node's files are its own (.run/nodes/NAME/: PID, log, kubeconfig,
// root dir), `--no-examples` runs no static pods, `--examples-port` moves the hostNetwork web
// example off the host's port 18080, and `tools/down --node-name NAME` stops that node alone. The
// role of Kubernetes' hack/local-up-cluster.sh being run by its own CI job.
//
// The scripts run in a scratch copy of the checkout (tools/, examples/, package files; node_modules
// and the built dist/ linked), so their .run/ is the test's own: nothing of this checkout's .run/
// (another agent's PID file, the build stamp, .run/bin) is touched. Node names are the test's own
// (never this host's name, whose containers the default agent owns), and so are the root dirs.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, kRepoRoot } from '../support/agent-process.js';
import { waitFor } from '../support/docker.js';
import { kNodeLabel } from '../support/agent.js';
import { kHaveKubectl, kKubectl } from '../support/kubectl.js';
import { labeledContainers, removeLabeled } from '../support/runtime.js';
import { releaseNodeNetwork } from '../support/network.js';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { removePodCgroup } from '../../src/workers/cm/pod-cgroup.js';

const kStepMs = 300_000;
const kAgentMain = join(kRepoRoot, 'dist', 'src', 'main', 'index.js');
/** The agent's default --cgroup-root (tools/up gives none), where its pod cgroups are. */
const kCgroupRoot = '/kubelet-ts';

/** Run: a finished command. */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** run runs `command` to its end in `cwd` with `env` (never throws for a failing exit). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** agentAlive: the process `pid` runs (not a zombie) and is an agent (its command line names dist/src/main/index.js). */
function agentAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/src/main/index.js');
  } catch {
    return false;
  }
}

/**
 * agentsUnder: the PIDs of the agents whose command line names `dir` (their --root-dir is under
 * the scratch checkout): the ones this test started, wherever the scripts under test recorded them.
 */
function agentsUnder(dir: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^[0-9]+$/.test(e))
    .map(Number)
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.includes('dist/src/main/index.js') && cmdline.includes(dir);
      } catch {
        return false;
      }
    });
}

/** One node the test starts with tools/up. */
interface UpNode {
  name: string;
  port: number;
  tlsPort: number;
  rootDir: string;
  /** `.run/nodes/<name>` in the scratch checkout. */
  files: string;
}

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('tools/up and tools/down: two agents from one checkout', () => {
  let checkout: string;
  let env: NodeJS.ProcessEnv;
  const suffix = randomBytes(3).toString('hex');
  const nodes: UpNode[] = [];
  let a: UpNode;
  let b: UpNode;
  let webPort = 0;
  /** The UIDs of the pods tools/down removed: their pod cgroups outlive them (the next agent's GC would remove them). */
  const removedPodUids = new Set<string>();

  const tool = (name: 'up' | 'down', args: string[]) => run('bash', [join(checkout, 'tools', name), ...args], checkout, env);
  const pidOf = async (n: UpNode) => Number((await readFile(join(n.files, 'agent.pid'), 'utf8')).trim());
  const logOf = (n: UpNode) => readFile(join(n.files, 'agent.log'), 'utf8').catch(() => '(no log)');
  /** kubectl with the kubeconfig tools/up wrote for `n`, as the message it prints says. */
  const kubectl = (n: UpNode, args: string[]) =>
    run(kKubectl, ['--kubeconfig', join(n.files, 'kubeconfig'), '--request-timeout', '60s', ...args], checkout, {
      PATH: process.env.PATH ?? '',
      HOME: checkout,
    });
  const up = async (n: UpNode, extra: string[]) => {
    const args = ['--node-name', n.name, '--port', String(n.port), '--tls-port', String(n.tlsPort), '--root-dir', n.rootDir, ...extra];
    const r = await tool('up', args);
    expect(r.code, `tools/up ${args.join(' ')}\n${r.stdout}\n${r.stderr}\n${await logOf(n)}`).toBe(0);
    return r;
  };

  beforeAll(async () => {
    if (!existsSync(kAgentMain)) {
      throw new Error(`tools/up runs the built agent: no ${kAgentMain} (run npm run build; tools/test builds it)`);
    }
    checkout = await mkdtemp(join(tmpdir(), 'kubelet-ts-tools-up-'));
    await cp(join(kRepoRoot, 'tools'), join(checkout, 'tools'), { recursive: true, preserveTimestamps: true });
    await cp(join(kRepoRoot, 'examples'), join(checkout, 'examples'), { recursive: true });
    for (const f of ['package.json', 'package-lock.json']) await cp(join(kRepoRoot, f), join(checkout, f));
    await symlink(join(kRepoRoot, 'node_modules'), join(checkout, 'node_modules'));
    await symlink(join(kRepoRoot, 'dist'), join(checkout, 'dist'));
    // The build is the checkout's own (dist/ linked): its stamp, newer than the copied package files, says so.
    await mkdir(join(checkout, '.run'));
    const stamp = join(checkout, '.run', 'build.stamp');
    await writeFile(stamp, '');
    const later = new Date(Date.now() + 3_600_000);
    await utimes(stamp, later, later);
    env = { ...process.env, HOME: checkout };
    for (const which of ['a', 'b']) {
      const name = `tools-${which}-${suffix}`;
      nodes.push({
        name,
        port: await freePort(),
        tlsPort: await freePort(),
        rootDir: join(checkout, `root-${which}`),
        files: join(checkout, '.run', 'nodes', name),
      });
    }
    [a, b] = nodes;
    webPort = await freePort();
  }, kStepMs);

  afterAll(async () => {
    // Whatever a failed step left: the agents (found by their root dirs under the scratch checkout,
    // so also when the scripts kept their PIDs elsewhere), their containers, pod cgroups and
    // networks, then the scratch checkout.
    if (checkout) {
      const left = agentsUnder(checkout);
      for (const pid of left) process.kill(pid, 'SIGKILL');
      await waitFor(() => left.every((pid) => !agentAlive(pid)), { timeoutMs: 10_000, description: 'agents gone' }).catch(() => undefined);
    }
    for (const n of nodes) {
      for (const uid of await removeLabeled(kNodeLabel, n.name, 'docker').catch(() => [] as string[])) removedPodUids.add(uid);
      await releaseNodeNetwork(n.rootDir);
    }
    await Promise.all([...removedPodUids].map((uid) => removePodCgroup(uid, kCgroupRoot).catch(() => undefined)));
    if (checkout) {
      await unmountUnder(checkout).catch(() => undefined);
      await rm(checkout, { recursive: true, force: true });
    }
  }, kStepMs);

  it(
    'tools/up --node-name A --no-examples keeps the node its own files under .run/nodes/A/ and runs no static pod',
    async () => {
      const r = await up(a, ['--no-examples']);
      expect(r.stdout).toContain(`node ${a.name}`);
      expect(r.stdout).toContain(`tools/down --node-name ${a.name}`);
      for (const f of ['agent.pid', 'agent.log', 'agent.node', 'kubeconfig']) expect(existsSync(join(a.files, f)), f).toBe(true);
      // The default node's paths (the README's) are not this node's.
      for (const f of ['agent.pid', 'agent.node', 'kubelet-ts.kubeconfig']) expect(existsSync(join(checkout, '.run', f)), f).toBe(false);
      expect(existsSync(join(a.rootDir, 'admin.token'))).toBe(true);

      const got = await kubectl(a, ['get', 'nodes', '-o', 'name']);
      expect(got.stderr).toBe('');
      expect(got.stdout.trim()).toBe(`node/${a.name}`);
      const pods = await kubectl(a, ['get', 'pods', '-A', '-o', 'name']);
      expect(pods.code).toBe(0);
      expect(pods.stdout).toBe('');
    },
    kStepMs,
  );

  it(
    'a second node B from the same checkout (--examples-port) leaves A running with its kubeconfig, and serves the web example on the moved port',
    async () => {
      const pidA = await pidOf(a);
      await up(b, ['--examples-port', String(webPort)]);
      expect(agentAlive(pidA)).toBe(true);
      expect(await pidOf(b)).not.toBe(pidA);
      // Each kubeconfig still reaches its own node.
      expect((await kubectl(a, ['get', 'nodes', '-o', 'name'])).stdout.trim()).toBe(`node/${a.name}`);
      expect((await kubectl(b, ['get', 'nodes', '-o', 'name'])).stdout.trim()).toBe(`node/${b.name}`);
      // The examples' hostNetwork httpd on the port given, not on 18080.
      const body = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${webPort}/`).catch(() => undefined);
          return res?.ok ? res.text() : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 500, description: `web-${b.name} answering on ${webPort}` },
      );
      expect(body).toBe(`hello from web-${b.name} on ${b.name}\n`);
      const web = await kubectl(b, ['get', 'pod', `web-${b.name}`, '-o', 'jsonpath={.spec.containers[0].ports[0].hostPort}']);
      expect(web.stdout).toBe(String(webPort));
    },
    kStepMs,
  );

  it(
    'tools/down --node-name A stops A alone; B keeps answering',
    async () => {
      const pidA = await pidOf(a);
      const pidB = await pidOf(b);
      const r = await tool('down', ['--node-name', a.name]);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`the agent of node ${b.name} keeps running`);
      expect(agentAlive(pidA)).toBe(false);
      expect(agentAlive(pidB)).toBe(true);
      expect((await kubectl(b, ['get', 'nodes', '-o', 'name'])).stdout.trim()).toBe(`node/${b.name}`);
    },
    kStepMs,
  );

  it(
    "tools/down --node-name B --reset stops B, removes its containers and the pod state under B's root dir",
    async () => {
      const pidB = await pidOf(b);
      const before = await labeledContainers(kNodeLabel, b.name, 'docker');
      expect(before.length).toBeGreaterThan(0);
      for (const c of before) if (c.labels['io.kubernetes.pod.uid']) removedPodUids.add(c.labels['io.kubernetes.pod.uid']);
      const r = await tool('down', ['--node-name', b.name, '--reset']);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(agentAlive(pidB)).toBe(false);
      expect(await labeledContainers(kNodeLabel, b.name, 'docker')).toEqual([]);
      expect(r.stdout).toContain(`removing the pod state under ${b.rootDir}`);
      expect(existsSync(join(b.rootDir, 'pods'))).toBe(false);
      expect(existsSync(join(b.rootDir, 'admin.token'))).toBe(true);
    },
    kStepMs,
  );
});

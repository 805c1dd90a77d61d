// Test harness that runs a whole kubelet-ts agent in-process against the real dockerd, or the
// containerd of tools/ with KUBELET_TS_TEST_RUNTIME=containerd (runtime.ts): the role of the
// kubelet node e2e suite's framework (test/e2e_node) for our runtime-backed suites.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, afterEach } from 'vitest';
import { newAgent, type Agent } from '../../src/main/agent.js';
import { resolveAgentOptions, type AgentOptions } from '../../src/main/options/agent-options.js';
import type { Pod, PodList } from '../../src/shared/api.js';
import { docker, waitFor } from './docker.js';
import { removeLabeled, runtimeAgentOverrides, testRuntime, type TestRuntime } from './runtime.js';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { removePodCgroup } from '../../src/workers/cm/pod-cgroup.js';
import { releaseNodeNetwork } from './network.js';

/** The label every agent puts on its containers; tests clean up by it. */
export const kNodeLabel = 'kubelet-ts.node-name';

/** TestNode: one agent with its own node name, manifest directory and root dir. */
export interface TestNode {
  nodeName: string;
  manifestDir: string;
  rootDir: string;
  agent: Agent;
  options: AgentOptions;
  /**
   * api fetches `path` (e.g. `/pods?labelSelector=a`) from the agent's own server as the node's
   * administrator: it sends `Authorization: Bearer <the admin token>` unless `init.headers` sets an
   * Authorization header of its own. Same shape as fetch; never throws for an HTTP error status.
   */
  api(path: string, init?: RequestInit): Promise<Response>;
  /** The admin token the agent wrote to `<rootDir>/admin.token` (read after start). */
  adminToken(): string;
  /** GET /pods from the agent's own server. */
  pods(): Promise<Pod[]>;
  /** The pod `<name>-<node>` (static pod naming) as /pods has it, or undefined. */
  pod(name: string): Promise<Pod | undefined>;
  /** Writes `examples`-style YAML into the manifest dir (atomically: tmp + rename). */
  writeManifest(file: string, yaml: string): Promise<void>;
  /** Stops the agent (containers keep running) and starts a new agent with the same settings. */
  restart(): Promise<void>;
  /**
   * Stops the agent and removes every container of this node, their pod cgroups, its default
   * network (leases, iptables rules, bridge) and its temp dirs. Every step runs even when one throws;
   * the first error is thrown at the end. One at a time; may be called again (what is gone is skipped).
   */
  cleanup(): Promise<void>;
  /** The main thread's log records at warn and above (`msg`, fields), newest last. */
  warnings: Record<string, unknown>[];
  /** The runtime its containers are on (runtime.ts; the fake's and a Docker proxy's count as Docker). */
  runtime: TestRuntime;
}

/**
 * adminAuthorization: the `Authorization` header of the admin token an agent wrote under
 * `rootDir` (for tests that start an agent without startTestNode). Read at call time.
 */
export function adminAuthorization(rootDir: string): { Authorization: string } {
  return { Authorization: `Bearer ${readFileSync(join(rootDir, 'admin.token'), 'utf8').trim()}` };
}

/**
 * startTestNode starts an agent on a unique node name (`e2e-<random>`) with a temp manifest dir, on
 * the test runtime (runtime.ts: Docker, or containerd's `containerRuntimeEndpoint`) unless
 * `overrides` names a runtime of its own (`runtime`, `dockerEndpoint`, `containerRuntimeEndpoint`).
 */
export async function startTestNode(overrides: Partial<AgentOptions> = {}): Promise<TestNode> {
  const nodeName = overrides.nodeName ?? `e2e-${randomBytes(4).toString('hex')}`;
  const base = await mkdtemp(join(tmpdir(), 'kubelet-ts-e2e-'));
  const manifestDir = join(base, 'manifests');
  const rootDir = join(base, 'root');
  // Its own empty --cni-conf-dir: the node uses its own default network (bridge and pod CIDR), never the host's /etc/cni/net.d.
  const cniConfDir = join(base, 'cni-conf');
  await import('node:fs/promises').then((fs) => Promise.all([fs.mkdir(manifestDir), fs.mkdir(rootDir), fs.mkdir(cniConfDir)]));
  const warnings: Record<string, unknown>[] = [];
  const capture = {
    write: (line: string) => {
      warnings.push(JSON.parse(line));
      if (process.env.KUBELET_TS_TEST_LOG) process.stderr.write(line);
    },
  };
  const logger = pino({ level: process.env.KUBELET_TS_TEST_LOG ?? 'warn' }, capture);
  let options: AgentOptions;
  let agent: Agent;
  try {
    options = resolveAgentOptions({
      nodeName,
      podManifestPath: manifestDir,
      rootDir,
      cniConfDir,
      port: 0,
      relistPeriodMs: 500,
      fileCheckFrequencyMs: 2_000,
      syncFrequencyMs: 10_000,
      workers: 1,
      logLevel: process.env.KUBELET_TS_TEST_LOG ?? 'error',
      ...(ownsRuntime(overrides) ? {} : runtimeAgentOverrides()),
      ...overrides,
    });
    agent = newAgent(options, { logger });
  } catch (err) {
    await rm(base, { recursive: true, force: true }); // refused options: nothing started, only the temp dir to remove
    throw err;
  }
  let adminToken: string | undefined;
  let cleaning: Promise<void> | undefined; // one cleanup at a time: a late `finally` may meet the end-of-file one
  const node: TestNode = {
    nodeName,
    manifestDir,
    rootDir: options.rootDir,
    options,
    warnings,
    agent,
    runtime: !ownsRuntime(overrides) ? testRuntime() : 'containerRuntimeEndpoint' in overrides ? 'containerd' : 'docker',
    api(path, init) {
      const headers = new Headers(init?.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${node.adminToken()}`);
      return fetch(`http://127.0.0.1:${node.agent.port}${path}`, { ...init, headers });
    },
    adminToken() {
      adminToken ??= readFileSync(join(options.rootDir, 'admin.token'), 'utf8').trim();
      return adminToken;
    },
    async pods() {
      const res = await node.api('/pods');
      return ((await res.json()) as PodList).items;
    },
    async pod(name) {
      return (await node.pods()).find((p) => p.metadata?.name === `${name}-${nodeName}`);
    },
    async writeManifest(file, yaml) {
      const tmp = join(base, `.${file}.tmp`);
      await writeFile(tmp, yaml);
      await import('node:fs/promises').then((fs) => fs.rename(tmp, join(manifestDir, file)));
    },
    async restart() {
      await node.agent.stop();
      node.agent = newAgent(options, { logger });
      await node.agent.start();
    },
    cleanup: () =>
      (cleaning ??= cleanUpNode(node, base).finally(() => {
        cleaning = undefined;
        liveNodes.delete(node);
      })),
  };
  liveNodes.add(node);
  try {
    await node.agent.start();
  } catch (err) {
    // A start that fails part way (a refused option, a port taken) may have claimed a pod CIDR or
    // written under `base`: undo it as a cleanup does, then report the start's error.
    await node.cleanup().catch(() => undefined);
    throw err;
  }
  return node;
}

/** ownsRuntime: the overrides choose the agent's runtime themselves (the fake, a proxy of Docker, an endpoint). */
function ownsRuntime(overrides: Partial<AgentOptions>): boolean {
  return ['runtime', 'dockerEndpoint', 'dockerSocketPath', 'containerRuntimeEndpoint'].some((k) => k in overrides);
}

/**
 * cleanUpNode stops `node`'s agent, removes its containers and pod cgroups, its default network
 * (network.ts) and `base`. Every step runs even when an earlier one throws (a stop that fails must
 * not leave the bridge, the mounts or the temp dir behind); the first error is thrown at the end.
 */
async function cleanUpNode(node: TestNode, base: string): Promise<void> {
  const errors: unknown[] = [];
  const step = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (err) {
      errors.push(err);
    }
  };
  await step(() => node.agent.stop());
  // The pods' cgroups (pod-cgroup.ts) outlive their containers when nothing deletes the pods:
  // remove them after the containers, by the UIDs on those containers.
  // On the runtime the node ran on (runtime.ts: Docker's containers, or containerd's sandboxes).
  await step(async () => {
    const uids = await removeLabeled(kNodeLabel, node.nodeName, node.runtime);
    await Promise.all(uids.map((uid) => removePodCgroup(uid, node.options.cgroupRoot)));
  });
  // Its default network's leases, iptables rules and bridge, once no container of it is left (network.ts).
  await step(() => releaseNodeNetwork(node.options.rootDir));
  // A pod left running keeps its tmpfs volumes and subPath binds mounted (as the kubelet on stop):
  // unmount them, or the removal stops at a busy mount point and leaves it behind.
  await step(() => unmountUnder(base));
  await step(() => rm(base, { recursive: true, force: true }));
  if (errors.length > 0) throw errors[0];
}

/**
 * kCleanupTimeoutMs: how long (milliseconds) useTestNodes' afterEach may take. A cleanup cut short
 * by the hook timeout is cut for good: vitest ends the file's worker, and what the cleanup had not
 * reached yet (the bridge, the temp dir) stays on the host. On a loaded machine stopping an agent
 * and removing its containers has taken more than the default 60 s.
 */
export const kCleanupTimeoutMs = 300_000;

/**
 * Every node startTestNode started in this test file and whose cleanup has not run. A node a test
 * starts in its body and cleans up in a `finally` is not cleaned up when the test times out: the
 * body is still waiting, and when it was the file's last test the worker ends before the `finally`
 * runs. The file's own last hook (below) cleans up whatever is left.
 */
const liveNodes = new Set<TestNode>();
// Registered when a test file imports this module: on that file's root suite, so it runs after every
// describe block's own after-hooks.
afterAll(async () => {
  await Promise.allSettled([...liveNodes].map((n) => n.cleanup()));
}, kCleanupTimeoutMs);

/**
 * useTestNodes registers, in the calling describe block, an afterEach that cleans up every node
 * the returned `start` started during the test (containers, temp dirs), and returns `start`.
 */
export function useTestNodes(): (overrides?: Partial<AgentOptions>) => Promise<TestNode> {
  const nodes: TestNode[] = [];
  afterEach(async () => {
    const results = await Promise.allSettled(nodes.splice(0).map((n) => n.cleanup()));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }, kCleanupTimeoutMs);
  return async (overrides) => {
    const node = await startTestNode(overrides);
    nodes.push(node);
    return node;
  };
}

/** waitForPod polls /pods until `pred` holds for the pod `<name>-<node>` and returns it. */
export async function waitForPod(node: TestNode, name: string, pred: (pod: Pod) => boolean, timeoutMs = 90_000): Promise<Pod> {
  return waitFor(
    async () => {
      const pod = await node.pod(name);
      return pod && pred(pod) ? pod : undefined;
    },
    { timeoutMs, intervalMs: 200, description: `pod ${name} on ${node.nodeName}` },
  );
}

/** isRunningAndReady: phase Running with every container ready. */
export const isRunningAndReady = (pod: Pod): boolean =>
  pod.status?.phase === 'Running' && (pod.status.containerStatuses ?? []).length > 0 && pod.status.containerStatuses!.every((c) => c.ready);

/**
 * containersOf lists the Docker containers of one pod UID (sandbox and app containers), in Docker's
 * shape. Docker only: a suite that runs on both runtimes uses podContainers (runtime.ts).
 */
export async function containersOf(uid: string) {
  return docker.listContainers({ all: true, filters: { label: [`io.kubernetes.pod.uid=${uid}`] } });
}

/** busyboxPod renders a one-container busybox pod manifest. */
export function busyboxPod(name: string, command: string, extra: { restartPolicy?: string } = {}): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
spec:
  restartPolicy: ${extra.restartPolicy ?? 'Always'}
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: kubelet-ts/busybox:1.35
      command: ["sh", "-c", ${JSON.stringify(command)}]
`;
}

/**
 * writeStreamerPolicy writes to `path` an `--authorization-policy-file` that lets the members of
 * `group` stream into pods through the kubelet's own paths (`get` and `create` on `nodes/proxy`):
 * an ordinary identity for the bounds that hold everyone but system:masters (stream-limits.ts).
 */
export async function writeStreamerPolicy(path: string, group: string): Promise<void> {
  await writeFile(
    path,
    [
      'apiVersion: rbac.authorization.k8s.io/v1',
      'kind: ClusterRole',
      'metadata: {name: streamer}',
      'rules: [{verbs: [get, create], apiGroups: [""], resources: [nodes/proxy]}]',
      '---',
      'apiVersion: rbac.authorization.k8s.io/v1',
      'kind: ClusterRoleBinding',
      'metadata: {name: streamer}',
      `subjects: [{kind: Group, name: ${group}, apiGroup: rbac.authorization.k8s.io}]`,
      'roleRef: {kind: ClusterRole, name: streamer, apiGroup: rbac.authorization.k8s.io}',
      '',
    ].join('\n'),
  );
}

// The container runtime a suite runs on (issue #40 item 5): Docker (default) or the containerd of
// tools/lib/containerd.sh through the CRI, picked by KUBELET_TS_TEST_RUNTIME, so one test body
// proves a behaviour on both. The role of the node e2e suite's `--container-runtime-endpoint` and
// its runtime-neutral framework helpers (test/e2e_node: e2e tests reach containers through the CRI
// client of test/e2e_node/remote, never through one runtime's own API), and of cri-tools' critest
// skips (`framework.IsRuntime…` markers) for what a runtime cannot do.
import { randomBytes } from 'node:crypto';
import { describe, it, type TestFunction } from 'vitest';
import { kAgentOptionDescriptors } from '../../src/main/options/agent-option-descriptors.js';
import type { AgentOptions } from '../../src/main/options/agent-options.js';
import { isNotFound } from '../../src/shared/errors.js';
import { RemoteRuntimeService } from '../../src/workers/runtime/cri/remote-runtime.js';
import { readRunEnv } from './cri.js';
import { BUSYBOX_IMAGE, docker, execInPod, removeLabeledContainers } from './docker.js';

/** TestRuntime: the runtimes a suite can run on. */
export type TestRuntime = 'docker' | 'containerd';
/** kTestRuntimes: every {@link TestRuntime}, Docker first. */
export const kTestRuntimes: readonly TestRuntime[] = ['docker', 'containerd'];
/** The environment variable that picks the runtime (vitest.config.ts sets it per project). */
export const kTestRuntimeEnv = 'KUBELET_TS_TEST_RUNTIME';

/**
 * testRuntime: the runtime of this test process, from KUBELET_TS_TEST_RUNTIME (`docker` when unset
 * or empty). @throws Error naming the variable and the value when it is neither `docker` nor `containerd`.
 */
export function testRuntime(env: NodeJS.ProcessEnv = process.env): TestRuntime {
  const value = env[kTestRuntimeEnv] || 'docker';
  if ((kTestRuntimes as readonly string[]).includes(value)) return value as TestRuntime;
  throw new Error(`${kTestRuntimeEnv}=${JSON.stringify(value)}: must be one of ${kTestRuntimes.join(', ')}`);
}

/**
 * containerdEndpoint: `unix:///…/containerd.sock` of tools/lib/containerd.sh (KUBELET_TS_CRI_ENDPOINT,
 * else `.run/containerd.env`). @throws Error saying how to start it when neither names one: a suite
 * asked to run on containerd fails instead of quietly running on Docker.
 */
export function containerdEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  const endpoint = env.KUBELET_TS_CRI_ENDPOINT || readRunEnv('containerd')?.KUBELET_TS_CRI_ENDPOINT;
  if (!endpoint)
    throw new Error(
      `${kTestRuntimeEnv}=containerd but no containerd endpoint: KUBELET_TS_CRI_ENDPOINT is unset and .run/containerd.env is absent (tools/lib/containerd.sh up writes it)`,
    );
  return endpoint;
}

/** The agent option (and flag) that names a CRI runtime: upstream's `--container-runtime-endpoint`. */
const kEndpointOption = 'containerRuntimeEndpoint';
const kEndpointFlag = '--container-runtime-endpoint';

/**
 * runtimeAgentArgs: the command-line arguments that put an agent child process on the test runtime
 * (`[]` for Docker; `['--container-runtime-endpoint', 'unix:///…']` for containerd).
 * @throws Error as {@link containerdEndpoint}.
 */
export function runtimeAgentArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  return testRuntime(env) === 'docker' ? [] : [kEndpointFlag, containerdEndpoint(env)];
}

/** The flags by which a test's own arguments choose the agent's runtime. */
const kRuntimeFlags = ['--runtime', '--docker-endpoint', '--container-runtime-endpoint'];

/**
 * withTestRuntime: an agent child process's `args` plus runtimeAgentArgs, unless `args` choose a
 * runtime themselves (`--runtime`, `--docker-endpoint`, `--container-runtime-endpoint`, also as `--flag=value`).
 * @throws as runtimeAgentArgs.
 */
export function withTestRuntime(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  return args.some((a) => kRuntimeFlags.includes(a.split('=')[0]!)) ? [...args] : [...args, ...runtimeAgentArgs(env)];
}

/**
 * runtimeAgentOverrides: the AgentOptions that put an in-process agent on the test runtime (`{}`
 * for Docker; `{ containerRuntimeEndpoint: 'unix:///…' }` for containerd).
 * @throws Error when containerd is asked for and the agent has no `containerRuntimeEndpoint`
 * option yet (the CRI seam of issue #40 not merged), or as {@link containerdEndpoint}.
 */
export function runtimeAgentOverrides(env: NodeJS.ProcessEnv = process.env): Partial<AgentOptions> {
  if (testRuntime(env) === 'docker') return {};
  if (!(kEndpointOption in kAgentOptionDescriptors)) {
    throw new Error(
      `${kTestRuntimeEnv}=containerd but this agent has no ${kEndpointFlag} option (${kEndpointOption}) yet: the CRI seam of issue #40 is not in this tree`,
    );
  }
  return { [kEndpointOption]: containerdEndpoint(env) } as Partial<AgentOptions>;
}

/** RuntimeLacks: per runtime, why it cannot do what a test proves (absent: it can). */
export type RuntimeLacks = Partial<Record<TestRuntime, string>>;

/** lackReason: the reason the current runtime lacks what `lacks` names, or undefined when it has it. */
export function lackReason(lacks: RuntimeLacks, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return lacks[testRuntime(env)];
}

type ItLike = (name: string, fn?: TestFunction, timeoutMs?: number) => void;

/**
 * itRuntime(lacks) is `it` on a runtime that can do what the test proves, and on one that cannot
 * an `it.skip` whose title says which runtime and why: `name [not on containerd: hostUsers:
 * false needs containerd 2]`. E.g. `itRuntime({ containerd: 'needs containerd 2' })('…', async () => …)`.
 */
export function itRuntime(lacks: RuntimeLacks): ItLike {
  const reason = lackReason(lacks);
  if (reason === undefined) return (name, fn, timeoutMs) => it(name, fn, timeoutMs);
  return (name, fn, timeoutMs) => it.skip(`${name} [not on ${testRuntime()}: ${reason}]`, fn, timeoutMs);
}

/** describeRuntime(lacks): {@link itRuntime} for a whole describe block. */
export function describeRuntime(lacks: RuntimeLacks): (name: string, fn: () => void) => void {
  const reason = lackReason(lacks);
  if (reason === undefined) return (name, fn) => describe(name, fn);
  return (name, fn) => describe.skip(`${name} [not on ${testRuntime()}: ${reason}]`, fn);
}

/**
 * TestContainer: a container a test looks at, on either runtime. `name` is the pod spec's
 * container name (`POD` for the sandbox, as dockershim names it); `running` is Docker's `running` or
 * the CRI's `CONTAINER_RUNNING`/`SANDBOX_READY`; `labels` as the runtime holds them.
 */
export interface TestContainer {
  id: string;
  name: string;
  sandbox: boolean;
  running: boolean;
  labels: Record<string, string>;
}

let cri: RemoteRuntimeService | undefined;
/** The CRI client of this test process on the test containerd (made on first use). */
function criRuntime(): RemoteRuntimeService {
  cri ??= new RemoteRuntimeService(containerdEndpoint(), { requestTimeoutMs: 60_000 });
  return cri;
}

const kPodUidLabel = 'io.kubernetes.pod.uid';
const kContainerNameLabel = 'io.kubernetes.container.name';

/**
 * labeledContainers lists every sandbox and container (running or not) carrying `key=value`, on
 * the test runtime: Docker's containers (the pause container is the sandbox, labelled
 * `io.kubernetes.docker.type=podsandbox`), or the CRI's ListPodSandbox + ListContainers.
 */
export async function labeledContainers(key: string, value: string, runtime: TestRuntime = testRuntime()): Promise<TestContainer[]> {
  if (runtime === 'docker') {
    const list = await docker.listContainers({ all: true, filters: { label: [`${key}=${value}`] } });
    return list.map((c) => {
      const sandbox = c.Labels['io.kubernetes.docker.type'] === 'podsandbox';
      return {
        id: c.Id,
        name: sandbox ? 'POD' : (c.Labels[kContainerNameLabel] ?? ''),
        sandbox,
        running: c.State === 'running',
        labels: c.Labels,
      };
    });
  }
  const rt = criRuntime();
  const selector = { label_selector: { [key]: value } };
  const [sandboxes, containers] = await Promise.all([rt.listPodSandbox(selector), rt.listContainers(selector)]);
  return [
    ...sandboxes.map((s) => ({ id: s.id, name: 'POD', sandbox: true, running: s.state === 'SANDBOX_READY', labels: s.labels })),
    ...containers.map((c) => ({
      id: c.id,
      name: c.metadata?.name ?? c.labels[kContainerNameLabel] ?? '',
      sandbox: false,
      running: c.state === 'CONTAINER_RUNNING',
      labels: c.labels,
    })),
  ];
}

/** podContainers: the sandbox and containers of the pod with UID `uid` ({@link labeledContainers}). */
export function podContainers(uid: string): Promise<TestContainer[]> {
  return labeledContainers(kPodUidLabel, uid);
}

/** appContainer: the container `name` of pod `uid` (the newest first on Docker's list), or undefined. */
export async function appContainer(uid: string, name: string): Promise<TestContainer | undefined> {
  return (await podContainers(uid)).find((c) => !c.sandbox && c.name === name);
}

/**
 * killContainer ends container `id` at once, behind the agent's back (a crash): Docker's kill
 * (SIGKILL) or the CRI's StopContainer with a 0 s timeout (SIGKILL, as the kubelet's force kill).
 */
export async function killContainer(id: string): Promise<void> {
  if (testRuntime() === 'docker') await docker.getContainer(id).kill();
  else await criRuntime().stopContainer(id, 0);
}

/** removeContainer removes container `id` whatever its state, behind the agent's back. */
export async function removeContainer(id: string): Promise<void> {
  if (testRuntime() === 'docker') {
    await docker.getContainer(id).remove({ force: true });
    return;
  }
  await criRuntime()
    .stopContainer(id, 0)
    .catch(() => undefined);
  await criRuntime().removeContainer(id).catch(ignoreNotFound);
}

/** ignoreNotFound: a thing removed meanwhile (NotFound) is gone as asked; any other error is thrown. */
function ignoreNotFound(err: unknown): void {
  if (!isNotFound(err)) throw err;
}

/**
 * execInContainer runs `cmd` (argv) in the running container `container` of pod `uid` and resolves
 * to its stdout and stderr (Docker's exec, or the CRI's ExecSync, 60 s).
 * @throws Error when the pod has no running container of that name.
 */
export async function execInContainer(uid: string, container: string, cmd: string[]): Promise<string> {
  if (testRuntime() === 'docker') return execInPod(uid, container, cmd);
  const c = (await podContainers(uid)).find((x) => !x.sandbox && x.running && x.name === container);
  if (!c) throw new Error(`pod ${uid} has no running container ${container}`);
  const res = await criRuntime().execSync(c.id, cmd, 60);
  return Buffer.concat([res.stdout, res.stderr]).toString('utf8');
}

/**
 * removeLabeled stops and removes, on the test runtime, every sandbox and container carrying
 * `key=value` (a test's cleanup; never another's) and resolves with the pod UIDs they belonged to.
 * `runtime`: where to look (default the test runtime; a node started on a runtime of its own says which).
 * On containerd each sandbox is stopped and removed (RemovePodSandbox removes its containers), then
 * any container left with the label.
 */
export async function removeLabeled(key: string, value: string, runtime: TestRuntime = testRuntime()): Promise<string[]> {
  const found = await labeledContainers(key, value, runtime);
  const uids = [...new Set(found.map((c) => c.labels[kPodUidLabel]).filter((u): u is string => !!u))];
  if (runtime === 'docker') {
    await removeLabeledContainers(key, value);
    return uids;
  }
  const rt = criRuntime();
  for (const s of found.filter((c) => c.sandbox)) {
    await rt.stopPodSandbox(s.id).catch(() => undefined);
    await rt.removePodSandbox(s.id).catch(ignoreNotFound);
  }
  const left = await rt.listContainers({ label_selector: { [key]: value } });
  for (const c of left) await removeContainer(c.id);
  return uids;
}

/** ForeignPod: a container a test started behind every agent's back (see startForeignPod). */
export interface ForeignPod {
  /** Whether its container still runs. */
  running(): Promise<boolean>;
  /** Removes it whatever its state (a sandbox with its container on containerd). */
  remove(): Promise<void>;
}

/**
 * startForeignPod starts, behind every agent's back, one busybox `sleep 3600` carrying only `labels`
 * and a test label of its own (`kubelet-ts.test-foreign`): a Docker container with network none,
 * or a CRI sandbox on the host network with one container. For tests that an agent leaves alone
 * what is not its own. @throws dockerode's or the CRI client's error (nothing is left behind then).
 */
export async function startForeignPod(labels: Record<string, string>, runtime: TestRuntime = testRuntime()): Promise<ForeignPod> {
  const all = { ...labels, 'kubelet-ts.test-foreign': randomBytes(6).toString('hex') };
  if (runtime === 'docker') {
    const c = await docker.createContainer({
      Image: BUSYBOX_IMAGE,
      Cmd: ['sleep', '3600'],
      Labels: all,
      HostConfig: { NetworkMode: 'none' },
    });
    const remove = () =>
      c
        .remove({ force: true })
        .catch(() => undefined)
        .then(() => undefined);
    await c.start().catch(async (err: unknown) => {
      await remove();
      throw err;
    });
    return { running: async () => (await c.inspect()).State.Running, remove };
  }
  const rt = criRuntime();
  const config = {
    metadata: { name: 'foreign', uid: all['kubelet-ts.test-foreign'], namespace: 'kts-foreign', attempt: 0 },
    labels: all,
    linux: { security_context: { namespace_options: { network: 'NODE', pid: 'CONTAINER' } } },
  } as const;
  const sandbox = await rt.runPodSandbox(config);
  const remove = async () => {
    await rt.stopPodSandbox(sandbox).catch(() => undefined);
    await rt.removePodSandbox(sandbox).catch(ignoreNotFound);
  };
  try {
    const id = await rt.createContainer(
      sandbox,
      { metadata: { name: 'sleep', attempt: 0 }, image: { image: BUSYBOX_IMAGE }, command: ['sleep', '3600'], labels: all },
      config,
    );
    await rt.startContainer(id);
    return { running: async () => (await rt.containerStatus(id)).status?.state === 'CONTAINER_RUNNING', remove };
  } catch (err) {
    await remove();
    throw err;
  }
}

/**
 * sandboxPid: the host pid of the running sandbox of pod `uid` (its pause process), whose network
 * namespace is the pod's: Docker's inspect State.Pid, or the `pid` of containerd's verbose
 * PodSandboxStatus `info`. @throws Error when the pod has no running sandbox or the runtime names no pid.
 */
export async function sandboxPid(uid: string): Promise<number> {
  const sandbox = (await podContainers(uid)).find((c) => c.sandbox && c.running);
  if (!sandbox) throw new Error(`no running sandbox for pod ${uid}`);
  if (testRuntime() === 'docker') return (await docker.getContainer(sandbox.id).inspect()).State.Pid;
  const { info } = await criRuntime().podSandboxStatus(sandbox.id, true);
  const pid = (JSON.parse(info.info ?? '{}') as { pid?: number }).pid;
  if (!pid) throw new Error(`containerd names no pid for the sandbox ${sandbox.id} of pod ${uid}`);
  return pid;
}

/**
 * sandboxOomScoreAdj: the oom_score_adj the runtime gave the sandbox of pod `uid` (running or
 * stopped): Docker's HostConfig.OomScoreAdj of the pause container, or `process.oomScoreAdj` of the
 * runtime spec in containerd's verbose PodSandboxStatus. @throws Error when the pod has no sandbox
 * or the runtime names no value.
 */
export async function sandboxOomScoreAdj(uid: string): Promise<number> {
  const sandbox = (await podContainers(uid)).find((c) => c.sandbox);
  if (!sandbox) throw new Error(`no sandbox for pod ${uid}`);
  if (testRuntime() === 'docker') return (await docker.getContainer(sandbox.id).inspect()).HostConfig.OomScoreAdj ?? 0;
  const { info } = await criRuntime().podSandboxStatus(sandbox.id, true);
  const adj = (JSON.parse(info.info ?? '{}') as { runtimeSpec?: { process?: { oomScoreAdj?: number } } }).runtimeSpec?.process?.oomScoreAdj;
  if (adj === undefined) throw new Error(`containerd names no oomScoreAdj for the sandbox ${sandbox.id} of pod ${uid}`);
  return adj;
}

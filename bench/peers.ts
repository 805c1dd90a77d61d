// bench peers (issue #16): the same N pods — a sandbox (the pause image) and one busybox `sleep
// 3600` container, network none — started in one burst and removed again, through
//   - kubelet-ts: N manifests written at once into an in-process agent's manifest directory
//     (2 worker threads, network plugin none), until a watch client saw every pod Running and
//     ready; removed: the files deleted, until Docker lists none of the node's containers;
//   - the raw floor: dockerode creating and starting the pairs itself (bench/raw-floor.ts);
//   - `podman kube play --network none` of one file with the N pods, until it exits (it returns
//     once every container started), removed by `podman kube down`; podman's infra container is
//     the same pause image, and the command is `/bin/sleep` (podman adds no default PATH for an
//     image without one);
//   - `docker-compose up -d` of 2N services (pause with network none and shareable IPC; busybox in
//     its network and IPC namespaces), until it exits, removed by `docker-compose down -t 0`, with
//     COMPOSE_PARALLEL_LIMIT above the number of services (the default, 64, deadlocks past 64 pairs);
// interleaved in that order, --reps times, best of each, with each one's ratio to the best floor;
// each run begins once the last one's teardown is over (bench/lib.ts settle). A run that fails (a
// peer's command timing out under the load the bench made) is that peer's failure, in the table and
// the JSON, cleared up, and the bench goes on (bench/peer-plan.ts).
// podman and docker-compose are used where installed; `--install` installs the missing ones with
// apt-get first (root, the package registries). Tests never need them.
//
// On this machine's kernel the process lacks CAP_SYS_RESOURCE and podman's default rlimits
// (nofile 1048576, nproc = the host's) cannot be set in a container, so podman runs with its own
// containers.conf (CONTAINERS_CONF) giving nofile 1024 and nproc 4096, and the pause infra image.
// Only what this run created is removed: pods and services are named after the run id.
//
//   npm run bench -- peers [--pods 100] [--reps 2] [--raw-concurrency 8] [--install]
import { parseArgs } from 'node:util';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import {
  kBusybox,
  kPause,
  netnsBaselineAfterCollection,
  podYaml,
  positiveInt,
  progress,
  settle,
  startBenchAgent,
  table,
  waitUntil,
  writeResult,
} from './lib.js';
import { peerReport, runPeerPlan, type PeerRun, type PlannedPeer } from './peer-plan.js';
import { rawFloor, removeByLabel } from './raw-floor.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    reps: { type: 'string', default: '2' },
    'raw-concurrency': { type: 'string', default: '8' },
    install: { type: 'boolean', default: false },
  },
});
const N = positiveInt('pods', args.pods);
const reps = positiveInt('reps', args.reps);
const concurrency = positiveInt('raw-concurrency', args['raw-concurrency']);
const run = promisify(execFile);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });
await docker.ping().catch((err: unknown) => {
  throw new Error(`bench peers: Docker does not answer on /var/run/docker.sock (${(err as Error).message}); start it with tools/up`);
});
const runId = randomBytes(3).toString('hex');
const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-peers-'));

/** has: whether `cmd` runs (`cmd --version` exits 0). */
const has = (cmd: string) =>
  run(cmd, ['--version']).then(
    () => true,
    () => false,
  );

if (args.install) {
  const toInstall: string[] = [];
  for (const pkg of ['podman', 'docker-compose']) if (!(await has(pkg))) toInstall.push(pkg); // command = package name
  if (toInstall.length > 0) {
    process.stderr.write(`installing ${toInstall.join(', ')} with apt-get …\n`);
    await run('apt-get', ['install', '-y', '--no-install-recommends', ...toInstall], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      maxBuffer: 64 << 20,
    });
  }
}
const havePodman = await has('podman');
const haveCompose = await has('docker-compose');

/** A peer's single command may take this long (milliseconds) before it is killed and the bench fails. */
const kPeerCommandTimeoutMs = 15 * 60_000;

/**
 * exec runs `cmd args` to its end; resolves with milliseconds taken.
 * @throws with its stderr when it exits non-zero, or is killed after kPeerCommandTimeoutMs.
 */
function exec(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: kPeerCommandTimeoutMs });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString('utf8')).slice(-4000);
    });
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0
        ? resolve(performance.now() - t0)
        : reject(
            new Error(
              `${cmd} ${argv.join(' ')} ${signal ? `killed by ${signal} (limit ${kPeerCommandTimeoutMs / 60_000} min)` : `exited ${code}`}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`,
            ),
          ),
    );
  });
}

/** kubelet-ts: N manifests in one burst; removal until Docker lists none of the node's containers. */
async function agentRun(): Promise<PeerRun> {
  const b = await startBenchAgent('peers', { workers: 2, syncFrequencyMs: 60_000, networkPlugin: 'none' });
  try {
    await settle({ netnsBaseline }); // after the agent's own start, as every other peer's run settles before it begins
    const t0 = performance.now();
    await Promise.all(Array.from({ length: N }, (_, i) => b.write(`peers-${i}.yaml`, podYaml(`peers-${i}`))));
    await waitUntil('kubelet-ts: pods Running', N, () => b.times.running.size);
    const allRunningMs = performance.now() - t0;
    const t1 = performance.now();
    await Promise.all(Array.from({ length: N }, (_, i) => b.remove(`peers-${i}.yaml`)));
    await waitUntil('kubelet-ts: pods removed', N, () => b.times.removed.size);
    // The watch's DELETED may come before the last container is gone: wait for Docker to list none.
    const label = `kubelet-ts.node-name=${b.nodeName}`;
    while ((await docker.listContainers({ all: true, filters: { label: [label] } })).length > 0)
      await new Promise((r) => setTimeout(r, 100));
    return { allRunningMs, allRemovedMs: performance.now() - t1 };
  } finally {
    await b.stop();
    await removeByLabel(docker, `kubelet-ts.node-name=${b.nodeName}`);
  }
}

const podmanName = (i: number) => `bench-peers-${runId}-${i}`;
const podmanConf = join(dir, 'containers.conf');
const podmanFile = join(dir, 'pods.yaml');
const podmanEnv = { ...process.env, CONTAINERS_CONF: podmanConf };

/** podman's image store gets the bench images from Docker's (docker save | podman load) when it lacks them. */
async function preparePodman(): Promise<void> {
  for (const image of [kPause, kBusybox]) {
    if (
      await run('podman', ['image', 'exists', `localhost/${image}`]).then(
        () => true,
        () => false,
      )
    )
      continue;
    await new Promise<void>((resolve, reject) => {
      const save = spawn('docker', ['save', image], { stdio: ['ignore', 'pipe', 'inherit'] });
      const load = spawn('podman', ['load', '-q'], { stdio: ['pipe', 'ignore', 'inherit'] });
      save.stdout.pipe(load.stdin);
      load.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`docker save ${image} | podman load exited ${code}`))));
    });
  }
  await writeFile(
    podmanConf,
    `[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]\n[engine]\ninfra_image = "localhost/${kPause}"\ninfra_command = "/pause"\n`,
  );
  const pods = Array.from(
    { length: N },
    (_, i) => `apiVersion: v1
kind: Pod
metadata: {name: ${podmanName(i)}, labels: {kubelet-ts.bench: "${runId}"}}
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "localhost/${kBusybox}", imagePullPolicy: Never, command: ["/bin/sleep", "3600"]}]
`,
  );
  await writeFile(podmanFile, pods.join('---\n'));
}

/** The names of this run's podman pods that exist now. */
async function podmanPods(): Promise<string[]> {
  const { stdout } = await run('podman', ['pod', 'ps', '--filter', `name=bench-peers-${runId}-`, '--format', '{{.Name}} {{.Status}}'], {
    env: podmanEnv,
  });
  return stdout.split('\n').filter(Boolean);
}

async function podmanRun(): Promise<PeerRun> {
  process.stderr.write(`podman kube play: ${N} pods …\n`);
  const allRunningMs = await exec('podman', ['kube', 'play', '--network', 'none', '--quiet', podmanFile], podmanEnv);
  const running = (await podmanPods()).filter((l) => l.endsWith(' Running')).length;
  if (running !== N) throw new Error(`podman kube play exited 0 but ${running}/${N} pods are Running`);
  const allRemovedMs = await exec('podman', ['kube', 'down', podmanFile], podmanEnv);
  return { allRunningMs, allRemovedMs };
}

const composeProject = `kts-peers-${runId}`;
const composeFile = join(dir, 'docker-compose.yml');
/**
 * docker-compose 1.x runs at most COMPOSE_PARALLEL_LIMIT (64) operations at once, and a container
 * waiting for the service whose namespaces it joins holds its slot: with more than 64 such pairs
 * `up` deadlocks (here: 30 of 200 containers created, then nothing for minutes). A limit above
 * the number of services lets every pair through; compose's own per-service ordering remains.
 */
const composeEnv = { ...process.env, COMPOSE_PARALLEL_LIMIT: String(2 * N + 8) };

async function prepareCompose(): Promise<void> {
  const services = Array.from({ length: N }, (_, i) =>
    [
      `  p${i}-pause: {image: "${kPause}", network_mode: none, ipc: shareable, labels: {kubelet-ts.bench: "${runId}"}}`,
      `  p${i}-main: {image: "${kBusybox}", command: ["sleep", "3600"], network_mode: "service:p${i}-pause", ipc: "service:p${i}-pause", labels: {kubelet-ts.bench: "${runId}"}}`,
    ].join('\n'),
  );
  await writeFile(composeFile, `version: "2.4"\nservices:\n${services.join('\n')}\n`);
}

async function composeRun(): Promise<PeerRun> {
  process.stderr.write(`docker-compose up: ${N} pods (${2 * N} services) …\n`);
  const allRunningMs = await exec('docker-compose', ['-p', composeProject, '-f', composeFile, 'up', '-d'], composeEnv);
  const running = (await docker.listContainers({ filters: { label: [`com.docker.compose.project=${composeProject}`] } })).length;
  if (running !== 2 * N) throw new Error(`docker-compose up exited 0 but ${running}/${2 * N} containers are running`);
  const allRemovedMs = await exec('docker-compose', ['-p', composeProject, '-f', composeFile, 'down', '-t', '0'], composeEnv);
  return { allRunningMs, allRemovedMs };
}

const skipped: string[] = [];
// Every timed run first waits for the last one's teardown (bench/lib.ts settle).
const netnsBaseline = await netnsBaselineAfterCollection();
const removePodmanPods = async () => {
  const left = (await podmanPods().catch(() => [])).map((l) => l.split(' ')[0]);
  if (left.length > 0) await run('podman', ['pod', 'rm', '-f', ...left], { env: podmanEnv });
};
const composeDown = async () =>
  void (await run('docker-compose', ['-p', composeProject, '-f', composeFile, 'down', '-t', '0'], { env: composeEnv }));
const plan: PlannedPeer[] = [
  { name: 'kubelet-ts', run: agentRun }, // agentRun stops its agent and removes its containers itself
  {
    name: 'raw floor',
    run: (): Promise<PeerRun> => rawFloor(docker, N, concurrency, runId),
    cleanup: async () => void (await removeByLabel(docker, `kubelet-ts.bench=${runId}`)),
  },
];
if (havePodman) plan.push({ name: 'podman kube play', run: podmanRun, cleanup: removePodmanPods });
else skipped.push('podman (not installed; --install installs it)');
if (haveCompose) plan.push({ name: 'docker-compose up', run: composeRun, cleanup: composeDown });
else skipped.push('docker-compose (not installed; --install installs it)');

try {
  if (havePodman) await preparePodman();
  if (haveCompose) await prepareCompose();
  const bar = progress('peers: runs', reps * plan.length);
  let done = 0;
  const outcomes = await runPeerPlan(plan, reps, {
    before: async (peer, rep) => {
      process.stderr.write(`rep ${rep}/${reps}: ${peer}\n`);
      if (peer !== 'kubelet-ts') await settle({ netnsBaseline });
    },
    after: () => bar.update(++done),
  });
  bar.end();
  const report = peerReport(outcomes, 'raw floor');
  console.log(
    `\npeers: ${N} pods (sandbox + 1 container each, network none), burst, best of ${reps}, raw floor at concurrency ${concurrency}, ${new Date().toISOString()}`,
  );
  console.log(table(report.rows));
  for (const s2 of skipped) console.log(`skipped: ${s2}`);
  const failures = [...outcomes].flatMap(([peer, o]) => o.failures.map((f) => `failed: ${peer}, rep ${f.rep}: ${f.error}`));
  for (const f of failures) console.log(f);
  const file = writeResult('peers', {
    date: new Date().toISOString(),
    pods: N,
    reps,
    rawConcurrency: concurrency,
    peers: report.peers,
    skipped,
  });
  console.log(`results: ${file}`);
} finally {
  await removeByLabel(docker, `kubelet-ts.bench=${runId}`);
  if (havePodman) await removePodmanPods().catch(() => {});
  if (haveCompose) await composeDown().catch(() => {});
  await rm(dir, { recursive: true, force: true });
}

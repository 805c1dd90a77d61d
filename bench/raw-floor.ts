// The raw Docker floor of the density and peers benches: dockerode itself creating and starting N
// sandbox + container pairs — the pause image with network none, then busybox `sleep 3600` joined
// to its network and IPC namespaces, 4 Engine API calls a pair — `concurrency` pairs at a time
// (rawFloor) or begun at a paced rate (rawFloorPaced), then removing them. What no node agent on
// this engine can beat; a bench's ratio is to it.
import type Docker from 'dockerode';
import type { PairShape } from './floor-settings.js';
import { onInterrupt } from './interrupt.js';
import { kBusybox, kPause, pool, progress, sleepUntil, summary } from './lib.js';

/**
 * RawFloorRun: one floor run, milliseconds from the first create to the first and to the last
 * start, and to every container removed; with `engineCpu`, the engine's CPU per pair started
 * (ms), else NaN; and this process's CPU per pair started (ms: dockerode's requests and
 * responses, the floor's client cost).
 */
export interface RawFloorRun {
  concurrency: number;
  /** Milliseconds from the first create to the first pair's container started (how long the pipeline takes to fill). */
  firstRunningMs: number;
  allRunningMs: number;
  allRemovedMs: number;
  engineCpuMsPerPod: number;
  clientCpuMsPerPod: number;
}

/**
 * removeByLabel force-removes every container (running or not) with `label` (`key=value`),
 * `concurrency` (default 16) at a time, and resolves with how many there were. Errors of single
 * removes are ignored (already gone). Bounded because on 2026-12-06 the shared dockerd (20.10.24)
 * wedged under 100 force-removes of running pairs at once: 73 removes waited for ever on the kill's
 * exit, and every list call behind them. Never rejects: when the list itself fails (dockerd gone or
 * restarting: on 2026-12-07 a density run died there, after its timed runs, and lost their figures),
 * it says so on stderr, naming the label whose containers may be left, and resolves with NaN.
 */
export async function removeByLabel(docker: Docker, label: string, concurrency = 16): Promise<number> {
  let list: Docker.ContainerInfo[];
  try {
    list = await docker.listContainers({ all: true, filters: { label: [label] } });
  } catch (err) {
    process.stderr.write(
      `bench: could not list the containers labelled ${label} to remove them (${(err as Error).message}); any left are the bench's: remove them with docker rm -f $(docker ps -aq --filter label=${label})\n`,
    );
    return NaN;
  }
  await pool(list, concurrency, (c) =>
    docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {}),
  );
  return list.length;
}

/**
 * startPair makes and starts one pair as the floor does, named `<name>-POD` and `<name>-main`: 4
 * Engine API calls one after the other. With `shape` (bench/floor-settings.ts; `i` is the pair's
 * index), the pair also asks for those of the kubelet's settings (and inspects each container after its start).
 */
export async function startPair(docker: Docker, name: string, label: Record<string, string>, shape?: PairShape, i = 0): Promise<void> {
  const sx = shape?.sandbox(i);
  const sandbox = await docker.createContainer({
    name: `${name}-POD`,
    Image: kPause,
    Labels: { ...sx?.Labels, ...label },
    HostConfig: { NetworkMode: 'none', IpcMode: 'shareable', ...sx?.HostConfig },
  });
  await sandbox.start();
  if (shape?.inspect) await sandbox.inspect();
  const cx = shape?.container(i);
  const app = await docker.createContainer({
    name: `${name}-main`,
    Image: kBusybox,
    Cmd: ['sleep', '3600'],
    Labels: { ...cx?.Labels, ...label },
    HostConfig: { NetworkMode: `container:${sandbox.id}`, IpcMode: `container:${sandbox.id}`, ...cx?.HostConfig },
  });
  await app.start();
  if (shape?.inspect) await app.inspect();
}

/**
 * rawFloor starts `pods` pairs at `concurrency`, labelled `kubelet-ts.bench=<runId>` and named
 * `bench-raw-<runId>-<concurrency>-<i>-POD|main`, with a progress line, then removes them.
 * `engineCpu` (optional) opens a window on the engine's CPU (bench/lib.ts engineCpuWindow) before
 * the first create; it is read after the last start. `setting` (its name and PairShape,
 * bench/floor-settings.ts) makes the pairs ask for more than the bare floor's; named
 * `bench-raw-<runId>-<setting>-<concurrency>-<i>` then.
 * @throws what dockerode throws for a create or start (the caller removes by the label).
 */
export async function rawFloor(
  docker: Docker,
  pods: number,
  concurrency: number,
  runId: string,
  engineCpu?: () => () => number,
  setting?: { name: string; shape: PairShape },
): Promise<RawFloorRun> {
  const label = { 'kubelet-ts.bench': runId };
  const unregister = onInterrupt(() => removeByLabel(docker, `kubelet-ts.bench=${runId}`));
  const bar = progress(`raw dockerode${setting ? ` + ${setting.name}` : ''} (concurrency ${concurrency}): pairs started`, pods);
  let done = 0;
  let firstRunningMs = NaN;
  const engineSince = engineCpu?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const one = (i: number) =>
    startPair(docker, `bench-raw-${runId}-${setting ? `${setting.name}-` : ''}${concurrency}-${i}`, label, setting?.shape, i);
  await pool(
    Array.from({ length: pods }, (_, i) => i),
    concurrency,
    async (i) => {
      await one(i);
      if (done === 0) firstRunningMs = performance.now() - t0;
      bar.update(++done);
    },
  );
  const allRunningMs = performance.now() - t0;
  const engineCpuMsPerPod = ((engineSince?.() ?? NaN) * 1000) / pods;
  const cpu = process.cpuUsage(cpu0);
  const clientCpuMsPerPod = (cpu.user + cpu.system) / 1000 / pods;
  bar.end();
  const t1 = performance.now();
  await removeByLabel(docker, `kubelet-ts.bench=${runId}`);
  unregister();
  return { concurrency, firstRunningMs, allRunningMs, allRemovedMs: performance.now() - t1, engineCpuMsPerPod, clientCpuMsPerPod };
}

/** PacedFloorRun: a paced floor run (rawFloorPaced): as RawFloorRun, with each pair's startup (ms from when it was due to its container started). */
export interface PacedFloorRun extends RawFloorRun {
  startupMs: ReturnType<typeof summary>;
}

/**
 * rawFloorPaced is the floor of a paced run: pair i is begun at `i / rate` seconds, however many
 * are still under way (as pods arrive at the agent), and its startup is the milliseconds from then
 * to its container's start. Names `bench-raw-<runId>-paced-<i>-POD|main`, the same label as
 * rawFloor; removes them after. `concurrency` in the result is 0 (unbounded).
 * @throws what dockerode throws for a create or start (the caller removes by the label).
 */
export async function rawFloorPaced(
  docker: Docker,
  pods: number,
  rate: number,
  runId: string,
  engineCpu?: () => () => number,
): Promise<PacedFloorRun> {
  const label = { 'kubelet-ts.bench': runId };
  const unregister = onInterrupt(() => removeByLabel(docker, `kubelet-ts.bench=${runId}`));
  const bar = progress(`raw dockerode (paced at ${rate} pairs/s): pairs started`, pods);
  const latencies: number[] = [];
  let firstRunningMs = NaN;
  const engineSince = engineCpu?.();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const started: Promise<void>[] = [];
  // The first failure, kept at once (a rejection left alone while the loop waits would be unhandled) and thrown after.
  let failure: { err: unknown } | undefined;
  for (let i = 0; i < pods && !failure; i++) {
    const due = t0 + (i * 1000) / rate;
    await sleepUntil(due);
    started.push(
      startPair(docker, `bench-raw-${runId}-paced-${i}`, label).then(
        () => {
          if (latencies.length === 0) firstRunningMs = performance.now() - t0;
          latencies.push(performance.now() - due);
          bar.update(latencies.length);
        },
        (err: unknown) => {
          failure ??= { err };
        },
      ),
    );
  }
  await Promise.all(started);
  if (failure) {
    bar.end();
    throw failure.err;
  }
  const allRunningMs = performance.now() - t0;
  const engineCpuMsPerPod = ((engineSince?.() ?? NaN) * 1000) / pods;
  const cpu = process.cpuUsage(cpu0);
  bar.end();
  const t1 = performance.now();
  await removeByLabel(docker, `kubelet-ts.bench=${runId}`);
  unregister();
  return {
    concurrency: 0,
    firstRunningMs,
    allRunningMs,
    allRemovedMs: performance.now() - t1,
    engineCpuMsPerPod,
    clientCpuMsPerPod: (cpu.user + cpu.system) / 1000 / pods,
    startupMs: summary(latencies),
  };
}

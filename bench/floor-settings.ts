// The kubelet's per-container settings, one at a time, on the raw floor's pairs (issue #42 item 2):
// what each one costs the Docker engine. A floor pair (bench/raw-floor.ts startPair) is the bare
// minimum: pause with network none, busybox joined to it, 4 Engine calls. The agent's pair asks for
// more (test/workers/runtime/docker/fixtures/syncer-create-specs.json holds its bodies):
//   binds    the app container's three file binds: /etc/hosts, /etc/resolv.conf, /dev/termination-log
//            (pkg/kubelet/kubelet_pods.go makeMounts: etc-hosts and the termination message path; the
//            pod's resolv.conf bound by dockershim when the sandbox had a dns_config)
//   cgroup   a pod cgroup parent for both (pkg/kubelet/cm/pod_container_manager_linux.go: /kubepods/<qos>/pod<uid>;
//            the cgroupfs driver, so runc makes the directories)
//   log      json-file rotation options on both (--container-log-max-size / --container-log-max-files)
//   labels   the kubelet's labels and annotations on both (dockershim labels.go makeLabels)
//   oom      oom_score_adj on both (-998 for the sandbox, 1000 for a BestEffort container: pkg/kubelet/qos/policy.go;
//            never below the engine's floor, src/workers/runtime/docker/oom-score-floor.ts, as the agent)
//   inspect  a read-back inspect of each container after its start (6 Engine calls a pair)
//   agent    all of the above
// `bench density --floor-settings binds,cgroup,log,…` runs a floor pair of each, interleaved with a
// bare one (`none`) at the same concurrency in each rep, and prints the engine's CPU per pair of each
// against the bare one's (medians over the reps). Not used by src/ or by tests.
import { mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The settings `--floor-settings` takes (`none` is the bare floor pair). */
export const kFloorSettingNames = ['none', 'binds', 'cgroup', 'log', 'labels', 'oom', 'inspect', 'agent'] as const;
export type FloorSettingName = (typeof kFloorSettingNames)[number];

/** PairShape: what a floor pair asks Docker for besides the bare pair's bodies. */
export interface PairShape {
  /** Merged into the sandbox's create body (HostConfig merged into its HostConfig). */
  sandbox(i: number): { HostConfig?: Record<string, unknown>; Labels?: Record<string, string> };
  /** Merged into the app container's create body. */
  container(i: number): { HostConfig?: Record<string, unknown>; Labels?: Record<string, string> };
  /** An inspect of each container after its start. */
  inspect: boolean;
}

/** parseFloorSettings: the names of `--floor-settings` (comma separated). @throws Error naming the unknown one. */
export function parseFloorSettings(list: string): FloorSettingName[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(kFloorSettingNames as readonly string[]).includes(n))
      throw new Error(`--floor-settings: unknown setting "${n}" (one of ${kFloorSettingNames.join(', ')})`);
  return names as FloorSettingName[];
}

const kLogConfig = { Type: 'json-file', Config: { 'max-size': '10485760', 'max-file': '5' } };

/** The kubelet's labels of a pod's containers (values shaped as the agent's; the bench's pods are BestEffort). */
function kubeletLabels(runId: string, i: number, container: string, type: 'podsandbox' | 'container'): Record<string, string> {
  return {
    'io.kubernetes.pod.name': `density-${i}`,
    'io.kubernetes.pod.namespace': 'default',
    'io.kubernetes.pod.uid': `${runId}-uid-${i}`,
    'annotation.io.kubernetes.pod.terminationGracePeriod': '1',
    'kubelet-ts.node-name': `bench-floor-${runId}`,
    'io.kubernetes.container.name': container,
    'io.kubernetes.docker.type': type,
    'annotation.io.kubernetes.container.hash': 'e85a0cbe',
    'annotation.io.kubernetes.container.restartCount': '0',
    ...(type === 'container'
      ? {
          'annotation.io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
          'annotation.io.kubernetes.container.terminationMessagePolicy': 'File',
        }
      : {}),
  };
}

/**
 * FloorSettingsRun: the files and cgroups of one run of a setting; `shape` is what its pairs ask for.
 * `cleanUp` removes the pairs' files and (after the pairs are removed) their pod cgroups.
 */
export interface FloorSettingsRun {
  shape: PairShape;
  cleanUp(): void;
}

/**
 * floorSettings: the PairShape of `name` for the pairs of run `runId` (their files under `dir`,
 * made here, hosts / resolv.conf / termination log per pair, as the agent writes them per pod);
 * `oomFloor` the lowest oom_score_adj the engine can set from here (oom-score-floor.ts).
 */
export function floorSettings(name: FloorSettingName, runId: string, dir: string, oomFloor: number): FloorSettingsRun {
  const has = (s: FloorSettingName) => name === s || name === 'agent';
  const cgroupRoot = `/kts-bench-${runId}`;
  const podDir = (i: number) => join(dir, `pod-${i}`);
  const binds = (i: number) => {
    const d = podDir(i);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'etc-hosts'), `127.0.0.1\tlocalhost\n::1\tlocalhost\n10.0.0.${i % 250}\tdensity-${i}\n`);
    writeFileSync(join(d, 'resolv.conf'), 'nameserver 127.0.0.53\nsearch default.svc.cluster.local\noptions ndots:5\n');
    writeFileSync(join(d, 'termination-log'), '');
    return [`${d}/etc-hosts:/etc/hosts`, `${d}/resolv.conf:/etc/resolv.conf`, `${d}/termination-log:/dev/termination-log`];
  };
  const hostConfig = (i: number, oomScoreAdj: number, withBinds: boolean) => ({
    ...(has('cgroup') ? { CgroupParent: `${cgroupRoot}/besteffort/pod${runId}-uid-${i}` } : {}),
    ...(has('log') ? { LogConfig: kLogConfig } : {}),
    ...(has('oom') ? { OomScoreAdj: Math.max(oomScoreAdj, oomFloor) } : {}),
    ...(withBinds && has('binds') ? { Binds: binds(i) } : {}),
  });
  return {
    shape: {
      sandbox: (i) => ({
        HostConfig: hostConfig(i, -998, false),
        ...(has('labels') ? { Labels: kubeletLabels(runId, i, 'POD', 'podsandbox') } : {}),
      }),
      container: (i) => ({
        HostConfig: hostConfig(i, 1000, true),
        ...(has('labels') ? { Labels: kubeletLabels(runId, i, 'main', 'container') } : {}),
      }),
      inspect: has('inspect'),
    },
    cleanUp() {
      rmSync(dir, { recursive: true, force: true });
      if (has('cgroup')) removeCgroups(cgroupRoot);
    },
  };
}

/** removeCgroups: rmdir of `path` (and its sub-groups, deepest first) under every cgroup v1 controller and the v2 root, where present and empty. */
function removeCgroups(path: string): void {
  const roots = ['/sys/fs/cgroup'];
  try {
    for (const e of readdirSync('/sys/fs/cgroup', { withFileTypes: true })) if (e.isDirectory()) roots.push(join('/sys/fs/cgroup', e.name));
  } catch {
    return;
  }
  const rm = (d: string): void => {
    try {
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) rm(join(d, e.name));
      rmdirSync(d);
    } catch {
      /* absent under this controller, or still busy */
    }
  };
  for (const r of roots) rm(join(r, path));
}

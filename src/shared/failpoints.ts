/**
 * Counterpart of etcd's gofail failpoints (go.etcd.io/gofail: `GOFAIL_FAILPOINTS` names the points
 * that fire), cut down to the one action a crash test needs: at a named step of a sync or of an
 * intake write, the whole process is killed with SIGKILL, as `kill -9` would at that instant.
 * A test-only hook (docs/contracts.md "Failpoints"): the fault suite (test/e2e/faults.docker.test.ts)
 * starts an agent process with `KUBELET_TS_FAILPOINTS=<name>[,<name>…]`, lets it die there, and
 * checks what a restart on the same root dir makes of it.
 *
 * The variable is read once, when this module is first loaded in a thread (worker threads inherit
 * the process's environment). Unset (every real run), {@link failpoint} is one comparison of a
 * constant: no lookup, no allocation. Safe in any thread: `process.kill(process.pid)` from a worker
 * thread kills the whole process, not just the thread.
 */

/**
 * kFailpointNames: every failpoint, in the order a pod goes through them.
 * - `before-intake-write` / `after-intake-write`: POST/PUT /pods, before the intake files' temp
 *   files are written / after they are renamed into place and the directory fsynced, before the
 *   pods are handed to the sync loop (config/source-intake.ts).
 * - `before-intake-reply`: the update was handled by the sync loop, before the 201/200 is sent
 *   (intake-api.ts).
 * - `before-sandbox-create`, `after-sandbox-create` (created, not started), `after-sandbox-start`:
 *   RunPodSandbox on Docker (workers/runtime/docker/docker-sandbox.ts); `before-container-create`,
 *   `after-container-create` (created, not started), `after-container-start`: the steps of syncPod
 *   on a worker thread (workers/kuberuntime/sync-pod.ts).
 * - `before-network-setup` (the sandbox runs, no CNI ADD yet), `after-network-setup` (ADD done):
 *   the pod network's ADD in RunPodSandbox on Docker (issue 13).
 */
export const kFailpointNames = [
  'before-intake-write',
  'after-intake-write',
  'before-intake-reply',
  'before-sandbox-create',
  'after-sandbox-create',
  'after-sandbox-start',
  'before-network-setup',
  'after-network-setup',
  'before-container-create',
  'after-container-create',
  'after-container-start',
] as const;

/** FailpointName: one of {@link kFailpointNames}. */
export type FailpointName = (typeof kFailpointNames)[number];

/** kFailpointsEnv: the environment variable that names the active failpoints (comma-separated). */
export const kFailpointsEnv = 'KUBELET_TS_FAILPOINTS';

/**
 * parseFailpoints reads a `KUBELET_TS_FAILPOINTS` value: names separated by commas, blanks ignored.
 * Pure.
 * @throws Error naming the variable and the unknown name, for a name not in {@link kFailpointNames}
 *   (a typo must not make a crash test pass by never crashing).
 */
export function parseFailpoints(value: string | undefined): ReadonlySet<FailpointName> {
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const n of names) {
    if (!(kFailpointNames as readonly string[]).includes(n)) {
      throw new Error(`${kFailpointsEnv}: unknown failpoint ${JSON.stringify(n)} (known: ${kFailpointNames.join(', ')})`);
    }
  }
  return new Set(names as FailpointName[]);
}

const kActive: ReadonlySet<FailpointName> | undefined = process.env[kFailpointsEnv]
  ? parseFailpoints(process.env[kFailpointsEnv])
  : undefined;

/**
 * failpoint: kills the process with SIGKILL when `name` is active (named in `KUBELET_TS_FAILPOINTS`
 * at start), else returns at once. Never returns when it fires.
 */
export function failpoint(name: FailpointName): void {
  if (kActive !== undefined && kActive.has(name)) process.kill(process.pid, 'SIGKILL');
}

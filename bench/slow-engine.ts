// A Docker engine of the bench's own, slowed: a dockerd started by test/support/own-dockerd.ts (own
// data root, exec root and socket; never the shared one), with it and its containerd moved into a
// cgroup v1 `cpu` group whose CFS quota is `cpus` cores. Children they start afterwards (shims,
// runc) inherit the group; the containers' own processes go to their own cgroups as usual. So the
// engine's work per container is done on `cpus` cores — the slow engine of issue #16, on which the
// adaptive Docker admission must find a lower knee. Without `cpus` (density --private-engine) the
// same engine uncapped: a dockerd nobody else uses, so its CPU per pod start (engineCpu, from /proc:
// its dockerd, its containerd and the shims naming its containerd's socket) is the bench's alone.
// Not used by src/ or by tests.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startOwnDockerd, type OwnDockerd } from '../test/support/own-dockerd.js';
import { engineCpuWindowOf } from './lib.js';

const kCpuRoot = '/sys/fs/cgroup/cpu';

/** SlowEngine: the engine's socket path, and how to remove it with everything it holds. */
export interface SlowEngine {
  socketPath: string;
  own: OwnDockerd;
  /** Opens a window on this engine's CPU (bench/lib.ts engineCpuWindowOf): its reader gives the seconds used since. */
  engineCpu(): () => number;
  /** Moves its processes back to the root group, removes the group, the daemon and its directories. */
  remove(): Promise<void>;
}

/**
 * startSlowEngine starts an own dockerd limited to `cpus` cores (e.g. 0.5); without `cpus`, not limited.
 * @throws Error when cgroup v1's cpu controller is not at /sys/fs/cgroup/cpu (with `cpus`), or dockerd cannot start.
 */
export async function startSlowEngine(cpus?: number): Promise<SlowEngine> {
  if (cpus !== undefined && !existsSync(join(kCpuRoot, 'cpu.cfs_quota_us')))
    throw new Error(`--engine-cpus needs cgroup v1's cpu controller at ${kCpuRoot}`);
  const own = await startOwnDockerd({ liveRestore: false });
  const containerdDir = join(own.dir, 'exec', 'containerd');
  const engineCpu = () =>
    engineCpuWindowOf({
      dockerdPidFile: join(own.dir, 'docker.pid'),
      containerdPidFile: join(containerdDir, 'containerd.pid'),
      shimAddress: join(containerdDir, 'containerd.sock'),
    });
  if (cpus === undefined) return { socketPath: join(own.dir, 'docker.sock'), own, engineCpu, remove: () => own.remove() };
  const group = join(kCpuRoot, `kts-bench-engine-${randomBytes(3).toString('hex')}`);
  const pids = () =>
    [own.pid(), Number(readFileSync(join(own.dir, 'exec', 'containerd', 'containerd.pid'), 'utf8').trim())].filter(
      (p): p is number => Number.isInteger(p) && p! > 0,
    );
  try {
    mkdirSync(group);
    writeFileSync(join(group, 'cpu.cfs_period_us'), '100000');
    writeFileSync(join(group, 'cpu.cfs_quota_us'), String(Math.round(cpus * 100_000)));
    for (const pid of pids()) writeFileSync(join(group, 'cgroup.procs'), String(pid));
  } catch (err) {
    await own.remove();
    throw err;
  }
  return {
    socketPath: join(own.dir, 'docker.sock'),
    own,
    engineCpu,
    async remove() {
      // Lift the quota first so the teardown is not slowed, then move everything out and remove the group.
      try {
        writeFileSync(join(group, 'cpu.cfs_quota_us'), '-1');
        for (const pid of readFileSync(join(group, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
          try {
            writeFileSync(join(kCpuRoot, 'cgroup.procs'), pid);
          } catch {
            /* gone */
          }
        }
      } catch {
        /* group already gone */
      }
      await own.remove();
      try {
        rmdirSync(group);
      } catch {
        /* already gone */
      }
    },
  };
}

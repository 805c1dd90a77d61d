// Test harness: a dockerd of the test's own (own --data-root, --exec-root, socket and pid file, and
// the containerd it starts under its exec root), so a test can stop and restart a Docker engine
// without touching the shared one at /var/run/docker.sock. Stopped only by its own PIDs.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { BUSYBOX_IMAGE, PAUSE_IMAGE, waitFor } from './docker.js';

/** OwnDockerd: one dockerd this test started, with its directories under one temp dir. */
export interface OwnDockerd {
  /** The temp dir holding `data/`, `exec/`, `docker.sock`, `docker.pid`, `dockerd.log`. */
  dir: string;
  /** `unix://<dir>/docker.sock`, for `--docker-endpoint`. */
  endpoint: string;
  /** A dockerode client of this daemon. */
  docker: Docker;
  /** True when it runs with `--live-restore`. */
  liveRestore: boolean;
  /** The PID of the running dockerd, or undefined while stopped. */
  pid(): number | undefined;
  /** SIGTERM to its PID (SIGKILL after 60 s), resolves once it exited. */
  stop(): Promise<void>;
  /** Starts it again on the same directories; resolves once it answers /_ping. */
  start(): Promise<void>;
  /**
   * remove: force-removes every container of this daemon (all are the test's), stops it, stops the
   * containerd it left behind (`--live-restore` keeps that one running), unmounts anything left
   * under its directories and deletes them. Idempotent.
   */
  remove(): Promise<void>;
}

/** dockerdAvailable: the `dockerd` binary is on PATH and we are root (it needs to mount). */
export function dockerdAvailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'dockerd of our own needs root';
  try {
    execFileSync('dockerd', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no dockerd binary on PATH';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function pidFromFile(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function waitGone(pid: number, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(() => !alive(pid), { timeoutMs, intervalMs: 200, description: `process ${pid} to exit` });
    return true;
  } catch {
    return false;
  }
}

/**
 * startOwnDockerd starts `dockerd --data-root <tmp>/data --exec-root <tmp>/exec --host
 * unix://<tmp>/docker.sock --pidfile <tmp>/docker.pid --bridge=none --iptables=false
 * --ip-masq=false [--live-restore]`. Without `--containerd` it starts a containerd of its own under
 * `<tmp>/exec/containerd` (its own socket, state and shims), so it never meets the shared engine's.
 * Then copies {@link PAUSE_IMAGE} and {@link BUSYBOX_IMAGE} into it (`docker save` from the shared
 * daemon piped into `docker load`). Resolves once both are there.
 * @throws Error with the tail of dockerd's log when it does not answer within 60 s.
 */
export async function startOwnDockerd(options: { liveRestore: boolean }): Promise<OwnDockerd> {
  const dir = await mkdtemp(join(tmpdir(), 'kts-dockerd-'));
  const sock = join(dir, 'docker.sock');
  const pidFile = join(dir, 'docker.pid');
  const logFile = join(dir, 'dockerd.log');
  const endpoint = `unix://${sock}`;
  const client = new Docker({ socketPath: sock });
  let child: ChildProcess | undefined;

  const start = async () => {
    const fd = openSync(logFile, 'a');
    const args = [
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      join(dir, 'exec'),
      '--host',
      endpoint,
      '--pidfile',
      pidFile,
      '--bridge=none',
      '--iptables=false',
      '--ip-masq=false',
      ...(options.liveRestore ? ['--live-restore'] : []),
    ];
    child = spawn('dockerd', args, { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    const started = child;
    try {
      await waitFor(
        async () => {
          if (started.exitCode !== null) throw new Error(`dockerd exited with ${started.exitCode}`);
          try {
            await client.ping();
            return true;
          } catch {
            return false;
          }
        },
        { timeoutMs: 60_000, intervalMs: 200, description: `dockerd on ${sock}` },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; dockerd.log: ${readFileSync(logFile, 'utf8').slice(-1500)}`);
    }
  };
  const stopPid = async (pid: number | undefined) => {
    if (pid === undefined || !alive(pid)) return;
    process.kill(pid, 'SIGTERM');
    if (!(await waitGone(pid, 60_000))) {
      process.kill(pid, 'SIGKILL');
      await waitGone(pid, 10_000);
    }
  };
  const own: OwnDockerd = {
    dir,
    endpoint,
    docker: client,
    liveRestore: options.liveRestore,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    async stop() {
      await stopPid(own.pid());
    },
    start,
    async remove() {
      // Up again if stopped, so its containers are removed by it (killing containerd would orphan their shims).
      if (own.pid() === undefined && existsSync(join(dir, 'data'))) await start().catch(() => {});
      if (own.pid() !== undefined) {
        const all = await client.listContainers({ all: true }).catch(() => []);
        await Promise.all(
          all.map((c) =>
            client
              .getContainer(c.Id)
              .remove({ force: true, v: true })
              .catch(() => {}),
          ),
        );
        await own.stop();
      }
      // The containerd our dockerd started (its PID file is under our exec root): live-restore leaves it up.
      await stopPid(pidFromFile(join(dir, 'exec', 'containerd', 'containerd.pid')));
      // Shims of containers that outlived a --live-restore stop: ours by the containerd socket they name.
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        let cmd = '';
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        } catch {
          continue;
        }
        if (cmd.includes('containerd-shim') && cmd.includes(`${dir}/exec/containerd/`)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
      // A dying shim may still hold (or the daemon's last act may add) an overlay mount: unmount what
      // is mounted under our dir and remove it, a few times, until nothing is busy.
      for (let attempt = 1; ; attempt++) {
        const mounts = readFileSync('/proc/mounts', 'utf8')
          .split('\n')
          .map((l) => l.split(' ')[1])
          .filter((m) => m?.startsWith(`${dir}/`));
        for (const m of mounts.sort((a, b) => b.length - a.length)) {
          try {
            execFileSync('umount', ['-l', m], { stdio: 'ignore' });
          } catch {
            // already gone
          }
        }
        try {
          await rm(dir, { recursive: true, force: true });
          return;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    },
  };
  try {
    await start();
    execFileSync('sh', ['-c', `docker -H unix:///var/run/docker.sock save ${PAUSE_IMAGE} ${BUSYBOX_IMAGE} | docker -H ${endpoint} load`], {
      stdio: 'ignore',
      timeout: 120_000,
    });
  } catch (err) {
    await own.remove();
    throw err;
  }
  return own;
}

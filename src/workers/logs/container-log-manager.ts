// Counterpart of pkg/kubelet/logs/container_log_manager.go (ContainerLogManager: rotateLogs, processContainer, rotateLog, cleanupUnusedLogs, removeExcessLogs, compressLog, rotateLatestLog, Clean).
/**
 * The container log manager of a CRI runtime: the runtime only writes `ContainerStatus.log_path`;
 * the kubelet rotates it. Every monitor period (10 s, upstream's containerLogMonitorInterval) it
 * lists the running containers and, one at a time (upstream's default of one worker), for each
 * whose log file is at least `--container-log-max-size`:
 *
 * 1. removes what an earlier failed rotation left (`*.tmp`, a rotated file whose `.gz` exists);
 * 2. removes the oldest rotated files so that, with the new one and the live file, at most
 *    `--container-log-max-files` remain;
 * 3. gzips every rotated file not yet compressed (`<path>.<time>.gz`, through `.tmp`), so only
 *    the newest rotated file stays plain (a reader may still be draining it);
 * 4. renames the live file to `<path>.<YYYYMMDD-hhmmss>` (UTC) and calls ReopenContainerLog; if
 *    the reopen fails it renames the file back, to try again next period.
 *
 * A container's log path is read once (ContainerStatus.log_path, kept by ID while it runs).
 * A missing live file is reopened first (ReopenContainerLog). A file already rotated this second
 * waits for the next period (upstream's rename would overwrite it). Errors are logged per
 * container and never stop the loop; a round never overlaps the previous one.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';
import { InvalidArgumentError, isNotFound } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { RuntimeService } from '../runtime/cri/services.js';

/** kContainerLogMonitorPeriodMs: how often the logs are looked at (upstream's containerLogMonitorInterval, 10 s). */
export const kContainerLogMonitorPeriodMs = 10_000;
const kCompressSuffix = '.gz';
const kTmpSuffix = '.tmp';

/** LogRotatePolicy: `--container-log-max-size` in bytes and `--container-log-max-files` (>= 2). */
export interface LogRotatePolicy {
  maxSizeBytes: number;
  maxFiles: number;
}

/** ContainerLogManagerOptions: the policy and the monitor period (milliseconds, default {@link kContainerLogMonitorPeriodMs}). */
export interface ContainerLogManagerOptions extends LogRotatePolicy {
  monitorPeriodMs?: number;
}

/** ContainerLogManagerDeps: the (node-scoped) runtime, a clock (period and rotated names), a logger. */
export interface ContainerLogManagerDeps {
  runtime: Pick<RuntimeService, 'listContainers' | 'containerStatus' | 'reopenContainerLog'>;
  clock?: Clock;
  logger?: Logger;
}

/** ContainerLogManager: see the file comment. */
export interface ContainerLogManager {
  /** start the periodic rotation; idempotent. */
  start(): void;
  /** stop it; a round in progress finishes its current container. Idempotent. */
  stop(): void;
  /** rotateLogs runs one round now (after the one in progress, if any); resolves when it is done. Never rejects. */
  rotateLogs(): Promise<void>;
  /**
   * clean removes every log file of the container, rotated ones included (`<log_path>*`).
   * @throws ContainerStatus's errors (ERR_NOT_FOUND), ERR_RUNTIME for a file that cannot be removed.
   */
  clean(containerId: string): Promise<void>;
}

/**
 * newContainerLogManager makes the manager for `deps.runtime`.
 * @throws InvalidArgumentError when `maxFiles` is not an integer >= 2, `maxSizeBytes` not a positive
 *   number, or `monitorPeriodMs` not a positive number (each named as `options.<field>`).
 */
export function newContainerLogManager(deps: ContainerLogManagerDeps, options: ContainerLogManagerOptions): ContainerLogManager {
  if (!Number.isInteger(options.maxFiles) || options.maxFiles < 2)
    throw new InvalidArgumentError(`options.maxFiles must be an integer >= 2, got ${options.maxFiles}`);
  if (!(options.maxSizeBytes > 0))
    throw new InvalidArgumentError(`options.maxSizeBytes must be a positive number of bytes, got ${options.maxSizeBytes}`);
  const periodMs = options.monitorPeriodMs ?? kContainerLogMonitorPeriodMs;
  if (!(periodMs > 0)) throw new InvalidArgumentError(`options.monitorPeriodMs must be a positive number of milliseconds, got ${periodMs}`);
  return new Manager(deps, options, periodMs);
}

class Manager implements ContainerLogManager {
  readonly #clock: Clock;
  #timer: TimerHandle | null = null;
  #round: Promise<void> = Promise.resolve();
  #busy = false;
  /**
   * Each running container's log_path, by ID, from its first ContainerStatus: a container's log
   * path is fixed by its ContainerConfig at creation, so it is asked once, not every period as
   * upstream's rotateLogs asks (one ContainerStatus per running container every 10 s: 100 calls a
   * second at 1,000 pods). Kept for the containers the last list showed running.
   */
  readonly #paths = new Map<string, string>();

  constructor(
    private readonly deps: ContainerLogManagerDeps,
    private readonly policy: LogRotatePolicy,
    private readonly periodMs: number,
  ) {
    this.#clock = deps.clock ?? realClock;
  }

  start(): void {
    if (this.#timer !== null) return;
    this.#timer = this.#clock.setInterval(() => {
      // A round still running when the next is due: that one is skipped, not queued.
      if (this.#busy) return;
      this.#busy = true;
      void this.rotateLogs().finally(() => {
        this.#busy = false;
      });
    }, this.periodMs);
  }

  stop(): void {
    if (this.#timer === null) return;
    this.#clock.clearInterval(this.#timer);
    this.#timer = null;
  }

  rotateLogs(): Promise<void> {
    this.#round = this.#round.then(() => this.#rotateAll());
    return this.#round;
  }

  clean(containerId: string): Promise<void> {
    return cleanContainerLogs(this.deps.runtime, containerId);
  }

  async #rotateAll(): Promise<void> {
    let ids: string[];
    try {
      ids = (await this.deps.runtime.listContainers({ state: { state: 'CONTAINER_RUNNING' } }))
        .filter((c) => c.state === 'CONTAINER_RUNNING')
        .map((c) => c.id);
    } catch (err) {
      this.deps.logger?.warn({ err }, 'Failed to rotate container logs: list containers');
      return;
    }
    const live = new Set(ids);
    for (const id of this.#paths.keys()) if (!live.has(id)) this.#paths.delete(id);
    for (const id of ids) {
      try {
        await this.#processContainer(id);
      } catch (err) {
        if (!isNotFound(err)) this.deps.logger?.warn({ err, containerId: id }, 'Failed to rotate log for container');
      }
    }
  }

  async #processContainer(id: string): Promise<void> {
    let path = this.#paths.get(id);
    if (path === undefined) {
      path = (await this.deps.runtime.containerStatus(id)).status?.log_path;
      if (!path) return;
      this.#paths.set(id, path);
    }
    let size = await sizeOf(path);
    if (size === null) {
      // The runtime lost its file (or a rotation stopped half-way): have it open a new one.
      await this.deps.runtime.reopenContainerLog(id);
      size = (await sizeOf(path)) ?? 0;
    }
    if (size < this.policy.maxSizeBytes) return;
    await this.#rotateLog(id, path);
  }

  async #rotateLog(id: string, path: string): Promise<void> {
    const rotated = `${path}.${rotatedSuffix(this.#clock.now())}`;
    if ((await sizeOf(rotated)) !== null) return; // rotated this second already: next period
    let logs = await siblings(path, '.');
    logs = await cleanupUnusedLogs(logs);
    logs = await this.#removeExcessLogs(logs);
    for (const l of logs) if (!l.endsWith(kCompressSuffix)) await compressLog(l);
    await rename(path, rotated);
    try {
      await this.deps.runtime.reopenContainerLog(id);
    } catch (err) {
      // Put it back so the next period tries again (upstream: rotateLatestLog).
      await rename(rotated, path).catch((renameErr: unknown) =>
        this.deps.logger?.error({ err: renameErr, rotated, path, containerId: id }, 'Failed to rename rotated log back'),
      );
      throw err;
    }
    this.deps.logger?.debug({ containerId: id, path, rotated }, 'Rotated container log');
  }

  /** Keeps maxFiles - 2 rotated files (the live file and the one about to be rotated make up the rest), removing the oldest first. */
  async #removeExcessLogs(logs: string[]): Promise<string[]> {
    const sorted = [...logs].sort();
    const keep = Math.max(0, this.policy.maxFiles - 2);
    const excess = sorted.slice(0, Math.max(0, sorted.length - keep));
    for (const l of excess) await rm(l, { force: true });
    return sorted.slice(excess.length);
  }
}

/**
 * cleanContainerLogs removes every log file of container `containerId`, the live one and the rotated
 * ones (`<log_path>*`, upstream's ContainerLogManager.Clean); nothing when it has no log path. For
 * kuberuntime's container removal (removeContainerLog), with or without a running manager.
 * @throws ContainerStatus's errors (ERR_NOT_FOUND for an unknown container); the fs error of a file that cannot be removed.
 */
export async function cleanContainerLogs(runtime: Pick<RuntimeService, 'containerStatus'>, containerId: string): Promise<void> {
  const path = (await runtime.containerStatus(containerId)).status?.log_path;
  if (!path) return;
  for (const f of await siblings(path, '')) await rm(f, { force: true });
}

/** `YYYYMMDD-hhmmss` in UTC (upstream's timestampFormat `20060102-150405`). */
function rotatedSuffix(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The files next to `path` whose names are its name + `sep` + anything (`<path>.*`, or `<path>*` with ''), sorted. */
async function siblings(path: string, sep: string): Promise<string[]> {
  const dir = dirname(path);
  const prefix = basename(path) + sep;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names
    .filter((n) => n.startsWith(prefix) && (sep !== '' || n.length >= prefix.length))
    .sort()
    .map((n) => join(dir, n));
}

/** Removes temporary files and plain files whose `.gz` exists (a compression that stopped half-way); answers the rest. */
async function cleanupUnusedLogs(logs: string[]): Promise<string[]> {
  const all = new Set(logs);
  const inuse: string[] = [];
  for (const l of logs) {
    if (l.endsWith(kTmpSuffix) || (!l.endsWith(kCompressSuffix) && all.has(l + kCompressSuffix))) await rm(l, { force: true });
    else inuse.push(l);
  }
  return inuse;
}

/** Gzips `log` to `log.gz` through `log.tmp`, then removes `log` (upstream compressLog). */
async function compressLog(log: string): Promise<void> {
  const tmp = log + kTmpSuffix;
  try {
    await pipeline(createReadStream(log), createGzip(), createWriteStream(tmp, { mode: (await stat(log)).mode & 0o777 }));
    await rename(tmp, log + kCompressSuffix);
  } finally {
    await rm(tmp, { force: true });
  }
  await rm(log, { force: true });
}

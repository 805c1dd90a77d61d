// Test helpers for Docker-backed suites; the role of Kubernetes' test/e2e_node container and polling helpers (framework.Gomega().Eventually).
import Docker from 'dockerode';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';

/** DOCKER_SOCKET is the Docker engine socket every suite (and the agent by default) talks to. */
export const DOCKER_SOCKET = '/var/run/docker.sock';

/** BUSYBOX_IMAGE is the local test image built by tools/ (`/bin/sh`, busybox applets, nobody user). */
export const BUSYBOX_IMAGE = 'kubelet-ts/busybox:1.35';

/** PAUSE_IMAGE is the local sandbox (infra container) image built by tools/ from tools/pause/pause.c. */
export const PAUSE_IMAGE = 'kubelet-ts/pause:1.0';

/**
 * docker is a dockerode client on {@link DOCKER_SOCKET} for tests (creating it opens no connection).
 * dockerode 5 talks unversioned API paths; the daemon answers at API 1.41.
 */
export const docker = new Docker({ socketPath: DOCKER_SOCKET });

/**
 * execInPod runs `cmd` (argv; `['sh', '-c', …]` for a shell line) in the running container
 * `container` of pod `uid` through Docker, as a test's `kubectl exec`, and resolves to its combined
 * stdout and stderr once it exits.
 * @throws Error when the pod has no running container of that name.
 */
export async function execInPod(uid: string, container: string, cmd: string[]): Promise<string> {
  const [c] = await docker.listContainers({
    filters: { label: [`io.kubernetes.pod.uid=${uid}`, `io.kubernetes.container.name=${container}`], status: ['running'] },
  });
  if (!c) throw new Error(`pod ${uid} has no running container ${container}`);
  const exec = await docker.getContainer(c.Id).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (b: Buffer) => chunks.push(b));
  docker.modem.demuxStream(stream, out, out);
  await new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('close', resolve);
    stream.on('error', reject);
  });
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * dockerProblem checks that dockerd answers on {@link DOCKER_SOCKET} and that {@link PAUSE_IMAGE}
 * and {@link BUSYBOX_IMAGE} exist. Resolves `undefined` when all is well, else a one-line
 * description of the first problem found. Never rejects; gives up after `timeoutMs` milliseconds
 * (default 5000) so a hung daemon cannot hang the test run. Called by global-setup.ts.
 */
export async function dockerProblem(timeoutMs = 5000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`dockerd did not answer on ${DOCKER_SOCKET} within ${timeoutMs} ms`), timeoutMs);
  });
  const check = async (): Promise<string | undefined> => {
    try {
      await docker.ping();
    } catch (err) {
      return `dockerd does not answer on ${DOCKER_SOCKET}: ${errorMessage(err)}`;
    }
    const missing: string[] = [];
    for (const image of [PAUSE_IMAGE, BUSYBOX_IMAGE]) {
      try {
        await docker.getImage(image).inspect();
      } catch (err) {
        if (statusCode(err) === 404) missing.push(image);
        else return `cannot inspect image ${image}: ${errorMessage(err)}`;
      }
    }
    return missing.length > 0 ? `missing local image(s) ${missing.join(', ')} (tools/test builds them)` : undefined;
  };
  try {
    return await Promise.race([check(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * removeLabeledContainers force-removes (with their anonymous volumes) every container, running or
 * not, that carries the label `labelKey=value`, and resolves the number removed. Containers without
 * that exact label are never touched. Idempotent: containers that vanish meanwhile (404) or are
 * already being removed (409) are not errors. Throws `Error` naming the parameter when `labelKey`
 * is empty or contains `=`, and rejects with dockerode's error for any other Docker failure.
 */
export async function removeLabeledContainers(labelKey: string, value: string): Promise<number> {
  if (typeof labelKey !== 'string' || labelKey === '' || labelKey.includes('=')) {
    throw new Error(
      `removeLabeledContainers: parameter labelKey must be a non-empty label key without "=", got ${JSON.stringify(labelKey)}`,
    );
  }
  if (typeof value !== 'string') {
    throw new Error(`removeLabeledContainers: parameter value must be a string, got ${typeof value}`);
  }
  const containers = await docker.listContainers({ all: true, filters: { label: [`${labelKey}=${value}`] } });
  const removed = await Promise.all(
    containers
      // The daemon filters already; check again so a filter quirk can never widen what we remove.
      .filter((c) => c.Labels?.[labelKey] === value)
      .map(async (c) => {
        try {
          await docker.getContainer(c.Id).remove({ force: true, v: true });
          return 1;
        } catch (err) {
          const code = statusCode(err);
          if (code === 404 || code === 409) return 0;
          throw err;
        }
      }),
  );
  return removed.reduce<number>((a, b) => a + b, 0);
}

/** WaitForOptions tunes {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this many milliseconds (default 10000). */
  timeoutMs?: number;
  /** Pause between attempts, in milliseconds (default 100). */
  intervalMs?: number;
  /** What is awaited, for the timeout error message (default: the function's name). */
  description?: string;
}

/** A value that {@link waitFor} accepts as "done": anything but `false`, `null` and `undefined`. */
export type Ready<T> = Exclude<T, false | null | undefined>;

/**
 * waitFor polls `fn` until it returns (or resolves to) a value other than `false`, `null` or
 * `undefined`, and resolves with that value; `0` and `''` count as done. A throw or rejection from
 * `fn` counts as "not yet". Attempts are serial, `intervalMs` apart. After `timeoutMs` it rejects with
 * an Error naming `description`, the time waited and the last value or error seen (as `cause`).
 * Throws at once on a negative or non-finite `timeoutMs` / `intervalMs`.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Ready<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 100;
  for (const [name, v] of [
    ['timeoutMs', timeoutMs],
    ['intervalMs', intervalMs],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) throw new Error(`waitFor: option ${name} must be a finite number >= 0 (milliseconds), got ${v}`);
  }
  const what = options.description ?? (fn.name || 'condition');
  const start = Date.now();
  let last: { value?: unknown; error?: unknown } = {};
  for (;;) {
    try {
      const value = await fn();
      if (value !== false && value !== null && value !== undefined) return value as Ready<T>;
      last = { value };
    } catch (error) {
      last = { error };
    }
    const elapsed = Date.now() - start;
    if (elapsed >= timeoutMs) {
      const seen = 'error' in last ? `last error: ${errorMessage(last.error)}` : `last value: ${String(last.value)}`;
      throw new Error(`waitFor(${what}): not done after ${elapsed} ms (timeoutMs ${timeoutMs}); ${seen}`, {
        cause: last.error,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, timeoutMs - elapsed)));
  }
}

function statusCode(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * kOomFloor: the lowest oom_score_adj the agent can give a container here. Without CAP_SYS_RESOURCE
 * (this project's CI machine) the kernel refuses any value below the agent's own, and the agent
 * raises -997/-998 to it (src/workers/cm/oom-score-floor.ts); with it, -1000.
 */
export const kOomFloor =
  ((BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]}`) >> 24n) & 1n) === 1n
    ? -1000
    : Number(readFileSync('/proc/self/oom_score_adj', 'utf8').trim());

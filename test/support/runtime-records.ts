// The test runtime's own record of what it did, and its images (issue #40 item 5): image pulls,
// the stop signals it sent, image removal, on Docker or on the containerd of
// tools/lib/containerd.sh (see runtime.ts). The role of the node e2e suite's runtime-neutral image
// helpers (test/e2e_node/image_list.go) and of reading the runtime's events.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { docker } from './docker.js';
import { containerdEndpoint, testRuntime, type TestRuntime } from './runtime.js';

const execFileAsync = promisify(execFile);

/**
 * removeImage removes the image name `ref` (a name:tag) from the test runtime, behind the agent's
 * back, and no other name of the same image: Docker's image remove without pruning its parents
 * (an untag while other tags remain), or on containerd `ctr images rm` of `ref` and of its
 * repository's digest names (`repo@sha256:…`, which the CRI plugin adds on a pull). Not the CRI's
 * RemoveImage: it removes the image with every name it has, and the images the tests push are the
 * local busybox, so it took `kubelet-ts/busybox:1.35` away from every suite on that containerd. An
 * image already absent, or one a container still uses, is left as it is (a cleanup never throws).
 * `runtime`: where (default the test runtime).
 */
export async function removeImage(ref: string, runtime: TestRuntime = testRuntime()): Promise<void> {
  if (runtime === 'docker') {
    await docker
      .getImage(ref)
      .remove({ noprune: true })
      .catch(() => undefined);
    return;
  }
  const ctr = ['--address', containerdEndpoint().replace(/^unix:\/\//, ''), '--namespace', 'k8s.io', 'images'];
  const repo = ref.slice(0, ref.lastIndexOf(':') > ref.lastIndexOf('/') ? ref.lastIndexOf(':') : ref.length);
  const names = (await execFileAsync('ctr', [...ctr, 'ls', '-q']).catch(() => ({ stdout: '' }))).stdout
    .split('\n')
    .filter((n) => n === ref || n.startsWith(`${repo}@sha256:`));
  if (names.length > 0) await execFileAsync('ctr', [...ctr, 'rm', ...names]).catch(() => undefined);
}

/**
 * imagePulls counts the pulls of the image `ref` (exactly as the pod spec names it) the test runtime
 * began since `sinceMs` (milliseconds since the epoch). Docker: its `pull` image events. containerd:
 * the CRI plugin's `PullImage "<ref>"` lines (one when a pull begins, at level info) in
 * tools/lib/containerd.sh's log, `containerd.log` beside the socket; so give each test an image name
 * of its own. @throws Error naming the log file when containerd's log cannot be read.
 */
export async function imagePulls(ref: string, sinceMs: number): Promise<number> {
  if (testRuntime() === 'docker') {
    // With `until`, the events stream ends by itself: newline-delimited JSON.
    const stream = (await docker.getEvents({
      since: Math.floor(sinceMs / 1000) - 1,
      until: Math.floor(Date.now() / 1000) + 1,
      filters: { type: ['image'], event: ['pull'] },
    })) as unknown as AsyncIterable<Buffer>;
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    const events = text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id?: string });
    return events.filter((e) => e.id === ref).length;
  }
  const text = await containerdLog();
  const begun = `level=info msg="PullImage \\"${ref}\\""`;
  return text.split('\n').filter((l) => l.includes(begun) && Date.parse(l.slice(6, l.indexOf('"', 6))) >= sinceMs - 1000).length;
}

/** ContainerSignal: a stop signal the runtime sent a container; `timeMs` in milliseconds since the epoch. */
export interface ContainerSignal {
  id: string;
  signal: 'SIGTERM' | 'SIGKILL';
  timeMs: number;
}

/**
 * watchContainerSignals starts recording the SIGTERMs and SIGKILLs the test runtime sends; `stop(ids)`
 * ends the recording and resolves with those sent to the containers `ids`, oldest first. Docker: its
 * `kill` container events (signal 15 / 9), streamed live (dockerd keeps only its last 256 events, too
 * few to ask afterwards). containerd: the CRI plugin's `Stop container "<id>" with signal terminated`
 * (the start of StopContainer's timeout) and `Kill container "<id>"` (its end, or a 0 s stop) lines
 * in containerd.log beside the socket, read at stop. @throws from stop: Error naming the log file
 * when it cannot be read.
 */
export async function watchContainerSignals(): Promise<{ stop(ids: readonly string[]): Promise<ContainerSignal[]> }> {
  const sinceMs = Date.now();
  if (testRuntime() === 'docker') {
    const found: ContainerSignal[] = [];
    const stream = (await docker.getEvents({ filters: { type: ['container'], event: ['kill'] } })) as NodeJS.ReadableStream & {
      destroy(): void;
    };
    let buffered = '';
    stream.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const e = JSON.parse(line) as { id?: string; timeNano?: number; Actor?: { Attributes?: Record<string, string> } };
          const signal = ({ '15': 'SIGTERM', '9': 'SIGKILL' } as const)[e.Actor?.Attributes?.signal ?? ''];
          if (e.id && e.timeNano && signal) found.push({ id: e.id, signal, timeMs: e.timeNano / 1e6 });
        } catch {
          // not a whole event
        }
      }
    });
    return {
      stop: async (ids) => {
        stream.destroy();
        const wanted = new Set(ids);
        return found.filter((k) => wanted.has(k.id)).sort((a, b) => a.timeMs - b.timeMs);
      },
    };
  }
  return {
    stop: async (ids) => {
      const wanted = new Set(ids);
      const found: ContainerSignal[] = [];
      const pattern = /^time="([^"]+)" level=info msg="(Stop container|Kill container) \\"([0-9a-f]+)\\"( with signal terminated)?"/;
      for (const line of (await containerdLog()).split('\n')) {
        const m = pattern.exec(line);
        if (!m || !wanted.has(m[3]!)) continue;
        const timeMs = Date.parse(m[1]!);
        if (timeMs < sinceMs - 1000) continue;
        if (m[2] === 'Kill container') found.push({ id: m[3]!, signal: 'SIGKILL', timeMs });
        else if (m[4]) found.push({ id: m[3]!, signal: 'SIGTERM', timeMs });
      }
      return found.sort((a, b) => a.timeMs - b.timeMs);
    },
  };
}

/** containerdLog: the text of tools/lib/containerd.sh's log (containerd.log beside the socket). @throws Error naming the file. */
async function containerdLog(): Promise<string> {
  const log = join(dirname(containerdEndpoint().replace(/^unix:\/\//, '')), 'containerd.log');
  return readFile(log, 'utf8').catch((err: unknown) => {
    throw new Error(`cannot read containerd's log ${log}: ${String(err)}`);
  });
}

/**
 * dockerLogConfig: Docker's log driver settings and json-file path of container `id` (HostConfig.LogConfig,
 * LogPath) — Docker's alone: a test asks only in a Docker branch. @throws Error on another runtime.
 */
export async function dockerLogConfig(id: string): Promise<{ logConfig: unknown; logPath: string }> {
  if (testRuntime() !== 'docker') throw new Error(`dockerLogConfig: the test runtime is ${testRuntime()}, not docker`);
  const info = await docker.getContainer(id).inspect();
  return { logConfig: info.HostConfig.LogConfig, logPath: info.LogPath };
}

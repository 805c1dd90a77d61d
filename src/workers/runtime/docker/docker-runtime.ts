/**
 * Counterpart of dockershim (pkg/kubelet/dockershim, removed in Kubernetes 1.24): the
 * ContainerRuntime port over the Docker Engine API (what the engine's answers, errors and bodies
 * mean: docker-engine-shapes.ts). The calls of a pod's start and removal and the status's ping,
 * info and version and the image GC's image list go through the keep-alive Engine client
 * (engine-client.ts, undici); streams, pulls, exec, logs and updates through dockerode. With its streaming half
 * (docker-streams.ts), the only module that imports dockerode (STYLE.md §1: dockerode lives under
 * src/workers/runtime/ only).
 *
 * Both send unversioned paths, which dockerd 20.10 serves at API 1.41: no version is pinned here
 * on purpose (pinning a newer one gets HTTP 400).
 */
import { statfs } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { AgentError } from '../../../shared/errors.js';
import { kDefaultRuntimeRequestTimeoutMs } from '../../../shared/node-settings.js';
import { realClock, type Clock, type TimerHandle } from '../../../shared/clock.js';
import { withDeadline } from '../cri/deadline.js';
import { openDockerStream } from './docker-attach.js';
import { engineQuery, EngineClient, type EngineCall } from './engine-client.js';
import { limitFromEnv } from './docker-admission.js';
import { containerCreateBody, containerDetailsOf, statusCode, stopTimeoutSeconds, toAgentError } from './docker-engine-shapes.js';
import { CappedOutput } from './exec-output.js';
import { ImagePresenceCache } from './image-presence.js';
import { readDockerLogs, watchDockerEvents } from './docker-streams.js';
import type {
  ContainerCreateSpec,
  ContainerDetails,
  ContainerEventHandlers,
  ContainerStream,
  ContainerStreamHandlers,
  ContainerStreamOptions,
  ContainerEventWatch,
  ContainerListFilter,
  ContainerLogHandlers,
  ContainerLogOptions,
  ContainerLogReader,
  ContainerRuntime,
  ContainerSummary,
  ExecResult,
  ContainerResources,
  ImageFsInfo,
  ImageSummary,
  LocalImage,
  RegistryAuth,
  RuntimeVersion,
} from '../container/runtime.js';

/**
 * DockerRuntime: every request-response call to the engine runs under `requestTimeoutMs`
 * (`--runtime-request-timeout`; ../cri/deadline.ts), a stop under its grace period plus that, and an exec
 * under its own timeout plus that, as the kubelet's CRI client; image pulls and streams (log
 * follows, exec/attach, events) have no deadline, as upstream's long-running calls.
 */
/**
 * loadDockerode: dockerode's constructor, required at a runtime's first stream, pull, exec, log
 * read or update (a thread that only starts and removes pods, and lists images for the GC, never loads it: its
 * modules cost a worker thread more CPU to load than the Engine client's).
 */
function loadDockerode(): typeof Docker {
  return createRequire(import.meta.url)('dockerode') as typeof Docker;
}

class DockerRuntime implements ContainerRuntime {
  readonly #socketPath: string;
  /** dockerode, made at its first use ({@link loadDockerode}). */
  #dockerode: Docker | undefined;
  /** The calls of a pod's start and removal: at most as many connections as the thread's admission limit can reach. */
  readonly #engine: EngineClient;
  /** Container stops: their own connections, unbounded (a stop holds one for its grace period; as dockerode's agent, no queue behind it). */
  readonly #stops: EngineClient;
  /** Milliseconds; 0 = no deadline. */
  readonly #timeoutMs: number;
  /** Image inspects reused and refreshed per reference (image-presence.ts); a pull or removal forgets when it begins and ends. */
  readonly #imagePresence: ImagePresenceCache<LocalImage>;
  /** The thread's Clock: deadlines, exec timeouts, image presence ages. */
  readonly #clock: Clock;

  constructor(socketPath: string, requestTimeoutMs: number, clock: Clock) {
    this.#socketPath = socketPath;
    // The gated calls never exceed the thread's admission limit (docker-admission.ts; its bound, from the same environment).
    this.#engine = new EngineClient(socketPath, { connections: limitFromEnv().maxLimit, clock });
    this.#stops = new EngineClient(socketPath, { clock });
    this.#timeoutMs = requestTimeoutMs;
    this.#clock = clock;
    this.#imagePresence = new ImagePresenceCache((ref) => this.#inspectImage(ref), clock);
  }

  /** #docker: this runtime's dockerode client on its socket, made at its first use. */
  get #docker(): Docker {
    // `host: undefined`: docker-modem would take DOCKER_HOST (tcp://…) over the socket; --docker-endpoint is the endpoint, as for the Engine client.
    return (this.#dockerode ??= new (loadDockerode())({ socketPath: this.#socketPath, host: undefined, protocol: 'http' }));
  }

  /** engineRequests: requests this runtime sent through its Engine clients (not dockerode); tests count a pod start's. */
  get engineRequests(): number {
    return this.#engine.requests + this.#stops.requests;
  }

  /** #call: a dockerode call under the request deadline (plus `extraMs`, milliseconds); its AbortSignal goes to dockerode. */
  #call<T>(what: string, call: (abortSignal: AbortSignal | undefined) => Promise<T>, extraMs = 0): Promise<T> {
    return withDeadline(this.#deadlineMs(extraMs), what, call, this.#clock);
  }

  /** #deadlineMs: a call's deadline (milliseconds; 0 = none): the request timeout plus `extraMs`. */
  #deadlineMs(extraMs = 0): number {
    return this.#timeoutMs > 0 ? this.#timeoutMs + extraMs : 0;
  }

  /** #json: an Engine call's parsed answer, named `what` in its deadline's error; the Engine client enforces the deadline. */
  #json<T>(method: EngineCall['method'], path: string, what: string, body?: unknown): Promise<T> {
    return this.#engine.json<T>({ method, path, body, timeoutMs: this.#deadlineMs(), what });
  }

  /** #send: an Engine call whose answer is dropped, on `client` (the pod's start and removal's by default), under the deadline plus `extraMs`. */
  #send(method: EngineCall['method'], path: string, what: string, client = this.#engine, extraMs = 0): Promise<void> {
    return client.send({ method, path, timeoutMs: this.#deadlineMs(extraMs), what });
  }

  async listContainers(filter: ContainerListFilter): Promise<ContainerSummary[]> {
    try {
      const list = await this.#json<Docker.ContainerInfo[]>(
        'GET',
        `/containers/json${engineQuery({ all: true, filters: { label: filter.labels } })}`,
        'list containers',
      );
      return list.map((c) => ({
        id: c.Id,
        name: (c.Names?.[0] ?? '').replace(/^\//, ''),
        labels: c.Labels ?? {},
        state: c.State ?? 'unknown',
        createdAtMs: (c.Created ?? 0) * 1000,
        imageId: c.ImageID ?? '',
        image: c.Image ?? '',
      }));
    } catch (err) {
      throw toAgentError(err, 'list containers');
    }
  }

  async inspectContainer(id: string): Promise<ContainerDetails> {
    try {
      return containerDetailsOf(await this.#inspectContainer(id));
    } catch (err) {
      throw toAgentError(err, `inspect container ${id}`);
    }
  }

  async createContainer(spec: ContainerCreateSpec): Promise<string> {
    try {
      // As dockerode: the create options are the body (`name` too, which dockerd ignores there) and `name` the query.
      const body = containerCreateBody(spec);
      const c = await this.#json<{ Id: string }>(
        'POST',
        `/containers/create${engineQuery({ name: body.name })}`,
        `create container ${spec.name}`,
        body,
      );
      return c.Id;
    } catch (err) {
      // Docker answers 404 for a missing image (and for a missing `container:` target: an inspect more, no harm).
      if (statusCode(err) === 404) this.#imagePresence.forget(spec.image);
      throw toAgentError(err, `create container ${spec.name}`);
    }
  }

  async updateContainerResources(id: string, r: ContainerResources): Promise<void> {
    try {
      await this.#call(`update container ${id}`, (abortSignal) =>
        this.#docker.getContainer(id).update({
          abortSignal,
          Memory: r.memory,
          MemorySwap: r.memorySwap || (r.memory > 0 ? -1 : undefined),
          CpuQuota: r.cpuQuota,
          CpuPeriod: r.cpuPeriod || undefined,
          CpuShares: r.cpuShares || undefined,
        }),
      );
    } catch (err) {
      throw toAgentError(err, `update container ${id}`);
    }
  }

  async startContainer(id: string): Promise<void> {
    try {
      await this.#send('POST', `/containers/${id}/start`, `start container ${id}`);
    } catch (err) {
      if (statusCode(err) === 304) return; // already started
      throw toAgentError(err, `start container ${id}`);
    }
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    try {
      const t = stopTimeoutSeconds(timeoutSeconds);
      // As the kubelet's StopContainer: the grace period plus the request timeout.
      await this.#send('POST', `/containers/${id}/stop?t=${t}`, `stop container ${id}`, this.#stops, t * 1000);
    } catch (err) {
      if (statusCode(err) === 304) return; // already stopped
      throw toAgentError(err, `stop container ${id}`);
    }
  }

  async removeContainer(id: string): Promise<void> {
    try {
      await this.#send('DELETE', `/containers/${id}?force=true&v=true`, `remove container ${id}`);
    } catch (err) {
      throw toAgentError(err, `remove container ${id}`);
    }
  }

  async imageExists(ref: string): Promise<LocalImage | null> {
    const found = await this.#imagePresence.get(ref);
    return found && { ...found };
  }

  /** #inspectContainer: `GET /containers/{id}/json` under the deadline. */
  #inspectContainer(id: string): Promise<Docker.ContainerInspectInfo> {
    return this.#json<Docker.ContainerInspectInfo>('GET', `/containers/${id}/json`, `inspect container ${id}`);
  }

  async #inspectImage(ref: string): Promise<LocalImage | null> {
    try {
      const img = await this.#json<Docker.ImageInspectInfo>('GET', `/images/${ref}/json`, `inspect image ${ref}`);
      return {
        id: img.Id,
        user: img.Config?.User ?? '',
        repoTags: img.RepoTags ?? [],
        repoDigests: img.RepoDigests ?? [],
        sizeBytes: img.Size ?? 0,
      };
    } catch (err) {
      if (statusCode(err) === 404) return null;
      throw toAgentError(err, `inspect image ${ref}`);
    }
  }

  async pullImage(ref: string, auth?: RegistryAuth): Promise<void> {
    this.#imagePresence.forget(ref);
    try {
      const stream = await this.#docker.pull(ref, auth ? { authconfig: auth } : {});
      await new Promise<void>((resolve, reject) => {
        this.#docker.modem.followProgress(stream, (err: Error | null, output: Array<{ error?: string }>) => {
          const failed = output?.find((o) => typeof o?.error === 'string');
          if (err) reject(err);
          else if (failed) reject(new Error(failed.error));
          else resolve();
        });
      });
    } catch (err) {
      const e = toAgentError(err, `pull image ${JSON.stringify(ref)}`);
      if (e.code === 'ERR_RUNTIME_UNAVAILABLE') throw e;
      // The caller words it as the kubelet does: `Failed to pull image "X": <this message>`.
      const detail = (err as { json?: { message?: unknown } } | null)?.json?.message;
      throw new AgentError('ERR_RUNTIME', typeof detail === 'string' ? detail : String((err as Error)?.message ?? err), {
        retriable: true,
        reason: 'ErrImagePull',
        cause: err,
      });
    } finally {
      // An inspect asked while the pull ran may have seen the image before it.
      this.#imagePresence.forget(ref);
    }
  }

  async tailLogs(id: string, lines: number, bytes: number): Promise<string> {
    let raw: Buffer;
    try {
      raw = (await this.#call(`read the log of container ${id}`, (abortSignal) =>
        this.#docker.getContainer(id).logs({ stdout: true, stderr: true, tail: lines, follow: false, abortSignal }),
      )) as unknown as Buffer;
    } catch (err) {
      throw toAgentError(err, `read the log of container ${id}`);
    }
    // Non-follow logs of a non-TTY container are multiplexed frames: [stream, 0, 0, 0, size(4, BE)] + payload.
    const parts: Buffer[] = [];
    for (let i = 0; i + 8 <= raw.length;) {
      const size = raw.readUInt32BE(i + 4);
      parts.push(raw.subarray(i + 8, i + 8 + size));
      i += 8 + size;
    }
    const all = Buffer.concat(parts);
    return all.subarray(Math.max(0, all.length - bytes)).toString('utf8');
  }

  async readContainerLogs(id: string, opts: ContainerLogOptions, handlers: ContainerLogHandlers): Promise<ContainerLogReader> {
    let tty: boolean;
    try {
      // A TTY container's log is raw bytes, not multiplexed frames.
      tty = (await this.#inspectContainer(id)).Config?.Tty === true;
    } catch (err) {
      throw toAgentError(err, `inspect container ${id}`);
    }
    try {
      return await readDockerLogs(this.#docker, id, tty, opts, handlers, this.#clock);
    } catch (err) {
      throw toAgentError(err, `logs of container ${id}`);
    }
  }

  openContainerStream(id: string, opts: ContainerStreamOptions, handlers: ContainerStreamHandlers): Promise<ContainerStream> {
    return openDockerStream(this.#docker, id, opts, handlers, toAgentError);
  }

  watchContainerEvents(filter: ContainerListFilter, handlers: ContainerEventHandlers): ContainerEventWatch {
    return watchDockerEvents(this.#docker, filter, handlers);
  }

  async listImages(): Promise<ImageSummary[]> {
    try {
      return (await this.#json<Docker.ImageInfo[]>('GET', '/images/json', 'list images')).map((i) => ({
        id: i.Id,
        repoTags: i.RepoTags ?? [],
        sizeBytes: i.Size,
        createdAtMs: i.Created * 1000,
      }));
    } catch (err) {
      throw toAgentError(err, 'list images');
    }
  }

  async removeImage(ref: string): Promise<void> {
    // A reference or an ID: either way, nothing cached may outlive a removal.
    this.#imagePresence.forget();
    try {
      await this.#call(`remove image ${ref}`, (abortSignal) => this.#docker.getImage(ref).remove({ abortSignal }));
    } catch (err) {
      throw toAgentError(err, `remove image ${ref}`);
    } finally {
      this.#imagePresence.forget();
    }
  }

  async imageFsInfo(): Promise<ImageFsInfo> {
    let root: string;
    try {
      root = (await this.#json<{ DockerRootDir?: string }>('GET', '/info', 'docker info')).DockerRootDir || '/var/lib/docker';
    } catch (err) {
      throw toAgentError(err, 'docker info');
    }
    const st = await statfs(root);
    return { mountpoint: root, capacityBytes: st.blocks * st.bsize, availableBytes: st.bavail * st.bsize };
  }

  async version(): Promise<RuntimeVersion> {
    try {
      const v = await this.#json<{ Version?: string; ApiVersion?: string }>('GET', '/version', 'docker version');
      return { runtimeName: 'docker', version: v.Version ?? '', apiVersion: v.ApiVersion ?? '' };
    } catch (err) {
      throw toAgentError(err, 'docker version');
    }
  }

  async status(): Promise<void> {
    try {
      await this.#engine.text({ method: 'GET', path: '/_ping', timeoutMs: this.#deadlineMs(), what: 'docker ping' });
    } catch (err) {
      throw toAgentError(err, 'docker ping');
    }
  }

  async execInContainer(id: string, cmd: string[], timeoutMs: number): Promise<ExecResult> {
    let exec: Docker.Exec;
    try {
      exec = await this.#call(`exec in container ${id}`, (abortSignal) =>
        this.#docker.getContainer(id).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, Tty: false, abortSignal }),
      );
    } catch (err) {
      throw toAgentError(err, `exec in container ${id}`);
    }
    // The combined output (probes, hooks) and each stream apart (CRI ExecSync), each capped.
    const all = new CappedOutput();
    const out = new CappedOutput();
    const err = new CappedOutput();
    const sinkOf = (own: CappedOutput) =>
      new Writable({
        write(chunk: Buffer, _enc, cb) {
          all.add(chunk);
          own.add(chunk);
          cb();
        },
      });
    let timer: TimerHandle | undefined;
    let stream: NodeJS.ReadWriteStream | undefined;
    try {
      stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadWriteStream;
      this.#docker.modem.demuxStream(stream, sinkOf(out), sinkOf(err));
      const s = stream;
      const finished = new Promise<boolean>((resolve, reject) => {
        s.on('end', () => resolve(false));
        s.on('close', () => resolve(false));
        s.on('error', reject);
      });
      const expired = new Promise<boolean>((resolve) => (timer = this.#clock.setTimeout(() => resolve(true), Math.max(1, timeoutMs))));
      const timedOut = await Promise.race([finished, expired]);
      const texts = { output: all.text(), stdout: out.text(), stderr: err.text() };
      if (timedOut) return { exitCode: -1, ...texts, timedOut: true };
      const info = await this.#call(`exec in container ${id}`, (abortSignal) => exec.inspect({ abortSignal }));
      return { exitCode: typeof info.ExitCode === 'number' ? info.ExitCode : -1, ...texts, timedOut: false };
    } catch (err) {
      throw toAgentError(err, `exec in container ${id}`);
    } finally {
      this.#clock.clearTimeout(timer);
      (stream as unknown as { destroy?: () => void } | undefined)?.destroy?.();
    }
  }
}

const runtimes = new Map<string, ContainerRuntime>();

/**
 * getDockerRuntime returns this thread's ContainerRuntime for the Docker socket at `socketPath`
 * whose calls have the deadline `requestTimeoutMs` (milliseconds, `--runtime-request-timeout`;
 * 0 = none) (one runtime — its Engine client pools, dockerode at first use — per socket and timeout per thread: the exception to "no module singletons", STYLE.md C7);
 * its time reads and timers on `clock` (default realClock; the first call for a socket and timeout chooses it).
 */
export function getDockerRuntime(
  socketPath: string,
  requestTimeoutMs = kDefaultRuntimeRequestTimeoutMs,
  clock: Clock = realClock,
): ContainerRuntime {
  const key = `${socketPath}\0${requestTimeoutMs}`;
  let rt = runtimes.get(key);
  if (!rt) {
    rt = new DockerRuntime(socketPath, requestTimeoutMs, clock);
    runtimes.set(key, rt);
  }
  return rt;
}

/**
 * dockerEngineRequests: how many requests `runtime` (a runtime of {@link getDockerRuntime}) has sent
 * through its Engine client rather than dockerode; undefined for any other runtime (a wrapper, the fake).
 */
export function dockerEngineRequests(runtime: ContainerRuntime): number | undefined {
  return runtime instanceof DockerRuntime ? runtime.engineRequests : undefined;
}

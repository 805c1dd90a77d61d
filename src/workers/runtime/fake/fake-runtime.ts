/**
 * An in-memory ContainerRuntime (the kubelet's pkg/kubelet/container/testing FakeRuntime idea),
 * selected with `--runtime fake`: lets benches and tests drive the whole agent without Docker.
 * Containers never exit on their own; stop makes them exit with code 0. It implements the whole
 * port but the optional tailLogs: logs are empty, the version is its own (`fake` 0.0.0), the events stream emits this
 * fake's own container changes, and it has no image filesystem (so no image GC). One fake per
 * thread: a thread sees only the containers created through its own fake.
 */
import { createHash, randomBytes } from 'node:crypto';
import { realClock, type Clock } from '../../../shared/clock.js';
import { AgentError } from '../../../shared/errors.js';
import type {
  ContainerCreateSpec,
  ContainerDetails,
  ContainerMountInfo,
  ContainerResources,
  ContainerEvent,
  ContainerEventHandlers,
  ContainerEventWatch,
  ContainerListFilter,
  ContainerLogReader,
  ContainerLogHandlers,
  ContainerRuntime,
  ContainerStream,
  ContainerStreamHandlers,
  ContainerStreamOptions,
  ContainerSummary,
  ExecResult,
  ImageSummary,
  RuntimeVersion,
} from '../container/runtime.js';

/** Options of newFakeRuntime. */
export interface FakeRuntimeOptions {
  /** Images present from the start; undefined = every image is present. */
  images?: string[];
  /** The Clock of its event and container times (default realClock). */
  clock?: Clock;
  /** Record every call in `calls` (default true; the worker's fake turns it off to hold 10,000 pods). */
  recordCalls?: boolean;
}

interface FakeContainer {
  details: ContainerDetails;
  spec: ContainerCreateSpec;
}

/** FakeRuntime: ContainerRuntime plus what tests want to look at. */
export interface FakeRuntime extends ContainerRuntime {
  /** Every call made, as `op:arg` (e.g. `create:k8s_web_…`, `stop:<id>`), in order. */
  readonly calls: string[];
  /** Makes a running container exit with `exitCode` (as if its process ended). */
  exit(id: string, exitCode: number): void;
  /** The create spec a container was made from. */
  specOf(id: string): ContainerCreateSpec | undefined;
  /** Sets what execInContainer answers for container `id` (default: exit code 0, no output). */
  setExecResult(id: string, result: ExecResult): void;
}

function matches(labels: Record<string, string>, filter: string[]): boolean {
  return filter.every((f) => {
    const eq = f.indexOf('=');
    return eq === -1 ? f in labels : labels[f.slice(0, eq)] === f.slice(eq + 1);
  });
}

/**
 * fakeEchoStream: the fake's exec/attach, for any container ID (the streams worker's fake holds no
 * containers of the pool's threads). With stdin, every stdin chunk comes back on stdout and the
 * stream exits 0 when stdin ends (as `cat`); an exec without stdin prints its arguments after the
 * first, space-joined, with a newline (as `echo`) and exits 0. `resize:WxH` is recorded.
 */
export function fakeEchoStream(
  opts: ContainerStreamOptions,
  h: ContainerStreamHandlers,
  rec: (call: string) => void = () => {},
): ContainerStream {
  let closed = false;
  let exited = false;
  let paused = false;
  const held: Buffer[] = [];
  const out = (b: Buffer) => {
    if (closed || exited) return;
    if (paused) held.push(b);
    else h.onOutput(1, b);
  };
  const exit = () => {
    if (closed || exited) return;
    if (paused) return void held.push(Buffer.alloc(0));
    exited = true;
    h.onExit(opts.kind === 'exec' ? 0 : null);
  };
  if (!opts.stdin) {
    queueMicrotask(() => {
      if (opts.kind === 'exec') out(Buffer.from(`${opts.command.slice(1).join(' ')}\n`));
      exit();
    });
  }
  return {
    writeStdin(chunk, done) {
      out(Buffer.from(chunk));
      queueMicrotask(done);
    },
    endStdin() {
      queueMicrotask(exit);
    },
    async resize(width, height) {
      rec(`resize:${width}x${height}`);
    },
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
      for (const b of held.splice(0)) {
        if (b.length === 0) exit();
        else out(b);
      }
    },
    close() {
      closed = true;
    },
  };
}

/** fakeMounts: the mounts inspect reports for `host:container[:opts]` binds (Docker's reading of them). */
function fakeMounts(binds: readonly string[] | undefined): ContainerMountInfo[] {
  return (binds ?? []).map((b) => {
    const [source, destination, opts = ''] = b.split(':');
    const o = opts.split(',');
    return { source, destination, rw: !o.includes('ro'), propagation: o.find((x) => /^r?(private|slave|shared)$/.test(x)) ?? '' };
  });
}

/** fakeImageId: the fake's image ID of `ref` (an ID stays itself; a reference gets `sha256:` + the SHA-256 of its text): one ID per image, as the CRI's RemoveImage-by-ID needs. */
export function fakeImageId(ref: string): string {
  return /^sha256:[0-9a-f]{64}$/.test(ref) ? ref : `sha256:${createHash('sha256').update(ref).digest('hex')}`;
}

/** newFakeRuntime builds an empty in-memory runtime. Not thread-shared: one per worker thread. */
export function newFakeRuntime(options: FakeRuntimeOptions = {}): FakeRuntime {
  const clock = options.clock ?? realClock;
  const now = (): number => clock.now();
  const images = options.images ? new Set(options.images) : null;
  const containers = new Map<string, FakeContainer>();
  const calls: string[] = [];
  const recordCalls = options.recordCalls ?? true;
  const rec = (call: string) => {
    if (recordCalls) calls.push(call);
  };
  const execResults = new Map<string, ExecResult>();
  // Indexes so that one fake can hold 10,000 pods: by name, and by pod UID for the per-pod list every sync makes.
  const byName = new Map<string, FakeContainer>();
  const byPod = new Map<string, Set<FakeContainer>>();
  const kUid = 'io.kubernetes.pod.uid';
  const get = (id: string): FakeContainer => {
    const c = containers.get(id) ?? byName.get(id);
    if (!c) throw new AgentError('ERR_NOT_FOUND', `No such container: ${id}`);
    return c;
  };
  // Open event watches (watchContainerEvents): empty unless someone watches, so 10,000 pods cost nothing.
  const watches = new Set<{ labels: string[]; h: ContainerEventHandlers }>();
  const emit = (c: FakeContainer, action: string, exitCode?: number) => {
    if (watches.size === 0) return;
    const l = c.details.labels;
    const e: ContainerEvent = {
      action,
      containerId: c.details.id,
      podUid: l[kUid] ?? '',
      containerName: l['io.kubernetes.container.name'] ?? '',
      timeMs: now(),
    };
    if (exitCode !== undefined) e.exitCode = exitCode;
    for (const w of watches) if (matches(l, w.labels)) w.h.onEvents([e]);
  };
  const finish = (c: FakeContainer, exitCode: number) => {
    Object.assign(c.details, { status: 'exited', running: false, exitCode, finishedAtMs: now() });
    emit(c, 'die', exitCode);
  };
  return {
    calls,
    async listContainers(filter: ContainerListFilter): Promise<ContainerSummary[]> {
      rec('list');
      const uidFilter = filter.labels.find((f) => f.startsWith(`${kUid}=`));
      const candidates = uidFilter ? [...(byPod.get(uidFilter.slice(kUid.length + 1)) ?? [])] : [...containers.values()];
      return candidates
        .filter((c) => matches(c.details.labels, filter.labels))
        .map((c) => ({
          id: c.details.id,
          name: c.details.name,
          labels: { ...c.details.labels },
          state: c.details.status,
          createdAtMs: c.details.createdAtMs,
          imageId: c.details.imageId,
          image: c.details.image,
        }));
    },
    async inspectContainer(id: string): Promise<ContainerDetails> {
      return { ...get(id).details, labels: { ...get(id).details.labels } };
    },
    async createContainer(spec: ContainerCreateSpec): Promise<string> {
      rec(`create:${spec.name}`);
      if (byName.has(spec.name))
        throw new AgentError('ERR_ALREADY_EXISTS', `Conflict. The container name "/${spec.name}" is already in use`);
      if (images && !images.has(spec.image)) throw new AgentError('ERR_NOT_FOUND', `No such image: ${spec.image}`);
      const id = randomBytes(32).toString('hex');
      const created: FakeContainer = {
        spec,
        details: {
          id,
          name: spec.name,
          labels: { ...spec.labels },
          image: spec.image,
          imageId: fakeImageId(spec.image),
          status: 'created',
          running: false,
          exitCode: 0,
          oomKilled: false,
          error: '',
          createdAtMs: now(),
          startedAtMs: 0,
          finishedAtMs: 0,
          networkMode: spec.hostConfig.networkMode ?? '',
          pidMode: spec.hostConfig.pidMode ?? '',
          ipcMode: spec.hostConfig.ipcMode ?? '',
          mounts: fakeMounts(spec.hostConfig.binds),
          cgroupParent: spec.hostConfig.cgroupParent ?? '',
          resources: {
            memory: spec.hostConfig.memory ?? 0,
            cpuQuota: spec.hostConfig.cpuQuota ?? 0,
            cpuPeriod: spec.hostConfig.cpuPeriod ?? 0,
            cpuShares: spec.hostConfig.cpuShares ?? 0,
          },
        },
      };
      containers.set(id, created);
      byName.set(spec.name, created);
      const uid = spec.labels[kUid];
      if (uid !== undefined) {
        let set = byPod.get(uid);
        if (!set) byPod.set(uid, (set = new Set()));
        set.add(created);
      }
      // No `create` event: the Docker stream the agent opens does not carry one (docker-streams.ts kForwardedActions).
      return id;
    },
    async updateContainerResources(id: string, r: ContainerResources): Promise<void> {
      rec(`update:${id}`);
      get(id).details.resources = { ...r };
    },
    async startContainer(id: string): Promise<void> {
      rec(`start:${id}`);
      const c = get(id);
      if (c.details.running) return;
      Object.assign(c.details, { status: 'running', running: true, startedAtMs: now(), finishedAtMs: 0, exitCode: 0 });
      emit(c, 'start');
    },
    async stopContainer(id: string): Promise<void> {
      rec(`stop:${id}`);
      const c = get(id);
      if (c.details.running) finish(c, 0);
    },
    async removeContainer(id: string): Promise<void> {
      rec(`remove:${id}`);
      const c = get(id);
      containers.delete(c.details.id);
      byName.delete(c.details.name);
      const set = byPod.get(c.details.labels[kUid]);
      set?.delete(c);
      if (set?.size === 0) byPod.delete(c.details.labels[kUid]);
      emit(c, 'destroy');
    },
    async imageExists(ref: string) {
      if (!images || images.has(ref)) return { id: fakeImageId(ref) };
      // By ID, as Docker's image inspect answers it: the image with its tags.
      const tags = [...images].filter((r) => fakeImageId(r) === ref);
      return tags.length > 0 ? { id: ref, repoTags: tags } : null;
    },
    async pullImage(ref: string): Promise<void> {
      rec(`pull:${ref}`);
      throw new AgentError('ERR_RUNTIME', 'the fake runtime cannot pull images', { retriable: true, reason: 'ErrImagePull' });
    },
    async execInContainer(id: string, cmd: string[]): Promise<ExecResult> {
      rec(`exec:${id}:${cmd.join(' ')}`);
      const c = get(id);
      if (!c.details.running) throw new AgentError('ERR_RUNTIME', `container ${id} is not running`);
      return execResults.get(c.details.id) ?? { exitCode: 0, output: '', timedOut: false };
    },
    async readContainerLogs(id: string, _opts: unknown, h: ContainerLogHandlers): Promise<ContainerLogReader> {
      rec(`logs:${id}`);
      // An empty log, for any ID: the logs worker's fake holds no containers of the pool's threads.
      let cancelled = false;
      queueMicrotask(() => {
        if (!cancelled) h.onEnd();
      });
      return {
        pause() {},
        resume() {},
        cancel() {
          cancelled = true;
        },
      };
    },
    async openContainerStream(id: string, opts: ContainerStreamOptions, h: ContainerStreamHandlers): Promise<ContainerStream> {
      rec(`${opts.kind}:${id}:${opts.command.join(' ')}`);
      return fakeEchoStream(opts, h, rec);
    },
    watchContainerEvents(filter: ContainerListFilter, h: ContainerEventHandlers): ContainerEventWatch {
      const w = { labels: [...filter.labels], h };
      let closed = false;
      queueMicrotask(() => {
        if (closed) return;
        watches.add(w);
        h.onOpen();
      });
      return {
        close() {
          closed = true;
          watches.delete(w);
        },
      };
    },
    async listImages(): Promise<ImageSummary[]> {
      return [...(images ?? [])].map((ref) => ({ id: fakeImageId(ref), repoTags: [ref], sizeBytes: 0, createdAtMs: 0 }));
    },
    async removeImage(ref: string): Promise<void> {
      rec(`removeImage:${ref}`);
      if (images && !images.delete(ref)) throw new AgentError('ERR_NOT_FOUND', `No such image: ${ref}`);
    },
    async imageFsInfo() {
      return null;
    },
    async version(): Promise<RuntimeVersion> {
      return { runtimeName: 'fake', version: '0.0.0', apiVersion: '0' };
    },
    // Not recorded in `calls`: the agent asks every few seconds, tests look at pod work.
    async status(): Promise<void> {},
    setExecResult(id: string, result: ExecResult): void {
      execResults.set(id, result);
    },
    exit(id: string, exitCode: number): void {
      const c = get(id);
      if (c.details.running) finish(c, exitCode);
    },
    specOf(id: string) {
      return containers.get(id)?.spec;
    },
  };
}

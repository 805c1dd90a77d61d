/**
 * RuntimeEndpoint: which container runtime a thread talks to, the one part every thread's
 * bootstrap (workerData) shares — the pool's WorkerBootstrap, the events, logs and streams
 * workers' — and that src/workers/runtime/node-runtime.ts getRuntime reads. The counterpart of
 * the kubelet's `--container-runtime-endpoint` / `--image-service-endpoint` as they reach the CRI
 * clients (pkg/kubelet/kubelet.go PreInitRuntimeService → cri/remote NewRemoteRuntimeService,
 * NewRemoteImageService). Plain structured-cloneable data; the agent derives it from `--runtime`,
 * `--docker-endpoint` and the two endpoint flags (src/main/options/runtime-endpoint-options.ts).
 *
 * Also the endpoint parser both sides use (pkg/kubelet/util/util_unix.go parseEndpoint /
 * GetAddressAndDialer): the main thread to check the flags, the CRI clients to dial.
 */
import { isAbsolute } from 'node:path';
import { InvalidArgumentError } from './errors.js';

/**
 * RuntimeName: how a thread reaches its runtime. 'docker' talks to dockerd through the agent's own
 * Docker implementation (the in-process dockershim); 'remote' talks the CRI over gRPC to
 * `containerRuntimeEndpoint` (the kubelet's old `--container-runtime=remote`: containerd,
 * CRI-O); 'fake' is the in-memory runtime of unit tests and benches.
 */
export type RuntimeName = 'docker' | 'remote' | 'fake';

/** kRuntimeNames: every RuntimeName, for checks and messages. */
export const kRuntimeNames: readonly RuntimeName[] = Object.freeze(['docker', 'remote', 'fake'] as const);

/** The runtime a thread talks to and where it is. */
export interface RuntimeEndpoint {
  /** Which runtime; absent = 'docker' (the pool's WorkerBootstrap always names it). */
  runtime?: RuntimeName;
  /** Path of the Docker Engine API unix socket (runtime 'docker'), e.g. `/var/run/docker.sock`. */
  dockerSocketPath: string;
  /** Runtime 'remote': the CRI RuntimeService endpoint, `unix:///path` (`--container-runtime-endpoint`). */
  containerRuntimeEndpoint?: string;
  /** Runtime 'remote': the CRI ImageService endpoint (`--image-service-endpoint`); absent or '' = containerRuntimeEndpoint. */
  imageServiceEndpoint?: string;
}

/** CriEndpoint: a parsed endpoint; `target` is what grpc-js dials (`unix:///path`), `path` the socket file. */
export interface CriEndpoint {
  readonly target: string;
  readonly path: string;
}

/**
 * parseCriEndpoint parses `unix:///path` (the path absolute, no host part, no query), as the
 * kubelet's `--container-runtime-endpoint` and `--image-service-endpoint` take it. The kubelet also
 * accepts `tcp://` (deprecated) and `npipe://` (Windows); kubelet-ts refuses them by name, and
 * refuses a bare path (the kubelet's old fallback that it logs as deprecated) so that a typo is
 * never dialled as something else. Pure.
 * @param flag names the setting in errors (default `--container-runtime-endpoint`).
 * @throws InvalidArgumentError naming the flag and the value for any other form.
 */
export function parseCriEndpoint(value: string, flag = '--container-runtime-endpoint'): CriEndpoint {
  const bad = (why: string): InvalidArgumentError =>
    new InvalidArgumentError(`${flag} ${JSON.stringify(value)}: ${why} (expected unix:///path/to/runtime.sock)`);
  if (typeof value !== 'string') throw bad('not a string');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) throw bad('no scheme');
  if (scheme !== 'unix') throw bad(`protocol "${scheme}" not supported; only unix is`);
  const path = value.slice('unix://'.length);
  if (!path.startsWith('/')) throw bad('the socket path must be absolute (three slashes: unix:///…)');
  if (!isAbsolute(path) || /[?#]/.test(path) || path.includes('\0')) throw bad('not a socket path');
  if (Buffer.byteLength(path) > 107) throw bad('the socket path is longer than a unix socket allows (107 bytes)');
  return { target: `unix://${path}`, path };
}

/**
 * checkRuntimeEndpoint validates the RuntimeEndpoint part of a thread's bootstrap: a known
 * `runtime` (absent = 'docker'), Docker's socket path for 'docker', a parseable
 * `containerRuntimeEndpoint` (and `imageServiceEndpoint` when given) for 'remote'. Pure.
 * @param where names the object in errors (e.g. `workerData`).
 * @throws InvalidArgumentError naming the bad `<where>.<field>`.
 */
export function checkRuntimeEndpoint(b: Partial<RuntimeEndpoint>, where = 'workerData'): void {
  const runtime = b.runtime ?? 'docker';
  if (!kRuntimeNames.includes(runtime))
    throw new InvalidArgumentError(`${where}.runtime must be one of ${kRuntimeNames.join(', ')}, got ${JSON.stringify(b.runtime)}`);
  if (runtime === 'docker' && (typeof b.dockerSocketPath !== 'string' || !b.dockerSocketPath))
    throw new InvalidArgumentError(`${where}.dockerSocketPath must be a non-empty string`);
  if (runtime === 'remote') {
    parseCriEndpoint(b.containerRuntimeEndpoint as string, `${where}.containerRuntimeEndpoint`);
    if (b.imageServiceEndpoint) parseCriEndpoint(b.imageServiceEndpoint, `${where}.imageServiceEndpoint`);
  }
}

/**
 * idSchemeOf: the scheme of container and image IDs in a PodStatus (`<scheme>://<id>`), from the
 * runtime's Version `runtime_name` lower-cased, as kuberuntime's ContainerID.Type is its
 * runtimeName (pkg/kubelet/kuberuntime/kuberuntime_manager.go NewKubeGenericRuntimeManager):
 * `containerd`, `docker`, `cri-o`. '' when the name is empty. Pure.
 */
export function idSchemeOf(runtimeName: string): string {
  return runtimeName.trim().toLowerCase();
}

/**
 * presumedIdScheme: the ID scheme before the runtime answered Version: the runtime's own name for
 * the implementations the agent carries (`docker`, `fake`: their Version answers the same), ''
 * for a CRI runtime (only its Version can say: `containerd`, `cri-o`). Pure.
 */
export function presumedIdScheme(runtime: RuntimeName | undefined): string {
  return runtime === 'remote' ? '' : (runtime ?? 'docker');
}

/**
 * Counterpart of dockershim's libdocker (pkg/kubelet/dockershim/libdocker/kube_docker_client.go and
 * helpers.go, kubernetes ≤1.23): what the Docker Engine API's answers and failures mean for the
 * ContainerRuntime port, and the engine's bodies made from the port's — its times, its errors as
 * AgentErrors, an inspect as ContainerDetails, a ContainerCreateSpec as the create body, a grace
 * period as the stop's `t`. Pure; docker-runtime.ts makes the calls.
 */
import type Docker from 'dockerode';
import { AgentError } from '../../../shared/errors.js';
import type { ContainerCreateSpec, ContainerDetails } from '../container/runtime.js';

const kUnavailableCodes = new Set(['ECONNREFUSED', 'ENOENT', 'EACCES', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

/**
 * dockerTimeMs converts a Docker RFC 3339 time (nanosecond precision allowed) to epoch ms;
 * Docker's zero time `0001-01-01T00:00:00Z`, '' and anything unparsable give 0.
 */
export function dockerTimeMs(t: string | undefined | null): number {
  if (!t || t.startsWith('0001-01-01')) return 0;
  const ms = Date.parse(t);
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * toAgentError maps an Engine call's error (dockerode's or engine-client.ts', the same shape) to an AgentError: socket errors → ERR_RUNTIME_UNAVAILABLE
 * (retriable), 404 → ERR_NOT_FOUND, 409 → ERR_ALREADY_EXISTS, anything else → ERR_RUNTIME
 * (retriable for 5xx). `what` names the operation, e.g. `create container k8s_web_…`.
 */
export function toAgentError(err: unknown, what: string): AgentError {
  if (err instanceof AgentError) return err;
  const e = err as { code?: unknown; statusCode?: unknown; json?: { message?: unknown } | null; message?: unknown };
  const detail = typeof e?.json?.message === 'string' ? e.json.message : String(e?.message ?? err);
  if (typeof e?.code === 'string' && kUnavailableCodes.has(e.code)) {
    return new AgentError('ERR_RUNTIME_UNAVAILABLE', `${what}: container runtime is unavailable: ${detail}`, {
      retriable: true,
      cause: err,
    });
  }
  switch (e?.statusCode) {
    case 404:
      return new AgentError('ERR_NOT_FOUND', `${what}: ${detail}`, { cause: err });
    case 409:
      return new AgentError('ERR_ALREADY_EXISTS', `${what}: ${detail}`, { cause: err });
    default: {
      const status = typeof e?.statusCode === 'number' ? e.statusCode : 0;
      return new AgentError('ERR_RUNTIME', `${what}: ${detail}`, { retriable: status === 0 || status >= 500, cause: err });
    }
  }
}

/** statusCode: the HTTP status of an Engine call's error (dockerode or engine-client.ts) (undefined when it has none). */
export function statusCode(err: unknown): unknown {
  return (err as { statusCode?: unknown } | null)?.statusCode;
}

/** hc0: a HostConfig number, 0 when Docker left it out. */
function hc0(v: number | undefined | null): number {
  return typeof v === 'number' ? v : 0;
}

/** containerDetailsOf: a container inspect (`GET /containers/{id}/json`) as the port's ContainerDetails (the binds of its mounts only). */
export function containerDetailsOf(c: Docker.ContainerInspectInfo): ContainerDetails {
  return {
    id: c.Id,
    name: (c.Name ?? '').replace(/^\//, ''),
    labels: c.Config?.Labels ?? {},
    image: c.Config?.Image ?? '',
    imageId: c.Image ?? '',
    status: c.State?.Status ?? 'unknown',
    running: c.State?.Running === true,
    exitCode: c.State?.ExitCode ?? 0,
    oomKilled: c.State?.OOMKilled === true,
    error: c.State?.Error ?? '',
    createdAtMs: dockerTimeMs(c.Created),
    startedAtMs: dockerTimeMs(c.State?.StartedAt),
    finishedAtMs: dockerTimeMs(c.State?.FinishedAt),
    networkMode: c.HostConfig?.NetworkMode ?? '',
    pidMode: c.HostConfig?.PidMode ?? '',
    ipcMode: c.HostConfig?.IpcMode ?? '',
    cgroupParent: c.HostConfig?.CgroupParent ?? '',
    resources: {
      memory: hc0(c.HostConfig?.Memory),
      memorySwap: hc0(c.HostConfig?.MemorySwap),
      cpuQuota: hc0(c.HostConfig?.CpuQuota),
      cpuPeriod: hc0(c.HostConfig?.CpuPeriod),
      cpuShares: hc0(c.HostConfig?.CpuShares),
    },
    mounts: (c.Mounts ?? [])
      .filter((m) => m.Type === 'bind')
      .map((m) => ({ source: m.Source, destination: m.Destination, rw: m.RW !== false, propagation: m.Propagation ?? '' })),
    pid: c.State?.Pid ?? 0,
    logPath: c.LogPath ?? '',
  };
}

/**
 * containerCreateBody: the create body (`POST /containers/create`, without the abort signal) of
 * `spec`: unset or empty settings are left out (Docker's defaults), and Docker never restarts the
 * container (the kubelet's restart backoff does).
 */
export function containerCreateBody(spec: ContainerCreateSpec): Docker.ContainerCreateOptions {
  const hc = spec.hostConfig;
  return {
    name: spec.name,
    Image: spec.image,
    Labels: spec.labels,
    Entrypoint: spec.entrypoint,
    Cmd: spec.cmd,
    Env: spec.env,
    WorkingDir: spec.workingDir || undefined,
    User: spec.user || undefined,
    Hostname: spec.hostname || undefined,
    Tty: spec.tty,
    OpenStdin: spec.openStdin,
    StdinOnce: spec.stdinOnce,
    HostConfig: {
      NetworkMode: hc.networkMode,
      IpcMode: hc.ipcMode,
      PidMode: hc.pidMode,
      Binds: hc.binds?.length ? hc.binds : undefined,
      Memory: hc.memory || undefined,
      CpuQuota: hc.cpuQuota || undefined,
      CpuPeriod: hc.cpuPeriod || undefined,
      CpuShares: hc.cpuShares || undefined,
      OomScoreAdj: hc.oomScoreAdj,
      CgroupParent: hc.cgroupParent || undefined,
      PidsLimit: hc.pidsLimit && hc.pidsLimit > 0 ? hc.pidsLimit : undefined,
      LogConfig: hc.logRotation
        ? {
            Type: 'json-file',
            Config: { 'max-size': String(hc.logRotation.maxSizeBytes), 'max-file': String(hc.logRotation.maxFiles) },
          }
        : undefined,
      Privileged: hc.privileged || undefined,
      ReadonlyRootfs: hc.readonlyRootfs || undefined,
      CapAdd: hc.capAdd?.length ? hc.capAdd : undefined,
      CapDrop: hc.capDrop?.length ? hc.capDrop : undefined,
      SecurityOpt: hc.securityOpt?.length ? hc.securityOpt : undefined,
      Sysctls: hc.sysctls && Object.keys(hc.sysctls).length ? hc.sysctls : undefined,
      GroupAdd: hc.groupAdd?.length ? hc.groupAdd : undefined,
      MaskedPaths: hc.maskedPaths?.length ? hc.maskedPaths : undefined,
      ReadonlyPaths: hc.readonlyPaths?.length ? hc.readonlyPaths : undefined,
      // The kubelet restarts containers itself (restart backoff); Docker must not.
      RestartPolicy: { Name: 'no' },
    },
  };
}

/**
 * kMaxStopTimeoutSeconds: the longest `t` (seconds) sent to Docker's container stop. The engine
 * turns it into a Go time.Duration (int64 nanoseconds), which wraps past about 292 years and would
 * kill at once; a grace period is an int64 of seconds, so it is capped here at 2^31-1 s (68 years,
 * no different from waiting forever) instead.
 */
export const kMaxStopTimeoutSeconds = 2 ** 31 - 1;

/** stopTimeoutSeconds: a grace period (seconds) as Docker's stop `t`: whole seconds in [0, kMaxStopTimeoutSeconds]. */
export function stopTimeoutSeconds(gracePeriodSeconds: number): number {
  if (!(gracePeriodSeconds > 0)) return 0;
  return Math.min(kMaxStopTimeoutSeconds, Math.floor(gracePeriodSeconds));
}

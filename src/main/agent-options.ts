// Counterpart of cmd/kubelet/app/options (KubeletFlags + KubeletConfiguration defaults and ValidateKubeletConfiguration).
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { InvalidArgumentError } from '../shared/errors.js';
import { verbosityToLevel } from '../shared/logging.js';
import { parseFakeFailureRates, parseFakeLatencies } from '../shared/fake-runtime-tuning.js';

/**
 * AgentOptions: the resolved settings of one kubelet-ts agent, every field present and checked.
 * Built by {@link resolveAgentOptions} from defaults ← `--config` file ← command-line flags.
 * Durations are in milliseconds (`…Ms`); the flags and the config file take Go duration strings.
 */
export interface AgentOptions {
  /** This node's name (`--hostname-override`, default `os.hostname()`), lowercased as nodeutil.GetHostname does. */
  nodeName: string;
  /** Static pod manifests: a file or a directory (`--pod-manifest-path`, `staticPodPath`); `''` = no file source. */
  podManifestPath: string;
  /** How often the file source re-lists `podManifestPath`, in milliseconds (`--file-check-frequency`, 20s). */
  fileCheckFrequencyMs: number;
  /** URL of static pod manifests (`--manifest-url`, `staticPodURL`); `''` = no http source. */
  manifestUrl: string;
  /** Headers sent with every manifest URL request (`--manifest-url-header`, `staticPodURLHeader`). */
  manifestUrlHeaders: Record<string, string[]>;
  /** How often the http source polls `manifestUrl`, in milliseconds (`--http-check-frequency`, 20s). */
  httpCheckFrequencyMs: number;
  /** Periodic resync of every pod, in milliseconds (`--sync-frequency`, 1m as the kubelet's). */
  syncFrequencyMs: number;
  /** IP address the HTTP server binds (`--address`, 127.0.0.1; kubelet's default is 0.0.0.0). */
  address: string;
  /** TCP port of the HTTP server (`--port`, 10250). 0 picks a free port (kubelet-ts extension, for tests). */
  port: number;
  /** Directory for the agent's state, e.g. intake pods (`--root-dir`, /var/lib/kubelet-ts). */
  rootDir: string;
  /** Docker Engine endpoint (`--docker-endpoint`); only `unix://` endpoints are supported. */
  dockerEndpoint: string;
  /** The socket path of `dockerEndpoint` (derived), as handed to workers in `WorkerBootstrap`. */
  dockerSocketPath: string;
  /** Image of every pod's sandbox (infra/pause) container (`--pod-infra-container-image`). */
  podInfraContainerImage: string;
  /** Most pods this node admits (`--max-pods`, 110). */
  maxPods: number;
  /** etcd client URLs (`--etcd-servers`); empty = no etcd source, no status or lease writes. */
  etcdServers: string[];
  /** Key prefix in etcd (`--etcd-prefix`, /registry), without a trailing slash (DESIGN.md §6). */
  etcdPrefix: string;
  /** How often node status is written, in milliseconds (`--node-status-update-frequency`, 10s). */
  nodeStatusUpdateFrequencyMs: number;
  /** Register this node (write its Node object) in etcd (`--register-node`, true). */
  registerNode: boolean;
  /** PEM CA bundle for https etcd URLs (`--etcd-cafile`); `''` = none. */
  etcdCafile: string;
  /** PEM client certificate for etcd (`--etcd-certfile`, with `--etcd-keyfile`); `''` = none. */
  etcdCertfile: string;
  /** PEM client key for etcd (`--etcd-keyfile`); `''` = none. */
  etcdKeyfile: string;
  /** etcd user for password auth (`--etcd-username`, with `--etcd-password`); `''` = no auth. */
  etcdUsername: string;
  /** etcd password (`--etcd-password`); `''` = none. */
  etcdPassword: string;
  /** TTL of the node's etcd lease, in seconds (`--node-lease-duration-seconds`, 40). */
  nodeLeaseDurationSeconds: number;
  /** Sustained pod status writes per second to etcd (`--etcd-qps`, 50; as --kube-api-qps). */
  etcdQps: number;
  /** Status writes allowed in a burst above `etcdQps` (`--etcd-burst`, 100; as --kube-api-burst). */
  etcdBurst: number;
  /** pino level (derived from `v` by verbosityToLevel unless given). */
  logLevel: string;
  /** klog verbosity (`--v`, 0). */
  v: number;
  /** Worker threads that run sync tasks (`--workers`, 2; kubelet-ts only). */
  workers: number;
  /** Container runtime: Docker, or the in-memory fake (`--runtime`, docker; kubelet-ts only). */
  runtime: 'docker' | 'fake';
  /**
   * PLEG relist period while Docker's events stream is up, in milliseconds (`--relist-period`, 60s;
   * the safety net under the event-driven PLEG, as the kubelet's Evented PLEG lengthens its relist
   * to 300s; the relist falls back to 1s while the stream is down). 60s rather than 10s: at 300
   * pods it took the idle agent from 2.1 % to 1.75 % of a core (README, Performance). The fake
   * runtime relists at this period.
   */
  relistPeriodMs: number;
  /** Per-operation latencies of the fake runtime, e.g. `create=5ms,start=5ms` (`--fake-runtime-latency`; kubelet-ts only, '' = none). */
  fakeRuntimeLatency: string;
  /** Per-operation failure rates of the fake runtime, e.g. `start=0.01` (`--fake-runtime-failure-rate`; kubelet-ts only, '' = none). */
  fakeRuntimeFailureRate: string;
  /** Shards of the desired-state table (`--pod-shards`, 16; kubelet-ts only). */
  podShards: number;
  /** The node's IP, reported as pod IP for hostNetwork pods and in Node addresses (`--node-ip`, 127.0.0.1). */
  nodeIp: string;
  /** Dead containers kept per container for logs (`--maximum-dead-containers-per-container`, 1). */
  maximumDeadContainersPerContainer: number;
  /** Disk usage (percent of the filesystem of Docker's root) at which image GC starts (`--image-gc-high-threshold`, 85; imageGCHighThresholdPercent). */
  imageGcHighThresholdPercent: number;
  /** Disk usage image GC frees down to (`--image-gc-low-threshold`, 80; imageGCLowThresholdPercent); must not exceed the high threshold. */
  imageGcLowThresholdPercent: number;
  /**
   * Node-level registry credentials (`--image-pull-credentials`): a Docker `config.json` whose
   * `auths` map gives credentials per registry host (as the kubelet's old Docker config keyring);
   * `''` = anonymous pulls.
   */
  imagePullCredentials: string;
  /** Static token file (`--token-auth-file`, CSV `token,user,uid,"group1,group2"`); `''` = no authentication. */
  tokenAuthFile: string;
  /** Largest HTTP request body, bytes (`--max-request-body-bytes`, 1 MiB; kubelet-ts only). */
  maxRequestBodyBytes: number;
}

/** kDefaultAgentOptions: every default, as `--help` shows them. `nodeName` is this host's name. */
export const kDefaultAgentOptions: Readonly<AgentOptions> = Object.freeze({
  nodeName: hostname().trim().toLowerCase(),
  podManifestPath: '',
  fileCheckFrequencyMs: 20_000,
  manifestUrl: '',
  manifestUrlHeaders: {},
  httpCheckFrequencyMs: 20_000,
  syncFrequencyMs: 60_000,
  address: '127.0.0.1',
  port: 10250,
  rootDir: '/var/lib/kubelet-ts',
  dockerEndpoint: 'unix:///var/run/docker.sock',
  dockerSocketPath: '/var/run/docker.sock',
  podInfraContainerImage: 'kubelet-ts/pause:1.0',
  maxPods: 110,
  etcdServers: [],
  etcdPrefix: '/registry',
  nodeStatusUpdateFrequencyMs: 10_000,
  registerNode: true,
  etcdCafile: '',
  etcdCertfile: '',
  etcdKeyfile: '',
  etcdUsername: '',
  etcdPassword: '',
  nodeLeaseDurationSeconds: 40,
  etcdQps: 50,
  etcdBurst: 100,
  logLevel: 'info',
  v: 0,
  workers: 2,
  runtime: 'docker',
  relistPeriodMs: 60_000,
  fakeRuntimeLatency: '',
  fakeRuntimeFailureRate: '',
  podShards: 16,
  nodeIp: '127.0.0.1',
  maximumDeadContainersPerContainer: 1,
  imageGcHighThresholdPercent: 85,
  imageGcLowThresholdPercent: 80,
  imagePullCredentials: '',
  tokenAuthFile: '',
  maxRequestBodyBytes: 1024 * 1024,
});

/**
 * kOptionFlags: the command-line flag of each option, used to name it in errors.
 * Derived options name the flag they come from.
 */
export const kOptionFlags: Readonly<Record<keyof AgentOptions, string>> = Object.freeze({
  nodeName: '--hostname-override',
  podManifestPath: '--pod-manifest-path',
  fileCheckFrequencyMs: '--file-check-frequency',
  manifestUrl: '--manifest-url',
  manifestUrlHeaders: '--manifest-url-header',
  httpCheckFrequencyMs: '--http-check-frequency',
  syncFrequencyMs: '--sync-frequency',
  address: '--address',
  port: '--port',
  rootDir: '--root-dir',
  dockerEndpoint: '--docker-endpoint',
  dockerSocketPath: '--docker-endpoint',
  podInfraContainerImage: '--pod-infra-container-image',
  maxPods: '--max-pods',
  etcdServers: '--etcd-servers',
  etcdPrefix: '--etcd-prefix',
  nodeStatusUpdateFrequencyMs: '--node-status-update-frequency',
  registerNode: '--register-node',
  etcdCafile: '--etcd-cafile',
  etcdCertfile: '--etcd-certfile',
  etcdKeyfile: '--etcd-keyfile',
  etcdUsername: '--etcd-username',
  etcdPassword: '--etcd-password',
  nodeLeaseDurationSeconds: '--node-lease-duration-seconds',
  etcdQps: '--etcd-qps',
  etcdBurst: '--etcd-burst',
  logLevel: '--v',
  v: '--v',
  workers: '--workers',
  runtime: '--runtime',
  relistPeriodMs: '--relist-period',
  fakeRuntimeLatency: '--fake-runtime-latency',
  fakeRuntimeFailureRate: '--fake-runtime-failure-rate',
  podShards: '--pod-shards',
  nodeIp: '--node-ip',
  maximumDeadContainersPerContainer: '--maximum-dead-containers-per-container',
  imageGcHighThresholdPercent: '--image-gc-high-threshold',
  imageGcLowThresholdPercent: '--image-gc-low-threshold',
  imagePullCredentials: '--image-pull-credentials',
  tokenAuthFile: '--token-auth-file',
  maxRequestBodyBytes: '--max-request-body-bytes',
});

const kLogLevels = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
// DNS-1123 subdomain, as a Node's name must be (validation.IsDNS1123Subdomain).
const kDns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// An HTTP header name (RFC 7230 token).
const kHeaderName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(typeof value === 'object' ? JSON.stringify(value) : value);
}

function fail(label: string, rule: string, value: unknown): never {
  throw new InvalidArgumentError(`${label} ${rule}, got ${show(value)}`);
}

function integerIn(label: string, value: unknown, min: number, max: number, rule?: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(label, rule ?? (max === Number.MAX_SAFE_INTEGER ? `must be an integer >= ${min}` : `must be an integer in ${min}..${max}`), value);
  }
  return value;
}

function positiveMs(label: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail(label, 'must be a positive duration', value);
  return value;
}

function str(label: string, value: unknown, allowEmpty: boolean): string {
  if (typeof value !== 'string') fail(label, 'must be a string', value);
  if (!allowEmpty && value.trim() === '') fail(label, 'must not be empty', value);
  return value;
}

function ip(label: string, value: unknown): string {
  if (typeof value !== 'string' || isIP(value) === 0) fail(label, 'must be an IP address', value);
  return value;
}

function httpUrl(label: string, value: unknown): string {
  if (typeof value !== 'string') fail(label, 'must be an http(s) URL', value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(label, 'must be an http(s) URL', value);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(label, 'must be an http(s) URL', value);
  return value;
}

/**
 * checkAgentOption validates and normalises one option value; used by {@link resolveAgentOptions}
 * and by the KubeletConfiguration loader (which passes `label` = `<file>: <field>`).
 * @param label names the setting in the error, e.g. `--port` or `/etc/k.yaml: port`.
 * @returns the normalised value (e.g. nodeName lowercased, etcdPrefix without trailing slash).
 * @throws InvalidArgumentError `<label> <rule>, got <value>`.
 */
export function checkAgentOption<K extends keyof AgentOptions>(key: K, value: unknown, label: string = kOptionFlags[key]): AgentOptions[K] {
  return checkers[key](label, value) as AgentOptions[K];
}

const checkers: Record<keyof AgentOptions, (label: string, value: unknown) => unknown> = {
  nodeName: (l, v) => {
    const name = str(l, v, false).trim().toLowerCase();
    if (name.length > 253 || !kDns1123Subdomain.test(name)) fail(l, 'must be a DNS-1123 subdomain (lowercase letters, digits, "-" and ".")', v);
    return name;
  },
  podManifestPath: (l, v) => {
    const s = str(l, v, true);
    return s === '' ? '' : resolvePath(s);
  },
  fileCheckFrequencyMs: positiveMs,
  manifestUrl: (l, v) => (v === '' ? '' : httpUrl(l, v)),
  manifestUrlHeaders: (l, v) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(l, 'must map header names to lists of values', v);
    const out: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(v)) {
      if (!kHeaderName.test(name)) fail(l, 'must name valid HTTP headers', name);
      if (!Array.isArray(values) || values.some((x) => typeof x !== 'string')) fail(`${l} ${name}`, 'must be a list of strings', values);
      out[name] = [...(values as string[])];
    }
    return out;
  },
  httpCheckFrequencyMs: positiveMs,
  syncFrequencyMs: positiveMs,
  address: ip,
  port: (l, v) => integerIn(l, v, 0, 65535, 'must be an integer in 1..65535 (or 0 for any free port)'),
  // Resolved against the working directory: worker threads and dockerd need absolute paths.
  rootDir: (l, v) => resolvePath(str(l, v, false)),
  dockerEndpoint: (l, v) => {
    const s = str(l, v, false);
    if (!s.startsWith('unix:///')) fail(l, 'must be a unix socket endpoint such as unix:///var/run/docker.sock', v);
    return s;
  },
  dockerSocketPath: (l, v) => {
    const s = str(l, v, false);
    if (!s.startsWith('/')) fail(l, 'must be an absolute socket path', v);
    return s;
  },
  podInfraContainerImage: (l, v) => {
    const s = str(l, v, false);
    if (/\s/.test(s)) fail(l, 'must be an image reference', v);
    return s;
  },
  maxPods: (l, v) => integerIn(l, v, 1, Number.MAX_SAFE_INTEGER),
  etcdServers: (l, v) => {
    if (!Array.isArray(v)) fail(l, 'must be a list of URLs', v);
    return v.map((u) => httpUrl(l, u));
  },
  etcdPrefix: (l, v) => {
    const s = str(l, v, false);
    if (!s.startsWith('/')) fail(l, 'must start with "/"', v);
    return s.replace(/\/+$/, '');
  },
  nodeStatusUpdateFrequencyMs: positiveMs,
  registerNode: (l, v) => {
    if (typeof v !== 'boolean') fail(l, 'must be true or false', v);
    return v;
  },
  etcdCafile: (l, v) => { const s = str(l, v, true); return s === '' ? '' : resolvePath(s); },
  etcdCertfile: (l, v) => { const s = str(l, v, true); return s === '' ? '' : resolvePath(s); },
  etcdKeyfile: (l, v) => { const s = str(l, v, true); return s === '' ? '' : resolvePath(s); },
  etcdUsername: (l, v) => str(l, v, true),
  etcdPassword: (l, v) => str(l, v, true),
  nodeLeaseDurationSeconds: (l, v) => integerIn(l, v, 1, 3600),
  etcdQps: (l, v) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(l, 'must be a positive number', v);
    return v;
  },
  etcdBurst: (l, v) => integerIn(l, v, 1, Number.MAX_SAFE_INTEGER),
  logLevel: (l, v) => {
    if (typeof v !== 'string' || !kLogLevels.has(v)) fail(l, `must be one of ${[...kLogLevels].join(', ')}`, v);
    return v;
  },
  v: (l, v) => integerIn(l, v, 0, 10),
  workers: (l, v) => integerIn(l, v, 1, 256),
  runtime: (l, v) => {
    if (v !== 'docker' && v !== 'fake') fail(l, 'must be one of docker, fake', v);
    return v;
  },
  relistPeriodMs: positiveMs,
  fakeRuntimeLatency: (l, v) => { const s = str(l, v, true); parseFakeLatencies(s); return s; },
  fakeRuntimeFailureRate: (l, v) => { const s = str(l, v, true); parseFakeFailureRates(s); return s; },
  podShards: (l, v) => integerIn(l, v, 1, 4096),
  nodeIp: ip,
  maximumDeadContainersPerContainer: (l, v) => integerIn(l, v, 0, Number.MAX_SAFE_INTEGER),
  imageGcHighThresholdPercent: (l, v) => integerIn(l, v, 0, 100),
  imageGcLowThresholdPercent: (l, v) => integerIn(l, v, 0, 100),
  imagePullCredentials: (l, v) => {
    const s = str(l, v, true);
    return s === '' ? '' : resolvePath(s);
  },
  tokenAuthFile: (l, v) => {
    const s = str(l, v, true);
    return s === '' ? '' : resolvePath(s);
  },
  maxRequestBodyBytes: (l, v) => integerIn(l, v, 1024, 1024 * 1024 * 1024, 'must be an integer in 1024..1073741824 (bytes)'),
};

/**
 * resolveAgentOptions fills defaults ({@link kDefaultAgentOptions}) into `partial` and validates
 * every field, as the kubelet's ValidateKubeletConfiguration does. Derived fields:
 * `dockerSocketPath` comes from `dockerEndpoint` (a `dockerSocketPath` given alone sets the endpoint),
 * and `logLevel` from `v` unless given. Pure; called on the main thread by the CLI and by tests.
 * @throws InvalidArgumentError naming the flag, e.g. `--port must be an integer in 1..65535 …, got "x"`,
 *   or `unknown option "…"` for a key that AgentOptions does not have.
 */
export function resolveAgentOptions(partial: Partial<AgentOptions> = {}): AgentOptions {
  for (const key of Object.keys(partial)) {
    if (!(key in kDefaultAgentOptions)) throw new InvalidArgumentError(`unknown option ${JSON.stringify(key)}`);
  }
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<AgentOptions>;
  const merged: Record<string, unknown> = { ...kDefaultAgentOptions, ...given };
  if (given.dockerEndpoint === undefined && given.dockerSocketPath !== undefined) {
    merged.dockerEndpoint = `unix://${checkAgentOption('dockerSocketPath', given.dockerSocketPath)}`;
  }
  const out = {} as Record<keyof AgentOptions, unknown>;
  for (const key of Object.keys(kDefaultAgentOptions) as (keyof AgentOptions)[]) {
    if (key === 'dockerSocketPath' || key === 'logLevel') continue;
    out[key] = checkAgentOption(key, merged[key]);
  }
  out.dockerSocketPath = (out.dockerEndpoint as string).slice('unix://'.length);
  // As the kubelet's validation: imageGCLowThresholdPercent must not exceed imageGCHighThresholdPercent.
  if ((out.imageGcLowThresholdPercent as number) > (out.imageGcHighThresholdPercent as number)) {
    throw new InvalidArgumentError(`--image-gc-low-threshold (${out.imageGcLowThresholdPercent}) must not exceed --image-gc-high-threshold (${out.imageGcHighThresholdPercent})`);
  }
  out.logLevel = given.logLevel !== undefined ? checkAgentOption('logLevel', given.logLevel) : verbosityToLevel(out.v as number);
  return out as unknown as AgentOptions;
}

// Counterpart of cmd/kubelet/app/options (KubeletFlags.AddFlags and the KubeletConfiguration defaults): one descriptor per option.
/**
 * kAgentOptionDescriptors is the one table of the agent's options, as piscina keeps
 * `kDefaultOptions` beside one resolved options type. Everything else is generated from it:
 * the AgentOptions type, kDefaultAgentOptions, the flag names in errors and the checks
 * (agent-options.ts), the yargs definition and `--help` (cli.ts), and the `--config` field
 * mapping (kubelet-config.ts). Its order is the `--help` order (docs/contracts.md "Flags", then ours).
 */
import { hostname } from 'node:os';
import { resolve as resolvePath } from 'node:path';
import { parseFakeFailureRates, parseFakeLatencies } from '../../shared/fake-runtime-tuning.js';
import { kRuntimeNames, type RuntimeName } from '../../shared/runtime-endpoint.js';
import { checkAllowedUnsafeSysctls } from '../pod/security-admission.js';
import { kEvictionOptionDescriptors } from './eviction-options.js';
import { kNetworkOptionDescriptors } from './network-options.js';
import { kEtcdOptionDescriptors } from './etcd-options.js';
import { kRuntimeEndpointOptionDescriptors } from './runtime-endpoint-options.js';
import { kServerOptionDescriptors } from './server-option-descriptors.js';
import { kPodRuntimeOptionDescriptors } from './pod-runtime-option-descriptors.js';
import { kNodeOptionDescriptors } from './node-option-descriptors.js';
import {
  failOption,
  httpUrl,
  integerIn,
  ipAddress,
  nonEmptyWhere,
  oneOf,
  optionalPath,
  positiveMs,
  str,
  type OptionCheck,
} from './agent-option-checks.js';

/**
 * How a flag's text becomes a value: `number` (yargs' number parsing, checked after), `string`,
 * `duration` (a Go duration such as `1m30s`, in ms), `boolean` (`--flag` or `--flag=false`),
 * `list` (comma-separated and repeatable), `headers` (`Name:Value` items, comma-separated and
 * repeatable), or `derived` (no flag of its own: resolveAgentOptions computes it).
 */
export type FlagParse = 'number' | 'string' | 'duration' | 'boolean' | 'list' | 'headers' | 'derived';

/**
 * AgentOptionDescriptor: everything about one option.
 * - `flag`: the command-line flag without dashes (`sync-frequency`); a derived option names the
 *   flag it comes from, so its errors name that flag.
 * - `parse`: how the flag's text is read ({@link FlagParse}).
 * - `config`: the KubeletConfiguration (v1beta1) field that sets it, if any; `parse: 'duration'`
 *   reads a Go duration, `'path'` resolves a relative path against the config file's directory.
 * - `default`: the value when neither flag nor file sets it; `defaultText` overrides its
 *   `[default: …]` text in `--help`.
 * - `check`: validates and normalises a value, throwing InvalidArgumentError naming `label`.
 * - `help`: the `--help` description (empty for a derived option); `ours`: a kubelet-ts flag
 *   (listed under "kubelet-ts flags:" in `--help`).
 */
export interface AgentOptionDescriptor<T> {
  flag: string;
  parse: FlagParse;
  config?: { field: string; parse?: 'duration' | 'path' };
  default: T;
  defaultText?: string;
  check: OptionCheck<T>;
  help: string;
  ours?: boolean;
}

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

// DNS-1123 subdomain, as a Node's name must be (validation.IsDNS1123Subdomain).
const kDns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// An HTTP header name (RFC 7230 token).
const kHeaderName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const kHostName = hostname().trim().toLowerCase();

/**
 * kAgentOptionDescriptors: one {@link AgentOptionDescriptor} per AgentOptions field, keyed by the
 * field. Durations are in milliseconds (`…Ms`); flags and the config file take Go duration strings.
 */
export const kAgentOptionDescriptors = {
  /** Static pod manifests: a file or a directory (`--pod-manifest-path`, `staticPodPath`); `''` = no file source. */
  podManifestPath: option({
    flag: 'pod-manifest-path',
    parse: 'string',
    config: { field: 'staticPodPath', parse: 'path' },
    default: '',
    check: optionalPath,
    help: 'Static pod manifests: a file, or a directory whose files are read (names starting with "." are ignored)',
  }),
  /** How often the file source re-lists `podManifestPath`, in milliseconds (`--file-check-frequency`, 20s). */
  fileCheckFrequencyMs: option({
    flag: 'file-check-frequency',
    parse: 'duration',
    config: { field: 'fileCheckFrequency', parse: 'duration' },
    default: 20_000,
    check: positiveMs,
    help: 'How often the static pod path is checked for new data (Go duration)',
  }),
  /** URL of static pod manifests (`--manifest-url`, `staticPodURL`); `''` = no http source. */
  manifestUrl: option({
    flag: 'manifest-url',
    parse: 'string',
    config: { field: 'staticPodURL' },
    default: '',
    check: (l, v) => (v === '' ? '' : httpUrl(l, v)),
    help: 'URL of static pod manifests',
  }),
  /** Headers sent with every manifest URL request (`--manifest-url-header`, `staticPodURLHeader`). */
  manifestUrlHeaders: option<Record<string, string[]>>({
    flag: 'manifest-url-header',
    parse: 'headers',
    config: { field: 'staticPodURLHeader' },
    default: {},
    check: (l, v) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) failOption(l, 'must map header names to lists of values', v);
      const out: Record<string, string[]> = {};
      for (const [name, values] of Object.entries(v)) {
        if (!kHeaderName.test(name)) failOption(l, 'must name valid HTTP headers', name);
        if (!Array.isArray(values) || values.some((x) => typeof x !== 'string'))
          failOption(`${l} ${name}`, 'must be a list of strings', values);
        out[name] = [...(values as string[])];
      }
      return out;
    },
    help: 'HTTP header for --manifest-url requests, as Name:Value; comma-separated and repeatable',
  }),
  /** How often the http source polls `manifestUrl`, in milliseconds (`--http-check-frequency`, 20s). */
  httpCheckFrequencyMs: option({
    flag: 'http-check-frequency',
    parse: 'duration',
    config: { field: 'httpCheckFrequency', parse: 'duration' },
    default: 20_000,
    check: positiveMs,
    help: 'How often --manifest-url is polled (Go duration)',
  }),
  /** Periodic resync of every pod, in milliseconds (`--sync-frequency`, 1m as the kubelet's). */
  syncFrequencyMs: option({
    flag: 'sync-frequency',
    parse: 'duration',
    config: { field: 'syncFrequency', parse: 'duration' },
    default: 60_000,
    check: positiveMs,
    help: 'Maximum period between syncs of a running pod (Go duration)',
  }),
  /**
   * A streaming connection (exec, attach, run) with no data for this long is closed, in
   * milliseconds (`--streaming-connection-idle-timeout`, streamingConnectionIdleTimeout, 4h as the
   * kubelet's); 0 = never.
   */
  streamingConnectionIdleTimeoutMs: option({
    flag: 'streaming-connection-idle-timeout',
    parse: 'duration',
    config: { field: 'streamingConnectionIdleTimeout', parse: 'duration' },
    default: 4 * 3600_000,
    defaultText: '4h',
    check: (label, value) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) failOption(label, 'must be a duration >= 0', value);
      return value;
    },
    help: 'Close an exec/attach/run stream after this long without data (Go duration; 0: never)',
  }),
  /** The API server's options: addresses, ports, TLS, authentication, bounds (server-option-descriptors.ts). */
  ...kServerOptionDescriptors,
  /** This node's name (`--hostname-override`, default `os.hostname()`), lowercased as nodeutil.GetHostname does. */
  nodeName: option({
    flag: 'hostname-override',
    parse: 'string',
    default: kHostName,
    defaultText: `this host's name (${JSON.stringify(kHostName)})`,
    check: (l, v) => {
      const name = str(false)(l, v).trim().toLowerCase();
      if (name.length > 253 || !kDns1123Subdomain.test(name))
        failOption(l, 'must be a DNS-1123 subdomain (lowercase letters, digits, "-" and ".")', v);
      return name;
    },
    help: 'Node name to use instead of the host name',
  }),
  /** The node's IP, reported as pod IP for hostNetwork pods and in Node addresses (`--node-ip`, 127.0.0.1). */
  nodeIp: option({
    flag: 'node-ip',
    parse: 'string',
    default: '127.0.0.1',
    check: ipAddress,
    help: 'IP address of the node (hostNetwork pod IP and Node addresses)',
  }),
  /** Directory for the agent's state: intake pods, the admin token `admin.token` (`--root-dir`, /var/lib/kubelet-ts). */
  rootDir: option({
    // Resolved against the working directory: worker threads and the runtime need absolute paths.
    flag: 'root-dir',
    parse: 'string',
    default: '/var/lib/kubelet-ts',
    check: (l, v) => resolvePath(str(false)(l, v)),
    help: 'Directory for the agent state (intake pods, the admin bearer token admin.token)',
  }),
  /** The pod network options (network/network-options.ts). */
  ...kNetworkOptionDescriptors,
  /** Docker Engine endpoint (`--docker-endpoint`); only `unix://` endpoints are supported. */
  dockerEndpoint: option({
    flag: 'docker-endpoint',
    parse: 'string',
    default: 'unix:///var/run/docker.sock',
    check: nonEmptyWhere((s) => s.startsWith('unix:///'), 'must be a unix socket endpoint such as unix:///var/run/docker.sock'),
    help: 'Docker Engine endpoint (unix://…)',
  }),
  /** The CRI endpoints (`--container-runtime-endpoint`, `--image-service-endpoint`; runtime-endpoint-options.ts). */
  ...kRuntimeEndpointOptionDescriptors,
  /**
   * The deadline of every request-response call to the container runtime, in milliseconds
   * (`--runtime-request-timeout`, runtimeRequestTimeout, 2m as the kubelet's): a create, start,
   * inspect or remove past it fails the sync with `context deadline exceeded`; a stop gets its grace
   * period on top. Streams (log follows, exec, attach, events) and image pulls have none. 0 = none.
   */
  runtimeRequestTimeoutMs: option({
    flag: 'runtime-request-timeout',
    parse: 'duration',
    config: { field: 'runtimeRequestTimeout', parse: 'duration' },
    default: 120_000,
    defaultText: '2m',
    check: (label, value) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) failOption(label, 'must be a duration >= 0', value);
      return value;
    },
    help: 'Timeout of every runtime request except long-running ones (pulls, logs, exec, attach) (Go duration; 0: none)',
  }),
  /** The socket path of `dockerEndpoint` (derived), as handed to workers in `WorkerBootstrap`. */
  dockerSocketPath: option({
    flag: 'docker-endpoint',
    parse: 'derived',
    default: '/var/run/docker.sock',
    check: nonEmptyWhere((s) => s.startsWith('/'), 'must be an absolute socket path'),
    help: '',
  }),
  /** Image of every pod's sandbox (infra/pause) container (`--pod-infra-container-image`). Upstream a flag only; we accept it in the config file too. */
  podInfraContainerImage: option({
    flag: 'pod-infra-container-image',
    parse: 'string',
    config: { field: 'podInfraContainerImage' },
    default: 'kubelet-ts/pause:1.0',
    check: nonEmptyWhere((s) => !/\s/.test(s), 'must be an image reference'),
    help: 'Image of the pod sandbox (pause) container',
  }),
  /**
   * Node-level registry credentials (`--image-pull-credentials`): a Docker `config.json` whose
   * `auths` map gives credentials per registry host (as the kubelet's old Docker config keyring);
   * `''` = anonymous pulls.
   */
  imagePullCredentials: option({
    flag: 'image-pull-credentials',
    parse: 'string',
    ours: true,
    default: '',
    check: optionalPath,
    help: 'Docker config.json with registry credentials (its "auths" map) used for image pulls',
  }),
  /** Most pods this node admits (`--max-pods`, 110). */
  maxPods: option({
    flag: 'max-pods',
    parse: 'number',
    config: { field: 'maxPods' },
    default: 110,
    check: integerIn(1, Number.MAX_SAFE_INTEGER),
    help: 'Number of pods this node can run',
  }),
  /**
   * Unsafe sysctls pods may set beyond the kubelet's safe set (`--allowed-unsafe-sysctls`,
   * allowedUnsafeSysctls): names or `prefix*` patterns, each of a namespaced sysctl (net.*, the IPC
   * ones); the rest are refused at admission with `SysctlForbidden`.
   */
  allowedUnsafeSysctls: option<string[]>({
    flag: 'allowed-unsafe-sysctls',
    parse: 'list',
    config: { field: 'allowedUnsafeSysctls' },
    default: [],
    check: (l, v) => {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) failOption(l, 'must be a list of sysctl names or patterns', v);
      const bad = checkAllowedUnsafeSysctls(v as string[]);
      if (bad) failOption(l, `must list namespaced sysctls only (${bad.replace(/^--allowed-unsafe-sysctls: the sysctl /, '')})`, v);
      return [...(v as string[])];
    },
    help: 'Comma-separated unsafe sysctls or patterns (ending in *) pods may set besides the safe ones',
  }),
  /** What each pod's sandbox and containers get: DNS, cgroups, logs, dead containers, image GC (pod-runtime-option-descriptors.ts). */
  ...kPodRuntimeOptionDescriptors,
  /** The etcd client options (etcd/etcd-options.ts). */
  ...kEtcdOptionDescriptors,
  /** The node's registration: its lease, status updates, registration and labels (node-option-descriptors.ts). */
  ...kNodeOptionDescriptors,
  /** pino level (derived from `v` by verbosityToLevel unless given). */
  logLevel: option({
    flag: 'v',
    parse: 'derived',
    default: 'info',
    check: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    help: '',
  }),
  /** klog verbosity (`--v`, 0). */
  v: option({
    flag: 'v',
    parse: 'number',
    default: 0,
    check: integerIn(0, 10),
    help: 'Log verbosity, as --v=N or -v N (0–1 info, 2–3 debug, 4+ trace)',
  }),
  /** Worker threads that run sync tasks (`--workers`, 2; kubelet-ts only). */
  workers: option({
    flag: 'workers',
    parse: 'number',
    ours: true,
    default: 2,
    check: integerIn(1, 256),
    help: 'Worker threads that run pod syncs',
  }),
  /**
   * How the agent reaches its runtime (`--runtime`, docker; kubelet-ts only, as the kubelet's old
   * `--container-runtime`): docker, remote (the CRI at `--container-runtime-endpoint`; implied by
   * that flag) or the in-memory fake. Resolved with the endpoint flags (runtime-endpoint-options.ts).
   */
  runtime: option<RuntimeName>({
    flag: 'runtime',
    parse: 'string',
    ours: true,
    default: 'docker',
    check: oneOf(kRuntimeNames),
    help: 'Container runtime: docker, remote (the CRI at --container-runtime-endpoint, implied by it) or fake (in-memory, for tests and benchmarks)',
  }),
  /**
   * PLEG relist period while the runtime's events stream is up (Docker's), in milliseconds (`--relist-period`, 60s;
   * the safety net under the event-driven PLEG, as the kubelet's Evented PLEG lengthens its relist
   * to 300s; the relist falls back to 1s while the stream is down). 60s rather than 10s: at 300
   * pods it took the idle agent from 2.1 % to 1.75 % of a core (README, Performance). The fake
   * runtime relists at this period.
   */
  relistPeriodMs: option({
    flag: 'relist-period',
    parse: 'duration',
    ours: true,
    default: 60_000,
    check: positiveMs,
    help: 'PLEG relist period (Go duration)',
  }),
  /**
   * Period of the stats collector, milliseconds (`--housekeeping-interval`, 10s: the cAdvisor flag
   * the kubelet registers, at the kubelet's 10 s). One `stats` task per period reads every
   * container's cgroup (src/main/stats/stats-provider.ts); /stats/summary's usageNanoCores is the
   * rate over the last period.
   */
  housekeepingIntervalMs: option({
    flag: 'housekeeping-interval',
    parse: 'duration',
    default: 10_000,
    check: positiveMs,
    help: 'Interval between container stats collections (Go duration)',
  }),
  /** The eviction manager's options (eviction/eviction-options.ts). */
  ...kEvictionOptionDescriptors,
  /** Per-operation latencies of the fake runtime, e.g. `create=5ms,start=5ms` (`--fake-runtime-latency`; kubelet-ts only, '' = none). */
  fakeRuntimeLatency: option({
    flag: 'fake-runtime-latency',
    parse: 'string',
    ours: true,
    default: '',
    check: (l, v) => {
      const s = str(true)(l, v);
      parseFakeLatencies(s);
      return s;
    },
    help: 'With --runtime fake: latency per operation (list, inspect, create, start, stop, remove), e.g. create=5ms,start=5ms',
  }),
  /** Per-operation failure rates of the fake runtime, e.g. `start=0.01` (`--fake-runtime-failure-rate`; kubelet-ts only, '' = none). */
  fakeRuntimeFailureRate: option({
    flag: 'fake-runtime-failure-rate',
    parse: 'string',
    ours: true,
    default: '',
    check: (l, v) => {
      const s = str(true)(l, v);
      parseFakeFailureRates(s);
      return s;
    },
    help: 'With --runtime fake: failure probability per operation, e.g. start=0.01',
  }),
} as const;

// Counterpart of cmd/kubelet/app/server.go NewKubeletCommand (flag parsing, --config loading, flag precedence).
import yargs, { type Argv } from 'yargs';
import { formatDuration, parseDuration } from '../shared/duration.js';
import { InvalidArgumentError, isInvalidInput } from '../shared/errors.js';
import { kDefaultAgentOptions, resolveAgentOptions, type AgentOptions } from './agent-options.js';
import { loadKubeletConfig } from './kubelet-config.js';
import { kubeletTsVersion } from './node/node-status.js';
// The one import of src/cli from src/main: the kubectl-like client's subcommands.
import { clientCommands, joinStdinFlag, type CliIo, type ClientRun, type SelectClient } from '../cli/cmd.js';

/**
 * CliUsageError: the command line cannot be used (unknown flag, bad value, bad `--config` file).
 * Its message is always one line; {@link runCli} prints it as `kubelet-ts: <message>` and exits 2.
 * It is an InvalidArgumentError, so `isInvalidInput(err)` is true.
 */
export class CliUsageError extends InvalidArgumentError {
  /** The process exit code for this error (2, as for a usage error). */
  readonly exitCode = 2;
  constructor(message: string) {
    super(message.replace(/\s*\n\s*/g, '; ').trim());
    this.name = 'CliUsageError';
  }
}

/**
 * CliInvocation: what a command line asks for. `agent` is the default command (run the node agent);
 * `help` and `version` carry the text to print. Later subcommands (`get`, `apply`, …) add kinds.
 */
export type CliInvocation =
  | { command: 'agent'; options: AgentOptions }
  | { command: 'client'; run: ClientRun }
  | { command: 'help' | 'version'; output: string };

/** CliHandlers: what {@link runCli} calls for each command. */
export interface CliHandlers {
  /** Runs the node agent with resolved options; runCli resolves when it does. */
  runAgent?: (options: AgentOptions) => Promise<void>;
}

/** CliIo: where {@link runCli} writes and how it exits (replaced in tests); defined in src/cli/io.ts. */
export type { CliIo };

const kProcessIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  exit: (code) => process.exit(code),
};

/** Scalar flags that take a number: parsed by yargs' number parsing, checked by resolveAgentOptions. */
const kNumberFlags = {
  port: 'port',
  'max-pods': 'maxPods',
  v: 'v',
  workers: 'workers',
  'pod-shards': 'podShards',
  'maximum-dead-containers-per-container': 'maximumDeadContainersPerContainer',
  'image-gc-high-threshold': 'imageGcHighThresholdPercent',
  'image-gc-low-threshold': 'imageGcLowThresholdPercent',
  'max-request-body-bytes': 'maxRequestBodyBytes',
  'node-lease-duration-seconds': 'nodeLeaseDurationSeconds',
  'etcd-qps': 'etcdQps',
  'etcd-burst': 'etcdBurst',
} as const satisfies Record<string, keyof AgentOptions>;

/** Flags that take a Go duration string. */
const kDurationFlags = {
  'file-check-frequency': 'fileCheckFrequencyMs',
  'http-check-frequency': 'httpCheckFrequencyMs',
  'sync-frequency': 'syncFrequencyMs',
  'node-status-update-frequency': 'nodeStatusUpdateFrequencyMs',
  'relist-period': 'relistPeriodMs',
} as const satisfies Record<string, keyof AgentOptions>;

/** Flags that take a plain string. */
const kStringFlags = {
  'pod-manifest-path': 'podManifestPath',
  'manifest-url': 'manifestUrl',
  address: 'address',
  'hostname-override': 'nodeName',
  'root-dir': 'rootDir',
  'docker-endpoint': 'dockerEndpoint',
  'pod-infra-container-image': 'podInfraContainerImage',
  'etcd-prefix': 'etcdPrefix',
  runtime: 'runtime',
  'node-ip': 'nodeIp',
  'token-auth-file': 'tokenAuthFile',
  'image-pull-credentials': 'imagePullCredentials',
  'etcd-cafile': 'etcdCafile',
  'etcd-certfile': 'etcdCertfile',
  'etcd-keyfile': 'etcdKeyfile',
  'etcd-username': 'etcdUsername',
  'etcd-password': 'etcdPassword',
  'fake-runtime-latency': 'fakeRuntimeLatency',
  'fake-runtime-failure-rate': 'fakeRuntimeFailureRate',
} as const satisfies Record<string, keyof AgentOptions>;

const kKubeletGroup = 'Kubelet flags:';
const kOurGroup = 'kubelet-ts flags:';
const kOurFlags = new Set(['workers', 'runtime', 'relist-period', 'pod-shards', 'max-request-body-bytes', 'fake-runtime-latency', 'fake-runtime-failure-rate']);

function defaultText(key: keyof AgentOptions): string {
  const d = kDefaultAgentOptions[key];
  if (key.endsWith('Ms')) return formatDuration(d as number);
  if (key === 'nodeName') return `this host's name (${JSON.stringify(d)})`;
  if (Array.isArray(d)) return d.length === 0 ? 'none' : d.join(',');
  if (d === '') return 'none';
  return String(d);
}

const kDescriptions: Record<string, string> = {
  config: `A KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags given on the command line override its fields`,
  'pod-manifest-path': 'Static pod manifests: a file, or a directory whose files are read (names starting with "." are ignored)',
  'file-check-frequency': 'How often the static pod path is checked for new data (Go duration)',
  'manifest-url': 'URL of static pod manifests',
  'manifest-url-header': 'HTTP header for --manifest-url requests, as Name:Value; comma-separated and repeatable',
  'http-check-frequency': 'How often --manifest-url is polled (Go duration)',
  'sync-frequency': 'Maximum period between syncs of a running pod (Go duration)',
  address: 'IP address the HTTP server serves on',
  port: 'Port of the HTTP server (0 = any free port)',
  'hostname-override': 'Node name to use instead of the host name',
  'root-dir': 'Directory for the agent state (intake pods)',
  'docker-endpoint': 'Docker Engine endpoint (unix://…)',
  'pod-infra-container-image': 'Image of the pod sandbox (pause) container',
  'max-pods': 'Number of pods this node can run',
  'etcd-servers': 'etcd URLs (comma-separated, repeatable); enables the etcd source, status and node lease',
  'etcd-prefix': 'Key prefix in etcd',
  'etcd-cafile': 'PEM CA bundle for https etcd URLs',
  'etcd-certfile': 'PEM client certificate for etcd (with --etcd-keyfile)',
  'etcd-keyfile': 'PEM client key for etcd',
  'etcd-username': 'etcd user name (password auth, with --etcd-password)',
  'etcd-password': 'etcd password',
  'etcd-qps': 'Pod status writes per second to etcd (token bucket rate)',
  'etcd-burst': 'Pod status writes allowed in a burst to etcd',
  'node-lease-duration-seconds': 'TTL of the node key\'s etcd lease, in seconds',
  'node-status-update-frequency': 'How often the node status is posted (Go duration)',
  'register-node': 'Register the node in etcd (--register-node=false to not)',
  v: 'Log verbosity, as --v=N or -v N (0–1 info, 2–3 debug, 4+ trace)',
  'node-ip': 'IP address of the node (hostNetwork pod IP and Node addresses)',
  'image-pull-credentials': 'Docker config.json with registry credentials (its "auths" map) used for image pulls',
  'token-auth-file': 'Static token file (CSV token,user,uid,"group1,group2"): requires a bearer token on every path but /healthz and the dashboard static files; group kubelet-ts:read-only may only GET',
  'max-request-body-bytes': 'Largest HTTP request body in bytes (larger: 413)',
  'maximum-dead-containers-per-container': 'Stopped instances kept per container',
  'image-gc-high-threshold': 'Disk usage percent (of Docker\'s root) at or above which image garbage collection runs',
  'image-gc-low-threshold': 'Disk usage percent image garbage collection frees down to',
  workers: 'Worker threads that run pod syncs',
  runtime: 'Container runtime: docker or fake (in-memory, for tests and benchmarks)',
  'relist-period': 'PLEG relist period (Go duration)',
  'pod-shards': 'Shards of the desired-state table',
  'fake-runtime-latency': 'With --runtime fake: latency per operation (list, inspect, create, start, stop, remove), e.g. create=5ms,start=5ms',
  'fake-runtime-failure-rate': 'With --runtime fake: failure probability per operation, e.g. start=0.01',
};

/** The flags in --help order (DESIGN.md §7, then ours). */
const kFlagOrder = [
  'config', 'pod-manifest-path', 'file-check-frequency', 'manifest-url', 'manifest-url-header', 'http-check-frequency',
  'sync-frequency', 'address', 'port', 'token-auth-file', 'max-request-body-bytes', 'hostname-override', 'node-ip', 'root-dir', 'docker-endpoint',
  'pod-infra-container-image', 'image-pull-credentials', 'max-pods', 'maximum-dead-containers-per-container', 'image-gc-high-threshold', 'image-gc-low-threshold', 'etcd-servers', 'etcd-prefix',
  'etcd-cafile', 'etcd-certfile', 'etcd-keyfile', 'etcd-username', 'etcd-password', 'etcd-qps', 'etcd-burst',
  'node-lease-duration-seconds', 'node-status-update-frequency', 'register-node', 'v', 'workers', 'runtime', 'relist-period', 'pod-shards',
  'fake-runtime-latency', 'fake-runtime-failure-rate',
] as const;

function defineAgentFlags(y: Argv): Argv {
  for (const flag of kFlagOrder) {
    const common = { describe: kDescriptions[flag], group: kOurFlags.has(flag) ? kOurGroup : kKubeletGroup };
    if (flag in kNumberFlags) {
      // No `type: 'number'`: yargs would turn "x" into NaN and lose what the user typed.
      y.option(flag, { ...common, requiresArg: true, defaultDescription: defaultText(kNumberFlags[flag as keyof typeof kNumberFlags]) });
    } else if (flag in kDurationFlags) {
      y.option(flag, { ...common, type: 'string', requiresArg: true, defaultDescription: defaultText(kDurationFlags[flag as keyof typeof kDurationFlags]) });
    } else if (flag in kStringFlags) {
      y.option(flag, { ...common, type: 'string', requiresArg: true, defaultDescription: defaultText(kStringFlags[flag as keyof typeof kStringFlags]) });
    } else if (flag === 'register-node') {
      y.option(flag, { ...common, type: 'boolean', defaultDescription: 'true' });
    } else {
      y.option(flag, { ...common, type: 'string', requiresArg: true, defaultDescription: 'none' });
    }
  }
  return y;
}

/** The last value of a scalar flag given several times (as pflag: the last one wins). */
function last(value: unknown): unknown {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function list(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.map(String).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
}

/** parseHeaders: `Name:Value` items (comma-separated, repeatable), as cliflag.ColonSeparatedMultimapStringString. */
function parseHeaders(value: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const item of list(value)) {
    const colon = item.indexOf(':');
    if (colon <= 0) throw new CliUsageError(`--manifest-url-header must be Name:Value, got ${JSON.stringify(item)}`);
    const name = item.slice(0, colon).trim();
    (out[name] ??= []).push(item.slice(colon + 1).trim());
  }
  return out;
}

/** flagOptions maps the flags the user actually gave (yargs sets no defaults) onto options. */
function flagOptions(argv: Record<string, unknown>): Partial<AgentOptions> {
  const out: Record<string, unknown> = {};
  for (const [flag, key] of Object.entries({ ...kStringFlags, ...kNumberFlags })) {
    if (argv[flag] !== undefined) out[key] = last(argv[flag]);
  }
  for (const [flag, key] of Object.entries(kDurationFlags)) {
    const raw = last(argv[flag]);
    if (raw !== undefined) out[key] = parseDuration(String(raw), `--${flag}`);
  }
  if (argv['register-node'] !== undefined) out.registerNode = last(argv['register-node']);
  if (argv['manifest-url-header'] !== undefined) out.manifestUrlHeaders = parseHeaders(argv['manifest-url-header']);
  if (argv['etcd-servers'] !== undefined) out.etcdServers = list(argv['etcd-servers']);
  return out as Partial<AgentOptions>;
}

/** usageMessage rewrites yargs' messages to name flags as typed (`unknown flag: --foo`). */
function usageMessage(msg: string, args: string[]): string {
  const missing = /^Not enough arguments following: (.*)$/.exec(msg);
  if (missing) return `${missing[1].length === 1 ? '-' : '--'}${missing[1]} needs a value (see --help)`;
  const m = /^Unknown arguments?: (.*)$/.exec(msg);
  if (!m) return msg;
  const problems = new Set<string>();
  for (const name of m[1].split(', ')) {
    const asFlag = args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`) || a === `-${name}` || a.startsWith(`-${name}=`));
    if (asFlag) problems.add(`unknown flag: ${asFlag.split('=')[0]}`);
    else if (args.includes(name)) problems.add(`unexpected argument: ${JSON.stringify(name)}`);
    // else: a camelCase twin yargs made of a flag already listed.
  }
  return problems.size === 0 ? `${msg} (see --help)` : `${[...problems].join('; ')} (see --help)`;
}

type Selected = { command: 'agent'; argv: Record<string, unknown> } | Parameters<SelectClient>[0];

/** buildParser: the yargs definition. Later subcommands are added here with `.command(...)`. */
function buildParser(args: string[], select: (s: Selected) => void): Argv {
  return yargs(args)
    .scriptName('kubelet-ts')
    .locale('en')
    .strict()
    .exitProcess(false)
    // pflag has no --no-<flag> negation: --register-node=false is how to say false.
    .parserConfiguration({ 'duplicate-arguments-array': true, 'boolean-negation': false })
    .version(kubeletTsVersion())
    .help()
    .wrap(Math.min(120, process.stdout.columns || 100))
    .command(
      '$0',
      'Run the kubelet-ts node agent: keeps the containers of pods from static manifests, the HTTP intake and etcd running in Docker.',
      (y) => defineAgentFlags(y),
      (argv) => select({ command: 'agent', argv: argv as Record<string, unknown> }),
    )
    .command(clientCommands(select))
    .fail((msg: string | null, err: Error | undefined) => {
      throw err instanceof CliUsageError ? err : new CliUsageError(usageMessage(msg ?? err?.message ?? 'invalid command line', args));
    });
}

/**
 * parseCommandLine parses the arguments after the program name (e.g. `hideBin(process.argv)`).
 * For the agent command it loads `--config` (if given) and applies the flags the user gave on top
 * of it (flags win, as in the kubelet), then resolves and validates every option.
 * @throws CliUsageError (one-line message) for an unknown flag or argument, a bad value, or a bad config file.
 */
export async function parseCommandLine(argv: string[]): Promise<CliInvocation> {
  argv = joinStdinFlag(argv);
  let selected: Selected | undefined;
  const isHelp = argv.includes('--help');
  const output = await new Promise<string>((resolve, reject) => {
    try {
      buildParser(argv, (s) => (selected = s)).parse(argv, {}, (err: Error | undefined, _argv: unknown, out: string) => {
        if (err) reject(err instanceof CliUsageError ? err : new CliUsageError(err.message));
        else resolve(out);
      });
    } catch (err) {
      reject(err instanceof CliUsageError ? err : new CliUsageError((err as Error).message));
    }
  });
  if (selected === undefined) return { command: isHelp ? 'help' : 'version', output };
  if (selected.command === 'client') return { command: 'client', run: selected.run };
  try {
    const flags = flagOptions(selected.argv);
    const configPath = last(selected.argv.config);
    const fromConfig = typeof configPath === 'string' && configPath !== '' ? await loadKubeletConfig(configPath) : {};
    return { command: 'agent', options: resolveAgentOptions({ ...fromConfig, ...flags }) };
  } catch (err) {
    if (isInvalidInput(err) && !(err instanceof CliUsageError)) throw new CliUsageError((err as Error).message);
    throw err;
  }
}

/**
 * parseCli parses a command line that runs the agent (the default command) into resolved options.
 * @param argv the arguments after the program name (e.g. `hideBin(process.argv)`).
 * @throws CliUsageError for an unknown flag, a bad value, a bad `--config` file, or a command line
 *   that asks for something else (`--help`, `--version`).
 */
export async function parseCli(argv: string[]): Promise<AgentOptions> {
  const invocation = await parseCommandLine(argv);
  if (invocation.command !== 'agent') throw new CliUsageError(`${invocation.command} requested: no agent options to return`);
  return invocation.options;
}

/**
 * runCli is the process entry's CLI step. Help and version are printed to stdout and end the
 * process with 0; a usage error prints `kubelet-ts: <message>` to stderr and ends it with 2.
 * Otherwise it calls `handlers.runAgent(options)` (if given) and resolves with the options when
 * that resolves. Errors other than usage errors (e.g. from runAgent) reject.
 * @param argv the arguments after the program name (e.g. `hideBin(process.argv)`).
 * @returns the agent options, or undefined when it printed help/version or a usage error.
 */
export async function runCli(argv: string[], handlers: CliHandlers = {}, io: CliIo = kProcessIo): Promise<AgentOptions | undefined> {
  let invocation: CliInvocation;
  try {
    invocation = await parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof CliUsageError)) throw err;
    io.stderr(`kubelet-ts: ${err.message}\n`);
    io.exit(err.exitCode);
    return undefined;
  }
  if (invocation.command === 'client') {
    io.exit(await invocation.run(io));
    return undefined;
  }
  if (invocation.command !== 'agent') {
    io.stdout(`${invocation.output}\n`);
    io.exit(0);
    return undefined;
  }
  if (handlers.runAgent) await handlers.runAgent(invocation.options);
  return invocation.options;
}

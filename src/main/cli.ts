// Counterpart of cmd/kubelet/app/server.go NewKubeletCommand (flag parsing, --config loading, flag precedence).
import yargs, { type Argv } from 'yargs';
import { formatDuration, parseDuration } from '../shared/duration.js';
import { InvalidArgumentError, isInvalidInput } from '../shared/errors.js';
import { kAgentOptionDescriptors, type AgentOptionDescriptor } from './options/agent-option-descriptors.js';
import { resolveAgentOptions, type AgentOptions } from './options/agent-options.js';
import { loadKubeletConfig } from './options/kubelet-config.js';
import { kubeletTsVersion } from './node/node-status.js';
// The one import of src/cli from src/main: the kubectl-like client's subcommands.
import { clientCommands, joinStdinFlag, processTerminal, type CliIo, type ClientRun, type SelectClient } from '../cli/cmd.js';

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
  { command: 'agent'; options: AgentOptions } | { command: 'client'; run: ClientRun } | { command: 'help' | 'version'; output: string };

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
  get terminal() {
    return processTerminal();
  },
};

const kKubeletGroup = 'Kubelet flags:';
const kOurGroup = 'kubelet-ts flags:';

/** The `[default: …]` text of an option in --help: Go durations, `none` for an empty value. */
function defaultText(d: AgentOptionDescriptor<unknown>): string {
  if (d.defaultText !== undefined) return d.defaultText;
  const v = d.default;
  if (d.parse === 'duration') return formatDuration(v as number);
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.join(',');
  if (typeof v === 'object' && v !== null) return Object.keys(v).length === 0 ? 'none' : JSON.stringify(v);
  if (v === '') return 'none';
  return String(v);
}

/** The options that have a flag of their own, in --help order. */
const kFlagOptions = (Object.entries(kAgentOptionDescriptors) as [keyof AgentOptions, AgentOptionDescriptor<unknown>][]).filter(
  ([, d]) => d.parse !== 'derived',
);

/** defineAgentFlags: `--config`, then one yargs option per descriptor (docs/contracts.md "Flags", then ours). */
function defineAgentFlags(y: Argv): Argv {
  y.option('config', {
    describe: `A KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags given on the command line override its fields`,
    group: kKubeletGroup,
    type: 'string',
    requiresArg: true,
    defaultDescription: 'none',
  });
  for (const [, d] of kFlagOptions) {
    const common = { describe: d.help, group: d.ours ? kOurGroup : kKubeletGroup, defaultDescription: defaultText(d) };
    // No `type: 'number'`: yargs would turn "x" into NaN and lose what the user typed.
    if (d.parse === 'number') y.option(d.flag, { ...common, requiresArg: true });
    else if (d.parse === 'boolean') y.option(d.flag, { ...common, type: 'boolean' });
    else y.option(d.flag, { ...common, type: 'string', requiresArg: true });
  }
  return y;
}

/** The last value of a scalar flag given several times (as pflag: the last one wins). */
function last(value: unknown): unknown {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function list(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values
    .map(String)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
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
  for (const [key, d] of kFlagOptions) {
    const raw = argv[d.flag];
    if (raw === undefined) continue;
    if (d.parse === 'duration') out[key] = parseDuration(String(last(raw)), `--${d.flag}`);
    else if (d.parse === 'headers') out[key] = parseHeaders(raw);
    else if (d.parse === 'list') out[key] = list(raw);
    else out[key] = last(raw);
  }
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
  return (
    yargs(args)
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
        'Run the kubelet-ts node agent: keeps the containers of pods from static manifests, the HTTP intake and etcd running in its container runtime (Docker, or a CRI runtime such as containerd).',
        (y) => defineAgentFlags(y),
        (argv) => select({ command: 'agent', argv: argv as Record<string, unknown> }),
      )
      .command(clientCommands(select))
      .fail((msg: string | null, err: Error | undefined) => {
        throw err instanceof CliUsageError ? err : new CliUsageError(usageMessage(msg ?? err?.message ?? 'invalid command line', args));
      })
  );
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

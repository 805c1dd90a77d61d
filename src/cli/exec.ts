/**
 * Counterpart of `kubectl exec` and `kubectl attach` (k8s.io/kubectl/pkg/cmd/exec, cmd/attach):
 * `kubelet-ts exec [-it] POD [-n NS] [-c C] -- CMD…` runs a command in a container and exits with
 * its exit code; `kubelet-ts attach [-it] POD [-c C]` joins the container's main process. With
 * `-t` and a terminal on stdin, the local terminal goes raw for the session (every key reaches the
 * container) and its size follows SIGWINCH; without a terminal `-t` is dropped with kubectl's note.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Pod } from '../shared/api.js';
import type { CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  ClientError,
  clientFlags,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';
import { runRemoteCommand } from './remotecommand-client.js';

/** StreamCommandOptions: what exec and attach were asked. */
export interface StreamCommandOptions {
  pod: string;
  namespace: string;
  /** `-c`; undefined picks the default container (as `logs`). */
  container?: string;
  /** exec: the command and its arguments (after `--`). */
  command: string[];
  /** `-i`: forward stdin. */
  stdin: boolean;
  /** `-t`: ask for a TTY. */
  tty: boolean;
}

/** defaultContainer: `-c`, else the `kubectl.kubernetes.io/default-container` annotation, else the first (with kubectl's note on stderr when there are several). */
async function defaultContainer(flags: ClientFlags, opts: StreamCommandOptions, io: CliIo): Promise<string> {
  if (opts.container !== undefined) return opts.container;
  const pod = await apiJson<Pod>(flags, 'GET', `/pods/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(opts.pod)}`);
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const annotated = pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
  const container = annotated && names.includes(annotated) ? annotated : names[0];
  if (!container) throw new ClientError(`pod ${opts.pod} has no containers`);
  if (names.length > 1 && !annotated) io.stderr(`Defaulted container "${container}" out of: ${names.join(', ')}\n`);
  return container;
}

/**
 * runStream runs an exec (`kind` exec) or attach and resolves with the exit code (the command's
 * for exec; 0 for an attach that ended normally). Output goes to io.terminal's raw writers when
 * there is one, else to io.stdout/io.stderr as text.
 */
export async function runStream(kind: 'exec' | 'attach', flags: ClientFlags, opts: StreamCommandOptions, io: CliIo): Promise<number> {
  if (kind === 'exec' && opts.command.length === 0) throw new ClientError('you must specify at least one command for the container');
  const container = await defaultContainer(flags, opts, io);
  const term = io.terminal;
  let tty = opts.tty;
  if (tty && !(opts.stdin && term?.stdinIsTTY)) {
    io.stderr('Unable to use a TTY - input is not a terminal or the right kind of file\n');
    tty = false;
  }
  const q = new URLSearchParams();
  for (const arg of opts.command) if (kind === 'exec') q.append('command', arg);
  if (opts.stdin) q.set('stdin', '1');
  q.set('stdout', '1');
  if (!tty) q.set('stderr', '1');
  if (tty) q.set('tty', '1');
  const path = `/${kind}/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(opts.pod)}/${encodeURIComponent(container)}?${q}`;
  const decoder = { out: new TextDecoder(), err: new TextDecoder() };
  if (tty) term!.setRawMode(true);
  try {
    return await runRemoteCommand(flags, {
      path,
      tty,
      stdin: opts.stdin ? term?.stdin : undefined,
      onStdout: (c) => (term ? term.writeStdout(c) : io.stdout(decoder.out.decode(c, { stream: true }))),
      onStderr: (c) => (term ? term.writeStderr(c) : io.stderr(decoder.err.decode(c, { stream: true }))),
      size: tty ? () => term!.size() : undefined,
      onResize: tty ? (fn) => term!.onResize(fn) : undefined,
    });
  } finally {
    if (tty) term!.setRawMode(false);
  }
}

function streamBuilder(y: Argv): Argv {
  return addClientFlags(y)
    .positional('pod', { type: 'string', describe: 'Pod name' })
    .option('namespace', kNamespaceOption)
    .option('container', { alias: 'c', type: 'string', requiresArg: true, describe: 'Container name (default: the first)' })
    .option('stdin', { alias: 'i', type: 'boolean', default: false, describe: 'Pass stdin to the container' })
    .option('tty', { alias: 't', type: 'boolean', default: false, describe: 'Stdin is a TTY (raw mode and resize when it is a terminal)' });
}

function streamOptions(a: Record<string, unknown>, command: string[]): StreamCommandOptions {
  return {
    pod: String(a.pod),
    namespace: String(a.namespace),
    container: a.container === undefined ? undefined : String(a.container),
    command,
    stdin: Boolean(a.stdin),
    tty: Boolean(a.tty),
  };
}

/** execCommand: the yargs module of `kubelet-ts exec [-it] POD [-c C] -- CMD…`. */
export function execCommand(select: SelectClient): CommandModule {
  return {
    command: 'exec <pod> [command..]',
    describe: 'Run a command in a container (kubectl exec); exits with its exit code',
    builder: (y: Argv) =>
      streamBuilder(y).positional('command', { type: 'string', array: true, describe: 'The command and its arguments, after --' }),
    handler: clientHandler(select, (a, io) => {
      // yargs leaves what follows `--` in `_`, after the command's own name.
      const rest = ((a._ as unknown[]) ?? []).map(String);
      const afterDashes = rest[0] === 'exec' ? rest.slice(1) : rest;
      const command = [...((a.command as unknown[]) ?? []).map(String), ...afterDashes, ...((a['--'] as unknown[]) ?? []).map(String)];
      return runStream('exec', clientFlags(a), streamOptions(a, command), io);
    }),
  };
}

/** attachCommand: the yargs module of `kubelet-ts attach [-it] POD [-c C]`. */
export function attachCommand(select: SelectClient): CommandModule {
  return {
    command: 'attach <pod>',
    describe: "Attach to a container's main process (kubectl attach)",
    builder: (y: Argv) => streamBuilder(y),
    handler: clientHandler(select, (a, io) => runStream('attach', clientFlags(a), streamOptions(a, []), io)),
  };
}

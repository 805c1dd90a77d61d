/**
 * Counterpart of `kubectl logs` (k8s.io/kubectl/pkg/cmd/logs): prints a container's log from
 * GET /containerLogs/{namespace}/{pod}/{container}, streaming it with -f.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Pod } from '../shared/api.js';
import { parseDuration } from '../shared/duration.js';
import type { CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  apiRequest,
  ClientError,
  clientFlags,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';

/** LogsOptions of the command. */
export interface LogsCommandOptions {
  pod: string;
  namespace: string;
  /** `-c`; undefined picks the only container (or the first, with a note on stderr). */
  container?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tail?: number;
  sinceSeconds?: number;
}

/**
 * runLogs resolves the container (the `kubectl.kubernetes.io/default-container` annotation, else
 * the first, with `Defaulted container "x" out of: x, y` on stderr when there are several), then
 * writes the log to stdout as it arrives. Resolves with the exit code.
 */
export async function runLogs(flags: ClientFlags, opts: LogsCommandOptions, io: CliIo): Promise<number> {
  const ns = encodeURIComponent(opts.namespace);
  const podPath = encodeURIComponent(opts.pod);
  let container = opts.container;
  if (container === undefined) {
    const pod = await apiJson<Pod>(flags, 'GET', `/pods/${ns}/${podPath}`);
    const names = (pod.spec?.containers ?? []).map((c) => c.name);
    const annotated = pod.metadata?.annotations?.['kubectl.kubernetes.io/default-container'];
    container = annotated && names.includes(annotated) ? annotated : names[0];
    if (!container) throw new ClientError(`pod ${opts.pod} has no containers`);
    if (names.length > 1 && !annotated) io.stderr(`Defaulted container "${container}" out of: ${names.join(', ')}\n`);
  }
  const q = new URLSearchParams();
  if (opts.follow) q.set('follow', 'true');
  if (opts.previous) q.set('previous', 'true');
  if (opts.timestamps) q.set('timestamps', 'true');
  if (opts.tail !== undefined && opts.tail >= 0) q.set('tailLines', String(opts.tail));
  if (opts.sinceSeconds !== undefined) q.set('sinceSeconds', String(opts.sinceSeconds));
  const res = await apiRequest(flags, 'GET', `/containerLogs/${ns}/${podPath}/${encodeURIComponent(container)}${q.size ? `?${q}` : ''}`);
  if (!res.body) return 0;
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) io.stdout(decoder.decode(chunk, { stream: true }));
  const rest = decoder.decode();
  if (rest) io.stdout(rest);
  return 0;
}

/** logsCommand: the yargs module of `kubelet-ts logs POD [-c container] [-f] [--tail N]`. */
export function logsCommand(select: SelectClient): CommandModule {
  return {
    command: 'logs <pod>',
    describe: "Print a container's log (kubectl logs)",
    builder: (y: Argv) =>
      addClientFlags(y)
        .positional('pod', { type: 'string', describe: 'Pod name' })
        .option('namespace', kNamespaceOption)
        .option('container', { alias: 'c', type: 'string', requiresArg: true, describe: 'Container name' })
        .option('follow', { alias: 'f', type: 'boolean', default: false, describe: 'Stream the log until the container stops' })
        .option('previous', { alias: 'p', type: 'boolean', default: false, describe: 'The previous (dead) instance of the container' })
        .option('timestamps', { type: 'boolean', default: false, describe: 'Prefix lines with their time' })
        .option('tail', { type: 'number', default: -1, requiresArg: true, describe: 'Lines from the end to show (-1: all)' })
        .option('since', { type: 'string', requiresArg: true, describe: 'Only lines newer than this duration, e.g. 5s, 2m, 3h' }),
    handler: clientHandler(select, async (a, io) => {
      const tail = Number(a.tail);
      if (!Number.isInteger(tail) || tail < -1) throw new ClientError(`--tail must be an integer >= -1, got ${JSON.stringify(a.tail)}`);
      let sinceSeconds: number | undefined;
      if (a.since !== undefined) {
        try {
          sinceSeconds = Math.max(1, Math.ceil(parseDuration(String(a.since), '--since') / 1000));
        } catch (err) {
          throw new ClientError((err as Error).message);
        }
      }
      return runLogs(
        clientFlags(a),
        {
          pod: String(a.pod),
          namespace: String(a.namespace),
          container: a.container === undefined ? undefined : String(a.container),
          follow: Boolean(a.follow),
          previous: Boolean(a.previous),
          timestamps: Boolean(a.timestamps),
          tail: tail >= 0 ? tail : undefined,
          sinceSeconds,
        },
        io,
      );
    }),
  };
}

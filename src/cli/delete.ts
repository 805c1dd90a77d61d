/**
 * Counterpart of `kubectl delete pod` (k8s.io/kubectl/pkg/cmd/delete): a graceful delete through
 * DELETE /pods/{namespace}/{name}, then (with --wait, the default) waiting until the pod is gone.
 */
import { addEtcdClientFlags, etcdClientFlags, isEtcdMode } from './etcd-client.js';
import { runEtcdDeletePods } from './etcd-delete.js';
import type { Argv, CommandModule } from 'yargs';
import { isNotFound } from '../shared/errors.js';
import type { CliIo } from './io.js';
import { addClientFlags, apiRequest, ClientError, clientFlags, requirePods, clientHandler, kNamespaceOption, type ClientFlags, type SelectClient } from './client.js';

/** DeleteOptions: a parsed `delete pod` command. */
export interface DeletePodOptions {
  names: string[];
  namespace: string;
  /** `--grace-period` seconds; undefined keeps the pod's (kubectl's -1). */
  gracePeriodSeconds?: number;
  /** Wait until the pod is gone from GET /pods. */
  wait: boolean;
  /** Give up waiting after this long, milliseconds. */
  timeoutMs: number;
}

/**
 * runDeletePods deletes each pod, printing `pod "<name>" deleted`; with `wait` it then polls
 * GET /pods/{ns}/{name} until 404. Resolves with the exit code (1 if any delete failed or a wait timed out).
 */
export async function runDeletePods(flags: ClientFlags, opts: DeletePodOptions, io: CliIo, pollMs = 500): Promise<number> {
  let failed = 0;
  const deleted: string[] = [];
  for (const name of opts.names) {
    const q = opts.gracePeriodSeconds === undefined ? '' : `?gracePeriodSeconds=${opts.gracePeriodSeconds}`;
    try {
      await apiRequest(flags, 'DELETE', `/pods/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(name)}${q}`);
      io.stdout(`pod "${name}" deleted\n`);
      deleted.push(name);
    } catch (err) {
      failed++;
      io.stderr(`Error from server: ${(err as Error).message}\n`);
    }
  }
  if (opts.wait) {
    const deadline = Date.now() + opts.timeoutMs;
    for (const name of deleted) {
      for (;;) {
        try {
          await apiRequest(flags, 'GET', `/pods/${encodeURIComponent(opts.namespace)}/${encodeURIComponent(name)}`);
        } catch (err) {
          if (err instanceof ClientError && isNotFound(err)) break;
          throw err;
        }
        if (Date.now() > deadline) {
          io.stderr(`error: timed out waiting for the condition on pods/${name}\n`);
          failed++;
          break;
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    }
  }
  return failed > 0 ? 1 : 0;
}

/** deleteCommand: the yargs module of `kubelet-ts delete pod NAME… [-n ns] [--grace-period N]`. */
export function deleteCommand(select: SelectClient): CommandModule {
  return {
    command: 'delete <resource> <names..>',
    describe: 'Delete intake pods gracefully (kubectl delete pod)',
    builder: (y: Argv) =>
      addEtcdClientFlags(addClientFlags(y))
        .positional('resource', { type: 'string', describe: 'Resource type: pod' })
        .positional('names', { type: 'string', array: true, describe: 'Pod names' })
        .option('namespace', kNamespaceOption)
        .option('grace-period', { type: 'number', default: -1, requiresArg: true, describe: 'Seconds the pod gets to stop; -1 keeps its own, 0 kills at once' })
        .option('wait', { type: 'boolean', default: true, describe: 'Wait until the pod is gone (--wait=false to not)' })
        .option('timeout', { type: 'number', default: 0, requiresArg: true, describe: 'Seconds to wait (0: the grace period plus 120 s)' }),
    handler: clientHandler(select, async (a, io) => {
      const resource = String(a.resource);
      requirePods(resource);
      const grace = Number(a['grace-period']);
      if (!Number.isInteger(grace) || grace < -1) throw new ClientError(`--grace-period must be an integer >= -1, got ${JSON.stringify(a['grace-period'])}`);
      const timeout = Number(a.timeout);
      if (!Number.isFinite(timeout) || timeout < 0) throw new ClientError(`--timeout must be a number of seconds >= 0, got ${JSON.stringify(a.timeout)}`);
      if (isEtcdMode(a)) return runEtcdDeletePods(etcdClientFlags(a), { names: (a.names as unknown[]).map(String), namespace: String(a.namespace), wait: a.wait !== false, timeoutMs: (timeout > 0 ? timeout : 90) * 1000 }, io);
      return runDeletePods(clientFlags(a), {
        names: (a.names as unknown[]).map(String),
        namespace: String(a.namespace),
        gracePeriodSeconds: grace < 0 ? undefined : grace,
        wait: a.wait !== false,
        timeoutMs: (timeout > 0 ? timeout : Math.max(grace, 30) + 120) * 1000,
      }, io);
    }),
  };
}

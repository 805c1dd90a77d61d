// Counterpart of `kubectl delete pod NAME` in cluster mode: removes the desired pod's key; the node's agent then stops the pod and removes its status key.
import { cliClock, type CliIo } from './io.js';
import { EtcdCommandError as ClientError, withEtcd, type EtcdClientFlags } from './etcd-client.js';

/**
 * runEtcdDeletePods deletes `{prefix}/pods/{node}/{namespace}/{name}` for each name, printing
 * `pod "<name>" deleted`, or `Error from server (NotFound): pods "<name>" not found` (exit 1) for a
 * missing one. With `wait`, waits (up to `timeoutMs`) until the agent removed the status key.
 * @throws ClientError without `--node` or when etcd fails.
 */
export async function runEtcdDeletePods(
  flags: EtcdClientFlags,
  opts: { names: string[]; namespace: string; wait: boolean; timeoutMs: number },
  io: CliIo,
): Promise<number> {
  if (!flags.node) throw new ClientError('delete with --etcd-servers needs --node NAME');
  return withEtcd(flags, async (client, keys) => {
    let failed = 0;
    const deleted: string[] = [];
    for (const name of opts.names) {
      const res = await client
        .delete()
        .key(keys.pod(flags.node, opts.namespace, name))
        .exec();
      if (Number(res.deleted) === 0) {
        io.stderr(`Error from server (NotFound): pods "${name}" not found\n`);
        failed++;
        continue;
      }
      io.stdout(`pod "${name}" deleted\n`);
      deleted.push(name);
    }
    if (opts.wait) {
      const end = cliClock(io).now() + opts.timeoutMs;
      for (const name of deleted) {
        while ((await client.get(keys.podStatus(flags.node, opts.namespace, name)).string()) !== null) {
          if (cliClock(io).now() > end) throw new ClientError(`timed out waiting for pod "${name}" to be removed by node ${flags.node}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
    return failed > 0 ? 1 : 0;
  });
}

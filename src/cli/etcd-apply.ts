// Counterpart of `kubectl apply -f` in cluster mode: writes desired pods to {prefix}/pods/{node}/{namespace}/{name} (docs/contracts.md "etcd keys").
import type { Pod } from '../shared/api.js';
import { applyPodDefaults } from '../shared/defaults.js';
import { formatFieldError, InvalidManifestError } from '../shared/errors.js';
import { stableHash } from '../shared/hash.js';
import { parseManifests } from '../shared/manifest.js';
import { validatePodForNode } from '../shared/validation.js';
import type { CliIo } from './io.js';
import { EtcdCommandError as ClientError, withEtcd, type EtcdClientFlags } from './etcd-client.js';

/**
 * runEtcdApply puts every pod of `sources` under `--node`'s pod prefix, printing
 * `pod/<name> created|configured|unchanged` (unchanged: the stored value has the same content).
 * Every pod is parsed, defaulted and validated first (as the agent will); an invalid one stops
 * the command before anything is written. Resolves with the exit code.
 * @throws ClientError without `--node`, on a parse/validation error, or when etcd fails.
 */
export async function runEtcdApply(
  flags: EtcdClientFlags,
  sources: { origin: string; text: string }[],
  namespace: string | undefined,
  io: CliIo,
): Promise<number> {
  if (!flags.node) throw new ClientError('apply with --etcd-servers needs --node NAME (the node that runs the pods)');
  const pods: Pod[] = [];
  for (const s of sources) {
    let parsed: Pod[];
    try {
      parsed = parseManifests(s.text, s.origin);
    } catch (err) {
      if (err instanceof InvalidManifestError)
        throw new ClientError(`error parsing ${s.origin}: ${err.errors.map(formatFieldError).join('; ')}`);
      throw err;
    }
    for (const pod of parsed) {
      const meta = (pod.metadata ??= {});
      if (namespace !== undefined) {
        if (meta.namespace && meta.namespace !== namespace)
          throw new ClientError(`the namespace from the provided object "${meta.namespace}" does not match the namespace "${namespace}"`);
        meta.namespace = namespace;
      }
      meta.namespace ??= 'default';
      const errors = validatePodForNode(applyPodDefaults(pod));
      if (errors.length > 0)
        throw new ClientError(`${s.origin}: pod "${meta.name ?? ''}" is invalid: ${errors.map(formatFieldError).join('; ')}`);
      pods.push(pod);
    }
  }
  if (pods.length === 0) throw new ClientError('no objects passed to apply');
  return withEtcd(flags, async (client, keys) => {
    for (const pod of pods) {
      const key = keys.pod(flags.node, pod.metadata!.namespace!, pod.metadata!.name!);
      const value = JSON.stringify(pod);
      const before = await client.get(key).string();
      let verb = 'created';
      if (before !== null) {
        let same = false;
        try {
          same = stableHash(JSON.parse(before)) === stableHash(pod);
        } catch {
          // not JSON: replace it
        }
        verb = same ? 'unchanged' : 'configured';
      }
      if (verb !== 'unchanged') await client.put(key).value(value).exec();
      io.stdout(`pod/${pod.metadata!.name} ${verb}\n`);
    }
    return 0;
  });
}

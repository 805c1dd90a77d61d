/**
 * Counterpart of `kubectl delete` for pods (k8s.io/kubectl/pkg/cmd/delete): the pods named on the
 * command line, the pods of manifest files (`-f FILE|DIR|-`), or the pods a label selector picks
 * (`-l`, `--all`); each gets a graceful delete through DELETE /pods/{namespace}/{name}, then (with
 * --wait, the default) the command waits until every deleted pod is gone.
 */
import { addEtcdClientFlags, etcdClientFlags, isEtcdMode } from './etcd-client.js';
import { runEtcdDeletePods } from './etcd-delete.js';
import type { Argv, CommandModule } from 'yargs';
import { isNotFound } from '../shared/errors.js';
import { parseManifestSource, readManifestSources, readStdin } from './apply.js';
import { cliClock, type CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  apiRequest,
  ClientError,
  clientFlags,
  requirePods,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';
import { pod as decodePod, podList } from './decode.js';

/** PodRef: one pod to delete. */
export interface PodRef {
  namespace: string;
  name: string;
}

/** DeletePodOptions: a parsed `delete` command, its pods already resolved. */
export interface DeletePodOptions {
  pods: PodRef[];
  /** `--grace-period` seconds; undefined keeps the pod's (kubectl's -1). */
  gracePeriodSeconds?: number;
  /** Wait until the pods are gone from GET /pods. */
  wait: boolean;
  /** Give up waiting after this long, milliseconds. */
  timeoutMs: number;
  /** `--ignore-not-found`: a missing pod is neither printed nor an error. */
  ignoreNotFound?: boolean;
}

/**
 * runDeletePods deletes each pod, printing `pod "<name>" deleted` (kubectl's line), or
 * `Error from server (NotFound): pods "<name>" not found` for a missing one; with `wait` it then
 * polls GET /pods/{ns}/{name} every `pollMs` milliseconds until 404. Resolves with the exit code
 * (1 if any delete failed or a wait timed out).
 * @throws ClientError when the API cannot be reached while waiting.
 */
export async function runDeletePods(flags: ClientFlags, opts: DeletePodOptions, io: CliIo, pollMs = 500): Promise<number> {
  let failed = 0;
  const deleted: PodRef[] = [];
  const path = (p: PodRef) => `/pods/${encodeURIComponent(p.namespace)}/${encodeURIComponent(p.name)}`;
  for (const pod of opts.pods) {
    const q = opts.gracePeriodSeconds === undefined ? '' : `?gracePeriodSeconds=${opts.gracePeriodSeconds}`;
    try {
      // The answer must be the deleted Pod: a program on the port answering `{}` is not a delete (decode.ts).
      decodePod(await apiJson<unknown>(flags, 'DELETE', `${path(pod)}${q}`), `DELETE ${path(pod)}`);
      io.stdout(`pod "${pod.name}" deleted\n`);
      deleted.push(pod);
    } catch (err) {
      if (err instanceof ClientError && isNotFound(err)) {
        if (opts.ignoreNotFound) continue;
        io.stderr(`Error from server (NotFound): ${err.message}\n`);
      } else {
        io.stderr(`Error from server: ${(err as Error).message}\n`);
      }
      failed++;
    }
  }
  if (opts.wait) {
    const deadline = cliClock(io).now() + opts.timeoutMs;
    for (const pod of deleted) {
      for (;;) {
        try {
          await apiRequest(flags, 'GET', path(pod));
        } catch (err) {
          if (err instanceof ClientError && isNotFound(err)) break;
          throw err;
        }
        if (cliClock(io).now() > deadline) {
          io.stderr(`error: timed out waiting for the condition on pods/${pod.name}\n`);
          failed++;
          break;
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    }
  }
  return failed > 0 ? 1 : 0;
}

/**
 * podsOfManifests: the pods of `delete -f` sources, each in its manifest's namespace, else
 * `namespace` (`-n`), else `default`. A manifest whose namespace differs from an explicit `-n` is
 * refused, as kubectl does.
 * @throws ClientError naming the file that does not parse, holds no object, or clashes with `-n`.
 */
export function podsOfManifests(sources: { origin: string; text: string }[], namespace: string | undefined): PodRef[] {
  const out: PodRef[] = [];
  for (const s of sources) {
    for (const [i, pod] of parseManifestSource(s).entries()) {
      const name = pod.metadata?.name;
      if (!name) throw new ClientError(`error parsing ${s.origin}: [${i}].metadata.name: Required value`);
      const own = pod.metadata?.namespace;
      if (namespace !== undefined && own && own !== namespace) {
        throw new ClientError(
          `the namespace from the provided object "${own}" does not match the namespace "${namespace}". You must pass '--namespace=${own}' to perform this operation.`,
        );
      }
      out.push({ namespace: own || namespace || 'default', name });
    }
  }
  if (out.length === 0) throw new ClientError('no objects passed to delete');
  return out;
}

/**
 * podsOfSelector: the pods `delete pods -l SELECTOR` (or `--all`, selector '') removes — GET /pods
 * filtered by the server (`labelSelector`, `namespace` unless `allNamespaces`), in name order.
 * @throws ClientError from the API (a bad selector is the server's 400, naming it).
 */
export async function podsOfSelector(flags: ClientFlags, selector: string, namespace: string, allNamespaces: boolean): Promise<PodRef[]> {
  const q = new URLSearchParams();
  if (!allNamespaces) q.set('namespace', namespace);
  if (selector) q.set('labelSelector', selector);
  const list = podList(await apiJson<unknown>(flags, 'GET', `/pods?${q}`), `GET /pods?${q}`);
  return list.items
    .map((p) => ({ namespace: p.metadata?.namespace ?? 'default', name: p.metadata?.name ?? '' }))
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
}

/**
 * deleteCommand: the yargs module of `kubelet-ts delete pod NAME… | -f FILE… | pods -l SEL | pods --all`
 * with `-n`, `-A`, `--grace-period`, `--wait`, `--timeout`, `--ignore-not-found`. The combinations
 * kubectl refuses are refused with its messages (names with a selector, -f with a resource type).
 */
export function deleteCommand(select: SelectClient): CommandModule {
  return {
    command: 'delete [resource] [names..]',
    describe: 'Delete pods gracefully, by name, from manifest files, or by label selector (kubectl delete)',
    builder: (y: Argv) =>
      addEtcdClientFlags(addClientFlags(y))
        .positional('resource', { type: 'string', describe: 'Resource type: pod' })
        .positional('names', { type: 'string', array: true, describe: 'Pod names' })
        .option('namespace', { ...kNamespaceOption, default: undefined, defaultDescription: 'default' })
        .option('filename', {
          alias: 'f',
          type: 'string',
          array: true,
          requiresArg: true,
          describe: 'Manifest file, directory of manifests, or - for stdin: delete the pods it names (repeatable)',
        })
        .option('selector', {
          alias: 'l',
          type: 'string',
          requiresArg: true,
          describe: 'Delete the pods this label selector matches, e.g. app=web',
        })
        .option('all', { type: 'boolean', default: false, describe: 'Delete every pod in the namespace' })
        .option('all-namespaces', { alias: 'A', type: 'boolean', default: false, describe: 'With -l or --all: in every namespace' })
        .option('ignore-not-found', { type: 'boolean', default: false, describe: 'A missing pod is not an error' })
        .option('grace-period', {
          type: 'number',
          default: -1,
          requiresArg: true,
          describe: 'Seconds the pod gets to stop; -1 keeps its own, 0 kills at once',
        })
        .option('wait', { type: 'boolean', default: true, describe: 'Wait until the pod is gone (--wait=false to not)' })
        .option('timeout', { type: 'number', default: 0, requiresArg: true, describe: 'Seconds to wait (0: the grace period plus 120 s)' }),
    handler: clientHandler(select, async (a, io) => {
      const names = ((a.names as unknown[] | undefined) ?? []).map(String);
      const files = ((a.filename as unknown[] | undefined) ?? []).map(String);
      const selector = a.selector === undefined ? undefined : String(a.selector);
      const all = a.all === true;
      if (files.length > 0) {
        if (a.resource !== undefined)
          throw new ClientError(
            "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubelet-ts delete -f FILE')",
          );
      } else {
        if (a.resource === undefined) throw new ClientError('You must provide one or more resources by argument or filename.');
        requirePods(String(a.resource));
        if ((selector !== undefined || all) && names.length > 0)
          throw new ClientError('name cannot be provided when a selector is specified');
        if (selector === undefined && !all && names.length === 0)
          throw new ClientError('resource(s) were provided, but no name was specified');
      }
      const grace = Number(a['grace-period']);
      if (!Number.isInteger(grace) || grace < -1)
        throw new ClientError(`--grace-period must be an integer >= -1, got ${JSON.stringify(a['grace-period'])}`);
      const timeout = Number(a.timeout);
      if (!Number.isFinite(timeout) || timeout < 0)
        throw new ClientError(`--timeout must be a number of seconds >= 0, got ${JSON.stringify(a.timeout)}`);
      // No default in yargs: -f tells an explicit -n (which must match the manifests) from none.
      const explicitNs = a.namespace === undefined ? undefined : String(a.namespace);
      const namespace = explicitNs ?? 'default';
      if (isEtcdMode(a)) {
        if (files.length > 0 || selector !== undefined || all)
          throw new ClientError('delete with --etcd-servers takes pod names only (no -f, -l or --all)');
        return runEtcdDeletePods(
          etcdClientFlags(a),
          { names, namespace, wait: a.wait !== false, timeoutMs: (timeout > 0 ? timeout : 90) * 1000 },
          io,
        );
      }
      const flags = clientFlags(a);
      let pods: PodRef[];
      if (files.length > 0) pods = podsOfManifests(await readManifestSources(files, readStdin), explicitNs);
      else if (selector !== undefined || all) pods = await podsOfSelector(flags, selector ?? '', namespace, a['all-namespaces'] === true);
      else pods = names.map((name) => ({ namespace, name }));
      if (pods.length === 0) {
        io.stdout('No resources found\n');
        return 0;
      }
      return runDeletePods(
        flags,
        {
          pods,
          gracePeriodSeconds: grace < 0 ? undefined : grace,
          wait: a.wait !== false,
          timeoutMs: (timeout > 0 ? timeout : Math.max(grace, 30) + 120) * 1000,
          ignoreNotFound: a['ignore-not-found'] === true,
        },
        io,
      );
    }),
  };
}

/**
 * Counterpart of `kubectl get pods` (k8s.io/kubectl/pkg/cmd/get and the pod table printer
 * pkg/printers/internalversion printPod): lists the agent's pods as a table, wide table, JSON or YAML,
 * optionally watching for changes through the agent's WebSocket watch (pod-watch.ts).
 */
import { addEtcdClientFlags, etcdClientFlags, isEtcdMode } from './etcd-client.js';
import { runEtcdGetNodes, runEtcdGetPods } from './etcd-get.js';
import type { Argv, CommandModule } from 'yargs';
import { stringify as toYaml } from 'yaml';
import { kKubernetesYaml } from '../shared/yaml-options.js';
import type { Pod, PodList } from '../shared/api.js';
import { podStatusReason } from '../shared/pod-printer.js';

export { podStatusReason };
import { cliClock, type CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  ClientError,
  clientFlags,
  formatAge,
  formatTable,
  kPodAliases,
  requirePods,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';
import { podList } from './decode.js';
import { newWatchBackoff, watchPods, type PodWatchEvent, type WatchBackoffOptions } from './pod-watch.js';

/** Output formats of `-o`. */
export type GetOutput = 'table' | 'wide' | 'json' | 'yaml';

/** GetPodsOptions: a parsed `get pods` command. */
export interface GetPodsOptions {
  /** One pod's name, or undefined for all. */
  name?: string;
  /** Namespace (`-n`, default `default`); '' with `-A` for every namespace. */
  namespace: string;
  /** Label selector (`-l`), passed to the API as `labelSelector`. */
  selector: string;
  output: GetOutput;
  watch: boolean;
  /** Omit the header row (`--no-headers`). */
  noHeaders: boolean;
}

/** podRow: one table row (NAME READY STATUS RESTARTS AGE, then IP NODE NOMINATED NODE READINESS GATES for wide). */
export function podRow(pod: Pod, wide: boolean, nowMs: number, withNamespace: boolean): string[] {
  const s = podStatusReason(pod);
  const created = Date.parse(pod.metadata?.creationTimestamp ?? pod.status?.startTime ?? '');
  const restarts = s.lastRestartMs > 0 ? `${s.restarts} (${formatAge(nowMs - s.lastRestartMs)} ago)` : String(s.restarts);
  const row = [
    pod.metadata?.name ?? '',
    `${s.ready}/${s.total}`,
    s.reason,
    restarts,
    Number.isNaN(created) ? '<unknown>' : formatAge(nowMs - created),
  ];
  if (withNamespace) row.unshift(pod.metadata?.namespace ?? 'default');
  if (wide) row.push(pod.status?.podIP || '<none>', pod.spec?.nodeName || '<none>', '<none>', '<none>');
  return row;
}

/** podTableHeader: the header row matching podRow. */
export function podTableHeader(wide: boolean, withNamespace: boolean): string[] {
  const h = ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
  if (withNamespace) h.unshift('NAMESPACE');
  if (wide) h.push('IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES');
  return h;
}

/** formatPods renders pods in `output` (json/yaml: the Pod for one name, else a `List`, as kubectl prints). */
export function formatPods(pods: Pod[], opts: Pick<GetPodsOptions, 'output' | 'namespace' | 'name' | 'noHeaders'>, nowMs: number): string {
  const objects = pods.map((p) => ({ apiVersion: 'v1', kind: 'Pod', ...p }));
  if (opts.output === 'json' || opts.output === 'yaml') {
    const value = opts.name ? objects[0] : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects };
    return opts.output === 'json' ? `${JSON.stringify(value, null, 4)}\n` : toYaml(value, kKubernetesYaml);
  }
  const wide = opts.output === 'wide';
  const withNs = opts.namespace === '';
  const rows = pods.map((p) => podRow(p, wide, nowMs, withNs));
  return formatTable(opts.noHeaders ? rows : [podTableHeader(wide, withNs), ...rows]);
}

/** A listed set of pods with the list's resourceVersion ('' when the agent does not report one). */
interface PodListing {
  pods: Pod[];
  resourceVersion: string;
}

/**
 * listPods: GET /pods with the namespace and selector, sorted by namespace/name; with `opts.name`
 * only that pod.
 * @throws ClientError `pods "x" not found` when a named pod is absent and `allowMissing` is false,
 *   or apiRequest's errors.
 */
async function listPods(flags: ClientFlags, opts: GetPodsOptions, allowMissing = false): Promise<PodListing> {
  const q = new URLSearchParams();
  if (opts.namespace) q.set('namespace', opts.namespace);
  if (opts.selector) q.set('labelSelector', opts.selector);
  const path = `/pods${q.size > 0 ? `?${q}` : ''}`;
  const list = podList(await apiJson<unknown>(flags, 'GET', path), `GET ${path}`);
  let pods = list.items;
  if (opts.name) {
    pods = pods.filter((p) => p.metadata?.name === opts.name);
    if (pods.length === 0 && !allowMissing) throw new ClientError(`pods "${opts.name}" not found`);
  }
  pods.sort((a, b) => `${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(`${b.metadata?.namespace}/${b.metadata?.name}`));
  return { pods, resourceVersion: list.metadata?.resourceVersion ?? '' };
}

/** GetWatchOptions: tuning of `get pods -w` (tests shorten the backoff). */
export interface GetWatchOptions {
  /** Delays before re-watching after a lost connection (milliseconds). */
  backoff?: WatchBackoffOptions;
}

/**
 * runGetPods prints the pods once; with `watch` (`-w`), as `kubectl get -w`, it prints the list
 * (header and rows) and then follows the agent's WebSocket watch (`WS /watch/pods`) from the
 * list's resourceVersion, printing one row per ADDED/MODIFIED/DELETED event (a DELETED pod's
 * last row shows `Terminating`), until `signal` aborts. As client-go's reflector:
 * - an ERROR with a 410 `Status` (resourceVersion too old, or the agent restarted) relists —
 *   printing a row only for pods whose row changed or that went — and watches from the new list;
 * - a lost connection (agent stopped, network) is reported on stderr and the watch is resumed
 *   from the last resourceVersion seen after a backoff (1 s doubling to 30 s, reset once a watch
 *   connects), relisting when that answers 410.
 * Resolves with the exit code (0 once aborted).
 * @throws ClientError for the first list's errors and for a watch the server refuses (401, 403, 404).
 */
export async function runGetPods(
  flags: ClientFlags,
  opts: GetPodsOptions,
  io: CliIo,
  signal?: AbortSignal,
  watchOptions: GetWatchOptions = {},
): Promise<number> {
  const first = await listPods(flags, opts);
  if (!opts.watch) {
    if (first.pods.length === 0 && (opts.output === 'table' || opts.output === 'wide')) {
      io.stderr(opts.namespace ? `No resources found in ${opts.namespace} namespace.\n` : 'No resources found\n');
      return 0;
    }
    io.stdout(formatPods(first.pods, opts, cliClock(io).now()));
    return 0;
  }
  const wide = opts.output === 'wide';
  const withNs = opts.namespace === '';
  const rowOf = (p: Pod) =>
    opts.output === 'json' || opts.output === 'yaml'
      ? formatPods([p], { ...opts, name: 'x' }, cliClock(io).now())
      : formatTable([podRow(p, wide, cliClock(io).now(), withNs)]);
  const uidOf = (p: Pod) => p.metadata?.uid ?? `${p.metadata?.namespace}/${p.metadata?.name}`;
  const gone = (p: Pod): Pod => ({
    ...p,
    metadata: { ...p.metadata, deletionTimestamp: p.metadata?.deletionTimestamp ?? new Date(cliClock(io).now()).toISOString() },
  });
  /** What was last printed per pod; the key leaves out AGE (it changes every second) and the resourceVersion. */
  const last = new Map<string, { key: string; pod: Pod }>();
  const keyOf = (p: Pod) => JSON.stringify([p.metadata?.deletionTimestamp, podStatusReason(p), p.status?.podIP, p.spec?.nodeName]);
  /** showList prints the rows of `pods` that differ from what was printed last, and a last row for pods that went. */
  const showList = (pods: Pod[]) => {
    const seen = new Set<string>();
    for (const p of pods) {
      const uid = uidOf(p);
      seen.add(uid);
      const key = keyOf(p);
      if (last.get(uid)?.key !== key) io.stdout(rowOf(p));
      last.set(uid, { key, pod: p });
    }
    for (const [uid, { pod }] of last) {
      if (seen.has(uid)) continue;
      last.delete(uid);
      io.stdout(rowOf(gone(pod)));
    }
  };
  if (opts.output === 'table' || opts.output === 'wide') io.stdout(formatTable([podTableHeader(wide, withNs)]));
  showList(first.pods);

  const backoff = newWatchBackoff(watchOptions.backoff);
  let resourceVersion = first.resourceVersion;
  /** Before the first BOOKMARK of a watch without a resourceVersion, its ADDED events repeat the list: print only changed rows. */
  let replaying = resourceVersion === '';
  const onEvent = (e: PodWatchEvent) => {
    resourceVersion = e.object.metadata?.resourceVersion ?? resourceVersion;
    if (e.type === 'BOOKMARK') {
      replaying = false;
      return;
    }
    const p = e.object;
    if (opts.name && p.metadata?.name !== opts.name) return;
    const uid = uidOf(p);
    if (e.type === 'DELETED') {
      last.delete(uid);
      io.stdout(rowOf(gone(p)));
      return;
    }
    const key = keyOf(p);
    const unchanged = last.get(uid)?.key === key;
    last.set(uid, { key, pod: p });
    if (!(replaying && unchanged)) io.stdout(rowOf(p));
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    });
  const lost = async (reason: string) => {
    const delay = backoff.next();
    io.stderr(`watch of pods lost: ${reason}; retrying in ${formatAge(delay)}\n`);
    await sleep(delay);
  };
  let needList = false;
  while (!signal?.aborted) {
    if (needList) {
      let listing: PodListing;
      try {
        listing = await listPods(flags, opts, true);
      } catch (err) {
        // The agent is unreachable (no HTTP status): keep trying; an answer with an error is final.
        if (!(err instanceof ClientError) || err.status !== undefined) throw err;
        await lost(err.message);
        continue;
      }
      showList(listing.pods);
      resourceVersion = listing.resourceVersion;
      replaying = resourceVersion === '';
      needList = false;
    }
    const end = await watchPods(flags, { namespace: opts.namespace, selector: opts.selector, resourceVersion }, onEvent, signal);
    if (end.kind === 'aborted') break;
    if (end.kind === 'expired') {
      // kubelet-ts restarts resourceVersions at 1 with the agent: a fresh list is the only way back.
      needList = true;
      continue;
    }
    if (end.opened) backoff.reset();
    await lost(end.reason);
  }
  return 0;
}

/** getCommand: the yargs module of `kubelet-ts get pods [NAME]`. */
export function getCommand(select: SelectClient): CommandModule {
  return {
    command: 'get <resource> [name]',
    describe: 'Display pods of the agent (kubectl get pods)',
    builder: (y: Argv) =>
      addEtcdClientFlags(addClientFlags(y))
        .positional('resource', { type: 'string', describe: 'Resource type: pods' })
        .positional('name', { type: 'string', describe: 'A pod name' })
        .option('namespace', kNamespaceOption)
        .option('all-namespaces', { alias: 'A', type: 'boolean', default: false, describe: 'List pods of every namespace' })
        .option('selector', {
          alias: 'l',
          type: 'string',
          default: '',
          requiresArg: true,
          describe: 'Label selector, e.g. app=web,tier in (front,back)',
        })
        .option('output', { alias: 'o', type: 'string', choices: ['wide', 'json', 'yaml'], requiresArg: true, describe: 'Output format' })
        .option('watch', { alias: 'w', type: 'boolean', default: false, describe: 'After listing, watch for changes' })
        .option('no-headers', { type: 'boolean', default: false, describe: 'Omit the header row' }),
    handler: clientHandler(select, async (a, io) => {
      const resource = String(a.resource);
      if (isEtcdMode(a) && ['nodes', 'node', 'no'].includes(resource))
        return runEtcdGetNodes(etcdClientFlags(a), String(a.output ?? ''), io);
      if (isEtcdMode(a) && kPodAliases.includes(resource)) {
        return runEtcdGetPods(
          etcdClientFlags(a),
          {
            namespace: a['all-namespaces'] ? '' : String(a.namespace),
            name: typeof a.name === 'string' ? a.name : undefined,
            output: String(a.output ?? ''),
          },
          io,
        );
      }
      requirePods(resource);
      const opts: GetPodsOptions = {
        name: typeof a.name === 'string' ? a.name : undefined,
        namespace: a['all-namespaces'] ? '' : String(a.namespace),
        selector: String(a.selector ?? ''),
        output: (a.output as GetOutput | undefined) ?? 'table',
        watch: Boolean(a.watch),
        noHeaders: Boolean(a['no-headers']),
      };
      const ac = new AbortController();
      const onSig = () => ac.abort();
      process.once('SIGINT', onSig);
      process.once('SIGTERM', onSig);
      try {
        return await runGetPods(clientFlags(a), opts, io, ac.signal);
      } finally {
        process.off('SIGINT', onSig);
        process.off('SIGTERM', onSig);
      }
    }),
  };
}

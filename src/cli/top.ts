/**
 * Counterpart of `kubectl top pod` and `kubectl top node` (k8s.io/kubectl/pkg/cmd/top and its
 * metricsutil printer): the figures come from the agent's own Summary API (GET /stats/summary)
 * rather than metrics.k8s.io — CPU as the sum of the containers' usageNanoCores in millicores
 * (`12m`), memory as the working set in MiB (`34Mi`); `top node` adds CPU% and MEMORY% of the
 * node's allocatable (GET /node).
 */
import type { Argv, CommandModule } from 'yargs';
import type { Node } from '../shared/api.js';
import { parseQuantity } from '../shared/quantity.js';
import type { PodStats, Summary } from '../shared/stats.js';
import type { CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  ClientError,
  clientFlags,
  clientHandler,
  formatTable,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';
import { objectWith } from './decode.js';

/** formatCpu: nanocores as kubectl's MilliValue column (`12m`; `0m` for none). */
export function formatCpu(nanoCores: number): string {
  return `${Math.round(nanoCores / 1e6)}m`;
}

/** formatMemory: bytes as kubectl's memory column (`34Mi`: bytes / 2^20, rounded down). */
export function formatMemory(bytes: number): string {
  return `${Math.floor(bytes / (1024 * 1024))}Mi`;
}

/** podUsage: a pod's CPU (nanocores, the sum over its containers, as kubectl's PodMetrics) and working set (bytes). */
export function podUsage(p: PodStats): { nanoCores: number; workingSetBytes: number } {
  let nanoCores = 0;
  let ws = 0;
  for (const c of p.containers) {
    nanoCores += c.cpu?.usageNanoCores ?? 0;
    ws += c.memory?.workingSetBytes ?? 0;
  }
  return { nanoCores, workingSetBytes: ws };
}

/** TopPodsOptions: a parsed `top pods`. */
export interface TopPodsOptions {
  /** Namespace; '' for every namespace (-A). */
  namespace: string;
  /** One pod, or undefined for all. */
  name?: string;
  noHeaders: boolean;
}

/** topPodsTable renders `top pods` from a Summary: NAME CPU(cores) MEMORY(bytes), NAMESPACE first with -A; sorted by name. Pure. */
export function topPodsTable(summary: Summary, opts: TopPodsOptions): string {
  const pods = summary.pods
    .filter(
      (p) => (opts.namespace === '' || p.podRef.namespace === opts.namespace) && (opts.name === undefined || p.podRef.name === opts.name),
    )
    .sort((a, b) =>
      a.podRef.namespace === b.podRef.namespace
        ? a.podRef.name.localeCompare(b.podRef.name)
        : a.podRef.namespace.localeCompare(b.podRef.namespace),
    );
  const all = opts.namespace === '';
  const rows: string[][] = opts.noHeaders ? [] : [[...(all ? ['NAMESPACE'] : []), 'NAME', 'CPU(cores)', 'MEMORY(bytes)']];
  for (const p of pods) {
    const u = podUsage(p);
    rows.push([...(all ? [p.podRef.namespace] : []), p.podRef.name, formatCpu(u.nanoCores), formatMemory(u.workingSetBytes)]);
  }
  return formatTable(rows);
}

/** topNodeTable renders `top node`: NAME CPU(cores) CPU% MEMORY(bytes) MEMORY% against the node's allocatable cpu and memory. Pure. */
export function topNodeTable(summary: Summary, node: Node | undefined, noHeaders: boolean): string {
  const alloc = node?.status?.allocatable ?? node?.status?.capacity ?? {};
  const cpuAlloc = alloc.cpu !== undefined ? parseQuantity(alloc.cpu as string, 'status.allocatable.cpu') * 1e9 : 0;
  const memAlloc = alloc.memory !== undefined ? parseQuantity(alloc.memory as string, 'status.allocatable.memory') : 0;
  const nano = summary.node.cpu?.usageNanoCores ?? 0;
  const ws = summary.node.memory?.workingSetBytes ?? 0;
  const pct = (v: number, of: number) => (of > 0 ? `${Math.round((v / of) * 100)}%` : '<unknown>');
  const rows: string[][] = noHeaders ? [] : [['NAME', 'CPU(cores)', 'CPU%', 'MEMORY(bytes)', 'MEMORY%']];
  rows.push([summary.node.nodeName, formatCpu(nano), pct(nano, cpuAlloc), formatMemory(ws), pct(ws, memAlloc)]);
  return formatTable(rows);
}

/** summaryOf: GET /stats/summary (cpu and memory only), checked to be a Summary (decode.ts). @throws ClientError */
async function summaryOf(flags: ClientFlags): Promise<Summary> {
  const path = '/stats/summary?only_cpu_and_memory=true';
  return objectWith<Summary>(await apiJson<unknown>(flags, 'GET', path), 'Summary', ['node'], `GET ${path}`, ['pods']);
}

/** runTopPods fetches /stats/summary and prints the table; `error: metrics not available yet` (exit 1) when no pod matches. */
export async function runTopPods(flags: ClientFlags, opts: TopPodsOptions, io: CliIo): Promise<number> {
  const summary = await summaryOf(flags);
  const text = topPodsTable(summary, opts);
  const any = summary.pods.some(
    (p) => (opts.namespace === '' || p.podRef.namespace === opts.namespace) && (opts.name === undefined || p.podRef.name === opts.name),
  );
  if (!any) {
    if (opts.name !== undefined) throw new ClientError(`pods "${opts.name}" not found (or its metrics are not available yet)`);
    io.stderr(opts.namespace ? `No resources found in ${opts.namespace} namespace.\n` : 'No resources found\n');
    return 0;
  }
  io.stdout(text);
  return 0;
}

/** runTopNode fetches /stats/summary and /node and prints the node's line. */
export async function runTopNode(flags: ClientFlags, noHeaders: boolean, io: CliIo): Promise<number> {
  const summary = await summaryOf(flags);
  const node = await apiJson<Node>(flags, 'GET', '/node').catch(() => undefined);
  io.stdout(topNodeTable(summary, node, noHeaders));
  return 0;
}

/** topCommand: the yargs module of `kubelet-ts top pods|pod|po [NAME] [-n NS] [-A]` and `top node|nodes|no`. */
export function topCommand(select: SelectClient): CommandModule {
  return {
    command: 'top <resource> [name]',
    describe: 'Show CPU and memory use of pods or the node (kubectl top)',
    builder: (y: Argv) =>
      addClientFlags(y)
        .positional('resource', { type: 'string', describe: 'pods or node' })
        .positional('name', { type: 'string', describe: 'One pod' })
        .option('namespace', kNamespaceOption)
        .option('all-namespaces', { alias: 'A', type: 'boolean', default: false, describe: 'Pods of every namespace' })
        .option('no-headers', { type: 'boolean', default: false, describe: 'Omit the header row' }),
    handler: clientHandler(select, async (a, io) => {
      const resource = String(a.resource);
      const noHeaders = Boolean(a['no-headers']);
      if (['pods', 'pod', 'po'].includes(resource)) {
        return runTopPods(
          clientFlags(a),
          { namespace: a['all-namespaces'] ? '' : String(a.namespace), name: typeof a.name === 'string' ? a.name : undefined, noHeaders },
          io,
        );
      }
      if (['node', 'nodes', 'no'].includes(resource)) return runTopNode(clientFlags(a), noHeaders, io);
      throw new ClientError(`top: unknown resource ${JSON.stringify(resource)}: expected pods or node`);
    }),
  };
}

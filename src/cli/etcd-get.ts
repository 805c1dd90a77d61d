// Counterpart of `kubectl get nodes` / `kubectl get pods` in cluster mode: reads Node objects and desired pods with their written-back PodStatus from etcd.
import { stringify as toYaml } from 'yaml';
import { kKubernetesYaml } from '../shared/yaml-options.js';
import type { Node, Pod, PodStatus } from '../shared/api.js';
import { cliClock, type CliIo } from './io.js';
import { humanDuration as formatAge } from '../shared/human-duration.js';
import { formatRows as formatTable, withEtcd, type EtcdClientFlags } from './etcd-client.js';

/** podRow: NAME READY STATUS RESTARTS AGE from a pod and its written-back status (STATUS as kubectl: a waiting/terminated reason wins over the phase). */
export function etcdPodRow(pod: Pod, nowMs: number): string[] {
  const cs = pod.status?.containerStatuses ?? [];
  let reason = pod.status?.reason || pod.status?.phase || 'Pending';
  for (const c of cs) {
    if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
    else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
  }
  const started = Date.parse(pod.status?.startTime ?? pod.metadata?.creationTimestamp ?? '');
  return [
    pod.metadata?.name ?? '',
    `${cs.filter((c) => c.ready).length}/${pod.spec?.containers?.length ?? cs.length}`,
    reason,
    String(cs.reduce((n, c) => n + (c.restartCount ?? 0), 0)),
    Number.isNaN(started) ? '<unknown>' : formatAge(nowMs - started),
  ];
}

/** nodeRow: NAME STATUS AGE PODS VERSION (STATUS from the Ready condition, as kubectl's printNode). */
export function nodeRow(node: Node, pods: number, nowMs: number): string[] {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const status = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
  const created = Date.parse(node.metadata?.creationTimestamp ?? '');
  return [
    node.metadata?.name ?? '',
    status,
    Number.isNaN(created) ? '<unknown>' : formatAge(nowMs - created),
    String(pods),
    node.status?.nodeInfo?.kubeletVersion ?? '',
  ];
}

/**
 * runEtcdGetNodes prints the registered nodes (`{prefix}/nodes/`) as NAME STATUS AGE PODS VERSION,
 * PODS counting the desired pods stored for that node; `output` json/yaml prints a List of Nodes.
 */
export async function runEtcdGetNodes(flags: EtcdClientFlags, output: string, io: CliIo): Promise<number> {
  return withEtcd(flags, async (client, keys) => {
    const nodes = Object.values(await client.getAll().prefix(keys.nodesPrefix()).strings()).map((v) => JSON.parse(v) as Node);
    const podKeys = await client.getAll().prefix(keys.allPodsPrefix()).keys();
    const counts = new Map<string, number>();
    for (const k of podKeys) {
      const where = keys.parsePodKey(k);
      if (where) counts.set(where.node, (counts.get(where.node) ?? 0) + 1);
    }
    nodes.sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    if (output === 'json' || output === 'yaml') {
      const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: nodes };
      io.stdout(output === 'json' ? `${JSON.stringify(list, null, 4)}\n` : toYaml(list, kKubernetesYaml));
      return 0;
    }
    if (nodes.length === 0) {
      io.stderr('No resources found\n');
      return 0;
    }
    const now = cliClock(io).now();
    io.stdout(
      formatTable([
        ['NAME', 'STATUS', 'AGE', 'PODS', 'VERSION'],
        ...nodes.map((n) => nodeRow(n, counts.get(n.metadata?.name ?? '') ?? 0, now)),
      ]),
    );
    return 0;
  });
}

/**
 * runEtcdGetPods prints the desired pods of `--node` (or of every node) with their written-back
 * status, in kubectl's pod table (with NODE when listing every node) or as json/yaml.
 */
export async function runEtcdGetPods(
  flags: EtcdClientFlags,
  opts: { namespace: string; name?: string; output: string },
  io: CliIo,
): Promise<number> {
  return withEtcd(flags, async (client, keys) => {
    const prefix = flags.node ? keys.podsPrefix(flags.node) : keys.allPodsPrefix();
    const statusPrefix = flags.node ? keys.podStatusPrefix(flags.node) : keys.allPodStatusPrefix();
    const [values, statuses] = await Promise.all([
      client.getAll().prefix(prefix).strings(),
      client.getAll().prefix(statusPrefix).strings(),
    ]);
    const pods: Pod[] = [];
    for (const [key, value] of Object.entries(values)) {
      const where = keys.parsePodKey(key);
      if (!where || (opts.namespace && where.namespace !== opts.namespace) || (opts.name && where.name !== opts.name)) continue;
      let pod: Pod;
      try {
        pod = JSON.parse(value) as Pod;
      } catch {
        pod = { metadata: { name: where.name, namespace: where.namespace } };
      }
      const s = statuses[keys.podStatus(where.node, where.namespace, where.name)];
      const status = s ? (JSON.parse(s) as PodStatus) : { phase: 'Pending' as const, reason: 'NotReported' };
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        ...pod,
        metadata: { ...pod.metadata, name: where.name, namespace: where.namespace },
        spec: { containers: [], ...pod.spec, nodeName: where.node },
        status,
      });
    }
    pods.sort((a, b) =>
      `${a.spec?.nodeName}/${a.metadata?.namespace}/${a.metadata?.name}`.localeCompare(
        `${b.spec?.nodeName}/${b.metadata?.namespace}/${b.metadata?.name}`,
      ),
    );
    if (opts.output === 'json' || opts.output === 'yaml') {
      const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: pods };
      io.stdout(opts.output === 'json' ? `${JSON.stringify(list, null, 4)}\n` : toYaml(list, kKubernetesYaml));
      return 0;
    }
    if (pods.length === 0) {
      io.stderr('No resources found\n');
      return 0;
    }
    const now = cliClock(io).now();
    const withNode = !flags.node;
    const allNs = opts.namespace === '';
    const header = [...(allNs ? ['NAMESPACE'] : []), 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'];
    const rows = pods.map((p) => {
      const r = [...(allNs ? [p.metadata?.namespace ?? ''] : []), ...etcdPodRow(p, now)];
      return withNode ? [...r, p.spec?.nodeName ?? ''] : r;
    });
    io.stdout(formatTable([withNode ? [...header, 'NODE'] : header, ...rows]));
    return 0;
  });
}

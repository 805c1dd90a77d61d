// Counterpart of the node's registration flags of cmd/kubelet/app/options (--node-labels, --register-node;
// KubeletConfiguration nodeStatusUpdateFrequency, nodeLeaseDurationSeconds) and of kubeletapis.IsKubeletLabel.
/**
 * The node registration options' descriptors, spread into kAgentOptionDescriptors
 * (agent-option-descriptors.ts) at their place in `--help`, so that the flags, the `--config` fields,
 * `--help` and the checks come from the one table. The etcd cluster mode (etcd/cluster.ts: the Node
 * object, its status and lease), GET /node (node/node-api.ts) and admission's node affinity read the
 * resolved values.
 */
import { isQualifiedName, isValidLabelValue } from '../../shared/names.js';
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { boolean, failOption, integerIn, positiveMs } from './agent-option-checks.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** The kubernetes.io / k8s.io label keys a kubelet may set on its node (kubeletapis.IsKubeletLabel). */
const kKubeletLabels = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const kKubeletLabelNamespaces = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/**
 * nodeLabelsCheck: `--node-labels` items `key=value` (or a map, from code) → a label map; keys must
 * be qualified names and values label values; a `kubernetes.io`/`k8s.io` key outside the kubelet's
 * own set is refused, as the kubelet refuses to start with one.
 */
function nodeLabelsCheck(l: string, v: unknown): Record<string, string> {
  const entries: Array<[string, unknown]> = Array.isArray(v)
    ? v.map((item) => {
        if (typeof item !== 'string' || !item.includes('=')) failOption(l, 'must be key=value items', item);
        const at = (item as string).indexOf('=');
        return [(item as string).slice(0, at).trim(), (item as string).slice(at + 1).trim()];
      })
    : typeof v === 'object' && v !== null
      ? Object.entries(v)
      : failOption(l, 'must be key=value items', v);
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (!isQualifiedName(key)) failOption(l, 'keys must be qualified names (e.g. example.com/role)', key);
    if (typeof value !== 'string' || !isValidLabelValue(value)) failOption(`${l} ${key}`, 'must be a valid label value', value);
    const domain = key.includes('/') ? key.slice(0, key.indexOf('/')) : '';
    const restricted = ['kubernetes.io', 'k8s.io'].some((d) => domain === d || domain.endsWith(`.${d}`));
    const allowed = kKubeletLabels.has(key) || kKubeletLabelNamespaces.some((ns) => domain === ns || domain.endsWith(`.${ns}`));
    if (restricted && !allowed) failOption(l, "may not set 'kubernetes.io' or 'k8s.io' labels other than the kubelet's own", key);
    out[key] = value as string;
  }
  return out;
}

/** kNodeOptionDescriptors: the node registration options (see each field's TSDoc). */
export const kNodeOptionDescriptors = {
  /** TTL of the node's etcd lease, in seconds (`--node-lease-duration-seconds`, 40). */
  nodeLeaseDurationSeconds: option({
    flag: 'node-lease-duration-seconds',
    parse: 'number',
    default: 40,
    check: integerIn(1, 3600),
    help: "TTL of the node key's etcd lease, in seconds",
  }),
  /** How often node status is written, in milliseconds (`--node-status-update-frequency`, 10s). */
  nodeStatusUpdateFrequencyMs: option({
    flag: 'node-status-update-frequency',
    parse: 'duration',
    config: { field: 'nodeStatusUpdateFrequency', parse: 'duration' },
    default: 10_000,
    check: positiveMs,
    help: 'How often the node status is posted (Go duration)',
  }),
  /** Register this node (write its Node object) in etcd (`--register-node`, true). */
  registerNode: option({
    flag: 'register-node',
    parse: 'boolean',
    config: { field: 'registerNode' },
    default: true,
    check: boolean,
    help: 'Register the node in etcd (--register-node=false to not)',
  }),
  /**
   * Labels this node carries beside the well-known ones (`--node-labels`, `key=value,...`; a flag
   * only, as the kubelet's): shown on GET /node and matched by pods' nodeSelector and required node
   * affinity at admission. Keys in the `kubernetes.io` / `k8s.io` namespaces are limited to the
   * kubelet's allowed set (kubeletapis.IsKubeletLabel).
   */
  nodeLabels: option<Record<string, string>>({
    flag: 'node-labels',
    parse: 'list',
    default: {},
    defaultText: '(none)',
    check: nodeLabelsCheck,
    help: 'Labels to add to this node, as key=value (comma-separated, repeatable); matched by nodeSelector and node affinity',
  }),
};

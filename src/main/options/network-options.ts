// Counterpart of the network flags of cmd/kubelet/app/options (the dockershim-era --network-plugin, --cni-bin-dir,
// --cni-conf-dir, --cni-cache-dir; KubeletConfiguration podCIDR) and our --pod-masquerade.
/**
 * The pod network options' descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts)
 * at their place in `--help`, so that the flags, the `--config` fields, `--help` and the checks come from
 * the one table. network-setup.ts reads the resolved values.
 */
import { resolve as resolvePath } from 'node:path';
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { boolean, failOption, oneOf, str } from './agent-option-checks.js';
import { parsePodCidr } from '../network/pod-cidr.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** cniBinDirCheck: `--cni-bin-dir`, `:`-separated absolute directories (kept as given, empty items dropped). */
function cniBinDirCheck(l: string, v: unknown): string {
  const dirs = str(false)(l, v)
    .split(':')
    .filter((d) => d !== '');
  if (dirs.length === 0 || dirs.some((d) => !d.startsWith('/'))) failOption(l, 'must be absolute directories separated by ":"', v);
  return dirs.join(':');
}

/** kNetworkOptionDescriptors: the pod network options (see each field's TSDoc). */
export const kNetworkOptionDescriptors = {
  /**
   * How sandboxes get a network (`--network-plugin`, cni; the kubelet's old dockershim flag): `cni`
   * joins every sandbox that is not hostNetwork to the CNI network of `--cni-conf-dir` (or the
   * agent's default bridge), `none` keeps the sandboxes on network `none` with no pod IP (the
   * behaviour before issue 13). The fake runtime never has a pod network.
   */
  networkPlugin: option<'cni' | 'none'>({
    flag: 'network-plugin',
    parse: 'string',
    default: 'cni',
    check: oneOf(['cni', 'none'] as const),
    help: "Pod network: cni (CNI plugins, the conf of --cni-conf-dir or the agent's own bridge) or none (no pod IP)",
  }),
  /** Where the CNI plugin binaries are searched, `:`-separated absolute dirs in order (`--cni-bin-dir`, /usr/lib/cni:/opt/cni/bin). */
  cniBinDir: option({
    flag: 'cni-bin-dir',
    parse: 'string',
    default: '/usr/lib/cni:/opt/cni/bin',
    check: cniBinDirCheck,
    help: 'Directories of the CNI plugin binaries, separated by ":" (searched in order)',
  }),
  /** Where the network configuration is read (`--cni-conf-dir`, /etc/cni/net.d): the first valid *.conf/*.conflist/*.json by name. */
  cniConfDir: option({
    flag: 'cni-conf-dir',
    parse: 'string',
    default: '/etc/cni/net.d',
    check: (l, v) => resolvePath(str(false)(l, v)),
    help: 'Directory of CNI network configurations; the first valid one by name is used, none: the agent writes its own under --root-dir',
  }),
  /** libcni's cache of set-up sandboxes' results (`--cni-cache-dir`); not given = `<root-dir>/cni/cache` (resolveAgentOptions). */
  cniCacheDir: option({
    flag: 'cni-cache-dir',
    parse: 'string',
    default: '/var/lib/kubelet-ts/cni/cache',
    defaultText: '<root-dir>/cni/cache',
    check: (l, v) => resolvePath(str(false)(l, v)),
    help: 'Directory of the CNI results cache',
  }),
  /**
   * The pods' IPv4 range of the agent's default network (`--pod-cidr`, podCIDR), /8 to /28; `''` =
   * chosen at start: the subnet the agent used before, else the first /24 of 10.222.0.0/16 that
   * no route or address of the host and no other agent on this machine has (network/pod-cidr.ts).
   * Unused when --cni-conf-dir has a configuration of its own.
   */
  podCIDR: option({
    flag: 'pod-cidr',
    parse: 'string',
    config: { field: 'podCIDR' },
    default: '',
    defaultText: 'a free /24 of 10.222.0.0/16',
    check: (l, v) => {
      const s = str(true)(l, v).trim();
      if (s !== '') parsePodCidr(s, l);
      return s;
    },
    help: 'IPv4 CIDR of the pods of the default network (/8 to /28); refused if the host routes or has an address in it',
  }),
  /** Masquerade pod traffic that leaves the node (`--pod-masquerade`, false): the default bridge's ipMasq. Off: no pod traffic leaves the node. */
  podMasquerade: option({
    flag: 'pod-masquerade',
    parse: 'boolean',
    ours: true,
    default: false,
    check: boolean,
    help: 'Masquerade (SNAT) pod traffic leaving the node on the default bridge network (off: pods reach only the node and each other)',
  }),
};

// Counterpart of the per-pod runtime flags of cmd/kubelet/app/options and KubeletConfiguration:
// --maximum-dead-containers-per-container, --cluster-dns, --cluster-domain, --resolv-conf,
// --cgroups-per-qos, --cgroup-root, --pod-max-pids, --container-log-max-size/-files and the image GC
// thresholds.
/**
 * What each pod's sandbox and containers get (DNS, cgroups, logs, dead containers, image GC): the
 * descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts) at their place in
 * `--help`, so that the flags, the `--config` fields, `--help` and the checks come from the one table.
 * The worker bootstrap (pool/worker-bootstrap.ts) and the GC manager read the resolved values.
 */
import { parseQuantity, quantityError } from '../../shared/quantity.js';
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { boolean, failOption, integerIn, ipAddress, nonEmptyWhere, optionalPath, str } from './agent-option-checks.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** A DNS-1123 subdomain (k8s.io/apimachinery validation IsDNS1123Subdomain), for `--cluster-domain`. */
const kDns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** kPodRuntimeOptionDescriptors: what each pod's sandbox and containers get (see each field's TSDoc). */
export const kPodRuntimeOptionDescriptors = {
  /** Dead containers kept per container for logs (`--maximum-dead-containers-per-container`, 1). */
  maximumDeadContainersPerContainer: option({
    flag: 'maximum-dead-containers-per-container',
    parse: 'number',
    default: 1,
    check: integerIn(0, Number.MAX_SAFE_INTEGER),
    help: 'Stopped instances kept per container',
  }),
  /** Cluster DNS server IPs for ClusterFirst pods (`--cluster-dns`, clusterDNS); [] = none: ClusterFirst falls back to Default, as the kubelet does. */
  clusterDNS: option<string[]>({
    flag: 'cluster-dns',
    parse: 'list',
    config: { field: 'clusterDNS' },
    default: [],
    check: (l, v) => {
      if (!Array.isArray(v)) failOption(l, 'must be a list of IP addresses', v);
      return v.map((ip) => ipAddress(l, ip));
    },
    help: 'DNS server IPs of the cluster (comma-separated); ClusterFirst pods use them, else they fall back to Default',
  }),
  /** The cluster's DNS domain (`--cluster-domain`, clusterDomain; '' = none): search paths of ClusterFirst pods and the pods' subdomain FQDNs. */
  clusterDomain: option({
    flag: 'cluster-domain',
    parse: 'string',
    config: { field: 'clusterDomain' },
    default: '',
    check: (l, v) => {
      const s = str(true)(l, v).replace(/\.$/, '');
      if (s !== '' && !kDns1123Subdomain.test(s)) failOption(l, 'must be a DNS-1123 subdomain', v);
      return s;
    },
    help: "Domain of the cluster (e.g. cluster.local): pods' search paths and <hostname>.<subdomain>.<namespace>.svc.<domain> names",
  }),
  /** The node's resolver file, the base of Default and ClusterFirst pods' resolv.conf (`--resolv-conf`, resolvConf, /etc/resolv.conf; '' = none). */
  resolvConf: option({
    flag: 'resolv-conf',
    parse: 'string',
    config: { field: 'resolvConf', parse: 'path' },
    default: '/etc/resolv.conf',
    check: optionalPath,
    help: 'Resolver configuration file used as the base of the pods\' resolv.conf ("" = none: pods get nameserver 127.0.0.1)',
  }),
  /** One cgroup per pod under kubepods/{burstable,besteffort} (`--cgroups-per-qos`, cgroupsPerQOS, true). */
  cgroupsPerQOS: option({
    flag: 'cgroups-per-qos',
    parse: 'boolean',
    config: { field: 'cgroupsPerQOS' },
    default: true,
    check: boolean,
    help: 'Create a cgroup per pod (kubepods/[burstable|besteffort]/pod<uid> under --cgroup-root) holding its containers and their summed limits',
  }),
  /** Where the kubepods cgroup tree goes (`--cgroup-root`, cgroupRoot; ours `/kubelet-ts`, the kubelet's is `/`). */
  cgroupRoot: option({
    flag: 'cgroup-root',
    parse: 'string',
    config: { field: 'cgroupRoot' },
    default: '/kubelet-ts',
    check: nonEmptyWhere(
      (s) => /^(\/[A-Za-z0-9_.-]+)+$/.test(s) && !s.split('/').includes('..'),
      'must be an absolute cgroup path such as /kubelet-ts',
    ),
    help: 'Cgroup path under which the kubepods tree of pod cgroups is created',
  }),
  /** pids.max of each pod (`--pod-max-pids`, podPidsLimit, -1 = unlimited). */
  podPidsLimit: option({
    flag: 'pod-max-pids',
    parse: 'number',
    config: { field: 'podPidsLimit' },
    default: -1,
    check: integerIn(-1, 2 ** 31 - 1, 'must be -1 (unlimited) or an integer in 1..2147483647'),
    help: "Most processes per pod (its cgroup's pids.max); -1 = unlimited",
  }),
  /** Largest container log file before it is rotated — by Docker (json-file) or by the agent (a CRI runtime's log files) (`--container-log-max-size`, containerLogMaxSize, 10Mi), a quantity. */
  containerLogMaxSize: option({
    flag: 'container-log-max-size',
    parse: 'string',
    config: { field: 'containerLogMaxSize' },
    default: '10Mi',
    check: (l, v) => {
      const s = str(false)(l, v).trim();
      if (quantityError(s) !== null || parseQuantity(s) < 1024) failOption(l, 'must be a quantity of at least 1Ki, such as 10Mi', v);
      return s;
    },
    help: 'Largest size of a container log file before it is rotated (a quantity such as 10Mi); with Docker, json-file max-size',
  }),
  /** Log files kept per container (`--container-log-max-files`, containerLogMaxFiles, 5). */
  containerLogMaxFiles: option({
    flag: 'container-log-max-files',
    parse: 'number',
    config: { field: 'containerLogMaxFiles' },
    default: 5,
    check: integerIn(2, 1_000_000, 'must be an integer >= 2'),
    help: 'Most log files kept per container, the current one included; with Docker, json-file max-file',
  }),
  /** Disk usage (percent of the runtime's image filesystem) at which image GC starts (`--image-gc-high-threshold`, 85; imageGCHighThresholdPercent). */
  imageGcHighThresholdPercent: option({
    flag: 'image-gc-high-threshold',
    parse: 'number',
    config: { field: 'imageGCHighThresholdPercent' },
    default: 85,
    check: integerIn(0, 100),
    help: "Disk usage percent (of the runtime's image filesystem) at or above which image garbage collection runs",
  }),
  /** Disk usage image GC frees down to (`--image-gc-low-threshold`, 80; imageGCLowThresholdPercent); must not exceed the high threshold. */
  imageGcLowThresholdPercent: option({
    flag: 'image-gc-low-threshold',
    parse: 'number',
    config: { field: 'imageGCLowThresholdPercent' },
    default: 80,
    check: integerIn(0, 100),
    help: 'Disk usage percent image garbage collection frees down to',
  }),
};

// Counterpart of the etcd client flags of kube-apiserver (--etcd-servers, --etcd-prefix, --etcd-cafile, …) as the
// agent's etcd source and status writer use them, and of --kube-api-qps/--kube-api-burst for status writes.
/**
 * The etcd options' descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts) at their
 * place in `--help`, so that the flags, `--help` and the checks come from the one table. client.ts reads the
 * resolved values.
 */
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { failOption, httpUrl, integerIn, nonEmptyWhere, optionalPath, positiveNumber, str } from './agent-option-checks.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** kEtcdOptionDescriptors: the etcd client options (see each field's TSDoc). */
export const kEtcdOptionDescriptors = {
  /** etcd client URLs (`--etcd-servers`); empty = no etcd source, no status or lease writes. */
  etcdServers: option<string[]>({
    flag: 'etcd-servers',
    parse: 'list',
    default: [],
    check: (l, v) => {
      if (!Array.isArray(v)) failOption(l, 'must be a list of URLs', v);
      return v.map((u) => httpUrl(l, u));
    },
    help: 'etcd URLs (comma-separated, repeatable); enables the etcd source, status and node lease',
  }),
  /** Key prefix in etcd (`--etcd-prefix`, /registry), without a trailing slash (docs/contracts.md "etcd keys"). */
  etcdPrefix: option({
    flag: 'etcd-prefix',
    parse: 'string',
    default: '/registry',
    check: (l, v) => nonEmptyWhere((s) => s.startsWith('/'), 'must start with "/"')(l, v).replace(/\/+$/, ''),
    help: 'Key prefix in etcd',
  }),
  /** PEM CA bundle for https etcd URLs (`--etcd-cafile`); `''` = none. */
  etcdCafile: option({ flag: 'etcd-cafile', parse: 'string', default: '', check: optionalPath, help: 'PEM CA bundle for https etcd URLs' }),
  /** PEM client certificate for etcd (`--etcd-certfile`, with `--etcd-keyfile`); `''` = none. */
  etcdCertfile: option({
    flag: 'etcd-certfile',
    parse: 'string',
    default: '',
    check: optionalPath,
    help: 'PEM client certificate for etcd (with --etcd-keyfile)',
  }),
  /** PEM client key for etcd (`--etcd-keyfile`); `''` = none. */
  etcdKeyfile: option({ flag: 'etcd-keyfile', parse: 'string', default: '', check: optionalPath, help: 'PEM client key for etcd' }),
  /** etcd user for password auth (`--etcd-username`, with `--etcd-password`); `''` = no auth. */
  etcdUsername: option({
    flag: 'etcd-username',
    parse: 'string',
    default: '',
    check: str(true),
    help: 'etcd user name (password auth, with --etcd-password)',
  }),
  /** etcd password (`--etcd-password`); `''` = none. */
  etcdPassword: option({ flag: 'etcd-password', parse: 'string', default: '', check: str(true), help: 'etcd password' }),
  /** Sustained pod status writes per second to etcd (`--etcd-qps`, 50; as --kube-api-qps). */
  etcdQps: option({
    flag: 'etcd-qps',
    parse: 'number',
    default: 50,
    check: positiveNumber,
    help: 'Pod status writes per second to etcd (token bucket rate)',
  }),
  /** Status writes allowed in a burst above `etcdQps` (`--etcd-burst`, 100; as --kube-api-burst). */
  etcdBurst: option({
    flag: 'etcd-burst',
    parse: 'number',
    default: 100,
    check: integerIn(1, Number.MAX_SAFE_INTEGER),
    help: 'Pod status writes allowed in a burst to etcd',
  }),
};

// Counterpart of the kubelet's serving flags of cmd/kubelet/app/options (--address, --port, --tls-cert-file,
// --tls-private-key-file, --anonymous-auth) and of the apiserver's --token-auth-file; ours: --tls-port,
// --authorization-policy-file and the API's bounds (body sizes, watches, streams, the intake store).
/**
 * The API server's option descriptors, spread into kAgentOptionDescriptors (agent-option-descriptors.ts)
 * at their place in `--help`, so that the flags, the `--config` fields, `--help` and the checks come
 * from the one table. server-options.ts and server-auth.ts read the resolved values.
 */
import type { AgentOptionDescriptor } from './agent-option-descriptors.js';
import { boolean, integerIn, ipAddress, optionalPath } from './agent-option-checks.js';

function option<T>(d: AgentOptionDescriptor<T>): AgentOptionDescriptor<T> {
  return d;
}

/** kServerOptionDescriptors: the API server's options (see each field's TSDoc). */
export const kServerOptionDescriptors = {
  /** IP address the HTTP server binds (`--address`, 127.0.0.1; kubelet's default is 0.0.0.0). */
  address: option({
    flag: 'address',
    parse: 'string',
    config: { field: 'address' },
    default: '127.0.0.1',
    check: ipAddress,
    help: 'IP address the HTTP server serves on',
  }),
  /** TCP port of the HTTP server (`--port`, 10250). 0 picks a free port (kubelet-ts extension, for tests). */
  port: option({
    flag: 'port',
    parse: 'number',
    config: { field: 'port' },
    default: 10250,
    check: integerIn(0, 65535, 'must be an integer in 1..65535 (or 0 for any free port)'),
    help: 'Port of the HTTP server (0 = any free port)',
  }),
  /**
   * Port of the HTTPS server (`--tls-port`; kubelet-ts only: the kubelet serves HTTPS on --port),
   * the same API as --port over TLS, for kubectl: kubectl sends a bearer token only over TLS.
   * -1 = off (the default), 0 = any free port (tests).
   */
  tlsPort: option({
    flag: 'tls-port',
    parse: 'number',
    ours: true,
    default: -1,
    check: integerIn(-1, 65535, 'must be an integer in 1..65535, 0 for any free port, or -1 for none'),
    help: 'Port of the HTTPS server (the same API over TLS, for kubectl; -1 = none, 0 = any free port)',
  }),
  /** The serving certificate of --tls-port (`--tls-cert-file`, PEM); '' = a self-signed one under `<root-dir>/pki`, made at first start. */
  tlsCertFile: option({
    flag: 'tls-cert-file',
    parse: 'string',
    default: '',
    check: optionalPath,
    help: 'PEM certificate of the HTTPS server (default: a self-signed one in <root-dir>/pki)',
  }),
  /** The key of --tls-cert-file (`--tls-private-key-file`, PEM). */
  tlsPrivateKeyFile: option({
    flag: 'tls-private-key-file',
    parse: 'string',
    default: '',
    check: optionalPath,
    help: 'PEM private key of --tls-cert-file',
  }),
  /**
   * Static token file (`--token-auth-file`, CSV `token,user,uid,"group1,group2"`): tokens accepted
   * beside the admin token of `<root-dir>/admin.token`; `''` = the admin token only.
   */
  tokenAuthFile: option({
    flag: 'token-auth-file',
    parse: 'string',
    default: '',
    check: optionalPath,
    help: 'Static token file (CSV token,user,uid,"group1,group2") of bearer tokens accepted beside <root-dir>/admin.token; what each user may do is the RBAC policy\'s (--authorization-policy-file)',
  }),
  /**
   * RBAC policy file (`--authorization-policy-file`, as the apiserver's `--authorization-policy-file`
   * of its ABAC mode, here in the rbac.authorization.k8s.io/v1 shapes): YAML or JSON documents (or a
   * List) of Role, ClusterRole, RoleBinding and ClusterRoleBinding, added to the built-in policy
   * (server/authz/bootstrap.ts); `''` = the built-in policy alone. A bad file stops the start.
   */
  authorizationPolicyFile: option({
    flag: 'authorization-policy-file',
    parse: 'string',
    default: '',
    check: optionalPath,
    help: 'RBAC policy (YAML: rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding, ClusterRoleBinding) added to the built-in one (cluster-admin for system:masters; view, edit, admin to bind)',
  }),
  /**
   * Serve requests without credentials as `system:anonymous` (`--anonymous-auth`, the kubelet's
   * flag): they may only read (GET/HEAD of pods, status, events, node, metrics, logs, the watch);
   * writes and streams into containers always need a token. Default false on every address, the
   * kubelet's KubeletConfiguration default (`authentication.anonymous.enabled: false`,
   * pkg/kubelet/apis/config/v1beta1 defaults.go): any local user or web page could otherwise read
   * env values, ConfigMap data and logs (issue #38 finding 5). `false` → every request but /healthz
   * and the dashboard's static files needs a token (401).
   */
  anonymousAuth: option({
    flag: 'anonymous-auth',
    parse: 'boolean',
    default: false,
    check: boolean,
    help: 'Serve requests without a bearer token as system:anonymous, allowed only to read (pods, status, events, metrics, logs, the watch); writes and exec/attach/port-forward always need a token',
  }),
  /** Largest HTTP request body, bytes (`--max-request-body-bytes`, 1 MiB; kubelet-ts only). */
  maxRequestBodyBytes: option({
    flag: 'max-request-body-bytes',
    parse: 'number',
    ours: true,
    default: 1024 * 1024,
    check: integerIn(1024, 1024 * 1024 * 1024, 'must be an integer in 1024..1073741824 (bytes)'),
    help: 'Largest HTTP request body in bytes (larger: 413)',
  }),
  /**
   * Bytes of pod changes the watch history keeps for `WS /watch/pods?resourceVersion=` resumes
   * (`--watch-history-bytes`, 64 MiB; kubelet-ts only): the sum of their frames' UTF-8 sizes, beside
   * the count bound of 10,000 changes (the apiserver's watch cache capacity). Past it the oldest
   * changes are dropped and a resume from before them gets 410 Gone (watch/watch-cache.ts).
   */
  watchHistoryBytes: option({
    flag: 'watch-history-bytes',
    parse: 'number',
    ours: true,
    default: 64 * 1024 * 1024,
    check: integerIn(1024, Number.MAX_SAFE_INTEGER, 'must be an integer >= 1024 (bytes)'),
    help: 'Bytes of pod changes kept for watch resumes (older ones: 410 Gone)',
  }),
  /**
   * Concurrent watches (`WS /watch/pods` and the API's `?watch=true` together) one user may hold
   * (`--max-watches-per-user`, 100; kubelet-ts only; all anonymous requests are one user): one more
   * is answered 429 TooManyRequests with Retry-After, before any state is copied (server/http/watch-limits.ts).
   */
  maxWatchesPerUser: option({
    flag: 'max-watches-per-user',
    parse: 'number',
    ours: true,
    default: 100,
    check: integerIn(1, 1_000_000, 'must be an integer >= 1'),
    help: 'Concurrent watches one user may hold (more: 429 TooManyRequests)',
  }),
  /** Concurrent watches on this node, all users together (`--max-watches`, 500; kubelet-ts only): one more is answered 429. */
  maxWatches: option({
    flag: 'max-watches',
    parse: 'number',
    ours: true,
    default: 500,
    check: integerIn(1, 1_000_000, 'must be an integer >= 1'),
    help: 'Concurrent watches on this node, all users together (more: 429 TooManyRequests)',
  }),
  /**
   * Streams (exec, attach and run together) one user may hold open at once over all pods
   * (`--max-streams-per-user`, 64: a quarter of the node's 256; kubelet-ts only). One more is
   * answered 429 TooManyRequests with Retry-After; members of system:masters are not bounded per
   * user, and the node's last 16 streams are theirs (server/streaming/stream-limits.ts).
   */
  maxStreamsPerUser: option({
    flag: 'max-streams-per-user',
    parse: 'number',
    ours: true,
    default: 64,
    check: integerIn(1, 1_000_000, 'must be an integer >= 1'),
    help: 'Concurrent exec/attach/run streams one user may hold (more: 429 TooManyRequests; system:masters exempt)',
  }),
  /**
   * Port-forward connections one user may hold open at once over all pods
   * (`--max-port-forwards-per-user`, 128: a quarter of the node's 512; kubelet-ts only), as
   * `--max-streams-per-user` (server/streaming/port-forward-ws.ts kDefaultPortForwardLimits).
   */
  maxPortForwardsPerUser: option({
    flag: 'max-port-forwards-per-user',
    parse: 'number',
    ours: true,
    default: 128,
    check: integerIn(1, 1_000_000, 'must be an integer >= 1'),
    help: 'Concurrent port-forward connections one user may hold (more: 429 TooManyRequests; system:masters exempt)',
  }),
  /**
   * Bytes the intake store (`{--root-dir}/intake/`, the POSTed pods' files) may hold
   * (`--intake-store-bytes`, 64 MiB; kubelet-ts only): a POST or PUT that would take it past this
   * is refused whole with 403 `exceeded quota` before anything is written (config/source-intake.ts).
   * The API's ConfigMaps and Secrets (`{--root-dir}/intake-objects/`) have a budget of the same
   * size of their own (config/source-intake-objects.ts).
   */
  intakeStoreBytes: option({
    flag: 'intake-store-bytes',
    parse: 'number',
    ours: true,
    default: 64 * 1024 * 1024,
    check: integerIn(1024, Number.MAX_SAFE_INTEGER, 'must be an integer >= 1024 (bytes)'),
    help: 'Bytes the stored POSTed pods may total, and so the stored API ConfigMaps and Secrets (more: 403 exceeded quota)',
  }),
  /**
   * Heap of the API's body decoder thread, MiB (`--body-decoder-max-heap-mb`, 256; kubelet-ts only):
   * a POST/PUT body whose decoding needs more ends that thread (413) and a new one takes its place.
   */
  bodyDecoderMaxHeapMb: option({
    flag: 'body-decoder-max-heap-mb',
    parse: 'number',
    ours: true,
    default: 256,
    check: integerIn(8, 16384, 'must be an integer in 8..16384 (MiB)'),
    help: 'Heap limit of the thread that decodes POST/PUT /pods bodies, MiB (a body that needs more: 413)',
  }),
};

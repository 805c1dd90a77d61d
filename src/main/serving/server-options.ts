/**
 * Counterpart of the kubelet server's listener settings (cmd/kubelet/app/server.go: the address,
 * ports, TLS files and the authn/authz filter handed to ListenAndServeKubeletServer): the
 * server's {@link AgentServerOptions} from the agent's options. Pure; main thread, at start-up.
 * The one decision it makes besides copying: whether `<root-dir>/kubelet-ts.sock` (the local
 * administrator's way in, src/cli/local-socket.ts) fits a unix socket path; when it does not, no
 * socket is served and `warn` says so (the client then needs https to send a token).
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../shared/logging.js';
import type { ServerAuth } from '../../server/auth/auth.js';
import type { AgentServerOptions } from '../../server/server.js';
import { kMaxUnixPathBytes, kUnixSocketName } from '../../server/unix-socket.js';
import type { AgentOptions } from '../options/agent-options.js';
import type { ServingCert } from '../host/serving-cert.js';
import { kubeletVersion } from '../node/node-status.js';

/**
 * agentServerOptions: where and how the server listens — `--address`/`--port`, the TLS listener on
 * `--tls-port` with `cert` (undefined: none), the unix socket under `--root-dir`, the request,
 * stream and watch bounds, and the node's names a browser's `Host` may carry (origin-check.ts:
 * the node name, `--node-ip` and this host's name beside the loopback ones and `--address`), and
 * the gitVersion `/version` reports ({@link kubeletVersion}).
 */
export function agentServerOptions(o: AgentOptions, auth: ServerAuth, cert: ServingCert | undefined, logger: Logger): AgentServerOptions {
  const socketPath = join(o.rootDir, kUnixSocketName);
  const socketFits = Buffer.byteLength(socketPath) <= kMaxUnixPathBytes;
  if (!socketFits)
    logger.warn(
      { path: socketPath, maxBytes: kMaxUnixPathBytes },
      'Not serving the local unix socket: its path is too long (a shorter --root-dir serves it); the client then needs https for a token',
    );
  return {
    address: o.address,
    port: o.port,
    logger,
    auth,
    limits: { maxRequestBodyBytes: o.maxRequestBodyBytes },
    ...(cert ? { tls: { port: o.tlsPort, certFile: cert.certFile, keyFile: cert.keyFile } } : {}),
    streaming: { idleTimeoutMs: o.streamingConnectionIdleTimeoutMs, maxStreamsPerUser: o.maxStreamsPerUser },
    portForward: { maxStreamsPerUser: o.maxPortForwardsPerUser },
    watchLimits: { maxWatchesPerUser: o.maxWatchesPerUser, maxWatches: o.maxWatches },
    ...(socketFits ? { unixSocket: socketPath } : {}),
    hostNames: [o.nodeName, o.nodeIp, hostname()],
    // /version reports what the Node reports as its kubeletVersion (`kubectl version`).
    kubeApi: { gitVersion: kubeletVersion() },
  };
}

/**
 * Counterpart of cmd/kubelet/app/auth.go (BuildAuth: the kubelet server's authenticator and
 * authorizer from its KubeletConfiguration): the server's {@link ServerAuth} from the agent's
 * options — the admin token of `<root-dir>/admin.token` (admin-token.ts), the tokens of
 * `--token-auth-file`, and `--anonymous-auth`. Main thread, at start-up only.
 */
import type { Logger } from '../shared/logging.js';
import { isLoopbackHost } from '../shared/loopback.js';
import { loadTokenFile, newAdminTokenAuthenticator, unionTokenAuthenticators, type ServerAuth } from '../server/auth.js';
import { ensureAdminToken } from './admin-token.js';
import type { AgentOptions } from './agent-options.js';

/**
 * loadServerAuth builds the server's authentication: the admin token first (created at first
 * start, see ensureAdminToken), then `--token-auth-file` if given; anonymous reads as
 * `options.anonymousAuth` says. Logs where the admin token is (never the token), and a warning
 * when anonymous reads are served on a non-loopback address.
 * @throws InvalidArgumentError from ensureAdminToken (unsafe or unreadable token file) or loadTokenFile.
 */
export async function loadServerAuth(options: Pick<AgentOptions, 'rootDir' | 'tokenAuthFile' | 'anonymousAuth' | 'address'>, logger: Logger): Promise<ServerAuth> {
  const admin = await ensureAdminToken(options.rootDir);
  logger.info({ file: admin.path, created: admin.created }, admin.created ? 'Wrote the admin bearer token' : 'Using the admin bearer token');
  const tokens = [newAdminTokenAuthenticator(admin.token, admin.path)];
  if (options.tokenAuthFile) tokens.push(await loadTokenFile(options.tokenAuthFile, (m) => logger.warn({ file: options.tokenAuthFile }, m)));
  if (options.anonymousAuth && !isLoopbackHost(options.address)) {
    logger.warn({ address: options.address }, 'Serving anonymous read-only requests on a non-loopback address (--anonymous-auth=true was given)');
  }
  return { tokens: unionTokenAuthenticators(...tokens), anonymous: options.anonymousAuth };
}

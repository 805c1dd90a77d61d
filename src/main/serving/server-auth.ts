/**
 * Counterpart of cmd/kubelet/app/auth.go (BuildAuth: the kubelet server's authenticator and
 * authorizer from its KubeletConfiguration): the server's {@link ServerAuth} from the agent's
 * options — the admin token of `<root-dir>/admin.token` (admin-token.ts), the tokens of
 * `--token-auth-file`, `--anonymous-auth`, and the RBAC authorizer of the built-in policy plus
 * `--authorization-policy-file`. Main thread, at start-up only.
 */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import { isLoopbackHost } from '../../shared/loopback.js';
import { loadTokenFile, newAdminTokenAuthenticator, unionTokenAuthenticators, type ServerAuth } from '../../server/auth/auth.js';
import { builtinPolicy } from '../../server/authz/bootstrap.js';
import { parsePolicyFile } from '../../server/authz/policy-file.js';
import { newRbacAuthorizer, type Authorizer } from '../../server/authz/rbac.js';
import { ensureAdminToken } from '../host/admin-token.js';
import type { AgentOptions } from '../options/agent-options.js';

/**
 * loadAuthorizer: the RBAC authorizer of the built-in policy (with the anonymous bindings when
 * `anonymous`) plus the roles and bindings of `policyFile` ('' = none). Logs how many it read.
 * @throws InvalidArgumentError `--authorization-policy-file: cannot read <path>: …`, or one naming
 *   the file, the document and the field of every problem (policy-file.ts).
 */
export async function loadAuthorizer(policyFile: string, anonymous: boolean, logger: Logger): Promise<Authorizer> {
  const policy = builtinPolicy(anonymous);
  if (policyFile) {
    let text: string;
    try {
      text = await readFile(policyFile, 'utf8');
    } catch (err) {
      throw new InvalidArgumentError(`--authorization-policy-file: cannot read ${policyFile}: ${(err as Error).message}`);
    }
    const extra = parsePolicyFile(text, `--authorization-policy-file ${policyFile}`);
    policy.roles.push(...extra.roles);
    policy.bindings.push(...extra.bindings);
    logger.info({ file: policyFile, roles: extra.roles.length, bindings: extra.bindings.length }, 'Read the authorization policy');
  }
  return newRbacAuthorizer(policy);
}

/**
 * loadServerAuth builds the server's authentication and authorization: the admin token first
 * (created at first start, see ensureAdminToken), then `--token-auth-file` if given; anonymous
 * requests as `options.anonymousAuth` says; the RBAC policy (loadAuthorizer). Logs where the admin
 * token is (never the token), and a warning when anonymous reads are served on a non-loopback address.
 * @throws InvalidArgumentError from ensureAdminToken (unsafe or unreadable token file), loadTokenFile or loadAuthorizer.
 */
export async function loadServerAuth(
  options: Pick<AgentOptions, 'rootDir' | 'tokenAuthFile' | 'anonymousAuth' | 'address' | 'authorizationPolicyFile' | 'nodeName'>,
  logger: Logger,
): Promise<ServerAuth> {
  const authorizer = await loadAuthorizer(options.authorizationPolicyFile, options.anonymousAuth, logger);
  const admin = await ensureAdminToken(options.rootDir);
  logger.info(
    { file: admin.path, created: admin.created },
    admin.created ? 'Wrote the admin bearer token' : 'Using the admin bearer token',
  );
  const tokens = [newAdminTokenAuthenticator(admin.token, admin.path)];
  if (options.tokenAuthFile)
    tokens.push(await loadTokenFile(options.tokenAuthFile, (m) => logger.warn({ file: options.tokenAuthFile }, m)));
  if (options.anonymousAuth && !isLoopbackHost(options.address)) {
    logger.warn(
      { address: options.address },
      'Serving anonymous read-only requests on a non-loopback address (--anonymous-auth=true was given)',
    );
  }
  return { tokens: unionTokenAuthenticators(...tokens), anonymous: options.anonymousAuth, authorizer, nodeName: options.nodeName };
}

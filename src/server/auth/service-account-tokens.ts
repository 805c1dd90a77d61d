/**
 * Bound service account tokens, as the apiserver's TokenRequest issues them and its serviceaccount
 * authenticator checks them: the claims of pkg/serviceaccount/claims.go (`iss`, `sub`, `aud`, `exp`,
 * `iat`, `nbf`, `jti` and the private `kubernetes.io` claim naming the namespace, the pod and the
 * service account, each with its UID), the signing and checking of pkg/serviceaccount/jwt.go, and
 * the bound-object check of claims.go's validator (a token of a pod that is gone, or has been
 * replaced by another with the same name, stops authenticating). A token authenticates as
 * `system:serviceaccount:NS:NAME` with the groups `system:serviceaccounts`,
 * `system:serviceaccounts:NS` and `system:authenticated` (pkg/serviceaccount/util.go UserInfo).
 *
 * JWTs are ES256 (ECDSA P-256, SHA-256), signed and checked with node:crypto synchronously: the
 * server's authentication is synchronous (auth.ts checkAccess), which `jose`'s asynchronous API is
 * not. Pure apart from the clock; safe on any thread. Tokens are never logged.
 */
import { createHash, createPublicKey, randomUUID, sign, verify, type KeyObject } from 'node:crypto';
import { realClock, type Clock } from '../../shared/clock.js';
import type { TokenAuthenticator, TokenUser } from './auth.js';

/** kServiceAccountIssuer: the `iss` of the node's tokens, and the default audience (`--api-audiences` defaults to the issuer upstream). */
export const kServiceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';
/** kMinTokenExpirationSeconds: the shortest lifetime a token may ask for (TokenRequest's validation: 10 minutes), seconds. */
export const kMinTokenExpirationSeconds = 600;
/** kDefaultTokenExpirationSeconds: a TokenRequest's default lifetime (1 hour), seconds. */
export const kDefaultTokenExpirationSeconds = 3600;

/** kDeletedLeewayMs: how long past its deletionTimestamp a pod's tokens stay good (jwt.DefaultLeeway: 1 minute), milliseconds. */
export const kDeletedLeewayMs = 60_000;

/** BoundTokenRequest: what one token is for (a TokenRequest bound to a pod). */
export interface BoundTokenRequest {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  pod: { name: string; uid: string };
  /** Audiences (`aud`); empty or absent = [{@link kServiceAccountIssuer}]. */
  audiences?: string[];
  /** Lifetime, seconds; below {@link kMinTokenExpirationSeconds} it is raised to it; absent = 3600. */
  expirationSeconds?: number;
}

/** IssuedToken: a signed token and its times (epoch seconds). */
export interface IssuedToken {
  token: string;
  issuedAt: number;
  expiresAt: number;
}

/** ServiceAccountClaims: the JWT payload (claims.go privateClaims with the registered claims). */
export interface ServiceAccountClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  'kubernetes.io': {
    namespace: string;
    pod: { name: string; uid: string };
    serviceaccount: { name: string; uid: string };
  };
}

/** keyId: the `kid` of a public key, as jwt.go keyIDFromPublicKey (the SHA-256 of its DER SPKI, unpadded base64url). */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

function b64json(v: unknown): string {
  return Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
}

/**
 * issueToken signs a token for `req` with the node's private key (ES256), as TokenRequest's
 * create (pkg/registry/core/serviceaccount/storage/token.go) with claims.go's Claims.
 * @param privateKey an EC P-256 private key.
 * @param nowMs the clock, epoch milliseconds.
 * @throws Error from node:crypto if the key is not an EC P-256 key.
 */
export function issueToken(privateKey: KeyObject, req: BoundTokenRequest, nowMs: number = realClock.now()): IssuedToken {
  const iat = Math.floor(nowMs / 1000);
  const lifetime = Math.max(kMinTokenExpirationSeconds, req.expirationSeconds ?? kDefaultTokenExpirationSeconds);
  const claims: ServiceAccountClaims = {
    iss: kServiceAccountIssuer,
    sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
    aud: req.audiences?.length ? req.audiences : [kServiceAccountIssuer],
    exp: iat + lifetime,
    iat,
    nbf: iat,
    jti: randomUUID(),
    'kubernetes.io': { namespace: req.namespace, pod: { ...req.pod }, serviceaccount: { ...req.serviceAccount } },
  };
  const input = `${b64json({ alg: 'ES256', kid: keyId(createPublicKey(privateKey)) })}.${b64json(claims)}`;
  const sig = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return { token: `${input}.${sig.toString('base64url')}`, issuedAt: iat, expiresAt: iat + lifetime };
}

/** serviceAccountUsername: `system:serviceaccount:NS:NAME` (serviceaccount.MakeUsername). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** TokenCheck: the claims of a good token, or why it is refused (for a debug log line; never holds the token). */
export type TokenCheck = { ok: true; claims: ServiceAccountClaims } | { ok: false; reason: string };

/** BoundObjects: what the checker asks about the objects a token is bound to. */
export interface BoundObjects {
  /**
   * The pod `namespace/name` as the node has it now: its UID, the ServiceAccount it runs as
   * (`spec.serviceAccountName`, defaulted) and its `deletionTimestamp` (RFC 3339) if it is being
   * deleted; undefined = none.
   */
  pod(namespace: string, name: string): { uid: string; serviceAccountName: string; deletionTimestamp?: string } | undefined;
  /** The UID of the ServiceAccount `namespace/name`, undefined = none. */
  serviceAccountUid(namespace: string, name: string): string | undefined;
}

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function isClaims(v: unknown): v is ServiceAccountClaims {
  const c = v as ServiceAccountClaims | undefined;
  const k = c?.['kubernetes.io'];
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.iss === 'string' &&
    typeof c.exp === 'number' &&
    typeof c.nbf === 'number' &&
    (Array.isArray(c.aud) || typeof c.aud === 'string') &&
    typeof k?.namespace === 'string' &&
    typeof k.pod?.name === 'string' &&
    typeof k.pod.uid === 'string' &&
    typeof k.serviceaccount?.name === 'string' &&
    typeof k.serviceaccount.uid === 'string'
  );
}

/**
 * checkToken verifies a token as the serviceaccount authenticator (jwt.go jwtTokenAuthenticator
 * and claims.go validator.Validate): three base64url parts, `alg` ES256, a good signature by
 * `publicKey`, `iss` the node's, an `aud` among `audiences`, `nbf` ≤ now < `exp` (no leeway: upstream
 * allows 60 s), and the bound pod and service account still there with the UIDs of the claims, the
 * pod still running as that account (a PUT may change `serviceAccountName` here; upstream it is
 * immutable, and a token of a deleted account fails the account lookup instead). A pod
 * being deleted keeps its tokens good until its `deletionTimestamp` is {@link kDeletedLeewayMs} old
 * (claims.go invalidIfDeletedBefore, jwt.DefaultLeeway); a pod that is gone refuses them at once. Pure.
 * @param nowMs the clock, epoch milliseconds.
 */
export function checkToken(
  token: string,
  publicKey: KeyObject,
  audiences: readonly string[],
  bound: BoundObjects,
  nowMs: number = realClock.now(),
): TokenCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'not a JWT' };
  const header = decodeJson(parts[0]) as { alg?: unknown } | undefined;
  if (header?.alg !== 'ES256') return { ok: false, reason: 'unexpected signing algorithm' };
  const good = verify(
    'sha256',
    Buffer.from(`${parts[0]}.${parts[1]}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(parts[2], 'base64url'),
  );
  if (!good) return { ok: false, reason: 'invalid signature' };
  const claims = decodeJson(parts[1]);
  if (!isClaims(claims)) return { ok: false, reason: 'malformed claims' };
  if (claims.iss !== kServiceAccountIssuer) return { ok: false, reason: 'unknown issuer' };
  const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!aud.some((a) => audiences.includes(a))) return { ok: false, reason: 'token audience does not match' };
  const now = Math.floor(nowMs / 1000);
  if (now >= claims.exp) return { ok: false, reason: 'service account token has expired' };
  if (now < claims.nbf) return { ok: false, reason: 'service account token is not valid yet' };
  const k = claims['kubernetes.io'];
  const pod = bound.pod(k.namespace, k.pod.name);
  if (!pod) return { ok: false, reason: `pod ${k.namespace}/${k.pod.name} not found` };
  if (pod.uid !== k.pod.uid) return { ok: false, reason: `pod UID (${pod.uid}) does not match claim (${k.pod.uid})` };
  // Not upstream's check (there `serviceAccountName` is immutable and an account can be deleted):
  // the node's API lets a PUT move a pod to another account, and every name is an account here,
  // so a token stands for its account only while its pod still runs as it.
  if (pod.serviceAccountName !== k.serviceaccount.name)
    return { ok: false, reason: `pod ${k.namespace}/${k.pod.name} no longer runs as service account ${k.serviceaccount.name}` };
  if (pod.deletionTimestamp !== undefined && Date.parse(pod.deletionTimestamp) < nowMs - kDeletedLeewayMs)
    return { ok: false, reason: `pod ${k.namespace}/${k.pod.name} has been deleted` };
  const saUid = bound.serviceAccountUid(k.namespace, k.serviceaccount.name);
  if (saUid === undefined) return { ok: false, reason: `service account ${k.namespace}/${k.serviceaccount.name} not found` };
  if (saUid !== k.serviceaccount.uid)
    return { ok: false, reason: `service account UID (${saUid}) does not match claim (${k.serviceaccount.uid})` };
  return { ok: true, claims };
}

/** serviceAccountUser: the user a good token stands for (serviceaccount.UserInfo): name, the account's UID, its groups. */
export function serviceAccountUser(claims: ServiceAccountClaims): TokenUser {
  const k = claims['kubernetes.io'];
  return {
    name: serviceAccountUsername(k.namespace, k.serviceaccount.name),
    uid: k.serviceaccount.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${k.namespace}`, 'system:authenticated'],
  };
}

/**
 * newServiceAccountAuthenticator: a TokenAuthenticator of the node's bound tokens ({@link checkToken}
 * with `audiences`, default [{@link kServiceAccountIssuer}]). A token that does not check is unknown
 * (the server answers 401); `onReject` hears why (never the token). `size` is 0: it holds no list.
 */
export function newServiceAccountAuthenticator(
  publicKey: KeyObject,
  bound: BoundObjects,
  opts: { audiences?: string[]; clock?: Clock; onReject?: (reason: string) => void } = {},
): TokenAuthenticator {
  const audiences = opts.audiences?.length ? opts.audiences : [kServiceAccountIssuer];
  return {
    origin: 'service account tokens',
    size: 0,
    authenticateToken(token) {
      // Only JWT-shaped tokens are looked at: the static tokens are tried first.
      if (!token.startsWith('eyJ')) return undefined;
      const r = checkToken(token, publicKey, audiences, bound, (opts.clock ?? realClock).now());
      if (r.ok) return serviceAccountUser(r.claims);
      opts.onReject?.(r.reason);
      return undefined;
    },
  };
}

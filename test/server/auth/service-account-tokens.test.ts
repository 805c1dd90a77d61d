// Bound service account tokens (#43 item 1): claims as TokenRequest issues them, ES256 signing,
// and the checks of the serviceaccount authenticator (signature, issuer, audience, expiry, bound pod).
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { realClock } from '../../../src/shared/clock.js';
import {
  checkToken,
  issueToken,
  kServiceAccountIssuer,
  newServiceAccountAuthenticator,
  type BoundObjects,
} from '../../../src/server/auth/service-account-tokens.js';

const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const t0 = Date.parse('2026-12-07T12:00:00Z');
const req = { namespace: 'team', serviceAccount: { name: 'robot', uid: 'sa-uid' }, pod: { name: 'web', uid: 'pod-uid' } };
const live: BoundObjects = {
  pod: (ns, n) => (ns === 'team' && n === 'web' ? { uid: 'pod-uid', serviceAccountName: 'robot' } : undefined),
  serviceAccountUid: () => 'sa-uid',
};

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as Record<string, unknown>;
}

describe('service account tokens', () => {
  it("carries the TokenRequest claims: iss, sub, aud (default the API's), exp from expirationSeconds, and the kubernetes.io claim with namespace, pod and service account UIDs", () => {
    const issued = issueToken(keys.privateKey, { ...req, expirationSeconds: 3607 }, t0);
    const c = claimsOf(issued.token);
    expect(c).toMatchObject({
      iss: kServiceAccountIssuer,
      sub: 'system:serviceaccount:team:robot',
      aud: [kServiceAccountIssuer],
      iat: t0 / 1000,
      nbf: t0 / 1000,
      exp: t0 / 1000 + 3607,
      'kubernetes.io': { namespace: 'team', pod: { name: 'web', uid: 'pod-uid' }, serviceaccount: { name: 'robot', uid: 'sa-uid' } },
    });
    expect(JSON.parse(Buffer.from(issued.token.split('.')[0], 'base64url').toString())).toMatchObject({ alg: 'ES256' });
    expect(issued.expiresAt - issued.issuedAt).toBe(3607);
  });

  it('raises a lifetime under 10 minutes to 600 s and takes the asked audience', () => {
    const c = claimsOf(issueToken(keys.privateKey, { ...req, expirationSeconds: 60, audiences: ['vault'] }, t0).token);
    expect(c.exp).toBe(t0 / 1000 + 600);
    expect(c.aud).toEqual(['vault']);
  });

  it('authenticates a good token as system:serviceaccount:NS:NAME with the service account groups', () => {
    const { token } = issueToken(keys.privateKey, req, t0);
    const a = newServiceAccountAuthenticator(keys.publicKey, live, { clock: { ...realClock, now: () => t0 + 1000 } });
    expect(a.authenticateToken(token)).toEqual({
      name: 'system:serviceaccount:team:robot',
      uid: 'sa-uid',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team', 'system:authenticated'],
    });
  });

  it('refuses an expired token, a wrong audience, a bad signature, a tampered payload, and a token whose pod is gone, replaced or being deleted', () => {
    const { token } = issueToken(keys.privateKey, { ...req, expirationSeconds: 600 }, t0);
    const aud = [kServiceAccountIssuer];
    expect(checkToken(token, keys.publicKey, aud, live, t0 + 599_000)).toMatchObject({ ok: true });
    expect(checkToken(token, keys.publicKey, aud, live, t0 + 600_000)).toEqual({ ok: false, reason: 'service account token has expired' });
    expect(checkToken(token, keys.publicKey, ['vault'], live, t0)).toEqual({ ok: false, reason: 'token audience does not match' });
    expect(checkToken(token, other.publicKey, aud, live, t0)).toEqual({ ok: false, reason: 'invalid signature' });
    const [h, p, s] = token.split('.');
    const forged = Buffer.from(Buffer.from(p, 'base64url').toString().replace('"robot"', '"admin"')).toString('base64url');
    expect(checkToken(`${h}.${forged}.${s}`, keys.publicKey, aud, live, t0)).toEqual({ ok: false, reason: 'invalid signature' });
    expect(checkToken(token, keys.publicKey, aud, { ...live, pod: () => undefined }, t0)).toEqual({
      ok: false,
      reason: 'pod team/web not found',
    });
    expect(
      checkToken(token, keys.publicKey, aud, { ...live, pod: () => ({ uid: 'new-uid', serviceAccountName: 'robot' }) }, t0),
    ).toMatchObject({ ok: false, reason: expect.stringContaining('does not match claim') });
    // The same pod now running as another account (a PUT changed serviceAccountName): refused (break-46).
    expect(checkToken(token, keys.publicKey, aud, { ...live, pod: () => ({ uid: 'pod-uid', serviceAccountName: 'default' }) }, t0)).toEqual(
      { ok: false, reason: 'pod team/web no longer runs as service account robot' },
    );
    // Being deleted: good until a minute past the deletionTimestamp (claims.go invalidIfDeletedBefore), then refused.
    const deleting = (at: number) => ({
      ...live,
      pod: () => ({ uid: 'pod-uid', serviceAccountName: 'robot', deletionTimestamp: new Date(at).toISOString() }),
    });
    expect(checkToken(token, keys.publicKey, aud, deleting(t0 + 30_000), t0)).toMatchObject({ ok: true });
    expect(checkToken(token, keys.publicKey, aud, deleting(t0 - 60_000), t0)).toMatchObject({ ok: true });
    expect(checkToken(token, keys.publicKey, aud, deleting(t0 - 61_000), t0)).toEqual({
      ok: false,
      reason: 'pod team/web has been deleted',
    });
    expect(checkToken(token, keys.publicKey, aud, { ...live, serviceAccountUid: () => 'other' }, t0)).toMatchObject({ ok: false });
    expect(checkToken('not-a-jwt', keys.publicKey, aud, live, t0)).toEqual({ ok: false, reason: 'not a JWT' });
  });

  it('the authenticator answers undefined (401) for a refused token and tells why without the token', () => {
    const { token } = issueToken(keys.privateKey, req, t0);
    const reasons: string[] = [];
    const a = newServiceAccountAuthenticator(
      keys.publicKey,
      { ...live, pod: () => undefined },
      { clock: { ...realClock, now: () => t0 }, onReject: (r) => reasons.push(r) },
    );
    expect(a.authenticateToken(token)).toBeUndefined();
    expect(a.authenticateToken('static-token')).toBeUndefined();
    expect(reasons).toEqual(['pod team/web not found']);
    expect(reasons.join()).not.toContain(token.split('.')[2]);
  });
});

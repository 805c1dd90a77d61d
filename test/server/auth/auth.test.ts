import { describe, expect, it } from 'vitest';
import {
  authorizationHeaders,
  bearerTokenFromProtocols,
  checkAccess,
  checkWebSocketAccess,
  duplicateCredentials,
  kAdminUser,
  kAnonymousUser,
  kBearerProtocolPrefix,
  kReadOnlyGroup,
  newAdminTokenAuthenticator,
  parseCsv,
  parseTokenFile,
  unionTokenAuthenticators,
  type ServerAuth,
} from '../../../src/server/auth/auth.js';
import { kDashboardAssetPaths } from '../../../src/server/dashboard/serve.js';

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and newlines, skips blank lines, accepts CRLF', () => {
    expect(parseCsv('a,b,"c,d"\r\n\n  x , "y ""q""","multi\nline"\n', 'f')).toEqual([
      { line: 1, fields: ['a', 'b', 'c,d'] },
      { line: 3, fields: ['x ', 'y "q"', 'multi\nline'] },
    ]);
  });

  it.each([
    ['a,"unterminated\n', 'line 1: extraneous or missing " in quoted-field'],
    ['a,"x"y\n', 'line 1: extraneous or missing " in quoted-field'],
    ['a,b"c\n', 'line 1: bare " in non-quoted-field'],
  ])('rejects %j naming the line', (text, message) => {
    expect(() => parseCsv(text, 'tokens.csv')).toThrow(`tokens.csv: ${message}`);
  });
});

describe('parseTokenFile', () => {
  it('maps tokens to users with groups, warns about empty and duplicate tokens', () => {
    const warnings: string[] = [];
    const auth = parseTokenFile('t1,alice,1,"g1,g2"\n,nobody,2\nt1,bob,3\nt3,carol,4\n', 'tokens.csv', (w) => warnings.push(w));
    expect(auth.size).toBe(2);
    expect(auth.authenticateToken('t1')).toEqual({ name: 'bob', uid: '3', groups: [] });
    expect(auth.authenticateToken('t3')).toEqual({ name: 'carol', uid: '4', groups: [] });
    expect(auth.authenticateToken('nope')).toBeUndefined();
    expect(warnings).toEqual([
      "empty token has been found in token file 'tokens.csv', record number '2'",
      "duplicate token has been found in token file 'tokens.csv', record number '3'",
    ]);
    expect(parseTokenFile('t1,alice,1,"g1,g2"\n', 'f').authenticateToken('t1')?.groups).toEqual(['g1', 'g2']);
  });

  it('refuses a record with fewer than 3 columns', () => {
    expect(() => parseTokenFile('t1,alice\n', 'tokens.csv')).toThrow(
      "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2",
    );
  });
});

describe('checkAccess (--anonymous-auth=false)', () => {
  const auth: ServerAuth = {
    tokens: parseTokenFile(`admin,admin,1,system:masters\nvtok,viewer,2,"${kReadOnlyGroup}"\n`, 'f'),
    anonymous: false,
  };
  it.each([
    [undefined, 'post', '/pods', '', true, undefined],
    [auth, 'get', '/healthz', '', true, undefined],
    [auth, 'get', '/pods', '', false, 401],
    [auth, 'get', '/pods', 'Bearer wrong', false, 401],
    [auth, 'get', '/pods', 'Bearer admin', true, undefined],
    [auth, 'delete', '/pods/default/a', 'bearer admin', true, undefined],
    [auth, 'get', '/pods', 'Bearer vtok', true, undefined],
    [auth, 'head', '/pods', 'Bearer vtok', true, undefined],
    [auth, 'post', '/pods', 'Bearer vtok', false, 403],
    [auth, 'put', '/pods/default/a', 'Bearer vtok', false, 403],
  ])('auth=%#: %s %s with %j → ok=%s', (a, method, path, header, ok, code) => {
    const d = checkAccess(a, method, path, header);
    expect(d.ok).toBe(ok);
    if (!d.ok) {
      expect(d.status.code).toBe(code);
      expect(d.reason).not.toContain('vtok');
    }
  });
});

describe('bearerTokenFromProtocols (the apiserver websocket.ProtocolAuthenticator)', () => {
  const b64 = (t: string) => Buffer.from(t).toString('base64url');
  it('finds the token, trims entries and returns the other subprotocols in order', () => {
    expect(bearerTokenFromProtocols(` v1.watch , ${kBearerProtocolPrefix}${b64('tök€n')},other`)).toEqual({
      ok: true,
      token: 'tök€n',
      protocols: ['v1.watch', 'other'],
    });
    expect(bearerTokenFromProtocols('v1.watch')).toEqual({ ok: true, token: '', protocols: ['v1.watch'] });
    expect(bearerTokenFromProtocols('')).toEqual({ ok: true, token: '', protocols: [] });
  });

  it.each([
    [
      'two bearer entries',
      `${kBearerProtocolPrefix}${b64('a')},${kBearerProtocolPrefix}${b64('b')},p`,
      'multiple base64url.bearer.authorization tokens specified',
    ],
    [
      'padding',
      `${kBearerProtocolPrefix}${Buffer.from('pad-token-x').toString('base64')},p`,
      'invalid base64url.bearer.authorization token encoding',
    ],
    [
      'the standard alphabet',
      `${kBearerProtocolPrefix}${Buffer.from([0xfb, 0xff]).toString('base64').replace(/=+$/, '')},p`,
      'invalid base64url.bearer.authorization token encoding',
    ],
    ['a length of 4n+1', `${kBearerProtocolPrefix}abcde,p`, 'invalid base64url.bearer.authorization token encoding'],
    [
      'a token that is not UTF-8',
      `${kBearerProtocolPrefix}${Buffer.from([0xff, 0xfe]).toString('base64url')},p`,
      'invalid base64url.bearer.authorization token',
    ],
    ['no other subprotocol', `${kBearerProtocolPrefix}${b64('t')}`, 'missing additional subprotocol'],
  ])('refuses %s', (_what, header, reason) => {
    expect(bearerTokenFromProtocols(header)).toEqual({ ok: false, reason });
  });
});

describe('checkWebSocketAccess (--anonymous-auth=false)', () => {
  const auth: ServerAuth = {
    tokens: parseTokenFile(`admin,admin,1,system:masters\nvtok,viewer,2,"${kReadOnlyGroup}"\n`, 'f'),
    anonymous: false,
  };
  const proto = (t: string) => `${kBearerProtocolPrefix}${Buffer.from(t).toString('base64url')}, watch.kubelet-ts`;
  it.each([
    ['the header', 'Bearer admin', '', 200],
    ['the subprotocol', '', proto('admin'), 200],
    ['a read-only token in the subprotocol', '', proto('vtok'), 200],
    ['a bad header but a good subprotocol', 'Bearer wrong', proto('admin'), 200],
    ['a bad subprotocol token', '', proto('wrong'), 401],
    ['neither', '', 'watch.kubelet-ts', 401],
  ])('with %s → %s', (_what, header, protocols, code) => {
    const { access, protocol } = checkWebSocketAccess(auth, '/watch/pods', header, protocols);
    expect(access.ok ? 200 : access.status.code).toBe(code);
    expect(protocol).toBe(protocols === '' ? '' : 'watch.kubelet-ts');
  });

  it('without auth allows the upgrade and still never selects the token subprotocol', () => {
    expect(checkWebSocketAccess(undefined, '/watch/pods', '', `${kBearerProtocolPrefix}eA, v1`)).toEqual({
      access: { ok: true },
      protocol: 'v1',
    });
    expect(checkWebSocketAccess(undefined, '/watch/pods', '', `${kBearerProtocolPrefix}eA`)).toEqual({
      access: { ok: true },
      protocol: '',
    });
  });
});

describe('checkAccess for the dashboard files (--anonymous-auth=false)', () => {
  const auth: ServerAuth = { tokens: parseTokenFile('admin,admin,1\n', 'f'), anonymous: false };
  it.each(['/', '/dashboard/index.html', '/dashboard/app.js', '/dashboard/style.css'])('serves GET %s without a token', (path) => {
    expect(kDashboardAssetPaths).toContain(path);
    expect(checkAccess(auth, 'get', path, '').ok).toBe(true);
    expect(checkAccess(auth, 'head', path, '').ok).toBe(true);
  });
  it.each([
    ['post', '/'],
    ['get', '/dashboard/other.js'],
    ['get', '/events'],
    ['get', '/node'],
  ])('still needs a token for %s %s', (method, path) => {
    const d = checkAccess(auth, method, path, '');
    expect(d.ok ? 200 : d.status.code).toBe(401);
  });
});

describe('checkAccess with anonymous reads (the default on a loopback --address)', () => {
  const admin = newAdminTokenAuthenticator('a'.repeat(43), '/root/admin.token');
  const auth: ServerAuth = {
    tokens: unionTokenAuthenticators(admin, parseTokenFile(`view,viewer,2,"${kReadOnlyGroup}"\nother,admin-lookalike,3\n`, 'f')),
    anonymous: true,
  };
  const bearer = `Bearer ${'a'.repeat(43)}`;
  it.each([
    ['get', '/pods', '', 200, 'system:anonymous'],
    ['head', '/pods', '', 200, 'system:anonymous'],
    ['get', '/events', '', 200, 'system:anonymous'],
    ['get', '/metrics', '', 200, 'system:anonymous'],
    ['get', '/containerLogs/default/a/main', '', 200, 'system:anonymous'],
    ['post', '/pods', '', 401, undefined],
    ['put', '/pods/default/a', '', 401, undefined],
    ['patch', '/pods/default/a', '', 401, undefined],
    ['delete', '/pods/default/a', '', 401, undefined],
    ['get', '/exec/default/a/main', '', 401, undefined],
    ['get', '/attach/default/a/main', '', 401, undefined],
    ['get', '/portForward/default/a', '', 401, undefined],
    ['post', '/run/default/a/main', '', 401, undefined],
    ['get', '/pods', 'Bearer wrong', 401, undefined],
    ['get', '/pods', 'Basic YTpi', 401, undefined],
    ['post', '/pods', bearer, 200, 'kubelet-ts:admin'],
    ['get', '/exec/default/a/main', bearer, 200, 'kubelet-ts:admin'],
    ['get', '/exec/default/a/main', 'Bearer view', 403, undefined],
    ['post', '/pods', 'Bearer view', 403, undefined],
  ])('%s %s with %j → %s as %s', (method, path, header, code, user) => {
    const d = checkAccess(auth, method, path, header);
    expect(d.ok ? 200 : d.status.code).toBe(code);
    if (d.ok) expect(d.user?.name).toBe(user);
    else expect(d.status).toMatchObject({ kind: 'Status', status: 'Failure', code });
  });

  it('gives the admin token the admin user in system:masters, and a file entry with another token cannot take that name', () => {
    expect(checkAccess(auth, 'post', '/pods', bearer)).toEqual({ ok: true, user: kAdminUser });
    expect(kAdminUser.groups).toEqual(['system:masters']);
    expect(kAnonymousUser).toMatchObject({ name: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('serves a WebSocket upgrade without credentials as anonymous, but refuses a wrong token in either place', () => {
    const proto = (t: string) => `${kBearerProtocolPrefix}${Buffer.from(t).toString('base64url')}, watch.kubelet-ts`;
    expect(checkWebSocketAccess(auth, '/watch/pods', '', 'watch.kubelet-ts').access).toEqual({ ok: true, user: kAnonymousUser });
    expect(checkWebSocketAccess(auth, '/watch/pods', '', proto('wrong')).access.ok).toBe(false);
    expect(checkWebSocketAccess(auth, '/watch/pods', 'Bearer wrong', 'watch.kubelet-ts').access.ok).toBe(false);
    expect(checkWebSocketAccess(auth, '/exec/default/a/main', '', 'v5.channel.k8s.io').access.ok).toBe(false);
  });

  it('refuses an empty admin token', () => {
    expect(() => newAdminTokenAuthenticator('', '/root/admin.token')).toThrow('/root/admin.token: the admin token is empty');
  });
});

describe('authorizationHeaders and duplicateCredentials (finding 9: two Authorization headers)', () => {
  const req = (headers: [string, string][]) => ({ forEach: (cb: (k: string, v: string) => void) => headers.forEach(([k, v]) => cb(k, v)) });
  it('reads the first Authorization header and counts them all', () => {
    expect(authorizationHeaders(req([]))).toEqual({ value: '', count: 0 });
    expect(
      authorizationHeaders(
        req([
          ['host', 'x'],
          ['authorization', 'Bearer a'],
        ]),
      ),
    ).toEqual({ value: 'Bearer a', count: 1 });
    expect(
      authorizationHeaders(
        req([
          ['authorization', 'Bearer a'],
          ['accept', '*'],
          ['authorization', 'Bearer b'],
        ]),
      ),
    ).toEqual({ value: 'Bearer a', count: 2 });
  });
  it('answers 400 BadRequest naming the count', () => {
    const d = duplicateCredentials(2);
    expect(d.ok).toBe(false);
    if (!d.ok)
      expect(d.status).toMatchObject({
        kind: 'Status',
        code: 400,
        reason: 'BadRequest',
        message: 'a request may carry one Authorization header, got 2',
      });
  });
});

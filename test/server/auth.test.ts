import { describe, expect, it } from 'vitest';
import { checkAccess, kReadOnlyGroup, parseCsv, parseTokenFile } from '../../src/server/auth.js';

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
    expect(() => parseTokenFile('t1,alice\n', 'tokens.csv')).toThrow("token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2");
  });
});

describe('checkAccess', () => {
  const auth = parseTokenFile(`admin,admin,1\nview,viewer,2,"${kReadOnlyGroup}"\n`, 'f');
  it.each([
    [undefined, 'post', '/pods', '', true, undefined],
    [auth, 'get', '/healthz', '', true, undefined],
    [auth, 'get', '/pods', '', false, 401],
    [auth, 'get', '/pods', 'Bearer wrong', false, 401],
    [auth, 'get', '/pods', 'Bearer admin', true, undefined],
    [auth, 'delete', '/pods/default/a', 'bearer admin', true, undefined],
    [auth, 'get', '/pods', 'Bearer view', true, undefined],
    [auth, 'head', '/pods', 'Bearer view', true, undefined],
    [auth, 'post', '/pods', 'Bearer view', false, 403],
    [auth, 'put', '/pods/default/a', 'Bearer view', false, 403],
  ])('auth=%#: %s %s with %j → ok=%s', (a, method, path, header, ok, code) => {
    const d = checkAccess(a, method, path, header);
    expect(d.ok).toBe(ok);
    if (!d.ok) {
      expect(d.status.code).toBe(code);
      expect(d.reason).not.toContain('view');
    }
  });
});

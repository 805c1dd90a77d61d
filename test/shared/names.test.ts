import { describe, expect, it } from 'vitest';
import {
  dns1123LabelErrors,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPortName,
  envVarNameErrors,
  qualifiedNameErrors,
  regexError,
} from '../../src/shared/names.js';

describe('isDNS1123Label', () => {
  it.each([
    ['web', true],
    ['a', true],
    ['123-abc', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['Web', false],
    ['-web', false],
    ['web-', false],
    ['a.b', false],
    ['', false],
    ['a_b', false],
  ])('%s → %s', (v, ok) => expect(isDNS1123Label(v)).toBe(ok));

  it('explains a bad label as Kubernetes does', () => {
    expect(dns1123LabelErrors('Web')).toEqual([
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    expect(dns1123LabelErrors('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('isDNS1123Subdomain', () => {
  it.each([
    ['example.com', true],
    ['web-1', true],
    [`${'a'.repeat(63)}.${'b'.repeat(63)}`, true],
    ['abc.', false],
    [`${'a'.repeat(63)}.`.repeat(3) + 'a'.repeat(61), true], // 253 characters
    [`${'a'.repeat(63)}.`.repeat(3) + 'a'.repeat(62), false], // 254 characters
    ['Example.com', false],
    ['a..b', false],
    ['.a', false],
    ['', false],
  ])('%s → %s', (v, ok) => expect(isDNS1123Subdomain(v)).toBe(ok));
});

describe('isQualifiedName', () => {
  it.each([
    ['app', true],
    ['MyName', true],
    ['my.name', true],
    ['example.com/tier', true],
    ['kubernetes.io/config.hash', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['/app', false],
    ['Example.com/app', false],
    ['a/b/c', false],
    ['-app', false],
    ['app_', false],
    ['', false],
    ['example.com/', false],
  ])('%s → %s', (v, ok) => expect(isQualifiedName(v)).toBe(ok));

  it('names the part that is wrong', () => {
    expect(qualifiedNameErrors('/app')).toEqual(['prefix part must be non-empty']);
    expect(qualifiedNameErrors('example.com/')).toEqual([
      'name part must be non-empty',
      `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]', 'MyName', 'my.name', '123-abc')}`,
    ]);
  });
});

describe('isValidLabelValue', () => {
  it.each([
    ['', true],
    ['v1', true],
    ['my_value', true],
    ['12345', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['-v', false],
    ['v.', false],
    ['a b', false],
    ['a/b', false],
  ])('%j → %s', (v, ok) => expect(isValidLabelValue(v)).toBe(ok));
});

describe('isValidPortName', () => {
  it.each([
    ['http', true],
    ['web-8080', true],
    ['a'.repeat(15), true],
    ['a'.repeat(16), false],
    ['8080', false],
    ['HTTP', false],
    ['a--b', false],
    ['-http', false],
    ['http-', false],
  ])('%s → %s', (v, ok) => expect(isValidPortName(v)).toBe(ok));
});

describe('envVarNameErrors', () => {
  it.each([
    ['PATH', 0],
    ['my.env-name', 0],
    ['_x', 0],
    ['.x', 0],
    ['1X', 1],
    ['A=B', 1],
    ['..', 1],
    ['..x', 1],
    ['.', 1],
  ])('%s has %d problem(s)', (v, n) => expect(envVarNameErrors(v)).toHaveLength(n));
});

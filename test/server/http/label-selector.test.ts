import { describe, expect, it } from 'vitest';
import { matchesLabelSelector, parseLabelSelector } from '../../../src/server/http/label-selector.js';
import { isInvalidInput } from '../../../src/shared/errors.js';

describe('parseLabelSelector', () => {
  it('parses equality, inequality and existence terms', () => {
    expect(parseLabelSelector(' a=b, c==d ,e!=f,g,!h,example.com/role=x')).toEqual([
      { key: 'a', operator: '=', value: 'b' },
      { key: 'c', operator: '=', value: 'd' },
      { key: 'e', operator: '!=', value: 'f' },
      { key: 'g', operator: 'exists' },
      { key: 'h', operator: '!' },
      { key: 'example.com/role', operator: '=', value: 'x' },
    ]);
  });

  it('parses set-based terms (in, notin) with sorted, de-duplicated values', () => {
    expect(parseLabelSelector('env in (prod, qa,prod),tier notin (front),  !legacy ,app')).toEqual([
      { key: 'env', operator: 'in', values: ['prod', 'qa'] },
      { key: 'tier', operator: 'notin', values: ['front'] },
      { key: 'legacy', operator: '!' },
      { key: 'app', operator: 'exists' },
    ]);
  });

  it('reads in/notin as values inside parentheses, and empty values as ""', () => {
    expect(parseLabelSelector('a in (in,notin)')).toEqual([{ key: 'a', operator: 'in', values: ['in', 'notin'] }]);
    expect(parseLabelSelector('a in ()')).toEqual([{ key: 'a', operator: 'in', values: [''] }]);
    // As labels.Parse: `()` is the set {""} (its docs' own example `z notin ()`), not an empty
    // set, so `a in ()` is valid and matches an empty value only.
    expect(matchesLabelSelector(parseLabelSelector('a in ()'), { a: '' })).toBe(true);
    expect(matchesLabelSelector(parseLabelSelector('a in ()'), { a: 'x' })).toBe(false);
    expect(parseLabelSelector('a in (,b)')).toEqual([{ key: 'a', operator: 'in', values: ['', 'b'] }]);
  });

  it('parses gt and lt with integer values', () => {
    expect(parseLabelSelector('replicas>2,age<10')).toEqual([
      { key: 'replicas', operator: 'gt', value: '2' },
      { key: 'age', operator: 'lt', value: '10' },
    ]);
  });

  it('gives an empty selector for an empty string', () => {
    expect(parseLabelSelector('')).toEqual([]);
    expect(parseLabelSelector('  ')).toEqual([]);
  });

  it('accepts an empty value', () => {
    expect(parseLabelSelector('a=')).toEqual([{ key: 'a', operator: '=', value: '' }]);
  });

  it.each([
    ['a=b,,c=d', "found ',', expected: identifier after ','"],
    ['a,', "found '', expected: identifier after ','"],
    ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a in b', "unable to parse requirement: found 'b' expected: '('"],
    ['a in (b', "found '', expected: ',' or ')'"],
    ['a in (b c)', "found 'c', expected: ',' or ')'"],
    ['a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['a>x', "for 'Gt', 'Lt' operators, the value must be an integer"],
    // Oversized numbers: strconv.ParseInt(v, 10, 64) refuses anything outside the int64 range.
    ['a>9223372036854775808', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['a<-9223372036854775809', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['a>1' + '0'.repeat(400), "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['a>1e3', "for 'Gt', 'Lt' operators, the value must be an integer"],
    ['-a=b', 'invalid label key "-a"'],
    ['a=' + 'x'.repeat(64), 'invalid label value: "xxxx'],
    ['a in (b_)', 'invalid label value: "b_": at key: "a"'],
    ['Bad_Prefix/a=b', 'invalid label key'],
  ])('rejects %j with the parser message', (input, message) => {
    let err: unknown;
    try {
      parseLabelSelector(input);
    } catch (e) {
      err = e;
    }
    expect(isInvalidInput(err)).toBe(true);
    expect((err as Error).message).toMatch(/^labelSelector: /);
    expect((err as Error).message).toContain(message);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { app: 'web', tier: 'front', replicas: '3' };
  it.each([
    ['', labels, true],
    ['', undefined, true],
    ['app=web', labels, true],
    ['app=db', labels, false],
    ['app=web,tier=back', labels, false],
    ['app!=db', labels, true],
    ['app!=web', labels, false],
    ['missing!=x', labels, true],
    ['app!=web', undefined, true],
    ['tier', labels, true],
    ['tier', undefined, false],
    ['!tier', labels, false],
    ['!other', labels, true],
    ['toString', {}, false],
    ['app in (web,db)', labels, true],
    ['app in (db)', labels, false],
    ['missing in (x)', labels, false],
    ['app notin (db)', labels, true],
    ['app notin (web)', labels, false],
    ['missing notin (x)', labels, true],
    ['replicas>2', labels, true],
    ['replicas>3', labels, false],
    ['replicas<4', labels, true],
    ['app>1', labels, false],
    ['missing<4', labels, false],
    // int64 compared exactly (not as rounded doubles); a label outside int64 never matches.
    ['n>9007199254740992', { n: '9007199254740993' }, true],
    ['n<9223372036854775807', { n: '9223372036854775806' }, true],
    ['n>-9223372036854775808', { n: '9223372036854775807' }, true],
    ['n>1', { n: '9223372036854775808' }, false],
    ['n>1', { n: '+5' }, true],
  ])('%j on %j is %s', (selector, l, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(selector), l)).toBe(expected);
  });
});

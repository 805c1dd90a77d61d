import { describe, expect, it } from 'vitest';
import { matchesLabelSelector, parseLabelSelector } from '../../src/server/label-selector.js';
import { isInvalidInput } from '../../src/shared/errors.js';

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

  it('gives an empty selector for an empty string', () => {
    expect(parseLabelSelector('')).toEqual([]);
    expect(parseLabelSelector('  ')).toEqual([]);
  });

  it('accepts an empty value', () => {
    expect(parseLabelSelector('a=')).toEqual([{ key: 'a', operator: '=', value: '' }]);
  });

  it.each([
    ['a in (b,c)', 'set-based'],
    ['a=b,,c=d', 'empty requirement'],
    ['-a=b', 'invalid label key "-a"'],
    ['a=b c', 'invalid label value "b c"'],
    ['a=' + 'x'.repeat(64), 'invalid label value'],
    ['Bad_Prefix/a=b', 'invalid label key'],
  ])('rejects %j', (input, message) => {
    let err: unknown;
    try {
      parseLabelSelector(input);
    } catch (e) {
      err = e;
    }
    expect(isInvalidInput(err)).toBe(true);
    expect((err as Error).message).toContain('labelSelector');
    expect((err as Error).message).toContain(message);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { app: 'web', tier: 'front' };
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
  ])('%j on %j is %s', (selector, l, expected) => {
    expect(matchesLabelSelector(parseLabelSelector(selector), l)).toBe(expected);
  });
});

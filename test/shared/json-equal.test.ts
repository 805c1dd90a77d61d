import { describe, expect, it } from 'vitest';
import { stringify } from 'safe-stable-stringify';
import { jsonEqual } from '../../src/shared/json-equal.js';

describe('jsonEqual', () => {
  // Each pair: what the canonical JSON (safe-stable-stringify, what stableHash hashes) says, jsonEqual says too.
  const pairs: Array<[unknown, unknown]> = [
    [
      { a: 1, b: { c: [1, 2] } },
      { b: { c: [1, 2] }, a: 1 },
    ],
    [{ a: 1, b: undefined }, { a: 1 }],
    [{ a: 1, f: () => 1 }, { a: 1 }],
    [
      [1, undefined],
      [1, null],
    ],
    [
      [1, 2],
      [2, 1],
    ],
    [{ a: [] }, { a: {} }],
    [{ a: null }, {}],
    [{ a: 0 }, { a: '0' }],
    [{ a: NaN }, { a: null }],
    [{ a: new Date(0) }, { a: '1970-01-01T00:00:00.000Z' }],
    [{ a: 'x' }, { a: 'x', b: 1 }],
    [{ a: 'x', b: 1 }, { a: 'x' }],
    [null, {}],
    [1, 1],
    ['s', 't'],
  ];
  it('equals the canonical JSON equality over objects, arrays, undefined, functions, non-finite numbers and toJSON', () => {
    for (const [a, b] of pairs) {
      expect({ a, b, equal: jsonEqual(a, b) }).toEqual({ a, b, equal: stringify(a) === stringify(b) });
      expect(jsonEqual(b, a)).toBe(jsonEqual(a, b));
    }
  });
});

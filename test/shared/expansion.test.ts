import { describe, expect, it } from 'vitest';
import { expand, mappingFor } from '../../src/shared/expansion.js';

const lookup = mappingFor({ VAR_A: 'A', VAR_B: 'B', EMPTY: '' });

describe('expand ($(VAR) references, as third_party/forked/golang/expansion)', () => {
  it.each([
    ['plain text', 'hello', 'hello'],
    ['one reference', '$(VAR_A)', 'A'],
    ['references inside text', 'x-$(VAR_A)-$(VAR_B)-y', 'x-A-B-y'],
    ['an empty value', '[$(EMPTY)]', '[]'],
    ['an unknown reference is kept', '$(NOPE)', '$(NOPE)'],
    ['$$ escapes a reference', '$$(VAR_A)', '$(VAR_A)'],
    ['$$$ escapes then nothing', '$$$(VAR_A)', '$A'],
    ['$$ alone', 'a$$b', 'a$b'],
    ['a $ before another character is kept', '$VAR_A $x', '$VAR_A $x'],
    ['a trailing $ is kept', 'cost$', 'cost$'],
    ['an unterminated reference is kept', '$(VAR_A', '$(VAR_A'],
    ['a name runs to the first ) (here an unknown one)', '$($(VAR_A)', '$($(VAR_A)'],
    ['an empty name is unknown', '$()', '$()'],
  ])('%s: %j → %j', (_name, input, want) => {
    expect(expand(input, lookup)).toBe(want);
  });

  it('mappingFor searches its maps in order', () => {
    const m = mappingFor(new Map([['X', 'first']]), { X: 'second', Y: 'y' });
    expect(expand('$(X) $(Y)', m)).toBe('first y');
  });
});

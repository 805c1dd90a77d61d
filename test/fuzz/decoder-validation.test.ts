// Property-based fuzzing (fast-check, seeded) of the manifest decoder, defaulting, validation and
// label selectors: the pure half of issue 11's fuzz suite (the properties: ./decoder-properties.ts).
// A failure prints its seed and path; `FUZZ_SEED=<seed>` reproduces the run (see ./fuzz-config.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { validatePodForNode } from '../../src/shared/validation.js';
import { validPod } from './arbitraries.js';
import { decoderProperties } from './decoder-properties.js';
import { fuzzParams } from './fuzz-config.js';

describe('fuzz: manifest decoder and validation', () => {
  it.each(decoderProperties().map((p) => [p.name, p] as const))('%s', (_name, p) => {
    fc.assert(p.property, { ...fuzzParams(p.numRuns), maxSkipsPerRun: 1000 });
  });

  it('accepts the unmutated seed pod (so the round-trip property is not vacuous)', () => {
    expect(validatePodForNode(applyPodDefaults(validPod()))).toEqual([]);
  });
});

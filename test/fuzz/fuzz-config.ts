// The fuzz suite's bounds: one fixed seed per run (so `tools/test` is repeatable and a failure
// reproduces), overridable with FUZZ_SEED=<n> (the seed fast-check prints on a failure) and
// scaled with FUZZ_RUNS_SCALE=<factor> for a longer local run. bench/fuzz.ts runs the same
// properties unbounded in time.
import type fc from 'fast-check';

/** kDefaultFuzzSeed: the seed of every bounded run unless FUZZ_SEED is set. */
export const kDefaultFuzzSeed = 20261201;

/**
 * fuzzParams: fast-check parameters for a property run of `numRuns` cases (scaled by
 * FUZZ_RUNS_SCALE), seeded by FUZZ_SEED or {@link kDefaultFuzzSeed}; a failure's report names the
 * seed and the counterexample's path, which `FUZZ_SEED=<seed>` (and fast-check's `path`) replay.
 * @throws Error when FUZZ_SEED or FUZZ_RUNS_SCALE is set but not a number.
 */
export function fuzzParams(numRuns: number): fc.Parameters<unknown> {
  const seedText = process.env.FUZZ_SEED;
  const scaleText = process.env.FUZZ_RUNS_SCALE;
  const seed = seedText === undefined ? kDefaultFuzzSeed : Number(seedText);
  const scale = scaleText === undefined ? 1 : Number(scaleText);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${seedText}`);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`FUZZ_RUNS_SCALE must be a number > 0, got ${scaleText}`);
  return { seed, numRuns: Math.max(1, Math.round(numRuns * scale)), verbose: 1 };
}

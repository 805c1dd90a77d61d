// bench fuzz: the fuzz suite's properties (test/fuzz/*-properties.ts) for --minutes instead of a
// bounded number of runs: rounds of every pure decoder/validation property and of random API
// requests against one in-process agent with the fake runtime (no Docker), each round with a new
// seed. A progress line per round; at the end the cases run, the answer codes and any failure with
// its seed (FUZZ_SEED=<seed> npx vitest run test/fuzz/... replays one), and bench/results/fuzz-*.json.
// Exits 1 when a property failed.
//
//   npm run bench -- fuzz [--minutes 5] [--runs-per-round 200] [--seed N]
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { apiRequest, checkAgentAfter, checkAnswer, type ApiFetch } from '../test/fuzz/api-properties.js';
import { decoderProperties } from '../test/fuzz/decoder-properties.js';
import { positiveInt, startBenchAgent, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    'runs-per-round': { type: 'string', default: '200' },
    seed: { type: 'string' },
  },
});
const minutes = Number(args.minutes);
if (!Number.isFinite(minutes) || minutes <= 0) throw new Error(`--minutes must be a number > 0, got ${args.minutes}`);
const runsPerRound = positiveInt('runs-per-round', args['runs-per-round']);
let seed = args.seed === undefined ? Date.now() % 2 ** 31 : Number(args.seed);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${args.seed}`);

const b = await startBenchAgent('fuzz', { runtime: 'fake', relistPeriodMs: 1000 });
const api: ApiFetch = (path, init) => fetch(`http://127.0.0.1:${b.agent.port}${path}`, init);
const codes: Record<string, number> = {};
const cases: Record<string, number> = {};
const failures: { property: string; seed: number; counterexample: string; error: string }[] = [];

const record = <T>(name: string, details: fc.RunDetails<T>) => {
  cases[name] = (cases[name] ?? 0) + details.numRuns;
  if (details.failed) {
    failures.push({
      property: name,
      seed: details.seed,
      counterexample: fc.stringify(details.counterexample).slice(0, 4000),
      error: String(details.errorInstance).slice(0, 4000),
    });
    process.stderr.write(
      `fuzz: FAILED ${name} (seed ${details.seed}, path ${details.counterexamplePath}): ${String(details.errorInstance).slice(0, 500)}\n`,
    );
  }
};

const t0 = performance.now();
const endAt = t0 + minutes * 60_000;
let round = 0;
try {
  while (performance.now() < endAt) {
    round++;
    for (const p of decoderProperties())
      record(
        p.name,
        fc.check(p.property, { seed, numRuns: Math.max(1, Math.round((p.numRuns * runsPerRound) / 200)), maxSkipsPerRun: 1000 }),
      );
    const apiName = 'API: no 5xx, errors are Status, no accepted pod the validator refuses';
    record(
      apiName,
      await fc.check(
        fc.asyncProperty(apiRequest, async (r) => {
          const code = await checkAnswer(api, r);
          codes[code] = (codes[code] ?? 0) + 1;
        }),
        { seed, numRuns: runsPerRound },
      ),
    );
    const total = Object.values(cases).reduce((a, n) => a + n, 0);
    process.stderr.write(
      `fuzz round ${round} (seed ${seed}): ${total} cases in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${failures.length} failures, answers ${JSON.stringify(codes)}\n`,
    );
    seed = (seed + 1) % 2 ** 31;
  }
  let healthy = 'ok';
  try {
    await checkAgentAfter(api);
  } catch (err) {
    healthy = String(err);
    failures.push({ property: 'agent afterwards', seed, counterexample: '', error: healthy });
  }
  const wallS = (performance.now() - t0) / 1000;
  console.log(
    `\nfuzz: ${round} rounds in ${wallS.toFixed(0)} s, ${new Date().toISOString()}; /healthz and GET /pods afterwards: ${healthy}`,
  );
  console.log(table([['property', 'cases'], ...Object.entries(cases).map(([k, n]) => [k, n])]));
  console.log(`answer codes: ${JSON.stringify(codes)}\nfailures: ${failures.length}`);
  console.log(
    `results: ${writeResult('fuzz', { date: new Date().toISOString(), minutes, runsPerRound, rounds: round, wallS, cases, codes, failures, healthy })}`,
  );
} finally {
  await b.stop();
}
if (failures.length) process.exitCode = 1;

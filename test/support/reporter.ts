// CI summary line for the test run; the role of gotestsum's closing "DONE N tests, N failures" line in Kubernetes' hack/make-rules/test.sh.
import type { Reporter, SerializedError, TestModule, TestRunEndReason } from 'vitest/node';

/** Counts is the tally that {@link CountsReporter} prints. */
export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * countResults tallies a finished run by test case (not by file): `passed`; `skipped` (skip, todo,
 * filtered out, or left `pending` by an interrupted or bailed run); and `failed`, which counts each
 * failed test plus each file or suite that failed outside its tests (import or collection error, a
 * throwing beforeAll/afterAll) plus each unhandled error, so that a broken run never reads `0 failed`.
 */
export function countResults(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): Counts {
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
  countModules(testModules, counts);
  counts.failed += unhandledErrors.length;
  return counts;
}

/** countModules adds the test cases and the file/suite errors of `testModules` to `counts` (see countResults). */
function countModules(testModules: ReadonlyArray<TestModule>, counts: Counts): void {
  for (const mod of testModules) {
    for (const test of mod.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else counts.skipped++;
    }
    if (mod.errors().length > 0) counts.failed++;
    for (const suite of mod.children.allSuites()) if (suite.errors().length > 0) counts.failed++;
  }
}

/**
 * runtimeOf: the container runtime a file ran on — its project's KUBELET_TS_TEST_RUNTIME
 * (vitest.config.ts's `containerd` project), else this process's, else `docker`.
 */
export function runtimeOf(mod: TestModule): string {
  return mod.project.config.env?.KUBELET_TS_TEST_RUNTIME || process.env.KUBELET_TS_TEST_RUNTIME || 'docker';
}

/**
 * runtimeLines: one `<runtime>: N passed, N failed[, N skipped]` line per runtime the files ran on
 * (`of` says which), Docker's first, the others in the order first met; none when they all ran on
 * one (the total says it all).
 * Unhandled errors belong to no file: they are counted in the total line only.
 */
export function runtimeLines(testModules: ReadonlyArray<TestModule>, of: (mod: TestModule) => string = runtimeOf): string[] {
  const groups = new Map<string, TestModule[]>();
  for (const mod of testModules) groups.set(of(mod), [...(groups.get(of(mod)) ?? []), mod]);
  if (groups.size < 2) return [];
  const order = (r: string) => (r === 'docker' ? 0 : 1); // Docker first, the rest as first met
  return [...groups]
    .sort(([a], [b]) => order(a) - order(b))
    .map(([runtime, mods]) => {
      const counts: Counts = { passed: 0, failed: 0, skipped: 0 };
      countModules(mods, counts);
      return `${runtime}: ${formatCounts(counts)}`;
    });
}

/** formatCounts renders `N passed, N failed`, plus `, N skipped` only when some were skipped. */
export function formatCounts(c: Counts): string {
  return `${c.passed} passed, ${c.failed} failed` + (c.skipped > 0 ? `, ${c.skipped} skipped` : '');
}

/**
 * CountsReporter is a vitest 4.1 reporter (listed after 'default' in vitest.config.ts) that makes
 * {@link formatCounts} the last line the run prints, on stdout, for CI to read:
 * - onTestRunEnd prints it (after the default reporter's summary), after one line per runtime when
 *   the files ran on more than one (runtimeLines);
 * - at process exit it is printed again if anything was written to stdout/stderr after it (a late
 *   error, a hanging-process notice), or if the run never reached onTestRunEnd.
 * A failing run never reads `0 failed`: when the run failed (reason `failed`, or a non-zero exit
 * code at exit) without a counted failure — e.g. globalSetup threw, so no test ran — one failure is
 * counted for the run itself.
 * To see late writes it counts calls to process.stdout.write / process.stderr.write (a wrapper that
 * forwards every call unchanged).
 */
export default class CountsReporter implements Reporter {
  #writes = 0;
  #counts: Counts | undefined;
  #writesAtLine = 0;
  #installed = false;

  onInit(): void {
    if (this.#installed) return;
    this.#installed = true;
    for (const stream of [process.stdout, process.stderr]) {
      const write = stream.write;
      stream.write = ((...args: unknown[]) => {
        this.#writes++;
        return (write as (...a: unknown[]) => boolean).apply(stream, args);
      }) as typeof stream.write;
    }
    process.once('exit', (code) => {
      const failedRun = code !== 0 || (process.exitCode !== undefined && Number(process.exitCode) !== 0);
      const counts = this.#counts ?? { passed: 0, failed: 0, skipped: 0 };
      if (failedRun && counts.failed === 0) this.#print({ ...counts, failed: 1 });
      else if (this.#counts === undefined || this.#writes !== this.#writesAtLine) this.#print(counts);
    });
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>, reason: TestRunEndReason): void {
    const counts = countResults(testModules, unhandledErrors);
    if (reason === 'failed' && counts.failed === 0) counts.failed = 1;
    // With the containerd project on (KUBELET_TS_CRI_SUITES=1), each runtime's own tally first.
    for (const line of runtimeLines(testModules)) process.stdout.write(`${line}\n`);
    this.#print(counts);
  }

  #print(counts: Counts): void {
    this.#counts = counts;
    process.stdout.write(`${formatCounts(counts)}\n`);
    this.#writesAtLine = this.#writes;
  }
}

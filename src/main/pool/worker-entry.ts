// Counterpart of nothing upstream (the kubelet is one Go binary): how the main thread finds and starts a worker thread's entry file.
/**
 * Every thread entry lives in src/workers/ and is named `<name>.worker.ts` (compiled to
 * `<name>.worker.js` in dist/). This module is the one place that turns such a name into the file
 * that will really load and the execArgv that loads it, for piscina pools (worker-pool.ts) and for
 * plain `Worker`s (the events worker of the event PLEG, the logs worker). Main thread only.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AgentError } from '../../shared/errors.js';

/** The thread entries of src/workers/: `<name>.worker.ts`. */
export type WorkerName = 'sync' | 'container-events' | 'container-logs' | 'container-streams' | 'manifest';

/** Where a worker entry is and how to load it. */
export interface WorkerEntry {
  /** Absolute path of the entry: the `.ts` source under tsx/vitest, else the `.js` beside this module in dist/. */
  filename: string;
  /** From source, the parent's execArgv without `--inspect*` (a second inspector on the same port would fail); compiled, only its `--cpu-prof*`/`--heap-prof*` flags. */
  execArgv: string[];
  /** True when running from source (the entry is a `.ts` file). */
  fromSource: boolean;
}

/**
 * workerEntry resolves `src/workers/<name>.worker.ts` (from source) or `<name>.worker.js` (dist/)
 * relative to this module, as piscina's `filename` must be the file that loads.
 * @throws AgentError ERR_PROTOCOL when the file does not exist (the project is not built).
 */
export function workerEntry(name: WorkerName): WorkerEntry {
  const fromSource = import.meta.url.endsWith('.ts');
  const filename = fileURLToPath(new URL(`../../workers/${name}.worker.${fromSource ? 'ts' : 'js'}`, import.meta.url));
  if (!existsSync(filename))
    throw new AgentError('ERR_PROTOCOL', `worker entry ${filename} does not exist (build the project with npm run build)`);
  const execArgv = fromSource ? process.execArgv.filter((a) => !a.startsWith('--inspect')) : profilingArgs(process.execArgv);
  return { filename, execArgv, fromSource };
}

/**
 * profilingArgs: of a process's execArgv, only Node's `--cpu-prof*` / `--heap-prof*` flags (with
 * the value of `--cpu-prof-dir DIR` and the like given as a separate argument): what a compiled
 * agent's threads take from it, so that `node --cpu-prof dist/…` profiles every thread, each to
 * its own file (docs/performance.md). Pure.
 */
export function profilingArgs(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if (!/^--(cpu|heap)-prof/.test(a)) continue;
    out.push(a);
    if (/^--(cpu|heap)-prof-(dir|name|interval)$/.test(a) && i + 1 < execArgv.length) out.push(execArgv[++i]!);
  }
  return out;
}

/**
 * piscinaEntry: workerEntry for a piscina pool. From source, `--import tsx` is added to execArgv:
 * vitest does not pass its TypeScript loader to worker threads, and piscina require()s the entry
 * first, which tsx's loader then serves.
 * @throws AgentError ERR_PROTOCOL as workerEntry.
 */
export function piscinaEntry(name: WorkerName): { filename: string; execArgv: string[] } {
  const { filename, execArgv, fromSource } = workerEntry(name);
  return { filename, execArgv: fromSource ? [...execArgv, '--import', 'tsx'] : execArgv };
}

/**
 * startWorker starts a plain `Worker` on entry `name` with `workerData`. From source (tsx, vitest)
 * an ESM import of a .ts file from a plain Worker fails on Node 20 (ERR_UNKNOWN_FILE_EXTENSION)
 * even with `--import tsx`; so the Worker registers tsx's require hook and require()s the .ts.
 * The Worker is returned as started (the caller unref()s it if it must not hold the process open).
 * @throws AgentError ERR_PROTOCOL as workerEntry.
 */
export function startWorker(name: WorkerName, workerData: unknown): Worker {
  const { filename, execArgv, fromSource } = workerEntry(name);
  if (!fromSource) return new Worker(filename, { workerData, execArgv });
  const tsxCjs = createRequire(import.meta.url).resolve('tsx/cjs/api');
  return new Worker(`require(${JSON.stringify(tsxCjs)}).register(); require(${JSON.stringify(filename)});`, {
    eval: true,
    workerData,
    execArgv,
  });
}

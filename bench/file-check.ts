// bench file-check (issue #16, idle CPU at density): what the file source's periodic full check of
// --pod-manifest-path costs with N unchanged manifests. A real file source (newFileSource, its
// manifest-decoder thread) over N one-pod files last written a minute ago, checking every
// --period; its process CPU (main thread, libuv's threadpool, the decoder) over --window seconds,
// per check and as % of a core at the kubelet's 20 s --file-check-frequency. Beside it, the same
// N files read as the kubelet's file source reads them on every check (stat, read, stat, SHA-256:
// readManifestFileSync, as the manifest thread reads them) against a stat of each (what an unchanged file costs now). Prints a table,
// writes bench/results/file-check-*.json.
//
//   npm run bench -- file-check [--files 1000] [--period 1s] [--window 20]
import { promises as fsp } from 'node:fs';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { newFileSource } from '../src/main/config/source-file.js';
import { readManifestFileSync } from '../src/io/manifest-file.js';
import { parseDuration } from '../src/shared/duration.js';
import { podYaml, positiveInt, progress, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '1000' },
    period: { type: 'string', default: '1s' },
    window: { type: 'string', default: '20' },
  },
});
const N = positiveInt('files', args.files);
const periodMs = parseDuration(args.period ?? '1s', '--period');
const windowS = positiveInt('window', args.window);
const kDefaultCheckMs = 20_000;

/** cpuMs: the process's CPU (user + system) over `fn`, milliseconds. */
async function cpuMs(fn: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-bench-file-check-'));
try {
  const past = new Date(Date.now() - 60_000);
  const files = Array.from({ length: N }, (_, i) => join(dir, `pod-${i}.yaml`));
  await Promise.all(
    files.map(async (f, i) => {
      await writeFile(f, podYaml(`fc-${i}`));
      await utimes(f, past, past);
    }),
  );

  // The two ways of looking at an unchanged file, three rounds each, best round.
  const readAll: number[] = [];
  const statAll: number[] = [];
  for (let round = 0; round < 3; round++) {
    readAll.push(
      await cpuMs(async () => {
        for (const f of files) readManifestFileSync(f);
      }),
    );
    statAll.push(
      await cpuMs(async () => {
        for (const f of files) await fsp.stat(f, { bigint: true });
      }),
    );
  }

  // The file source itself, checking every period.
  let checks = 0;
  // Checks counted from the source's own debug line (one per full check).
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        if (line.includes('Checked pod manifest path')) checks++;
      },
    },
  );
  const source = newFileSource(
    { path: dir, nodeName: 'bench', checkFrequencyMs: periodMs },
    { logger, onUpdate: () => {}, onError: () => {} },
  );
  await source.start();
  await new Promise((r) => setTimeout(r, 2 * periodMs)); // past the first check
  const checks0 = checks;
  const bar = progress(`file source idle (${windowS} s)`, windowS);
  const sourceMs = await cpuMs(async () => {
    for (let s = 1; s <= windowS; s++) {
      await new Promise((r) => setTimeout(r, 1000));
      bar.update(s);
    }
  });
  bar.end();
  await source.stop();
  const windowChecks = checks - checks0;
  const perCheck = windowChecks > 0 ? sourceMs / windowChecks : NaN;

  const pct = (ms: number) => (100 * ms) / kDefaultCheckMs;
  const best = (xs: number[]) => Math.min(...xs);
  console.log(`\nfile-check: ${N} unchanged manifest files, ${new Date().toISOString()}`);
  console.log(
    table([
      ['measure', 'CPU per full check (ms)', '% of a core at a 20 s check'],
      ['every file read (stat, read, stat, SHA-256), as the kubelet', best(readAll).toFixed(1), pct(best(readAll)).toFixed(2)],
      ["every file stat'ed (an unchanged file now)", best(statAll).toFixed(1), pct(best(statAll)).toFixed(2)],
      [`the file source, ${windowChecks} checks in ${windowS} s (whole process)`, perCheck.toFixed(1), pct(perCheck).toFixed(2)],
    ]),
  );
  const file = writeResult('file-check', {
    date: new Date().toISOString(),
    files: N,
    periodMs,
    windowS,
    readAllCpuMs: readAll,
    statAllCpuMs: statAll,
    sourceCpuMs: sourceMs,
    sourceChecks: windowChecks,
    sourceCpuMsPerCheck: perCheck,
  });
  console.log(`results: ${file}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}

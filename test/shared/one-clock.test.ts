// Keeps issue #41 item 4 ("one clock") so: outside src/shared/clock.ts no code of the main thread,
// the server, the client or shared reads the time itself (Date.now, new Date() without an
// argument, performance.now) or takes a `now?: () => number` option — every component takes a Clock (as
// k8s.io/utils/clock), and its tests drive it with test/fakes/fake-clock.ts. The dashboard's
// browser scripts (src/server/dashboard/*.js) run in the user's browser and are not checked.
// src/workers is being rewritten for the CRI (#40) and is not checked yet.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const kRoot = join(import.meta.dirname, '..', '..');
const kDirs = ['src/main', 'src/server', 'src/cli', 'src/shared'];
const kAllowed = new Set(['src/shared/clock.ts']);

/** The patterns that read the time or inject it some other way, with what to use instead. */
const kForbidden: { pattern: RegExp; instead: string }[] = [
  { pattern: /\bDate\.now\b/, instead: 'a Clock (clock.now())' },
  { pattern: /\bnew Date\(\s*\)/, instead: 'new Date(clock.now())' },
  { pattern: /\bperformance\.now\b/, instead: 'clock.monotonicMs()' },
  { pattern: /\bnow\?:\s*\(\)\s*=>\s*number/, instead: 'a `clock?: Clock` dependency' },
];

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(kRoot, dir), { withFileTypes: true })) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (e.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** offencesIn: `file:line: text (use …)` for every forbidden time read in `text` (comments aside). */
function offencesIn(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
    for (const { pattern, instead } of kForbidden) if (pattern.test(code)) found.push(`${file}:${i + 1}: ${line.trim()} (use ${instead})`);
  });
  return found;
}

describe('one clock (#41 item 4)', () => {
  it('no source of main, server, cli or shared reads the time outside src/shared/clock.ts (not even monotonic time)', async () => {
    const files = (await Promise.all(kDirs.map(sourceFiles))).flat();
    expect(files.length).toBeGreaterThan(100); // the walk found the tree
    const found: string[] = [];
    for (const file of files) if (!kAllowed.has(file)) found.push(...offencesIn(file, await readFile(join(kRoot, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check finds each forbidden form, and not in comments or with an argument (it can fail)', () => {
    const text = [
      'const a = clock.now(); // not Date.now()',
      'const b = Date.now() + 1;',
      'const c = new Date().toISOString();',
      'interface O { now?: () => number }',
      ' * the old way was Date.now()',
      'const d = new Date(clock.now());',
      'const e = deps.now ?? Date.now;',
      'const f = performance.now() - started;',
    ].join('\n');
    expect(offencesIn('x.ts', text).map((f) => f.split(':')[1])).toEqual(['2', '3', '4', '7', '8']);
  });
});

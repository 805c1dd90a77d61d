// Keeps issue #41 item 4 ("one clock") so: outside src/shared/clock.ts no code of the main thread,
// the server, the client, shared or the worker threads reads the time itself (Date.now, new Date()
// without an argument, performance.now) or takes a `now?: () => number` option — every component takes
// a Clock (as k8s.io/utils/clock), and its tests drive it with test/fakes/fake-clock.ts. In src/workers
// the timers too go through the Clock (no global setTimeout / setInterval, setLongTimeout or
// node:timers/promises): each thread's entry builds the real clock once and hands it down, and a
// component that is also built as a per-thread singleton defaults to realClock. Not timers of ours,
// so not refused: a socket's own idle timeout (`socket.setTimeout`), `setImmediate` (a turn of the
// event loop, no time), and the handshake timeout a library takes as an option (ws's
// `handshakeTimeout`, execFile's `timeout`). The dashboard's browser scripts
// (src/server/dashboard/*.js) run in the user's browser and are not checked.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const kRoot = join(import.meta.dirname, '..', '..');
const kDirs = ['src/main', 'src/server', 'src/cli', 'src/shared', 'src/workers'];
const kAllowed = new Set(['src/shared/clock.ts']);

/** The patterns that read the time or inject it some other way, with what to use instead; `dirs`: only there (default everywhere). */
const kForbidden: { pattern: RegExp; instead: string; dirs?: string[] }[] = [
  { pattern: /\bDate\.now\b/, instead: 'a Clock (clock.now())' },
  { pattern: /\bnew Date\(\s*\)/, instead: 'new Date(clock.now())' },
  { pattern: /\bperformance\.now\b/, instead: 'clock.monotonicMs()' },
  { pattern: /\bnow\?:\s*\(\)\s*=>\s*number/, instead: 'a `clock?: Clock` dependency' },
  // Timers: a global setTimeout / setInterval (not a method such as socket.setTimeout), shared/long-timeout's, timers/promises.
  {
    pattern: /(?<![.\w])(setTimeout|setInterval|setLongTimeout)\s*\(/,
    instead: 'clock.setTimeout / clock.setInterval',
    dirs: ['src/workers'],
  },
  { pattern: /['"]node:timers(\/promises)?['"]/, instead: 'clock.setTimeout', dirs: ['src/workers'] },
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
  const rules = kForbidden.filter((r) => !r.dirs || r.dirs.some((d) => file.startsWith(`${d}/`)));
  text.split('\n').forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
    for (const { pattern, instead } of rules) if (pattern.test(code)) found.push(`${file}:${i + 1}: ${line.trim()} (use ${instead})`);
  });
  return found;
}

describe('one clock (#41 item 4)', () => {
  it('no source of main, server, cli, shared or workers reads the time outside src/shared/clock.ts (not even monotonic time); no worker code arms a timer of its own', async () => {
    const files = (await Promise.all(kDirs.map(sourceFiles))).flat();
    expect(files.length).toBeGreaterThan(100); // the walk found the tree
    expect(files.filter((f) => f.startsWith('src/workers/')).length).toBeGreaterThan(50);
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

  it('in src/workers the check also finds raw timers, and not a method of the same name or the clock timers', () => {
    const text = [
      'const t = setTimeout(fn, 10);',
      'const i = setInterval(tick, 1000);',
      "import { setTimeout as sleep } from 'node:timers/promises';",
      'const l = setLongTimeout(fn, ms);',
      'socket.setTimeout(0);',
      'const c = clock.setTimeout(fn, 10);',
      'setImmediate(() => reader.resume());',
      'clearTimeout(t); // clearing is harmless',
    ].join('\n');
    expect(offencesIn('src/workers/x.ts', text).map((f) => f.split(':')[1])).toEqual(['1', '2', '3', '4']);
    expect(offencesIn('src/main/x.ts', text)).toEqual([]); // the timer rule is the workers' (main keeps a few process-level timers)
  });
});

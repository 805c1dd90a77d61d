// Bench dispatcher: `npm run bench -- NAME [options]` runs bench/NAME.ts. Benches print a table and
// write JSON under bench/results/; they are figures, not tests, and assert nothing about speed.
// `node dist/bench/run.js NAME` (after `npm run build`) runs the compiled bench and agent, as users
// run the agent: no tsx transpiling the modules a sync loads lazily, in the threads being measured.
const kBenches = [
  'density',
  'interleaved',
  'peers',
  'probes',
  'api',
  'etcd',
  'steady',
  'relist',
  'scale',
  'watch-history',
  'watchers',
  'soak',
  'fuzz',
  'cni',
  'stats',
  'dashboard',
  'file-check',
  'cri-floor',
] as const;
const [name, ...rest] = process.argv.slice(2);
if (!name || !(kBenches as readonly string[]).includes(name)) {
  process.stderr.write(`usage: npm run bench -- <${kBenches.join('|')}> [options]\n`);
  process.exit(2);
}
process.argv = [process.argv[0], `bench/${name}.ts`, ...rest];
// `.js`: tsx maps it to bench/NAME.ts; compiled, it is dist/bench/NAME.js.
try {
  await import(`./${name}.js`);
} catch (err) {
  // A bad option — parseArgs' own errors, or a bench's check, whose message starts with the option —
  // is its message and exit code 2, without a stack trace; anything else is thrown as it is.
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : '';
  if ((typeof e?.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS_')) || /^--[a-z]/.test(message)) {
    process.stderr.write(`bench ${name}: ${message}\n`);
    process.exit(2);
  }
  throw err;
}

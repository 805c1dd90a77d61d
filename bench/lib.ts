// Shared bench helpers: percentiles, a progress line, results JSON. Not used by src/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** percentile of `values` (milliseconds or any unit), p in 0..100, nearest-rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** progress prints `label: done/total` on one line (carriage return on a TTY, a line a second otherwise). */
export function progress(label: string, total: number): { update(done: number): void; end(): void } {
  const tty = process.stderr.isTTY;
  let last = 0;
  let lastDone = -1;
  const draw = (done: number, force = false) => {
    const now = Date.now();
    if (!force && (done === lastDone || now - last < (tty ? 100 : 1000))) return;
    last = now;
    lastDone = done;
    const width = 30;
    const filled = Math.round((done / Math.max(total, 1)) * width);
    const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`;
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
  return { update: (done) => draw(done), end: () => { draw(lastDone < 0 ? 0 : lastDone, true); if (tty) process.stderr.write('\n'); } };
}

/** writeResult writes `data` to bench/results/<name>-<ISO time>.json and returns the path. */
export function writeResult(name: string, data: unknown): string {
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

/** table prints rows as aligned columns. */
export function table(rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isInteger(c) ? String(c) : c.toFixed(2)) : c)));
  const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i]?.length ?? 0)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ')).join('\n');
}

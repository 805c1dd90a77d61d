// The benches' progress line (bench/lib.ts re-exports it). Not used by src/.

/** The bar's width in characters. */
const kWidth = 30;

/**
 * progressLine: `label [###...] done/total` (pure). The bar is clamped to its width, so a count past
 * its end (a wait that ran longer than its bar, as a slow dockerd's namespace collection past 65 s),
 * below zero (others' containers raised a count being waited down) or not a number draws a full,
 * an empty or an empty bar; the figures are printed as they are.
 */
export function progressLine(label: string, done: number, total: number): string {
  const share = Number.isFinite(done) && total > 0 ? done / total : 0;
  const filled = Math.min(kWidth, Math.max(0, Math.round(share * kWidth)));
  return `${label} [${'#'.repeat(filled)}${'.'.repeat(kWidth - filled)}] ${done}/${total}`;
}

/**
 * progress prints `label: done/total` on one line of stderr (carriage return on a TTY, a line a
 * second otherwise); update() takes any number (see progressLine) and never throws.
 */
export function progress(label: string, total: number): { update(done: number): void; end(): void } {
  const tty = process.stderr.isTTY;
  let last = 0;
  let lastDone = -1;
  let latest = 0;
  const draw = (done: number, force = false) => {
    latest = done;
    const now = Date.now();
    if (!force && (done === lastDone || now - last < (tty ? 100 : 1000))) return;
    last = now;
    lastDone = done;
    const line = progressLine(label, done, total);
    process.stderr.write(tty ? `\r${line}` : `${line}\n`);
  };
  return {
    update: (done) => draw(done),
    end: () => {
      draw(latest, true);
      if (tty) process.stderr.write('\n');
    },
  };
}

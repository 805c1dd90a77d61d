/**
 * Go duration strings (time.ParseDuration), as kubelet flags take them: `20s`, `1m30s`, `500ms`,
 * `1h`. A bare number is taken as seconds, as KubeletConfiguration fields written by hand often are.
 */
import { InvalidArgumentError } from './errors.js';

const kUnitMs: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * parseDuration returns milliseconds.
 * @param what names the flag or field in the error, e.g. `--sync-frequency`.
 * @throws InvalidArgumentError for anything Go's time.ParseDuration would reject, or a negative value.
 */
export function parseDuration(input: string | number, what = 'duration'): number {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) throw new InvalidArgumentError(`${what}: invalid duration ${input}`);
    return input * 1000;
  }
  const s = input.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) throw new InvalidArgumentError(`${what}: invalid duration ${JSON.stringify(input)} (use Go syntax such as 20s, 1m30s, 500ms)`);
    total += Number(m[1]) * kUnitMs[m[2]];
    pos = re.lastIndex;
  }
  if (s.length === 0) throw new InvalidArgumentError(`${what}: invalid duration ""`);
  return total;
}

/** formatDuration renders milliseconds in Go style (`1m30s`, `500ms`), for --help defaults and logs. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  let rest = Math.round(ms / 1000);
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${rest || (!h && !m) ? `${rest}s` : ''}`;
}

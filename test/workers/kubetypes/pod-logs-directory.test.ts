// podLogsDirectory (pod-dirs.ts): the pod's CRI log directory, as helpers.go BuildPodLogsDirectory,
// kept within NAME_MAX for the longest valid names (issue-38's 253-character pod must run).
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { podLogsDirectory } from '../../../src/workers/kubetypes/pod-dirs.js';

const uid = '0123456789abcdef0123456789abcdef';

describe('podLogsDirectory', () => {
  it('is <ns>_<name>_<uid> under the logs root for ordinary names', () => {
    expect(podLogsDirectory('/r/pod-logs', 'default', 'web', uid)).toBe(`/r/pod-logs/default_web_${uid}`);
  });

  it('keeps a 253-character name in a 63-character namespace within 255 bytes, stable and distinct', () => {
    const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
    const other = `${long.slice(0, 252)}e`;
    const ns = 'n'.repeat(63);
    const a = basename(podLogsDirectory('/r', ns, long, uid));
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(255);
    expect(a.startsWith(`${ns}_aaaa`)).toBe(true);
    expect(a.endsWith(`_${uid}`)).toBe(true);
    expect(podLogsDirectory('/r', ns, long, uid)).toBe(`/r/${a}`);
    expect(basename(podLogsDirectory('/r', ns, other, uid))).not.toBe(a);
  });

  it('refuses a part that is not one path segment, naming the field', () => {
    expect(() => podLogsDirectory('/r', 'default', '../x', uid)).toThrow(/metadata\.name/);
  });
});

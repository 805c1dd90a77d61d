// A compiled agent's worker threads take the parent's profiling flags (and nothing else of its execArgv).
import { describe, expect, it } from 'vitest';
import { profilingArgs } from '../../../src/main/pool/worker-entry.js';

describe("profilingArgs (a compiled agent's thread execArgv)", () => {
  it('keeps --cpu-prof* and --heap-prof* flags, a separate value with them, and nothing else', () => {
    expect(
      profilingArgs([
        '--cpu-prof',
        '--cpu-prof-dir',
        '/tmp/p',
        '--max-old-space-size=512',
        '--inspect=9229',
        '--heap-prof-interval=1024',
        '--cpu-prof-name=x.cpuprofile',
      ]),
    ).toEqual(['--cpu-prof', '--cpu-prof-dir', '/tmp/p', '--heap-prof-interval=1024', '--cpu-prof-name=x.cpuprofile']);
    expect(profilingArgs([])).toEqual([]);
    expect(profilingArgs(['--enable-source-maps'])).toEqual([]);
  });
});

// bench/raw-floor.ts removeByLabel: a bench's clean-up never throws away the figures it already has.
// On 2026-12-07 a density run died in the floor's final removal when dockerd was restarted under it
// (`connect ENOENT /var/run/docker.sock` from the list) and printed no table; the clean-up now says
// what may be left and goes on.
import Docker from 'dockerode';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { removeByLabel } from '../../bench/raw-floor.js';

afterEach(() => vi.restoreAllMocks());

describe('removeByLabel', () => {
  it('resolves with NaN and names the label on stderr when the engine cannot be reached', async () => {
    const docker = new Docker({ socketPath: join(tmpdir(), `no-dockerd-here-${process.pid}.sock`) });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await expect(removeByLabel(docker, 'kubelet-ts.bench=abc123')).resolves.toBeNaN();
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(/could not list the containers labelled kubelet-ts\.bench=abc123/);
  });
});

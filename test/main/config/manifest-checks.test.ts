// CheckScheduler: the file source's checks run one at a time, the pending work decides the next
// one (full, else event, else catch-up), and the catch-up follows changes (kCatchUpMs, kCatchUpMaxMs).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckScheduler, kCatchUpMaxMs, kCatchUpMs } from '../../../src/main/config/manifest-checks.js';
import type { CheckKind } from '../../../src/main/config/manifest-read.js';
import { FakeClock } from '../../fakes/fake-clock.js';

describe('CheckScheduler', () => {
  let runs: Array<{ kind: CheckKind; files: string[] }>;
  let release: (() => void) | undefined;
  let hold: boolean;
  let scheduler: CheckScheduler;
  let clock: FakeClock;
  const errors: unknown[] = [];

  beforeEach(() => {
    runs = [];
    hold = false;
    errors.length = 0;
    clock = new FakeClock();
    scheduler = new CheckScheduler(
      async (kind, files) => {
        runs.push({ kind, files });
        if (hold) await new Promise<void>((resolve) => (release = resolve));
      },
      (err) => errors.push(err),
      clock,
    );
  });

  afterEach(() => {
    scheduler.stop();
  });

  it('runs one check at a time; what was asked meanwhile runs next, a full check before files', async () => {
    hold = true;
    scheduler.files(['/m/b.yaml', '/m/a.yaml']);
    expect(runs).toEqual([{ kind: 'event', files: ['/m/a.yaml', '/m/b.yaml'] }]);
    scheduler.files(['/m/c.yaml']);
    scheduler.full();
    expect(runs).toHaveLength(1);
    hold = false;
    release!();
    await scheduler.idle();
    // The full check does what the files' check would: the files are not read after it.
    expect(runs.map((r) => r.kind)).toEqual(['event', 'full']);
  });

  it('runs the next check after one that failed, and gives the error to onError', async () => {
    const failing = new CheckScheduler(
      async (kind) => {
        runs.push({ kind, files: [] });
        if (kind === 'full') throw new Error('boom');
      },
      (err) => errors.push(err),
    );
    failing.full();
    failing.files(['/m/a.yaml']);
    await failing.idle();
    expect(runs.map((r) => r.kind)).toEqual(['full', 'event']);
    expect(errors).toEqual([new Error('boom')]);
    failing.stop();
  });

  it('runs a catch-up check kCatchUpMs after the last change', async () => {
    scheduler.changed();
    await clock.advance(kCatchUpMs / 2);
    scheduler.changed();
    await clock.advance(kCatchUpMs - 1);
    expect(runs).toEqual([]);
    await clock.advance(1);
    expect(runs).toEqual([{ kind: 'catch-up', files: [] }]);
  });

  it('runs a catch-up check at most kCatchUpMaxMs after the first change, however often changes come', async () => {
    for (let t = 0; t < kCatchUpMaxMs; t += kCatchUpMs / 2) {
      scheduler.changed();
      await clock.advance(kCatchUpMs / 2);
    }
    expect(runs.map((r) => r.kind)).toEqual(['catch-up']);
  });

  it('runs the files named by events before a catch-up check that is due', async () => {
    hold = true;
    scheduler.full();
    scheduler.changed();
    await clock.advance(kCatchUpMs);
    scheduler.files(['/m/a.yaml']);
    hold = false;
    release!();
    await scheduler.idle();
    expect(runs.map((r) => r.kind)).toEqual(['full', 'event', 'catch-up']);
  });

  it('asks for a full check every period, and for nothing once stopped', async () => {
    scheduler.every(1000);
    await clock.advance(2000);
    expect(runs.map((r) => r.kind)).toEqual(['full', 'full']);
    scheduler.changed();
    scheduler.stop();
    scheduler.full();
    scheduler.files(['/m/a.yaml']);
    await clock.advance(kCatchUpMaxMs + 2000);
    expect(runs).toHaveLength(2);
  });
});

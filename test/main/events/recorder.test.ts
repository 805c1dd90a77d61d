import { describe, expect, it, vi } from 'vitest';

// The recorder's names come from no randomUUID (counted below): the module is wrapped, not replaced.
const uuids = vi.hoisted(() => ({ calls: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    randomUUID: (...args: Parameters<typeof crypto.randomUUID>) => {
      uuids.calls++;
      return crypto.randomUUID(...args);
    },
  };
});
import { pino } from 'pino';
import { newEventRecorder } from '../../../src/main/events/recorder.js';
import type { Pod } from '../../../src/shared/api.js';
import type { Logger } from '../../../src/shared/logging.js';
import { realClock } from '../../../src/shared/clock.js';

const pod = (uid: string): Pod => ({ metadata: { name: `p-${uid}`, namespace: 'ns', uid } });
const logger = pino({ level: 'silent' });

describe('event recorder', () => {
  it("formats a second's timestamp once: a burst of events in one second costs one Date formatting (issue #42)", () => {
    const at = Date.parse('2026-12-07T20:11:48.250Z');
    const r = newEventRecorder({ nodeName: 'n1' }, { logger, clock: { ...realClock, now: () => at } });
    const spy = vi.spyOn(Date.prototype, 'toISOString');
    try {
      for (let i = 0; i < 50; i++) r.record(pod(`u${i}`), { type: 'Normal', reason: 'Started', message: 'Started container c' });
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
    expect(new Set(r.list().map((e) => `${e.firstTimestamp} ${e.lastTimestamp}`))).toEqual(
      new Set(['2026-12-07T20:11:48Z 2026-12-07T20:11:48Z']),
    );
  });

  it('names each event `<pod>.<8 hex digits>`, unique, without a random UUID per event (issue #42)', () => {
    const r = newEventRecorder({ nodeName: 'n1', capacity: 5000 }, { logger });
    const before = uuids.calls;
    for (let i = 0; i < 4000; i++) r.record(pod(`u${i % 10}`), { type: 'Normal', reason: 'Started', message: `Started container c${i}` });
    expect(uuids.calls - before).toBe(0);
    const names = r.list().map((e) => e.metadata!.name!);
    expect(names).toHaveLength(4000);
    expect(new Set(names).size).toBe(4000);
    for (const [i, n] of names.entries()) expect(n).toMatch(new RegExp(`^p-u${i % 10}\\.[0-9a-f]{8}$`));
    // Two recorders (two agents in one process) start at different points: their names do not follow one sequence.
    const other = newEventRecorder({ nodeName: 'n2' }, { logger });
    other.record(pod('u0'), { type: 'Normal', reason: 'Started', message: 'Started container c0' });
    expect(names).not.toContain(other.list()[0].metadata!.name);
  });

  it('counts a repeated event instead of storing it twice', () => {
    const r = newEventRecorder({ nodeName: 'n1' }, { logger });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off restarting', fieldPath: 'spec.containers{c}' });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off restarting', fieldPath: 'spec.containers{c}' });
    r.record(pod('a'), { type: 'Normal', reason: 'Started', message: 'Started container c' });
    const events = r.list();
    expect(events.map((e) => [e.reason, e.count])).toEqual([
      ['BackOff', 2],
      ['Started', 1],
    ]);
    expect(events[0]).toMatchObject({
      kind: 'Event',
      involvedObject: { kind: 'Pod', uid: 'a', namespace: 'ns', fieldPath: 'spec.containers{c}' },
      source: { component: 'kubelet', host: 'n1' },
    });
  });

  it('keeps at most `capacity` events, dropping the stalest', () => {
    const r = newEventRecorder({ nodeName: 'n1', capacity: 2 }, { logger });
    r.record(pod('a'), { type: 'Normal', reason: 'One', message: '1' });
    r.record(pod('a'), { type: 'Normal', reason: 'Two', message: '2' });
    r.record(pod('a'), { type: 'Normal', reason: 'One', message: '1' }); // re-counted: now the freshest
    r.record(pod('b'), { type: 'Normal', reason: 'Three', message: '3' });
    expect(r.list().map((e) => e.reason)).toEqual(['One', 'Three']);
    expect(r.list({ uid: 'b' }).map((e) => e.reason)).toEqual(['Three']);
  });

  it('logs each event with the pod fields, Warning at warn and Normal at debug (the kubelet V(3)), only where that level is enabled', () => {
    const lines: Array<[string, Record<string, unknown>, string]> = [];
    const fake = (enabled: string[]) => ({
      isLevelEnabled: (level: string) => enabled.includes(level),
      info: vi.fn((o: Record<string, unknown>, msg: string) => lines.push(['info', o, msg])),
      debug: vi.fn((o: Record<string, unknown>, msg: string) => lines.push(['debug', o, msg])),
      warn: vi.fn((o: Record<string, unknown>, msg: string) => lines.push(['warn', o, msg])),
    });
    const all = fake(['debug', 'info', 'warn']);
    const r = newEventRecorder({ nodeName: 'n1' }, { logger: all as unknown as Logger });
    r.record(pod('a'), { type: 'Normal', reason: 'Started', message: 'Started container c', fieldPath: 'spec.containers{c}' });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off' });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off' });
    expect(lines).toEqual([
      [
        'debug',
        {
          pod: 'p-a',
          namespace: 'ns',
          uid: 'a',
          reason: 'Started',
          fieldPath: 'spec.containers{c}',
          eventMessage: 'Started container c',
          count: 1,
        },
        'Event',
      ],
      [
        'warn',
        { pod: 'p-a', namespace: 'ns', uid: 'a', reason: 'BackOff', fieldPath: undefined, eventMessage: 'Back-off', count: 1 },
        'Event',
      ],
      [
        'warn',
        { pod: 'p-a', namespace: 'ns', uid: 'a', reason: 'BackOff', fieldPath: undefined, eventMessage: 'Back-off', count: 2 },
        'Event',
      ],
    ]);

    // At info (the default --v=0) a Normal event builds no log line at all.
    lines.length = 0;
    const warnOnly = fake(['info', 'warn']);
    const q = newEventRecorder({ nodeName: 'n1' }, { logger: warnOnly as unknown as Logger });
    q.record(pod('b'), { type: 'Normal', reason: 'Pulled', message: 'x' });
    q.record(pod('b'), { type: 'Warning', reason: 'Failed', message: 'y' });
    expect(warnOnly.info).not.toHaveBeenCalled();
    expect(warnOnly.debug).not.toHaveBeenCalled();
    expect(lines.map(([level, o]) => [level, o.reason])).toEqual([['warn', 'Failed']]);
    expect(q.list().map((e) => e.reason)).toEqual(['Pulled', 'Failed']);
  });

  it('tells subscribers', () => {
    const r = newEventRecorder({ nodeName: 'n1' }, { logger });
    const seen: string[] = [];
    const off = r.subscribe((e) => seen.push(e.reason!));
    r.record(pod('a'), { type: 'Normal', reason: 'Pulled', message: 'x' });
    off();
    r.record(pod('a'), { type: 'Normal', reason: 'Created', message: 'x' });
    expect(seen).toEqual(['Pulled']);
  });
});

import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { newEventRecorder } from '../../../src/main/events/recorder.js';
import type { Pod } from '../../../src/shared/api.js';

const pod = (uid: string): Pod => ({ metadata: { name: `p-${uid}`, namespace: 'ns', uid } });
const logger = pino({ level: 'silent' });

describe('event recorder', () => {
  it('counts a repeated event instead of storing it twice', () => {
    const r = newEventRecorder({ nodeName: 'n1' }, { logger });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off restarting', fieldPath: 'spec.containers{c}' });
    r.record(pod('a'), { type: 'Warning', reason: 'BackOff', message: 'Back-off restarting', fieldPath: 'spec.containers{c}' });
    r.record(pod('a'), { type: 'Normal', reason: 'Started', message: 'Started container c' });
    const events = r.list();
    expect(events.map((e) => [e.reason, e.count])).toEqual([['BackOff', 2], ['Started', 1]]);
    expect(events[0]).toMatchObject({ kind: 'Event', involvedObject: { kind: 'Pod', uid: 'a', namespace: 'ns', fieldPath: 'spec.containers{c}' }, source: { component: 'kubelet', host: 'n1' } });
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

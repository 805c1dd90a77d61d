// Issue #42 item 1: many timeouts of one duration on one timer (src/workers/runtime/cri/timer-list.ts), under the runtime calls' deadlines and slot holds.
import { describe, expect, it } from 'vitest';
import { TimerList, timerList, type TimerEntry } from '../../../../src/workers/runtime/cri/timer-list.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

/** An entry that records when (the clock's time) it fired into `fired`, and then runs `then`. */
function entry(clock: FakeClock, fired: Array<[string, number]>, name: string, then?: () => void): TimerEntry {
  return {
    due: 0,
    settled: false,
    fire() {
      fired.push([name, clock.t]);
      then?.();
    },
  };
}

describe('TimerList', () => {
  it('fires each unsettled entry at its own due time, in order, on one timer; a settled entry never fires', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 100);
    const fired: Array<[string, number]> = [];
    const a = entry(clock, fired, 'a');
    const b = entry(clock, fired, 'b');
    const c = entry(clock, fired, 'c');
    list.add(a);
    clock.step(10);
    list.add(b);
    clock.step(10);
    list.add(c);
    expect(clock.timers.size).toBe(1);
    list.settle(a);
    clock.step(79);
    expect(fired).toEqual([]);
    clock.step(1); // a's due: settled, so nothing fires; b is next
    expect(fired).toEqual([]);
    clock.step(10);
    expect(fired).toEqual([['b', 110]]);
    expect(b.settled).toBe(true);
    clock.step(9);
    expect(fired).toEqual([['b', 110]]);
    clock.step(1);
    expect(fired).toEqual([
      ['b', 110],
      ['c', 120],
    ]);
    expect(clock.hasWaiters()).toBe(false);
  });

  it('holds no timer once every entry is settled, and settling twice or after firing changes nothing', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 50);
    const fired: Array<[string, number]> = [];
    const entries = Array.from({ length: 5 }, (_, i) => entry(clock, fired, `e${i}`));
    for (const e of entries) list.add(e);
    for (const e of entries.slice(0, 4)) list.settle(e);
    expect(clock.hasWaiters()).toBe(true);
    list.settle(entries[4]!);
    list.settle(entries[4]!);
    expect(clock.hasWaiters()).toBe(false);
    const late = entry(clock, fired, 'late');
    list.add(late);
    clock.step(50);
    list.settle(late);
    expect(fired).toEqual([['late', 50]]);
    // One live entry more than it had: the count stayed right (nothing fires twice, the timer goes).
    const next = entry(clock, fired, 'next');
    list.add(next);
    list.settle(next);
    expect(clock.hasWaiters()).toBe(false);
  });

  it('an entry added from a fire is due a whole delay later, and the entries already due still fire on time', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 100);
    const fired: Array<[string, number]> = [];
    list.add(entry(clock, fired, 'first', () => list.add(entry(clock, fired, 'added', undefined))));
    clock.step(30);
    list.add(entry(clock, fired, 'second'));
    clock.step(70);
    expect(fired).toEqual([['first', 100]]);
    clock.step(30);
    expect(fired).toEqual([
      ['first', 100],
      ['second', 130],
    ]);
    clock.step(70);
    expect(fired.at(-1)).toEqual(['added', 200]);
    expect(clock.hasWaiters()).toBe(false);
  });

  it('a fire that settles the last other entry leaves the list empty and usable', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 10);
    const fired: Array<[string, number]> = [];
    const other = entry(clock, fired, 'other');
    list.add(entry(clock, fired, 'first', () => list.settle(other)));
    list.add(other);
    clock.step(10);
    expect(fired).toEqual([['first', 10]]);
    expect(clock.hasWaiters()).toBe(false);
    list.add(entry(clock, fired, 'again'));
    clock.step(10);
    expect(fired.at(-1)).toEqual(['again', 20]);
  });

  it('thousands of settled entries behind a pending one are dropped as it fires, and the list goes on', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 1000);
    const fired: Array<[string, number]> = [];
    list.add(entry(clock, fired, 'slow'));
    for (let i = 0; i < 5000; i++) {
      const e = entry(clock, fired, `fast${i}`);
      list.add(e);
      list.settle(e);
    }
    clock.step(500);
    list.add(entry(clock, fired, 'tail'));
    clock.step(500);
    expect(fired).toEqual([['slow', 1000]]);
    expect(clock.timers.size).toBe(1);
    clock.step(499);
    expect(fired).toEqual([['slow', 1000]]);
    clock.step(1);
    expect(fired.at(-1)).toEqual(['tail', 1500]);
    expect(clock.hasWaiters()).toBe(false);
  });

  it('a fire that throws propagates, and the entries after it still fire on time', () => {
    const clock = new FakeClock(0);
    const list = new TimerList(clock, 10);
    const fired: Array<[string, number]> = [];
    list.add(
      entry(clock, fired, 'throws', () => {
        throw new Error('boom');
      }),
    );
    clock.step(5);
    list.add(entry(clock, fired, 'next'));
    expect(() => clock.step(5)).toThrow('boom');
    clock.step(5);
    expect(fired).toEqual([
      ['throws', 10],
      ['next', 15],
    ]);
    expect(clock.hasWaiters()).toBe(false);
  });

  it('timerList: one list per clock and delay', () => {
    const a = new FakeClock();
    const b = new FakeClock();
    expect(timerList(a, 10)).toBe(timerList(a, 10));
    expect(timerList(a, 10)).not.toBe(timerList(a, 20));
    expect(timerList(a, 10)).not.toBe(timerList(b, 10));
  });
});

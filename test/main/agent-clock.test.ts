// The agent builds on the clock it is given (AgentDeps.clock, #41 item 4): its components keep the
// one clock's time, not the process's. Built without start(): nothing runs, nothing to stop.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { newAgent } from '../../src/main/agent.js';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { FakeClock } from '../fakes/fake-clock.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('agent clock', () => {
  it("hands its clock to its components: the watch's first resourceVersion and the events' timestamps are the clock's", async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-clock-'));
    const clock = new FakeClock(Date.parse('2026-01-02T03:04:05Z'));
    const agent = newAgent(
      resolveAgentOptions({ nodeName: 'clock-node', rootDir: join(dir, 'root'), runtime: 'fake', workers: 1, port: 0, logLevel: 'silent' }),
      { logger: pino({ level: 'silent' }), serve: false, clock },
    );
    // Versions above any an earlier run handed out: the clock's milliseconds × 1000.
    expect(agent.statusManager.resourceVersion()).toBe(clock.now() * 1000);
    const pod = { metadata: { name: 'p', namespace: 'default', uid: 'u1' } };
    agent.events.record(pod, { type: 'Normal', reason: 'Scheduled', message: 'first' });
    clock.step(90_000);
    agent.events.record(pod, { type: 'Normal', reason: 'Scheduled', message: 'first' });
    const [event] = agent.events.list({ uid: 'u1' });
    expect(event).toMatchObject({ count: 2, firstTimestamp: '2026-01-02T03:04:05Z', lastTimestamp: '2026-01-02T03:05:35Z' });
  });
});

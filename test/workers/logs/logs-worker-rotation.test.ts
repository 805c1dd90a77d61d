// The container-logs worker runs the container log manager it is given (pkg/kubelet/kubelet.go starts containerLogManager with the kubelet; here the logs worker owns it) and stops it with the worker.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LogsWorker, logManagerFor } from '../../../src/workers/container-logs.worker.js';
import { newLogger } from '../../../src/shared/logging.js';
import { newContainerLogManager, type ContainerLogManagerDeps } from '../../../src/workers/logs/container-log-manager.js';
import { waitFor } from '../../support/docker.js';
import { FakeClock } from '../../fakes/fake-clock.js';

describe('LogsWorker with a container log manager', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-logs-worker-rotation-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("rotates on its own from the worker's start, and no more after stop", async () => {
    const path = join(dir, '0.log');
    let rounds = 0;
    const runtime: ContainerLogManagerDeps['runtime'] = {
      listContainers: async () => {
        rounds++;
        return [{ id: 'c1', state: 'CONTAINER_RUNNING' } as never];
      },
      containerStatus: async () => ({ status: { state: 'CONTAINER_RUNNING', log_path: path } as never, info: {} }),
      reopenContainerLog: async () => writeFile(path, ''),
    };
    await writeFile(path, 'x'.repeat(100));
    const clock = new FakeClock();
    const manager = newContainerLogManager({ runtime, clock }, { maxSizeBytes: 10, maxFiles: 2, monitorPeriodMs: 20 });
    const w = new LogsWorker(
      { kind: 'container-logs', runtime: 'fake', dockerSocketPath: '', nodeName: 'n1' },
      () => undefined,
      undefined,
      manager,
    );
    try {
      expect(clock.hasWaiters()).toBe(true); // the worker started the manager's period
      await waitFor(
        async () => {
          await clock.advance(20);
          return (await readdir(dir)).length === 2 || null;
        },
        { timeoutMs: 10_000, description: 'the log rotated' },
      );
    } finally {
      w.handle({ type: 'stop' });
    }
    const after = rounds;
    expect(clock.hasWaiters()).toBe(false); // stop cleared the period
    await clock.advance(1_000);
    expect(rounds).toBe(after);
  });

  it('logManagerFor: a manager on a CRI runtime asked to rotate; none on Docker, the fake, or without a policy; a bad policy is refused naming the field', () => {
    const nr = { runtime: {} as never };
    const log = newLogger('silent');
    const rotation = { maxSizeBytes: 1024, maxFiles: 2 };
    expect(
      logManagerFor(
        {
          kind: 'container-logs',
          runtime: 'remote',
          dockerSocketPath: '',
          containerRuntimeEndpoint: 'unix:///x.sock',
          nodeName: 'n1',
          containerLogRotation: rotation,
        },
        nr,
        log,
      ),
    ).toBeDefined();
    expect(
      logManagerFor(
        { kind: 'container-logs', runtime: 'remote', dockerSocketPath: '', containerRuntimeEndpoint: 'unix:///x.sock', nodeName: 'n1' },
        nr,
        log,
      ),
    ).toBeUndefined();
    expect(
      logManagerFor(
        {
          kind: 'container-logs',
          runtime: 'docker',
          dockerSocketPath: '/var/run/docker.sock',
          nodeName: 'n1',
          containerLogRotation: rotation,
        },
        nr,
        log,
      ),
    ).toBeUndefined();
    expect(() =>
      logManagerFor(
        {
          kind: 'container-logs',
          runtime: 'remote',
          dockerSocketPath: '',
          nodeName: 'n1',
          containerLogRotation: { maxSizeBytes: 1024, maxFiles: 1 },
        },
        nr,
        log,
      ),
    ).toThrow(/options.maxFiles/);
  });
});

// The container log manager on files written by the test (pkg/kubelet/logs/container_log_manager_test.go TestRotateLogs, TestClean, TestRotateLatestLog), the runtime played by a stub.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { realClock } from '../../../src/shared/clock.js';
import { AgentError } from '../../../src/shared/errors.js';
import { newContainerLogManager, type ContainerLogManagerDeps } from '../../../src/workers/logs/container-log-manager.js';

describe('newContainerLogManager', () => {
  let dir: string;
  let now: number;
  let reopenFails: boolean;
  const reopened: string[] = [];
  /** Container id → [state, log path]. */
  let containers: Record<string, ['CONTAINER_RUNNING' | 'CONTAINER_EXITED', string]>;
  const runtime: ContainerLogManagerDeps['runtime'] = {
    listContainers: async () => Object.entries(containers).map(([id, [state]]) => ({ id, state }) as never),
    containerStatus: async (id) => {
      if (!containers[id]) throw new AgentError('ERR_NOT_FOUND', `ContainerStatus: rpc error: code = NotFound desc = ${id}`);
      return { status: { state: containers[id][0], log_path: containers[id][1] } as never, info: {} };
    },
    reopenContainerLog: async (id) => {
      if (reopenFails) throw new AgentError('ERR_RUNTIME', 'ReopenContainerLog: rpc error: code = Unknown desc = boom');
      reopened.push(id);
      await writeFile(containers[id]![1], '', { flag: 'a' });
    },
  };
  const manager = (maxSizeBytes = 10, maxFiles = 3) =>
    newContainerLogManager({ runtime, clock: { ...realClock, now: () => now } }, { maxSizeBytes, maxFiles });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-logrotate-'));
    now = Date.UTC(2026, 11, 7, 10, 0, 0);
    reopenFails = false;
    reopened.length = 0;
    containers = {
      big: ['CONTAINER_RUNNING', join(dir, 'big.log')],
      small: ['CONTAINER_RUNNING', join(dir, 'small.log')],
      exited: ['CONTAINER_EXITED', join(dir, 'exited.log')],
    };
    await writeFile(join(dir, 'big.log'), 'x'.repeat(20));
    await writeFile(join(dir, 'small.log'), 'x'.repeat(5));
    await writeFile(join(dir, 'exited.log'), 'x'.repeat(50));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('rotates only running containers at or over max size: renames to <path>.<UTC time>, reopens', async () => {
    await manager().rotateLogs();
    expect((await readdir(dir)).sort()).toEqual(['big.log', 'big.log.20261207-100000', 'exited.log', 'small.log']);
    expect(reopened).toEqual(['big']);
    expect(await readFile(join(dir, 'big.log'), 'utf8')).toBe('');
  });

  it('compresses all rotated files but the newest and keeps at most max-files files in all', async () => {
    const m = manager(10, 4);
    for (let i = 0; i < 5; i++) {
      await writeFile(join(dir, 'big.log'), `round ${i} ${'x'.repeat(20)}`);
      await m.rotateLogs();
      now += 60_000;
    }
    const files = (await readdir(dir)).filter((f) => f.startsWith('big.log')).sort();
    // max-files 4: the live file, the newest rotation (plain), two older ones (gzipped).
    expect(files).toEqual(['big.log', 'big.log.20261207-100200.gz', 'big.log.20261207-100300.gz', 'big.log.20261207-100400']);
    expect(gunzipSync(await readFile(join(dir, 'big.log.20261207-100300.gz'))).toString()).toBe(`round 3 ${'x'.repeat(20)}`);
    expect(await readFile(join(dir, 'big.log.20261207-100400'), 'utf8')).toBe(`round 4 ${'x'.repeat(20)}`);
  });

  it('removes what a rotation that stopped half-way left behind', async () => {
    await writeFile(join(dir, 'big.log.20261207-090000'), 'a');
    await writeFile(join(dir, 'big.log.20261207-090000.gz'), 'b');
    await writeFile(join(dir, 'big.log.20261207-090100.tmp'), 'c');
    await manager(10, 5).rotateLogs();
    expect((await readdir(dir)).filter((f) => f.startsWith('big.log')).sort()).toEqual([
      'big.log',
      'big.log.20261207-090000.gz',
      'big.log.20261207-100000',
    ]);
  });

  it("asks each running container's log path once (ContainerStatus), not every round; a container gone is forgotten", async () => {
    const asked: string[] = [];
    const counted: ContainerLogManagerDeps['runtime'] = {
      ...runtime,
      containerStatus: (id, verbose, opts) => {
        asked.push(id);
        return runtime.containerStatus(id, verbose, opts);
      },
    };
    const m = newContainerLogManager({ runtime: counted, clock: { ...realClock, now: () => now } }, { maxSizeBytes: 10, maxFiles: 3 });
    await m.rotateLogs();
    await writeFile(join(dir, 'big.log'), 'x'.repeat(20));
    now += 60_000;
    await m.rotateLogs();
    expect(asked.sort()).toEqual(['big', 'small']);
    expect(reopened).toEqual(['big', 'big']); // rotated in both rounds, from the path read once
    delete containers.small;
    await m.rotateLogs();
    containers.small = ['CONTAINER_RUNNING', join(dir, 'small.log')];
    await m.rotateLogs();
    expect(asked.sort()).toEqual(['big', 'small', 'small']);
  });

  it('a failing reopen renames the file back; a second rotation in the same second waits', async () => {
    reopenFails = true;
    await manager().rotateLogs();
    expect((await readdir(dir)).filter((f) => f.startsWith('big.log'))).toEqual(['big.log']);
    expect(await readFile(join(dir, 'big.log'), 'utf8')).toBe('x'.repeat(20));
    reopenFails = false;
    const m = manager();
    await m.rotateLogs();
    await writeFile(join(dir, 'big.log'), 'y'.repeat(20));
    await m.rotateLogs();
    expect(await readFile(join(dir, 'big.log.20261207-100000'), 'utf8')).toBe('x'.repeat(20));
    expect(await readFile(join(dir, 'big.log'), 'utf8')).toBe('y'.repeat(20));
  });

  it('a missing live file is reopened first; clean removes every file of a container', async () => {
    await rm(join(dir, 'small.log'));
    const m = manager();
    await m.rotateLogs();
    expect(reopened).toContain('small');
    expect(existsSync(join(dir, 'small.log'))).toBe(true);
    await m.clean('big');
    expect((await readdir(dir)).sort()).toEqual(['exited.log', 'small.log']);
    await expect(m.clean('nope')).rejects.toMatchObject({ code: 'ERR_NOT_FOUND' });
  });

  it('refuses bad options by name', () => {
    expect(() => newContainerLogManager({ runtime }, { maxSizeBytes: 10, maxFiles: 1 })).toThrow(
      /options.maxFiles must be an integer >= 2/,
    );
    expect(() => newContainerLogManager({ runtime }, { maxSizeBytes: 0, maxFiles: 2 })).toThrow(/options.maxSizeBytes/);
    expect(() => newContainerLogManager({ runtime }, { maxSizeBytes: 1, maxFiles: 2, monitorPeriodMs: -1 })).toThrow(
      /options.monitorPeriodMs/,
    );
  });
});

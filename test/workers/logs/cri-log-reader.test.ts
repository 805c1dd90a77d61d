// The CRI log file reader on files written by the test (pkg/kubelet/kuberuntime/logs/logs_test.go TestReadLogs, TestReadRotatedLog), the runtime played by a stub answering ContainerStatus.
import { appendFile, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentError } from '../../../src/shared/errors.js';
import { kLogForceCheckPeriodMs, newCriContainerLogs } from '../../../src/workers/logs/cri-log-reader.js';
import type { ContainerStatusResponse } from '../../../src/workers/runtime/cri/services.js';
import type { ContainerLogOptions, ContainerLogReader } from '../../../src/workers/runtime/container/runtime.js';
import { waitFor } from '../../support/docker.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const kOpts: ContainerLogOptions = { follow: false, timestamps: false };

/** A line in the CRI format at second `s` of 2026-01-01. */
function cri(stream: 'stdout' | 'stderr', tag: 'P' | 'F', text: string, s = 0): string {
  return `2026-01-01T00:00:${String(s).padStart(2, '0')}.000000000Z ${stream} ${tag} ${text}\n`;
}

describe('newCriContainerLogs on files', { timeout: 30_000 }, () => {
  let dir: string;
  let path: string;
  let state: 'CONTAINER_RUNNING' | 'CONTAINER_EXITED';
  let known: boolean;
  const readers: ContainerLogReader[] = [];
  const runtime = {
    containerStatus: async (id: string): Promise<ContainerStatusResponse> => {
      if (!known)
        throw new AgentError(
          'ERR_NOT_FOUND',
          `ContainerStatus: rpc error: code = NotFound desc = an error occurred when try to find container "${id}"`,
        );
      return { status: { state, log_path: path } as never, info: {} };
    },
  };
  const logs = () => newCriContainerLogs({ runtime });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-crilogs-'));
    path = join(dir, '0.log');
    state = 'CONTAINER_EXITED';
    known = true;
  });
  afterEach(async () => {
    for (const r of readers.splice(0)) r.cancel();
    await rm(dir, { recursive: true, force: true });
  });

  /** Reads to the end; resolves the output, or rejects with onEnd's error. */
  async function read(opts: ContainerLogOptions, during?: (r: ContainerLogReader, got: () => string) => Promise<void>): Promise<string> {
    const chunks: Buffer[] = [];
    let end!: (err?: Error) => void;
    const ended = new Promise<void>((resolve, reject) => {
      end = (err) => (err ? reject(err) : resolve());
    });
    const reader = await logs().readContainerLogs('c1', opts, { onData: (c) => chunks.push(c), onEnd: end });
    readers.push(reader);
    if (during) await during(reader, () => Buffer.concat(chunks).toString('utf8'));
    await ended;
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * Follows a running container's log holding `a`; once `a` is read, pauses the read, runs
   * `change` (rotations done while the reader is paused), resumes; the container exits once the
   * output is `expected`, and the whole output must be `expected`.
   */
  async function followPausedOver(change: () => Promise<void>, expected: string): Promise<void> {
    state = 'CONTAINER_RUNNING';
    await writeFile(path, cri('stdout', 'F', 'a'));
    const out = await read({ ...kOpts, follow: true }, async (r, got) => {
      await waitFor(() => got() === 'a\n' || null, { timeoutMs: 10_000, description: 'a' });
      r.pause();
      await change();
      r.resume();
      await waitFor(() => got() === expected || null, { timeoutMs: 10_000, description: JSON.stringify(expected) });
      state = 'CONTAINER_EXITED';
    });
    expect(out).toBe(expected);
  }

  const sample =
    cri('stdout', 'F', 'one', 1) +
    cri('stderr', 'F', 'two', 2) +
    cri('stdout', 'P', 'thr', 3) +
    cri('stderr', 'F', 'four', 4) +
    cri('stdout', 'F', 'ee', 5) +
    cri('stdout', 'F', 'five', 6);

  it('reads the whole log, stdout and stderr merged, partial lines joined; timestamps prefix each line', async () => {
    await writeFile(path, sample);
    expect(await read(kOpts)).toBe('one\ntwo\nfour\nthree\nfive\n');
    expect(await read({ ...kOpts, timestamps: true })).toBe(
      [
        '2026-01-01T00:00:01.000000000Z one',
        '2026-01-01T00:00:02.000000000Z two',
        '2026-01-01T00:00:04.000000000Z four',
        '2026-01-01T00:00:03.000000000Z three',
        '2026-01-01T00:00:06.000000000Z five',
        '',
      ].join('\n'),
    );
  });

  it('tailLines counts lines of output (a split line is one), from a file of many blocks', async () => {
    await writeFile(path, sample);
    expect(await read({ ...kOpts, tailLines: 2 })).toBe('three\nfive\n');
    expect(await read({ ...kOpts, tailLines: 3 })).toBe('four\nthree\nfive\n');
    expect(await read({ ...kOpts, tailLines: 1 })).toBe('five\n');
    expect(await read({ ...kOpts, tailLines: 4 })).toBe('two\nfour\nthree\nfive\n');
    expect(await read({ ...kOpts, tailLines: 0 })).toBe('');
    // An unfinished line at the end comes on top.
    await writeFile(path, sample + cri('stderr', 'P', 'unfin'));
    expect(await read({ ...kOpts, tailLines: 1 })).toBe('five\nunfin');
    await writeFile(path, sample);
    expect(await read({ ...kOpts, tailLines: 100 })).toBe('one\ntwo\nfour\nthree\nfive\n');
    const many = Array.from({ length: 20_000 }, (_, i) => cri(i % 2 ? 'stderr' : 'stdout', 'F', `line-${i}`)).join('');
    await writeFile(path, many);
    expect(await read({ ...kOpts, tailLines: 3 })).toBe('line-19997\nline-19998\nline-19999\n');
    expect((await read({ ...kOpts, tailLines: 12_345 })).split('\n')[0]).toBe('line-7655');
  });

  it('sinceSeconds drops older lines', async () => {
    const now = Date.now();
    const at = (ms: number) =>
      new Date(ms)
        .toISOString()
        .replace('Z', '000000Z')
        .replace(/\.(\d{3})000000Z$/, '.$1000000Z');
    await writeFile(path, `${at(now - 60_000)} stdout F old\n${at(now - 1_000)} stdout F new\n`);
    expect(await read({ ...kOpts, sinceSeconds: 30 })).toBe('new\n');
  });

  it('skips malformed lines, reads Docker json-file logs', async () => {
    await writeFile(path, `${cri('stdout', 'F', 'a')}not a log line\n${cri('stdout', 'F', 'b')}`);
    expect(await read(kOpts)).toBe('a\nb\n');
    await writeFile(
      path,
      '{"log":"x\\n","stream":"stdout","time":"2026-01-01T00:00:00Z"}\n{"log":"y\\n","stream":"stderr","time":"2026-01-01T00:00:01Z"}\n',
    );
    expect(await read({ ...kOpts, tailLines: 1 })).toBe('y\n');
  });

  it('follow: keeps reading while the container runs, ends when it exited and the file is drained', async () => {
    state = 'CONTAINER_RUNNING';
    await writeFile(path, cri('stdout', 'F', 'first'));
    const out = await read({ ...kOpts, follow: true }, async (_r, got) => {
      await waitFor(() => got() === 'first\n' || null, { timeoutMs: 10_000, description: 'first line' });
      await appendFile(path, cri('stderr', 'P', 'sec'));
      await appendFile(path, cri('stderr', 'F', 'ond'));
      await waitFor(() => got() === 'first\nsecond\n' || null, { timeoutMs: 10_000, description: 'second line' });
      await appendFile(path, cri('stdout', 'F', 'last'));
      state = 'CONTAINER_EXITED';
    });
    expect(out).toBe('first\nsecond\nlast\n');
  });

  it('follow: across a rotation (rename, a new file at the path) reads the rest of the old file, then the new one', async () => {
    state = 'CONTAINER_RUNNING';
    await writeFile(path, cri('stdout', 'F', 'a'));
    const out = await read({ ...kOpts, follow: true, tailLines: 1 }, async (_r, got) => {
      await waitFor(() => got() === 'a\n' || null, { timeoutMs: 10_000, description: 'a' });
      await appendFile(path, cri('stdout', 'F', 'b'));
      await rename(path, `${path}.20260101-000000`);
      await appendFile(`${path}.20260101-000000`, cri('stdout', 'F', 'c'));
      await writeFile(path, cri('stdout', 'F', 'd'));
      await waitFor(() => got() === 'a\nb\nc\nd\n' || null, { timeoutMs: 10_000, description: 'd, from the new file' });
      await appendFile(path, cri('stdout', 'F', 'e'));
      state = 'CONTAINER_EXITED';
    });
    expect(out).toBe('a\nb\nc\nd\ne\n');
  });

  it('follow: a reader paused over two rotations reads the rotated file in between (still plain), then the live one', async () => {
    await writeFile(`${path}.20250101-000000`, cri('stdout', 'F', 'older, rotated before the read'));
    await followPausedOver(async () => {
      await rename(path, `${path}.20260101-000000`);
      await writeFile(path, cri('stdout', 'F', 'b'));
      await rename(path, `${path}.20260101-000100`);
      await writeFile(path, cri('stdout', 'F', 'c'));
    }, 'a\nb\nc\n');
  });

  it('follow: a reader paused over three rotations reads the one the log manager gzipped too', async () => {
    await followPausedOver(async () => {
      await rename(path, `${path}.20260101-000000`);
      await writeFile(`${path}.20260101-000100.gz`, gzipSync(cri('stdout', 'P', 'b1') + cri('stdout', 'F', 'b2')));
      await writeFile(`${path}.20260101-000200`, cri('stderr', 'F', 'c'));
      await writeFile(path, cri('stdout', 'F', 'd'));
    }, 'a\nb1b2\nc\nd\n');
  });

  it('follow: the file being read, gzipped after its rotation, is not read twice', async () => {
    await writeFile(`${path}.20250101-000000.gz`, gzipSync(cri('stdout', 'F', 'older, rotated before the read')));
    await followPausedOver(async () => {
      await appendFile(path, cri('stdout', 'F', 'b'));
      // Rotated and compressed while the reader still holds it open.
      const content = await readFile(path);
      await rename(path, `${path}.20260101-000000`);
      await writeFile(`${path}.20260101-000000.gz`, gzipSync(content));
      await rm(`${path}.20260101-000000`);
      await writeFile(path, cri('stdout', 'F', 'c'));
    }, 'a\nb\nc\n');
  });

  it('follow ends when the runtime no longer knows the container', async () => {
    state = 'CONTAINER_RUNNING';
    await writeFile(path, cri('stdout', 'F', 'a'));
    expect(
      await read({ ...kOpts, follow: true }, async (_r, got) => {
        await waitFor(() => got() === 'a\n' || null, { timeoutMs: 10_000, description: 'a' });
        known = false;
      }),
    ).toBe('a\n');
  });

  it('pause holds the data back until resume; cancel stops every callback (its wait on the fake clock)', async () => {
    // The reader's force-check period and running-check cache run on a FakeClock: while paused, or
    // once cancelled, its pump stops and arms no timer, so nothing can deliver data however long we wait.
    const clock = new FakeClock();
    state = 'CONTAINER_RUNNING';
    await writeFile(path, cri('stdout', 'F', 'a'));
    const chunks: Buffer[] = [];
    let ended = false;
    const got = () => Buffer.concat(chunks).toString('utf8');
    const r = await newCriContainerLogs({ runtime, clock }).readContainerLogs(
      'c1',
      { ...kOpts, follow: true },
      { onData: (c) => chunks.push(c), onEnd: () => (ended = true) },
    );
    readers.push(r);
    await waitFor(() => (got() === 'a\n' && clock.hasWaiters()) || null, { timeoutMs: 10_000, description: 'a, then a wait for change' });
    r.pause();
    await appendFile(path, cri('stdout', 'F', 'b'));
    // The file event wakes the pump, which sees the pause and stops without reading or waiting again.
    await waitFor(() => !clock.hasWaiters() || null, { timeoutMs: 10_000, description: 'the pump stopped' });
    await clock.advance(10 * kLogForceCheckPeriodMs);
    expect(got()).toBe('a\n');
    r.resume();
    await waitFor(() => got() === 'a\nb\n' || null, { timeoutMs: 10_000, description: 'b after resume' });
    state = 'CONTAINER_EXITED';
    await waitFor(
      async () => {
        await clock.advance(kLogForceCheckPeriodMs);
        return ended || null;
      },
      { timeoutMs: 10_000, description: 'the end once the container exited' },
    );
    expect(got()).toBe('a\nb\n');

    state = 'CONTAINER_RUNNING';
    const calls: string[] = [];
    const reader = await newCriContainerLogs({ runtime, clock }).readContainerLogs(
      'c1',
      { ...kOpts, follow: true },
      { onData: () => calls.push('data'), onEnd: () => calls.push('end') },
    );
    await waitFor(() => (calls.length > 0 && clock.hasWaiters()) || null, { timeoutMs: 10_000, description: 'data, then a wait' });
    reader.cancel();
    reader.cancel();
    expect(clock.hasWaiters()).toBe(false); // its wait ended with it, and no other is armed
    const seen = calls.length;
    await appendFile(path, cri('stdout', 'F', 'c'));
    state = 'CONTAINER_EXITED';
    await clock.advance(10 * kLogForceCheckPeriodMs);
    expect(clock.hasWaiters()).toBe(false);
    expect(calls.length).toBe(seen);
    expect(calls).not.toContain('end');
  });

  it('refuses an unknown container, a container without a log path, a missing file: ERR_NOT_FOUND', async () => {
    known = false;
    await expect(logs().readContainerLogs('c1', kOpts, { onData: () => undefined, onEnd: () => undefined })).rejects.toMatchObject({
      code: 'ERR_NOT_FOUND',
    });
    known = true;
    await expect(logs().readContainerLogs('c1', kOpts, { onData: () => undefined, onEnd: () => undefined })).rejects.toMatchObject({
      code: 'ERR_NOT_FOUND',
      message: expect.stringContaining(`failed to open log file "${path}"`),
    });
    const noPath = newCriContainerLogs({
      runtime: { containerStatus: async () => ({ status: { state: 'CONTAINER_RUNNING', log_path: '' } as never, info: {} }) },
    });
    await expect(noPath.readContainerLogs('c1', kOpts, { onData: () => undefined, onEnd: () => undefined })).rejects.toThrow(
      /container c1 has no log file/,
    );
  });

  it('tailLogs: the last lines, cut to the last bytes', async () => {
    await writeFile(path, sample);
    expect(await logs().tailLogs('c1', 2, 1000)).toBe('three\nfive\n');
    expect(await logs().tailLogs('c1', 10, 8)).toBe('ee\nfive\n');
  });
});

import { promises as fsPromises, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newManifestWatch } from '../../../src/main/config/manifest-watch.js';
import { newManifestLoader } from '../../../src/main/pool/worker-pool.js';
import {
  isManifestFileName,
  kCatchUpMaxMs,
  kCatchUpMs,
  kMaxManifestBytes,
  kStatTrustMs,
  newFileSource,
  type FileSource,
  type FileSourceDeps,
  type FileSourceOptions,
} from '../../../src/main/config/source-file.js';
import type { Pod } from '../../../src/shared/api.js';
import { ConfigSourceAnnotationKey } from '../../../src/shared/annotations.js';
import type { PodUpdate } from '../../../src/shared/pod-update.js';
import { SourceRecorder as Recorder, names } from '../../support/source-recorder.js';

const kNode = 'node-a';

function image(pod: Pod | undefined): string | undefined {
  return pod?.spec?.containers?.[0]?.image;
}

function byName(u: PodUpdate, name: string): Pod | undefined {
  return u.pods.find((p) => p.metadata?.name === name);
}

function podYaml(name: string, img = 'kubelet-ts/busybox:1.35'): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: ${img}\n`;
}

function podJson(name: string, img = 'kubelet-ts/busybox:1.35'): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'main', image: img }] } });
}

describe('file source (--pod-manifest-path)', { timeout: 30_000 }, () => {
  let tmp: string;
  let dir: string;
  const sources: FileSource[] = [];

  beforeEach(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-file-source-'));
    dir = path.join(tmp, 'manifests');
    await mkdir(dir);
  });

  afterEach(async () => {
    await Promise.all(sources.splice(0).map((s) => s.stop()));
    await rm(tmp, { recursive: true, force: true });
  });

  /** The files the sources' manifest threads read (their stat did not say unchanged), while `recorder` is set (recordOpens). */
  let recorder: string[] | undefined;
  /** The manifest thread of every source of these tests, the files it reads recorded (recordOpens). */
  const recordingLoader: FileSourceDeps['newManifestLoader'] = () => {
    const loader = newManifestLoader();
    return {
      load: async (task) => {
        const result = await loader.load(task);
        if (task.read !== undefined && result.ok) {
          const answers = [result.value, ...(result.value.more ?? [])];
          [task, ...(task.more ?? [])].forEach((t, i) => {
            if (answers[i]?.file?.kind !== 'unchanged') recorder?.push(t.origin);
          });
        }
        return result;
      },
      close: () => loader.close(),
    };
  };

  async function startSource(
    options: Partial<FileSourceOptions> = {},
    deps: Pick<FileSourceDeps, 'newManifestWatch'> = {},
  ): Promise<{ source: FileSource; rec: Recorder; first: PodUpdate }> {
    const rec = new Recorder();
    const source = newFileSource(
      { path: dir, nodeName: kNode, checkFrequencyMs: 60_000, ...options },
      { logger: rec.logger, onUpdate: rec.onUpdate, onError: rec.onError, newManifestLoader: recordingLoader, ...deps },
    );
    sources.push(source);
    await source.start();
    // start() resolves after the first SET has been delivered.
    expect(rec.updates.length).toBe(1);
    const first = await rec.nextUpdate();
    return { source, rec, first };
  }

  it('sends one SET of every static pod in a directory, in file name then document order', async () => {
    await writeFile(path.join(dir, 'a.yaml'), `${podYaml('web')}---\n${podYaml('db')}`);
    await writeFile(path.join(dir, 'b.json'), podJson('cache'));
    const { first, rec } = await startSource();
    expect(first.op).toBe('SET');
    expect(first.source).toBe('file');
    expect(names(first)).toEqual([`web-${kNode}`, `db-${kNode}`, `cache-${kNode}`]);
    for (const pod of first.pods) {
      expect(pod.spec?.nodeName).toBe(kNode);
      expect(pod.metadata?.uid).toBeTruthy();
      expect(pod.metadata?.annotations?.[ConfigSourceAnnotationKey]).toBe('file');
    }
    expect(new Set(first.pods.map((p) => p.metadata?.uid)).size).toBe(3);
    expect(rec.errors).toEqual([]);
  });

  it('reads regular files only, non-recursively, and ignores dot files and editor leftovers', async () => {
    await writeFile(path.join(dir, 'good.yaml'), podYaml('good'));
    await writeFile(path.join(dir, '.hidden.yaml'), podYaml('hidden'));
    await writeFile(path.join(dir, 'backup.yaml~'), podYaml('backup'));
    await writeFile(path.join(dir, 'good.yaml.swp'), podYaml('swap'));
    await writeFile(path.join(dir, 'upload.tmp'), podYaml('upload'));
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sub', 'nested.yaml'), podYaml('nested'));
    const { first, rec } = await startSource();
    expect(names(first)).toEqual([`good-${kNode}`]);
    expect(rec.errors).toEqual([]);
  });

  it.each([
    ['good.yaml', true],
    ['pod.json', true],
    ['.pod.yaml', false],
    ['pod.yaml~', false],
    ['.pod.yaml.swp', false],
    ['pod.yaml.swp', false],
    ['pod.yaml.tmp', false],
  ])('isManifestFileName(%j) is %s', (name, expected) => {
    expect(isManifestFileName(name)).toBe(expected);
  });

  it('adds the pods of a new file', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const { rec } = await startSource();
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const u = await rec.nextUpdate();
    expect(u.op).toBe('SET');
    expect(names(u)).toEqual([`web-${kNode}`, `db-${kNode}`]);
  });

  it('updates the pods of a file edited in place', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web', 'kubelet-ts/busybox:1.35'));
    const { rec, first } = await startSource();
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web', 'kubelet-ts/pause:1.0'));
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);
    expect(image(u.pods[0])).toBe('kubelet-ts/pause:1.0');
    expect(u.pods[0].metadata?.uid).not.toBe(first.pods[0].metadata?.uid);
    expect(rec.errors).toEqual([]);
  });

  it('updates the pods of a file replaced by rename, and never reads the temporary file', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web', 'kubelet-ts/busybox:1.35'));
    const { rec } = await startSource();
    await writeFile(path.join(dir, 'a.yaml.tmp'), podYaml('web', 'kubelet-ts/pause:1.0'));
    await rename(path.join(dir, 'a.yaml.tmp'), path.join(dir, 'a.yaml'));
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);
    expect(image(u.pods[0])).toBe('kubelet-ts/pause:1.0');
    expect(rec.errors).toEqual([]);
  });

  it('removes the pods of a deleted file', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const { rec, first } = await startSource();
    expect(names(first)).toEqual([`web-${kNode}`, `db-${kNode}`]);
    await rm(path.join(dir, 'b.yaml'));
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);
  });

  it('removes the pods of an emptied file, without an error', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const { rec } = await startSource();
    await writeFile(path.join(dir, 'b.yaml'), '');
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);
    expect(rec.errors).toEqual([]);
  });

  it('keeps the last good pods of a broken file, reports the error naming the file, and takes the fixed file', async () => {
    const a = path.join(dir, 'a.yaml');
    await writeFile(a, podYaml('web', 'kubelet-ts/busybox:1.35'));
    const { rec } = await startSource();

    // Invalid YAML.
    await writeFile(a, 'apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n');
    const parseError = await rec.nextError();
    expect(parseError.source).toBe('file');
    expect(parseError.origin).toBe(a);
    expect(parseError.message).toContain(a);
    const warn = rec.logs.find((l) => l.level === 40 && l.file === a);
    expect(warn).toBeDefined();

    // Invalid fields: every error is listed, each with its field path.
    await writeFile(
      a,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  restartPolicy: Sometimes\n  containers:\n  - name: main\n`,
    );
    const fieldError = await rec.nextError();
    expect(fieldError.origin).toBe(a);
    expect(fieldError.message).toContain(a);
    expect(fieldError.message).toContain('spec.containers[0].image');
    expect(fieldError.message).toContain('spec.restartPolicy');

    // The broken file's pods are still in the set: the next SET (caused by another file) has them.
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`, `db-${kNode}`]);
    expect(image(byName(u, `web-${kNode}`))).toBe('kubelet-ts/busybox:1.35');

    // Fixed: its pods update normally.
    await writeFile(a, podYaml('web', 'kubelet-ts/pause:1.0'));
    const fixed = await rec.nextUpdate();
    expect(image(byName(fixed, `web-${kNode}`))).toBe('kubelet-ts/pause:1.0');
    expect(rec.errors).toHaveLength(2);
  });

  it('refuses a manifest larger than 1 MiB, naming the file, and keeps its last good pods', async () => {
    const a = path.join(dir, 'a.yaml');
    await writeFile(a, podYaml('web'));
    const { rec } = await startSource();
    await writeFile(a, `${podYaml('web')}# ${'x'.repeat(kMaxManifestBytes)}\n`);
    const tooBig = await rec.nextError();
    expect(tooBig.origin).toBe(a);
    expect(tooBig.message).toContain(a);
    expect(tooBig.message).toContain(`at most ${kMaxManifestBytes} bytes`);
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    expect(names(await rec.nextUpdate())).toEqual([`web-${kNode}`, `db-${kNode}`]);
  });

  it('reports a broken file once, not on every periodic re-check, and sends no SET when nothing changed', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeFile(path.join(dir, 'b.yaml'), 'kind: Pod\nmetadata: {name: [x\n');
    const { rec, first } = await startSource({ checkFrequencyMs: 200 });
    expect(names(first)).toEqual([`web-${kNode}`]);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0].origin).toBe(path.join(dir, 'b.yaml'));
    await rec.moreChecks(3);
    expect(rec.updates).toHaveLength(1);
    expect(rec.errors).toHaveLength(1);
  });

  /**
   * writeByRename writes `file` whole at once (a temporary file outside the directory, renamed in),
   * so the watch reports it once and the source reads it once: a file written in place may be read
   * twice, once per event, which a test counting reads would take for another check's.
   */
  async function writeByRename(file: string, text: string): Promise<void> {
    const staged = path.join(tmp, `${path.basename(file)}.staged`);
    await writeFile(staged, text);
    await rename(staged, file);
  }

  /** recordOpens: every file the source reads, by path (each read is one task of its manifest thread, which opens the file), until restore(). */
  function recordOpens(): { opened: string[]; restore(): void } {
    const opened: string[] = [];
    recorder = opened;
    return {
      opened,
      restore: () => {
        if (recorder === opened) recorder = undefined;
      },
    };
  }

  /** expectNextCatchUpReadsNothing waits for the next catch-up check and expects it to have opened no file and found no change. */
  async function expectNextCatchUpReadsNothing(rec: Recorder): Promise<void> {
    const { opened, restore } = recordOpens();
    try {
      const catchUps = rec.catchUps;
      await rec.until('a catch-up check', () => (rec.catchUps > catchUps ? true : undefined));
      expect(opened).toEqual([]);
      expect(rec.logs.some((l) => l.msg === 'Catch-up check found pod manifest changes the watch had not reported')).toBe(false);
    } finally {
      restore();
    }
  }

  it('reads each new file named by watch events in one task of the manifest thread: no fs call on the main thread (issue #42)', async () => {
    const { rec } = await startSource();
    const files = ['a', 'b', 'c', 'd', 'e'].map((n) => path.join(dir, `${n}.yaml`));
    const mainThread: string[] = [];
    const spies = (['open', 'stat', 'lstat', 'readFile'] as const).map((fn) => {
      const real = (fsPromises[fn] as (...a: unknown[]) => unknown).bind(fsPromises);
      return vi.spyOn(fsPromises, fn).mockImplementation(((file: unknown, ...rest: unknown[]) => {
        mainThread.push(`${fn} ${String(file)}`);
        return real(file, ...rest);
      }) as never);
    });
    const { opened: reads, restore } = recordOpens();
    try {
      for (const [i, file] of files.entries()) await writeByRename(file, podYaml(`p${i}`));
      await rec.until('the five pods', () => (rec.updates.at(-1)?.pods.length === 5 ? true : undefined));
      expect(mainThread.filter((call) => files.some((f) => call.endsWith(f)))).toEqual([]);
      expect([...reads].sort()).toEqual(files);
    } finally {
      restore();
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('a full check reads again only the files whose stat changed or that were read within kStatTrustMs of their last write', async () => {
    const old = path.join(dir, 'old.yaml');
    const fresh = path.join(dir, 'fresh.yaml');
    await writeFile(old, podYaml('old'));
    const past = new Date(Date.now() - 60_000);
    await utimes(old, past, past);
    await writeFile(fresh, podYaml('fresh'));
    // Its mtime in the future: never kStatTrustMs older than a read, however slow the checks run
    // (a loaded machine took over 2 s for three checks, and the test then saw a trusted stat).
    const future = new Date(Date.now() + 3_600_000);
    await utimes(fresh, future, future);
    const { opened: reads, restore } = recordOpens();
    try {
      const { rec, first } = await startSource({ checkFrequencyMs: 200 });
      expect(names(first)).toEqual([`fresh-${kNode}`, `old-${kNode}`]);
      expect(reads.filter((f) => f === old)).toHaveLength(1); // the first check's read only
      reads.length = 0;
      await rec.moreChecks(2);
      expect(reads.filter((f) => f === old)).toEqual([]);
      // Modified later than kStatTrustMs before its read: its stat is not trusted, so every check reads it.
      expect(reads.filter((f) => f === fresh).length).toBeGreaterThanOrEqual(2);
      expect(kStatTrustMs).toBeGreaterThan(0);
    } finally {
      restore();
    }
  });

  /** A watch that never reports `lost` (a file name), as @parcel/watcher can lose an event of a burst (kCatchUpMs). */
  function watchLosing(lost: string): FileSourceDeps['newManifestWatch'] {
    return (options) =>
      newManifestWatch({
        ...options,
        onChange: (c) => options.onChange({ ...c, files: c.files.filter((f) => path.basename(f) !== lost) }),
      });
  }

  it('takes a file whose watch event was lost at the catch-up check after the burst, not at the next periodic check', async () => {
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 }, { newManifestWatch: watchLosing('b.yaml') });
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const both = await rec.until('a SET with both pods', () => rec.updates.find((u) => u.pods.length === 2));
    expect(names(both)).toEqual([`web-${kNode}`, `db-${kNode}`]);
    expect(rec.checks).toBe(1); // the first check only: no periodic one found it
    expect(rec.catchUps).toBeGreaterThanOrEqual(1);
    const found = rec.logs.find((l) => l.msg === 'Catch-up check found pod manifest changes the watch had not reported');
    expect(found?.files).toEqual([path.join(dir, 'b.yaml')]);
    expect(kCatchUpMs).toBeLessThan(3_600_000);
  });

  it('a manifest replaced through a temporary file and then deleted, which the watch folds into nothing, goes at the catch-up check', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 });
    const changes = (): number => rec.logs.filter((l) => l.msg === 'Pod manifest path changed').length;
    writeFileSync(path.join(dir, 'b.yaml.tmp'), podYaml('db', 'kubelet-ts/pause:1.0'));
    await rec.until('the watch to report the temporary file', () => (changes() > 0 ? true : undefined));
    // Synchronous, so that the rename's create and the delete of b.yaml land in one watch batch,
    // where @parcel/watcher folds them into nothing: only the temporary file's delete is reported.
    renameSync(path.join(dir, 'b.yaml.tmp'), path.join(dir, 'b.yaml'));
    rmSync(path.join(dir, 'b.yaml'));
    const gone = await rec.until('a SET without db', () => rec.updates.find((u) => u.pods.length === 1));
    expect(names(gone)).toEqual([`web-${kNode}`]);
    expect(rec.checks).toBe(1);
  });

  it('a catch-up check comes at most kCatchUpMaxMs after a change, however often the directory keeps changing', async () => {
    const noisy = path.join(dir, 'noisy.yaml');
    await writeFile(noisy, podYaml('noisy'));
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 }, { newManifestWatch: watchLosing('b.yaml') });
    const touch = setInterval(() => utimesSync(noisy, new Date(), new Date()), 300);
    try {
      await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
      const both = await rec.until('a SET with db', () => rec.updates.find((u) => u.pods.length === 2));
      expect(names(both)).toEqual([`db-${kNode}`, `noisy-${kNode}`]);
      expect(kCatchUpMaxMs).toBeLessThan(10_000); // the recorder waits 10 s
    } finally {
      clearInterval(touch);
    }
  });

  it('a catch-up check does not read again a file whose read failed while its stat is unchanged', async () => {
    await symlink('/proc/kallsyms', path.join(dir, 'ksyms.yaml')); // stat says 0 bytes; it holds MiBs
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 });
    expect(rec.errors.map((e) => e.origin)).toEqual([path.join(dir, 'ksyms.yaml')]);
    await writeByRename(path.join(dir, 'a.yaml'), podYaml('web'));
    await rec.until('a SET with web', () => rec.updates.find((u) => u.pods.length === 1));
    await expectNextCatchUpReadsNothing(rec);
    expect(rec.errors).toHaveLength(1);
  });

  it("a file renamed to another name, whose old name's event came later (or never), is not reported as a duplicate of itself", async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const { rec, first } = await startSource({ checkFrequencyMs: 3_600_000 }, { newManifestWatch: watchLosing('a.yaml') });
    await rename(path.join(dir, 'a.yaml'), path.join(dir, 'b.yaml'));
    const moved = await rec.nextUpdate();
    expect(names(moved)).toEqual([`web-${kNode}`]);
    expect(moved.pods[0].metadata?.uid).not.toBe(first.pods[0].metadata?.uid); // now b.yaml's pod
    expect(rec.errors).toEqual([]);
  });

  it('a catch-up check reads no file whose stat is unchanged since its last read', async () => {
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 });
    await writeByRename(path.join(dir, 'a.yaml'), podYaml('web'));
    await writeByRename(path.join(dir, 'b.yaml'), podYaml('db'));
    await rec.until('a SET with both pods', () => rec.updates.find((u) => u.pods.length === 2));
    await expectNextCatchUpReadsNothing(rec);
  });

  it('a catch-up check stats its files on the manifest thread: no fs call per file on the main thread (issue #42)', async () => {
    const { rec } = await startSource({ checkFrequencyMs: 3_600_000 });
    const files = ['a', 'b', 'c'].map((n) => path.join(dir, `${n}.yaml`));
    for (const [i, file] of files.entries()) await writeByRename(file, podYaml(`p${i}`));
    await rec.until('a SET with the three pods', () => rec.updates.find((u) => u.pods.length === 3));
    const mainThread: string[] = [];
    const spies = (['open', 'stat', 'lstat'] as const).map((fn) => {
      const real = (fsPromises[fn] as (...a: unknown[]) => unknown).bind(fsPromises);
      return vi.spyOn(fsPromises, fn).mockImplementation(((file: unknown, ...rest: unknown[]) => {
        mainThread.push(`${fn} ${String(file)}`);
        return real(file, ...rest);
      }) as never);
    });
    try {
      await expectNextCatchUpReadsNothing(rec);
      expect(mainThread.filter((call) => files.some((f) => call.endsWith(f)))).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('reports a file that is still broken after a change again', async () => {
    const b = path.join(dir, 'b.yaml');
    await writeFile(b, 'kind: Pod\nmetadata: {name: [x\n');
    const { rec } = await startSource();
    const e1 = await rec.nextError();
    await writeFile(b, 'kind: Pod\nmetadata: {name: [y\n');
    const e2 = await rec.nextError();
    expect(e1.origin).toBe(b);
    expect(e2.origin).toBe(b);
  });

  it('keeps the first of two pods with the same full name, by file name order, and reports the other naming both files', async () => {
    const a = path.join(dir, 'a.yaml');
    const b = path.join(dir, 'b.yaml');
    await writeFile(a, podYaml('web', 'kubelet-ts/busybox:1.35'));
    await writeFile(b, podYaml('web', 'kubelet-ts/pause:1.0'));
    const { rec, first } = await startSource();
    expect(names(first)).toEqual([`web-${kNode}`]);
    expect(image(first.pods[0])).toBe('kubelet-ts/busybox:1.35');
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0].origin).toBe(b);
    expect(rec.errors[0].message).toContain(a);
    expect(rec.errors[0].message).toContain(b);

    // A new version of the left-out pod (a new UID) is reported too, with the same message.
    await writeFile(b, podYaml('web', 'kubelet-ts/busybox:1.36'));
    const again = await rec.until('a second duplicate report', () => rec.errors[1]);
    expect(again.message).toBe(rec.errors[0].message);

    // Once the first file goes, the other one's pod is the one in the set.
    await rm(a);
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);
    expect(image(u.pods[0])).toBe('kubelet-ts/busybox:1.36');
  });

  it('watches a single file path: edit, delete and re-create', async () => {
    const file = path.join(tmp, 'static.yaml');
    await writeFile(file, podYaml('solo', 'kubelet-ts/busybox:1.35'));
    await writeFile(path.join(tmp, 'neighbour.yaml'), podYaml('other'));
    const { rec, first } = await startSource({ path: file });
    expect(names(first)).toEqual([`solo-${kNode}`]);

    await writeFile(file, podYaml('solo', 'kubelet-ts/pause:1.0'));
    expect(image((await rec.nextUpdate()).pods[0])).toBe('kubelet-ts/pause:1.0');

    await rm(file);
    expect(names(await rec.nextUpdate())).toEqual([]);

    await writeFile(file, podYaml('solo'));
    expect(names(await rec.nextUpdate())).toEqual([`solo-${kNode}`]);
  });

  it('starts on a missing directory: reports it once, sends an empty SET, then takes it when created', async () => {
    await rm(dir, { recursive: true });
    const { rec, first } = await startSource();
    expect(first.pods).toEqual([]);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0].origin).toBe(dir);
    expect(rec.errors[0].message).toContain(dir);

    await mkdir(dir);
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const u = await rec.until('the pod of the created directory', () => rec.updates.find((x) => x.pods.length > 0));
    expect(names(u)).toEqual([`web-${kNode}`]);
    expect(rec.errors).toHaveLength(1);
  });

  it('starts on a path whose parent is missing too and takes it on a periodic check once created', async () => {
    dir = path.join(tmp, 'etc', 'kubernetes', 'manifests');
    const { rec, first } = await startSource({ checkFrequencyMs: 200 });
    expect(first.pods).toEqual([]);
    expect(rec.errors).toHaveLength(1);
    await rec.moreChecks(2);
    expect(rec.errors).toHaveLength(1);

    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const u = await rec.nextUpdate();
    expect(names(u)).toEqual([`web-${kNode}`]);

    // Now watched: a change shows up without waiting for the periodic check.
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    expect(names(await rec.nextUpdate())).toEqual([`web-${kNode}`, `db-${kNode}`]);
  });

  it('removes every pod when the directory is deleted, and watches it again when it is re-created', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const { rec } = await startSource();
    await rm(dir, { recursive: true });
    expect(names(await rec.nextUpdate())).toEqual([]);
    await mkdir(dir);
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    expect(names(await rec.nextUpdate())).toEqual([`db-${kNode}`]);
  });

  it('makes no callback once stop() has resolved', async () => {
    await writeFile(path.join(dir, 'a.yaml'), podYaml('web'));
    const { source, rec } = await startSource({ checkFrequencyMs: 200 });
    await source.stop();
    // A second source on the same directory shows when the change has been seen and re-checked.
    const sentinel = await startSource({ checkFrequencyMs: 200 });
    await writeFile(path.join(dir, 'b.yaml'), podYaml('db'));
    await writeFile(path.join(dir, 'c.yaml'), 'not: [valid\n');
    expect(names(await sentinel.rec.nextUpdate())).toEqual([`web-${kNode}`, `db-${kNode}`]);
    await sentinel.rec.moreChecks(2);
    expect(rec.updates).toHaveLength(1);
    expect(rec.errors).toHaveLength(0);
  });

  it.each([
    [{ path: '' }, 'options.path'],
    [{ nodeName: '' }, 'options.nodeName'],
    [{ checkFrequencyMs: 0 }, 'options.checkFrequencyMs'],
    [{ checkFrequencyMs: 1.5 }, 'options.checkFrequencyMs'],
  ])('rejects the options %j naming %s', (bad, option) => {
    const rec = new Recorder();
    expect(() => newFileSource({ path: dir, nodeName: kNode, ...bad }, rec)).toThrow(option);
  });
});

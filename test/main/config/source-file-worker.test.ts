// The file source decodes manifests on its own worker thread (task loadStaticPods), never on the main thread.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { newFileSource, type FileSource, type FileSourceDeps } from '../../../src/main/config/source-file.js';
import { newManifestLoader, type ManifestLoader } from '../../../src/main/pool/worker-pool.js';
import { kMaxReadBatch } from '../../../src/main/config/manifest-decoder.js';
import type { Pod } from '../../../src/shared/api.js';
import { ConfigSeenAnnotationKey } from '../../../src/shared/annotations.js';
import { SourceRecorder as Recorder } from '../../support/source-recorder.js';
import * as staticPod from '../../../src/shared/static-pod.js';

// The main thread's loadStaticPods refuses to run: every pod must come from the worker thread
// (which loads the real module: vitest's mocks do not reach worker threads).
vi.mock('../../../src/shared/static-pod.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/shared/static-pod.js')>();
  return {
    ...actual,
    real: actual,
    loadStaticPods: vi.fn(() => {
      throw new Error('loadStaticPods ran on the main thread');
    }),
    staticPodContentHash: vi.fn(actual.staticPodContentHash),
  };
});
const real = (staticPod as unknown as { real: typeof staticPod }).real;

const kNode = 'node-a';

function podYaml(name: string, img = 'kubelet-ts/busybox:1.35'): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: ${img}\n`;
}

/** The pod without its config.seen annotation (the time of the read). */
function unseen(pod: Pod): Pod {
  const annotations = { ...pod.metadata?.annotations };
  delete annotations[ConfigSeenAnnotationKey];
  return { ...pod, metadata: { ...pod.metadata, annotations } };
}

describe('file source: manifests are decoded on a worker thread', { timeout: 30_000 }, () => {
  let tmp: string;
  let dir: string;
  const sources: FileSource[] = [];

  beforeEach(async () => {
    vi.mocked(staticPod.loadStaticPods).mockClear();
    vi.mocked(staticPod.staticPodContentHash).mockClear();
    tmp = await mkdtemp(path.join(tmpdir(), 'kubelet-ts-file-source-worker-'));
    dir = path.join(tmp, 'manifests');
    await mkdir(dir);
  });

  afterEach(async () => {
    await Promise.all(sources.splice(0).map((s) => s.stop()));
    await rm(tmp, { recursive: true, force: true });
  });

  async function startSource(
    checkFrequencyMs = 60_000,
    extra: Partial<FileSourceDeps> = {},
  ): Promise<{ source: FileSource; rec: Recorder }> {
    const rec = new Recorder();
    const source = newFileSource(
      { path: dir, nodeName: kNode, checkFrequencyMs },
      { logger: rec.logger, onUpdate: rec.onUpdate, onError: rec.onError, ...extra },
    );
    sources.push(source);
    await source.start();
    return { source, rec };
  }

  it('sends the pods loadStaticPods makes of each file, without running it on the main thread', async () => {
    const yamlText = `${podYaml('web')}---\n${podYaml('db')}`;
    const jsonText = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'cache' },
      spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    });
    await writeFile(path.join(dir, 'a.yaml'), yamlText);
    await writeFile(path.join(dir, 'b.json'), jsonText);
    const { rec } = await startSource();
    expect(rec.errors).toEqual([]);
    const expected = [
      ...real.loadStaticPods(yamlText, { nodeName: kNode, source: 'file', origin: path.join(dir, 'a.yaml') }),
      ...real.loadStaticPods(jsonText, { nodeName: kNode, source: 'file', origin: path.join(dir, 'b.json'), format: 'json' }),
    ];
    expect(rec.updates[0].pods.map(unseen)).toEqual(expected.map(unseen));
    expect(rec.updates[0].pods[0].metadata?.annotations?.[ConfigSeenAnnotationKey]).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(staticPod.loadStaticPods).not.toHaveBeenCalled();
  });

  it("reports an invalid manifest with exactly loadStaticPods's message", async () => {
    const file = path.join(dir, 'a.yaml');
    const text = `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  restartPolicy: Sometimes\n  containers:\n  - name: main\n`;
    await writeFile(file, text);
    const { rec } = await startSource();
    let expected = '';
    try {
      real.loadStaticPods(text, { nodeName: kNode, source: 'file', origin: file });
    } catch (err) {
      expected = (err as Error).message;
    }
    expect(expected).toContain('spec.restartPolicy');
    expect(expected).toContain('spec.containers[0].image');
    expect(rec.errors).toEqual([{ source: 'file', origin: file, message: expected }]);
    expect(staticPod.loadStaticPods).not.toHaveBeenCalled();
  });

  it('keeps the last good pods when the thread fails to answer, reports that once, and parses the file again at the next check', async () => {
    const file = path.join(dir, 'a.yaml');
    await writeFile(file, podYaml('web', 'kubelet-ts/busybox:1.35'));
    let failures = 0;
    let closed = 0;
    const newLoader = (): ManifestLoader => {
      const loader = newManifestLoader();
      return {
        load: (task) => (failures-- > 0 ? Promise.reject(new Error('worker thread exited')) : loader.load(task)),
        close: () => {
          closed++;
          return loader.close();
        },
      };
    };
    const { source, rec } = await startSource(200, { newManifestLoader: newLoader });
    expect(rec.updates[0].pods.map((p) => p.spec?.containers[0].image)).toEqual(['kubelet-ts/busybox:1.35']);

    failures = 3;
    await writeFile(file, podYaml('web', 'kubelet-ts/pause:1.0'));
    const u = await rec.until('the edited pod', () =>
      rec.updates.find((x) => x.pods[0]?.spec?.containers[0].image === 'kubelet-ts/pause:1.0'),
    );
    expect(u.pods).toHaveLength(1);
    // The pod never went away while the thread failed, and the failure was reported once.
    expect(rec.updates.every((x) => x.pods.length === 1)).toBe(true);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0].origin).toBe(file);
    expect(rec.errors[0].message).toContain(file);
    expect(rec.errors[0].message).toContain('worker thread exited');

    await source.stop();
    expect(closed).toBe(1);
  });

  it('compares pods by the hashes the thread computed: no pod is hashed on the main thread, however often the set is checked', async () => {
    const a = path.join(dir, 'a.yaml');
    await writeFile(a, `${podYaml('web')}---\n${podYaml('db')}`);
    await writeFile(path.join(dir, 'b.yaml'), podYaml('cache'));
    const { rec } = await startSource(200);
    const first = rec.updates[0];
    expect(first.pods).toHaveLength(3);

    // The same pods in other words: read and decoded again, but no SET, and the pods keep their
    // first objects (and config.seen).
    await writeFile(a, `# reformatted\n${podYaml('web')}---\n${podYaml('db')}`);
    await writeFile(path.join(dir, 'c.yaml'), podYaml('later'));
    const u = await rec.until('the SET with c.yaml', () => rec.updates.find((x) => x.pods.length === 4));
    expect(rec.updates).toHaveLength(2);
    expect(u.pods.slice(0, 3)).toEqual(first.pods);
    for (let i = 0; i < 3; i++) expect(u.pods[i]).toBe(first.pods[i]);

    // A real edit is a new pod.
    await writeFile(a, `${podYaml('web', 'kubelet-ts/pause:1.0')}---\n${podYaml('db')}`);
    const edited = await rec.until('the edited pod', () =>
      rec.updates.find((x) => x.pods[0].spec?.containers[0].image === 'kubelet-ts/pause:1.0'),
    );
    expect(edited.pods[0].metadata?.uid).not.toBe(first.pods[0].metadata?.uid);
    expect(edited.pods[1]).toBe(first.pods[1]);
    expect(rec.updates).toHaveLength(3);
    expect(staticPod.staticPodContentHash).not.toHaveBeenCalled();
  });

  it('empty files hold no pods and report nothing (one thread reads them: it reads every file)', async () => {
    await writeFile(path.join(dir, 'a.yaml'), '');
    await writeFile(path.join(dir, 'b.yaml'), '\n\n');
    let started = 0;
    const { rec } = await startSource(60_000, {
      newManifestLoader: () => {
        started++;
        return newManifestLoader();
      },
    });
    expect(rec.updates[0].pods).toEqual([]);
    expect(rec.errors).toEqual([]);
    expect(started).toBe(1);
  });
  it('decodes the files of a check ahead of the one it takes, and still takes them, and reports their problems, in file name order', async () => {
    // 40 files, two of them invalid (an empty image), read by the first check. Each decode takes
    // at least 5 ms: a source that waits for one file's answer before reading the next never has
    // two in flight.
    const names = Array.from({ length: 40 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    for (const n of names) await writeFile(path.join(dir, `${n}.yaml`), n === 'p07' || n === 'p31' ? podYaml(n, '') : podYaml(n));
    let inFlight = 0;
    let maxInFlight = 0;
    const newLoader = (): ManifestLoader => {
      const loader = newManifestLoader();
      return {
        load: async (task) => {
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          try {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return await loader.load(task);
          } finally {
            inFlight--;
          }
        },
        close: () => loader.close(),
      };
    };
    const { rec } = await startSource(60_000, { newManifestLoader: newLoader });
    expect(maxInFlight).toBeGreaterThan(1);
    expect(maxInFlight).toBeLessThanOrEqual(17);
    expect(rec.updates).toHaveLength(1);
    expect(rec.updates[0].pods.map((p) => p.metadata?.name)).toEqual(
      names.filter((n) => n !== 'p07' && n !== 'p31').map((n) => `${n}-${kNode}`),
    );
    expect(rec.errors.map((e) => e.origin)).toEqual([path.join(dir, 'p07.yaml'), path.join(dir, 'p31.yaml')]);
  });

  it('an event check of many files sends what it has while the rest are decoded, then every pod', async () => {
    // One watch notification names all 20 files, so all are one check; the decodes take turns, each
    // ≥ 10 ms after the one before, so the check takes ≥ 200 ms whatever the machine.
    let notify!: (files: string[]) => void;
    const newWatch: FileSourceDeps['newManifestWatch'] = (options) => {
      notify = (files) => options.onChange({ full: false, files });
      return { ensure: async () => 'subscribed', close: async () => undefined };
    };
    let turn: Promise<unknown> = Promise.resolve();
    const newLoader = (): ManifestLoader => {
      const loader = newManifestLoader();
      return {
        load: (task) => {
          const mine = turn.then(() => new Promise((resolve) => setTimeout(resolve, 10))).then(() => loader.load(task));
          turn = mine.catch(() => undefined);
          return mine;
        },
        close: () => loader.close(),
      };
    };
    const { rec } = await startSource(3_600_000, { newManifestWatch: newWatch, newManifestLoader: newLoader });
    const files = Array.from({ length: 20 }, (_, i) => path.join(dir, `f${String(i).padStart(2, '0')}.yaml`));
    for (const [i, file] of files.entries()) await writeFile(file, podYaml(`p${i}`));
    notify(files);
    const all = await rec.until('a SET of all 20 pods', () => rec.updates.find((u) => u.pods.length === 20));
    const sets = rec.updates.slice(1); // after the first (empty) one
    expect(sets.length).toBeGreaterThan(1);
    expect(sets.at(-1)).toBe(all);
    // Each SET holds the pods of the files applied so far, in file name order.
    for (const u of sets)
      expect(u.pods.map((p) => p.metadata?.name)).toEqual(Array.from({ length: u.pods.length }, (_, i) => `p${i}-${kNode}`));
  });

  it('reads the files a check asks for at once in tasks of up to kMaxReadBatch files, not one task per file (issue #42)', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    for (const n of names) await writeFile(path.join(dir, `${n}.yaml`), podYaml(n));
    const tasks: number[] = [];
    const { rec } = await startSource(60_000, {
      newManifestLoader: () => {
        const loader = newManifestLoader();
        return {
          load: (task) => {
            tasks.push(1 + (task.more?.length ?? 0));
            return loader.load(task);
          },
          close: () => loader.close(),
        };
      },
    });
    expect(rec.updates[0].pods.map((p) => p.metadata?.name)).toEqual(names.map((n) => `${n}-${kNode}`));
    expect(tasks.reduce((a, b) => a + b, 0)).toBe(20);
    expect(tasks.length).toBeLessThanOrEqual(3); // 16 + 4, and at most one more from a watch event
    expect(Math.max(...tasks)).toBeLessThanOrEqual(kMaxReadBatch);
  });

  it('stops in the middle of a check without waiting for the decodes it queued ahead', async () => {
    // 40 files of 200 pods each, there before the source starts, so that its first check asks for
    // their decodes ahead: when ten have been asked for, the thread is busy with one and the others
    // wait in its queue, or later in its task (a task reads several files: its cancel flag). stop()
    // must abort the queue, not parse it for nothing: besides the decode under way (and one whose
    // answer was on its way), none may finish after it. (Files written
    // after the start would come in several watch batches, each a check of its own that may end,
    // with a SET, before the tenth decode.)
    for (let i = 0; i < 40; i++) {
      const docs = Array.from({ length: 200 }, (_, j) => podYaml(`f${i}p${j}`)).join('---\n');
      await writeFile(path.join(dir, `f${String(i).padStart(2, '0')}.yaml`), docs);
    }
    let asked = 0;
    let stopping = false;
    let decodedAfterStop = 0;
    let askedEnough!: () => void;
    const enough = new Promise<void>((resolve) => (askedEnough = resolve));
    const newLoader = (): ManifestLoader => {
      const loader = newManifestLoader();
      return {
        load: async (task) => {
          // A task reads one file, or several (LoadStaticPodsTask.more): each file counts.
          asked += 1 + (task.more?.length ?? 0);
          if (asked >= 10) askedEnough();
          const result = await loader.load(task);
          if (stopping && result.ok) {
            const answers = [result.value, ...(result.value.more ?? [])];
            decodedAfterStop += answers.filter((a) => a.file?.kind === 'read' && a.file.parsed).length;
          }
          return result;
        },
        close: () => loader.close(),
      };
    };
    const rec = new Recorder();
    const source = newFileSource(
      { path: dir, nodeName: kNode, checkFrequencyMs: 60_000 },
      { logger: rec.logger, onUpdate: rec.onUpdate, onError: rec.onError, newManifestLoader: newLoader },
    );
    sources.push(source);
    const started = source.start();
    await enough;
    stopping = true;
    await source.stop();
    await started;
    expect(decodedAfterStop).toBeLessThanOrEqual(2);
    expect(asked).toBeGreaterThan(decodedAfterStop + 5);
    expect(rec.updates).toEqual([]); // stopped within its first check: nothing sent
  });
});

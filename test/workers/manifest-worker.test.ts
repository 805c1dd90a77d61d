/** The manifest worker's loadStaticPods task: pure, answered without a bootstrap (the file and URL sources' manifest thread). */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '../../src/shared/thread-wire.js';
import type { LoadStaticPodsTask } from '../../src/shared/manifest-tasks.js';
import { loadStaticPods, staticPodContentHash } from '../../src/shared/static-pod.js';
import decodeManifest from '../../src/workers/manifest.worker.js';

const origin = '/etc/kubernetes/manifests/web.yaml';
const text = `apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: main, image: "kubelet-ts/busybox:1.35"}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n  containers: [{name: main, image: "kubelet-ts/busybox:1.35"}]\n`;

function task(over: Partial<LoadStaticPodsTask> = {}): LoadStaticPodsTask {
  return {
    kind: 'loadStaticPods',
    protocol: PROTOCOL_VERSION,
    text,
    format: 'yaml',
    origin,
    nodeName: 'Node-A',
    source: 'file',
    seenAtMs: Date.UTC(2026, 0, 2, 3, 4, 5),
    ...over,
  };
}

describe('manifest.worker loadStaticPods', () => {
  // No workerData is needed; any other task kind fails.
  it('answers without a bootstrap, with the pods of loadStaticPods and their content hashes', async () => {
    const r = await decodeManifest(task());
    const expected = loadStaticPods(text, { nodeName: 'Node-A', source: 'file', origin, seenAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });
    expect(r).toEqual({
      ok: true,
      kind: 'loadStaticPods',
      value: { pods: expected, contentHashes: expected.map(staticPodContentHash), objects: [] },
    });
    expect(expected.map((p) => p.metadata?.name)).toEqual(['web-node-a', 'db-node-a']);
  });

  it('returns an invalid manifest as an error result with the InvalidManifestError message', async () => {
    const bad = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  restartPolicy: Sometimes\n  containers: [{name: main}]\n';
    const r = await decodeManifest(task({ text: bad }));
    expect(r).toMatchObject({ ok: false, kind: 'loadStaticPods', error: { code: 'ERR_INVALID_MANIFEST' } });
    expect(() => loadStaticPods(bad, { nodeName: 'Node-A', source: 'file', origin })).toThrow(
      (r as { error: { message: string } }).error.message,
    );
    expect((r as { error: { message: string } }).error.message).toContain(`${origin}: `);
  });

  it('refuses another protocol version, and every other kind', async () => {
    expect(await decodeManifest(task({ protocol: PROTOCOL_VERSION + 1 }))).toMatchObject({
      ok: false,
      kind: 'loadStaticPods',
      error: { code: 'ERR_PROTOCOL' },
    });
    const other = await decodeManifest({ kind: 'relist', protocol: PROTOCOL_VERSION } as unknown as LoadStaticPodsTask);
    expect(other).toMatchObject({ ok: false, kind: 'relist' });
  });

  it('content hashes ignore config.seen but not the pod', () => {
    const [a] = loadStaticPods(text, { nodeName: 'n', source: 'file', origin, seenAt: new Date(1) });
    const [b] = loadStaticPods(text, { nodeName: 'n', source: 'file', origin, seenAt: new Date(2) });
    expect(staticPodContentHash(a)).toBe(staticPodContentHash(b));
    expect(staticPodContentHash({ ...a, spec: { ...a.spec!, restartPolicy: 'Never' } })).not.toBe(staticPodContentHash(a));
  });
});

describe('manifest.worker loadStaticPods with read (the file source: the thread reads the file)', () => {
  const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');

  it('reads the file, answers its hash and stat with the pods, and skips decoding a content it is told the source has', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-manifest-worker-'));
    try {
      const file = join(dir, 'web.yaml');
      writeFileSync(file, text);
      const r = await decodeManifest(task({ text: undefined, origin: file, read: { skipParseOf: [] } }));
      const expected = loadStaticPods(text, {
        nodeName: 'Node-A',
        source: 'file',
        origin: file,
        seenAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
      });
      expect(r).toMatchObject({ ok: true, value: { pods: expected, contentHashes: expected.map(staticPodContentHash) } });
      const value = (r as { value: { file: Record<string, unknown> } }).value;
      expect(value.file).toMatchObject({ kind: 'read', hash: sha256(text), length: text.length, parsed: true });
      expect(value.file.stat).toMatch(/^\d+:\d+:\d+:\d+$/);
      const skipped = await decodeManifest(task({ text: undefined, origin: file, read: { skipParseOf: [sha256(text)] } }));
      expect(skipped).toMatchObject({
        ok: true,
        value: { pods: [], contentHashes: [], file: { kind: 'read', hash: sha256(text), parsed: false } },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a missing file, a directory and an invalid manifest as data, the last with its hash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kts-manifest-worker-'));
    try {
      const missing = await decodeManifest(task({ text: undefined, origin: join(dir, 'gone.yaml'), read: { skipParseOf: [] } }));
      expect(missing).toMatchObject({ ok: true, value: { pods: [], file: { kind: 'failed', code: 'ENOENT' } } });
      const notFile = await decodeManifest(task({ text: undefined, origin: dir, read: { skipParseOf: [] } }));
      expect(notFile).toMatchObject({ ok: true, value: { pods: [], file: { kind: 'not a file' } } });
      const bad = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  restartPolicy: Sometimes\n  containers: [{name: main}]\n';
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, bad);
      const r = await decodeManifest(task({ text: undefined, origin: file, read: { skipParseOf: [] } }));
      expect(r).toMatchObject({ ok: true, value: { pods: [], file: { kind: 'read', hash: sha256(bad), parsed: true } } });
      expect((r as { value: { file: { error: string } } }).value.file.error).toContain(`${file}: `);
      expect((r as { value: { file: { error: string } } }).value.file.error).toContain('restartPolicy');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

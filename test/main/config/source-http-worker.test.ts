// The URL source decodes manifests on the manifest worker thread (task loadStaticPods), never on the main thread.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { newHttpSource, type HttpSource } from '../../../src/main/config/source-http.js';
import { newManifestLoader } from '../../../src/main/pool/worker-pool.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { PodUpdate, SourceError } from '../../../src/shared/pod-update.js';
import * as staticPod from '../../../src/shared/static-pod.js';

// The main thread's loadStaticPods refuses to run (vitest's mocks do not reach worker threads).
vi.mock('../../../src/shared/static-pod.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../src/shared/static-pod.js')>();
  return {
    ...actual,
    real: actual,
    loadStaticPods: vi.fn(() => {
      throw new Error('loadStaticPods ran on the main thread');
    }),
  };
});
const real = (staticPod as unknown as { real: typeof staticPod }).real;

const kUrl = 'http://manifests.invalid/pods';
const podYaml = (name: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n    - name: main\n      image: kubelet-ts/busybox:1.35\n`;

describe('URL source: manifests are decoded on a worker thread', { timeout: 30_000 }, () => {
  const sources: HttpSource[] = [];
  afterEach(async () => {
    await Promise.all(sources.splice(0).map((s) => s.stop()));
  });

  function start(body: () => string, loaders: { started: number }) {
    const updates: PodUpdate[] = [];
    const errors: SourceError[] = [];
    const source = newHttpSource(
      { url: kUrl, nodeName: 'Node-1', checkFrequencyMs: 3_600_000 },
      {
        logger: newLogger('silent'),
        onUpdate: (u) => updates.push(u),
        onError: (e) => errors.push(e),
        fetch: async () => new Response(body(), { status: 200, headers: { 'Content-Type': 'application/yaml' } }),
        newManifestLoader: () => {
          loaders.started++;
          return newManifestLoader();
        },
      },
    );
    sources.push(source);
    return { source, updates, errors };
  }

  it('sends the pods loadStaticPods makes, and reports an invalid body with exactly its message, from one thread', async () => {
    let text = `${podYaml('web')}---\n${podYaml('db')}`;
    const loaders = { started: 0 };
    const { source, updates, errors } = start(() => text, loaders);
    await source.start();
    const expected = real.loadStaticPods(text, { nodeName: 'Node-1', source: 'http', origin: kUrl, format: 'yaml' });
    expect(updates).toHaveLength(1);
    expect(updates[0].pods.map((p) => p.metadata?.uid)).toEqual(expected.map((p) => p.metadata?.uid));
    expect(updates[0].pods.map((p) => p.metadata?.name)).toEqual(['web-node-1', 'db-node-1']);

    text = 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  restartPolicy: Sometimes\n  containers: [{name: main}]\n';
    await source.poll();
    expect(errors).toHaveLength(1);
    expect(() => real.loadStaticPods(text, { nodeName: 'Node-1', source: 'http', origin: kUrl, format: 'yaml' })).toThrow(
      errors[0].message,
    );
    expect(updates).toHaveLength(1);
    expect(loaders.started).toBe(1);
    expect(vi.mocked(staticPod.loadStaticPods)).not.toHaveBeenCalled();
  });
});

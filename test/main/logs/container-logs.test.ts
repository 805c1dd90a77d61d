// Tests of src/main/logs/container-logs.ts and its worker (src/workers/container-logs.worker.ts) over the fake runtime.
import { describe, expect, it } from 'vitest';
import { newLogger } from '../../../src/shared/logging.js';
import { newLogsClient } from '../../../src/main/logs/container-logs.js';
import { LogsWorker } from '../../../src/workers/container-logs.worker.js';
import type { LogsWorkerMessage } from '../../../src/shared/logs-protocol.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { newDockerShimRuntime } from '../../../src/workers/runtime/node-runtime.js';

const kId = 'a'.repeat(64);

describe('LogsWorker over the fake runtime', () => {
  it('answers an empty log and the fake version; refuses an ID that is not a Docker ID', async () => {
    const got: LogsWorkerMessage[] = [];
    const w = new LogsWorker({ kind: 'container-logs', runtime: 'fake', dockerSocketPath: '', nodeName: 'n1' }, (m) => got.push(m));
    w.handle({ type: 'logs', id: 1, containerId: kId, follow: true, timestamps: false });
    w.handle({ type: 'version', id: 2 });
    w.handle({ type: 'logs', id: 3, containerId: 'nope', follow: false, timestamps: false });
    await expect.poll(() => got.length).toBe(3);
    expect(got).toContainEqual({ type: 'end', id: 1 });
    expect(got).toContainEqual({ type: 'version', id: 2, runtimeName: 'fake', version: '0.0.0', apiVersion: '0' });
    expect(got.find((m) => m.id === 3)).toMatchObject({ type: 'error', error: { code: 'ERR_INVALID_ARGUMENT' } });
  });

  it('refuses the log of a container another node owns', async () => {
    const fake = newFakeRuntime();
    const id = await fake.createContainer({
      name: 'k8s_main_x',
      image: 'i:1',
      labels: { 'io.kubernetes.pod.uid': 'p', 'kubelet-ts.node-name': 'other' },
      hostConfig: {},
    });
    const got: LogsWorkerMessage[] = [];
    const w = new LogsWorker(
      { kind: 'container-logs', runtime: 'fake', dockerSocketPath: '', nodeName: 'n1' },
      (m) => got.push(m),
      newDockerShimRuntime(fake, { runtime: 'fake', dockerSocketPath: '', nodeName: 'n1' }),
    );
    w.handle({ type: 'logs', id: 1, containerId: id, follow: false, timestamps: false });
    await expect.poll(() => got.length).toBe(1);
    expect(got[0]).toMatchObject({
      type: 'error',
      error: { code: 'ERR_INVALID_ARGUMENT', message: expect.stringContaining('refusing to read the logs of') },
    });
    expect(fake.calls.filter((c) => c.startsWith('logs:'))).toEqual([]);
  });
});

describe('newLogsClient with the fake runtime', () => {
  it('serves an empty log and version 0.0.0 through its worker thread', async () => {
    const client = newLogsClient({ endpoint: { runtime: 'fake', dockerSocketPath: '' }, nodeName: 'n1' }, { logger: newLogger('silent') });
    try {
      expect(await client.version()).toEqual({ runtimeName: 'fake', version: '0.0.0', apiVersion: '0' });
      const stream = client.logs(kId, { follow: false, timestamps: false });
      const chunks: Uint8Array[] = [];
      const err = await new Promise<Error | undefined>((resolve) => {
        stream.onData((c) => chunks.push(c));
        stream.onEnd(resolve);
      });
      expect(err).toBeUndefined();
      expect(chunks).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

// The thread's NodeRuntime for the Docker-shaped runtimes (src/workers/runtime/node-runtime.ts getRuntime over interim-shim.ts), on the fake: the shape every worker entry takes until the Docker CRI implementation lands.
import { describe, expect, it } from 'vitest';
import { getRuntime } from '../../../src/workers/runtime/node-runtime.js';

describe('getRuntime (Docker-shaped runtimes behind the NodeRuntime shape)', () => {
  const b = { runtime: 'fake' as const, dockerSocketPath: '', nodeName: 'nr-test' };

  it('is one bundle per thread, endpoint and node; names its ID scheme; has events, logs and streams', async () => {
    const nr = getRuntime(b);
    expect(getRuntime({ ...b })).toBe(nr);
    expect(getRuntime({ ...b, nodeName: 'nr-other' })).not.toBe(nr);
    expect(nr.idScheme).toBe('fake');
    expect(await nr.runtime.version('0.1.0')).toEqual({ version: '0.1.0', runtime_name: 'fake', runtime_version: '0.0.0', runtime_api_version: '0' });
    expect((await nr.runtime.status()).status?.conditions.map((c) => [c.type, c.status])).toEqual([['RuntimeReady', true], ['NetworkReady', true]]);
    expect(nr.events).toBeDefined();
    expect(typeof nr.logs.readContainerLogs).toBe('function');
    expect(typeof nr.streams.openContainerStream).toBe('function');
  });

  it('rejects the CRI calls the Docker implementation does not answer yet, naming the method; refuses an empty node name', async () => {
    const nr = getRuntime(b);
    await expect(nr.runtime.listPodSandbox()).rejects.toMatchObject({ code: 'ERR_RUNTIME', message: expect.stringMatching(/^listPodSandbox: not implemented for the fake runtime yet/) });
    await expect(nr.images.imageFsInfo()).rejects.toMatchObject({ code: 'ERR_RUNTIME', message: expect.stringMatching(/^imageFsInfo: not implemented/) });
    expect(() => getRuntime({ ...b, nodeName: '' })).toThrow('getRuntime: nodeName must be a non-empty string');
  });
});

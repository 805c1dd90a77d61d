// The thread's NodeRuntime for Docker and the fake (src/workers/runtime/node-runtime.ts getRuntime: the CRI over them through dockershim, runtime/docker/), on the fake.
import { describe, expect, it } from 'vitest';
import { getRuntime } from '../../../src/workers/runtime/node-runtime.js';

describe("getRuntime (Docker and the fake behind dockershim's NodeRuntime)", () => {
  const b = { runtime: 'fake' as const, dockerSocketPath: '', nodeName: 'nr-test' };

  it('is one bundle per thread, endpoint and node; names its ID scheme; has events, logs and streams', async () => {
    const nr = getRuntime(b);
    expect(getRuntime({ ...b })).toBe(nr);
    expect(getRuntime({ ...b, nodeName: 'nr-other' })).not.toBe(nr);
    // The fake sits behind dockershim (docker-node-runtime.ts): its IDs keep Docker's scheme, as before the seam.
    expect(nr.idScheme).toBe('docker');
    expect((await nr.runtime.status()).status?.conditions.map((c) => [c.type, c.status])).toEqual([
      ['RuntimeReady', true],
      ['NetworkReady', true],
    ]);
    expect(nr.events).toBeDefined();
    expect(typeof nr.logs.readContainerLogs).toBe('function');
    expect(typeof nr.streams.openContainerStream).toBe('function');
  });

  it('answers the CRI through dockershim (an empty fake lists no sandbox and no container); refuses an empty node name', async () => {
    const nr = getRuntime({ ...b, nodeName: 'nr-empty' });
    expect(await nr.runtime.listPodSandbox()).toEqual([]);
    expect(await nr.runtime.listContainers()).toEqual([]);
    expect(() => getRuntime({ ...b, nodeName: '' })).toThrow('getRuntime: nodeName must be a non-empty string');
  });
});

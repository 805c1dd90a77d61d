import { describe, expect, it } from 'vitest';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';

describe('--fake-runtime-latency and --fake-runtime-failure-rate', () => {
  it('accept per-operation settings and refuse bad ones naming the flag', () => {
    const o = resolveAgentOptions({ runtime: 'fake', fakeRuntimeLatency: 'create=5ms,start=5ms', fakeRuntimeFailureRate: 'start=0.01' });
    expect(o.fakeRuntimeLatency).toBe('create=5ms,start=5ms');
    expect(() => resolveAgentOptions({ fakeRuntimeLatency: 'boot=5ms' })).toThrow(/--fake-runtime-latency/);
    expect(() => resolveAgentOptions({ fakeRuntimeFailureRate: 'start=1.5' })).toThrow(/--fake-runtime-failure-rate/);
  });
});

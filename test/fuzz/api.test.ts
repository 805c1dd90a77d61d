// Property-based fuzzing (fast-check, seeded) of the agent's HTTP API: ONE in-process agent with the
// fake runtime (no Docker), random requests to every route and method (see ./api-properties.ts):
// never a 5xx, every non-2xx JSON answer a Status, no pod accepted that the validator refuses, and
// afterwards /healthz answers 200. Requests go through the harness's `node.api` (which carries the
// node's identity once the server asks for one). A failure prints its seed; FUZZ_SEED reproduces it.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { apiRequest, checkAgentAfter, checkAnswer, kFuzzNamespace } from './api-properties.js';
import { validPod } from './arbitraries.js';
import { fuzzParams } from './fuzz-config.js';

describe('fuzz: every API route with random requests (fake runtime)', () => {
  let node: TestNode;
  const codes = new Map<number, number>();
  beforeAll(async () => {
    node = await startTestNode({ runtime: 'fake', maxPods: 1_000_000, relistPeriodMs: 1000 });
  });
  afterAll(async () => {
    // The fake runtime made no containers: stop the agent and drop its directories (no Docker call),
    // once the tmpfs of its API pods' service account volumes are unmounted (left mounted on stop, as the kubelet's).
    await node?.agent.stop();
    if (node) await unmountUnder(dirname(node.rootDir));
    if (node) await rm(dirname(node.rootDir), { recursive: true, force: true });
  });

  it('a valid pod is created (so the properties below see accepted pods, not only refusals)', async () => {
    const res = await node.api('/pods', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(validPod('fuzz-seed', kFuzzNamespace)),
    });
    expect(res.status, await res.text()).toBe(201);
  });

  it('never answers 5xx, answers every error with a Status, and accepts no pod the validator refuses', async () => {
    await fc.assert(
      fc.asyncProperty(apiRequest, async (r) => {
        const code = await checkAnswer((path, init) => node.api(path, init), r);
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }),
      fuzzParams(150),
    );
    // Not vacuous: some writes were accepted and some refused.
    expect(
      [...codes.keys()].some((c) => c >= 200 && c < 300),
      JSON.stringify([...codes]),
    ).toBe(true);
    expect(
      [...codes.keys()].some((c) => c === 422 || c === 400),
      JSON.stringify([...codes]),
    ).toBe(true);
  }, 120_000);

  it('answers /healthz with 200 afterwards, and every listed pod passes the validator', async () => {
    await checkAgentAfter((path, init) => node.api(path, init));
  });
});

// An agent started with --container-runtime-endpoint on the real containerd of tools/lib/containerd.sh: what is wired today (issue #40): the runtime choice reaches every thread, GET /node names the runtime by its Version, the PLEG relists (containerd 1.6 has no container events).
import { describe, expect, it } from 'vitest';
import { startTestNode } from '../support/agent.js';
import { criEndpointOrSkip } from '../support/cri.js';
import { waitFor } from '../support/docker.js';

const endpoint = criEndpointOrSkip();

describe.skipIf(!endpoint)('the agent with --container-runtime-endpoint (containerd)', { timeout: 120_000 }, () => {
  it('reports containerd://<version> as its runtime (GET /node nodeInfo) relists at the generic PLEG period for want of events, and serves /stats/summary from it', async () => {
    const node = await startTestNode({ containerRuntimeEndpoint: endpoint! });
    try {
      expect(node.options.runtime).toBe('remote');
      const info = await waitFor(
        async () => {
          const res = await node.api('/node');
          const n = (await res.json()) as { status?: { nodeInfo?: { containerRuntimeVersion?: string } } };
          const v = n.status?.nodeInfo?.containerRuntimeVersion ?? '';
          return v ? v : null;
        },
        { timeoutMs: 60_000, description: 'GET /node with the runtime version' },
      );
      expect(info).toMatch(/^containerd:\/\/1\.6\.\d+/);
      expect(node.agent.pleg.stats()).toMatchObject({ streaming: false, relistPeriodMs: 1_000 });
      // The stats collector runs on the CRI: the node's figures in the Summary API.
      const res = await node.api('/stats/summary');
      expect(res.status).toBe(200);
      const summary = (await res.json()) as { node?: { nodeName?: string; memory?: { workingSetBytes?: number } } };
      expect(summary.node?.nodeName).toBe(node.nodeName);
      expect(summary.node?.memory?.workingSetBytes).toBeGreaterThan(0);
    } finally {
      await node.cleanup();
    }
  });
});

// GET /stats/summary and the /metrics/{resource,cadvisor,probes} handlers, and who may read them:
// the same rule as GET /metrics and /pods (auth.ts: a read; anonymous only while --anonymous-auth).
import { describe, expect, it } from 'vitest';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { checkAccess, parseTokenFile, type ServerAuth } from '../../src/server/auth/auth.js';
import { statsRoutes, summaryHandler } from '../../src/server/routes/stats.js';
import type { RouteContext } from '../../src/server/routes/router.js';
import type { Summary } from '../../src/shared/stats.js';

const summary: Summary = {
  node: { nodeName: 'n1', startTime: '2026-01-01T00:00:00Z', cpu: { time: 't', usageNanoCores: 5 }, fs: { time: 't', usedBytes: 1 } },
  pods: [
    {
      podRef: { name: 'p', namespace: 'default', uid: 'u' },
      startTime: 't',
      containers: [{ name: 'c', startTime: 't', cpu: { time: 't', usageNanoCores: 1 }, logs: { time: 't', usedBytes: 3 } }],
      volume: [{ name: 'v', time: 't', usedBytes: 2 }],
    },
  ],
};
const host = (s: Summary | undefined, withStats = true) =>
  ({
    listPods: () => [],
    getPod: () => undefined,
    healthz: () => ({ ok: true, checks: [] }),
    ...(withStats
      ? { statsSummary: async () => s, resourceMetrics: async () => ({ contentType: 'text/plain', body: 'scrape_error 0\n' }) }
      : {}),
  }) as AgentHost;
const ctx = (h: AgentHost, query = ''): RouteContext => ({
  host: h,
  params: {},
  req: { method: 'get', path: '/stats/summary', query: new URLSearchParams(query), headers: {} },
});

describe('stats routes', () => {
  it('answers the Summary, and only cpu and memory with only_cpu_and_memory=true', async () => {
    const r = await summaryHandler(ctx(host(summary)));
    expect(r.status).toBe(200);
    expect(JSON.parse(String(r.body))).toEqual(summary);
    const slim = JSON.parse(String((await summaryHandler(ctx(host(summary), 'only_cpu_and_memory=true'))).body)) as Summary;
    expect(slim.node.fs).toBeUndefined();
    expect(slim.pods[0].volume).toBeUndefined();
    expect(slim.pods[0].containers[0]).toEqual({ name: 'c', startTime: 't', cpu: { time: 't', usageNanoCores: 1 } });
  });

  it('answers 503 before the first collection and 404 on a host without stats', async () => {
    const early = await summaryHandler(ctx(host(undefined)));
    expect(early.status).toBe(503);
    expect(JSON.parse(String(early.body))).toMatchObject({ kind: 'Status', reason: 'ServiceUnavailable' });
    expect((await summaryHandler(ctx(host(undefined, false)))).status).toBe(404);
    const cadvisor = statsRoutes().find((r) => r.path === '/metrics/cadvisor')!.methods.get!;
    expect((await cadvisor(ctx(host(summary)))).status).toBe(404);
    const resource = statsRoutes().find((r) => r.path === '/metrics/resource')!.methods.get!;
    expect(await resource(ctx(host(summary)))).toMatchObject({ status: 200, body: 'scrape_error 0\n' });
  });

  it.each(['/stats/summary', '/metrics/resource', '/metrics/cadvisor', '/metrics/probes'])(
    'lets %s be read as /metrics is: anonymously only while allowed, with any valid token',
    (path) => {
      const on: ServerAuth = { tokens: parseTokenFile('t1,viewer,1,kubelet-ts:read-only\n', 'f'), anonymous: true };
      const off: ServerAuth = { ...on, anonymous: false };
      for (const auth of [on, off]) expect(checkAccess(auth, 'get', path, '').ok).toBe(checkAccess(auth, 'get', '/metrics', '').ok);
      expect(checkAccess(on, 'get', path, '').ok).toBe(true);
      expect(checkAccess(off, 'get', path, '').ok).toBe(false);
      expect(checkAccess(off, 'get', path, 'Bearer t1').ok).toBe(true);
      expect(checkAccess(off, 'get', path, 'Bearer wrong').ok).toBe(false);
    },
  );
});

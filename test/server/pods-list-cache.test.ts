// Tests of the cached unfiltered GET /pods body (src/server/routes/pods.ts): never stale, same bytes.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { newAgent, type Agent } from '../../src/main/agent.js';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { listPodsHandler } from '../../src/server/routes/pods.js';
import type { RouteContext } from '../../src/server/routes/router.js';
import type { Pod, PodList } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { adminAuthorization } from '../support/agent.js';

function pod(name: string, image = 'kubelet-ts/busybox:1.35'): Pod {
  return {
    metadata: { namespace: 'default', name, uid: `uid-${name}`, labels: { app: name } },
    spec: { containers: [{ name: 'main', image }] },
    status: { phase: 'Pending' },
  };
}

/**
 * A host as the agent is one: `records` hold the pod and its status; listPods spreads them into
 * fresh objects on every call (so item identity never matches, only field identity can), and
 * `rv` is bumped by the test wherever the agent's status manager would bump it.
 */
class VersionedHost implements AgentHost {
  records: { pod: Pod; status: Pod['status'] }[] = [pod('a'), pod('b'), pod('c')].map(({ status, ...p }) => ({ pod: p, status }));
  rv = 7;
  listPods(): Pod[] {
    return this.records.map((r) => ({ ...r.pod, status: r.status }));
  }
  getPod(): Pod | undefined {
    return undefined;
  }
  healthz() {
    return { ok: true, checks: [] };
  }
  resourceVersion(): number {
    return this.rv;
  }
}

function get(host: AgentHost, query = ''): { status: number; body: string } {
  const ctx: RouteContext = { host, params: {}, req: { method: 'get', path: '/pods', query: new URLSearchParams(query), headers: {} } };
  const reply = listPodsHandler(ctx) as { status: number; body: string | Buffer };
  return { status: reply.status, body: String(reply.body) };
}

const list = (body: string) => JSON.parse(body) as PodList;

describe('GET /pods body cache', () => {
  let stringify: MockInstance<typeof JSON.stringify>;
  beforeAll(() => {
    stringify = vi.spyOn(JSON, 'stringify');
  });
  afterAll(() => stringify.mockRestore());
  afterEach(() => stringify.mockClear());
  /** How many PodLists were serialized since the last clear (other JSON.stringify calls do not count). */
  const serializedLists = () =>
    stringify.mock.calls.filter((c: unknown[]) => (c[0] as { kind?: string } | null)?.kind === 'PodList').length;

  it('reports the host resourceVersion as the PodList metadata.resourceVersion', () => {
    const host = new VersionedHost();
    expect(list(get(host).body).metadata).toEqual({ resourceVersion: '7' });
    expect(list(get(host, 'labelSelector=app%3Da').body).metadata).toEqual({ resourceVersion: '7' });
  });

  it('serves identical bytes from the cache while nothing changed, serializing the list once', () => {
    const host = new VersionedHost();
    const first = get(host).body;
    const second = get(host).body;
    const third = get(host).body;
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(serializedLists()).toBe(1);
    // The cached body is exactly what an uncached serialization gives.
    expect(first).toBe(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '7' }, items: host.listPods() }));
  });

  it('shows a spec update that came without a status change (same resourceVersion)', () => {
    const host = new VersionedHost();
    expect(list(get(host).body).items[1].spec?.containers[0].image).toBe('kubelet-ts/busybox:1.35');
    const r = host.records[1];
    r.pod = { ...r.pod, spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.36' }] } };
    expect(list(get(host).body).items[1].spec?.containers[0].image).toBe('kubelet-ts/busybox:1.36');
  });

  it('shows a deletionTimestamp set on the metadata without a status change', () => {
    const host = new VersionedHost();
    get(host);
    const r = host.records[0];
    r.pod = { ...r.pod, metadata: { ...r.pod.metadata, deletionTimestamp: '2026-11-30T00:00:00Z', deletionGracePeriodSeconds: 30 } };
    expect(list(get(host).body).items[0].metadata?.deletionTimestamp).toBe('2026-11-30T00:00:00Z');
  });

  it('shows a status change, which bumps the resourceVersion', () => {
    const host = new VersionedHost();
    get(host);
    host.records[2].status = { phase: 'Running' };
    host.rv++;
    const body = list(get(host).body);
    expect(body.items[2].status?.phase).toBe('Running');
    expect(body.metadata?.resourceVersion).toBe('8');
  });

  it('shows pods added and removed, even if the version stayed (a pod that has no status yet)', () => {
    const host = new VersionedHost();
    get(host);
    host.records.push({ pod: pod('d'), status: undefined });
    expect(list(get(host).body).items.map((p) => p.metadata?.name)).toEqual(['a', 'b', 'c', 'd']);
    host.records.splice(0, 1);
    expect(list(get(host).body).items.map((p) => p.metadata?.name)).toEqual(['b', 'c', 'd']);
    // Same count, another pod in a slot.
    host.records[0] = { pod: pod('e'), status: undefined };
    expect(list(get(host).body).items.map((p) => p.metadata?.name)).toEqual(['e', 'c', 'd']);
  });

  it('computes filtered lists every time and keeps them out of the unfiltered cache', () => {
    const host = new VersionedHost();
    const all = get(host).body;
    expect(list(get(host, 'labelSelector=app%3Db').body).items.map((p) => p.metadata?.name)).toEqual(['b']);
    expect(list(get(host, 'namespace=other').body).items).toEqual([]);
    expect(get(host).body).toBe(all);
    expect(serializedLists()).toBe(3);
  });

  it('keeps one cache per host', () => {
    const one = new VersionedHost();
    const two = new VersionedHost();
    two.records = two.records.slice(0, 1);
    expect(list(get(one).body).items).toHaveLength(3);
    expect(list(get(two).body).items).toHaveLength(1);
    expect(list(get(one).body).items).toHaveLength(3);
  });

  it('does not cache for a host without resourceVersion()', () => {
    const host = new VersionedHost();
    const bare: AgentHost = { listPods: () => host.listPods(), getPod: () => undefined, healthz: () => host.healthz() };
    const body = list(get(bare).body);
    expect(body.metadata).toEqual({});
    host.records[0].status = { phase: 'Running' }; // no version to bump: must still show
    expect(list(get(bare).body).items[0].status?.phase).toBe('Running');
  });
});

describe('GET /pods on an agent (fake runtime)', () => {
  let agent: Agent;
  let base: string;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-podlist-'));
    const options = resolveAgentOptions({
      nodeName: 'podlist-cache',
      rootDir: dir,
      port: 0,
      runtime: 'fake',
      workers: 1,
      logLevel: 'error',
    });
    agent = newAgent(options, { logger: pino({ level: 'silent' }) });
    await agent.start();
    base = `http://127.0.0.1:${agent.port}`;
  });
  afterAll(async () => {
    await agent?.stop();
    await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(dir, { recursive: true, force: true });
  });

  const getList = async () => {
    const res = await fetch(`${base}/pods`, { headers: adminAuthorization(dir) });
    return { text: await res.text(), status: res.status };
  };
  const manifest = (labels: Record<string, string>) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default', labels },
      spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    });

  it('shows a PUT and a DELETE in the very next GET, and repeats identical bytes in between', async () => {
    expect(
      (
        await fetch(`${base}/pods`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...adminAuthorization(dir) },
          body: manifest({ v: 'one' }),
        })
      ).status,
    ).toBe(201);
    await waitFor(
      async () => {
        const l = JSON.parse((await getList()).text) as PodList;
        return l.items[0]?.status?.phase === 'Running' ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 50, description: 'pod web Running' },
    );
    // Quiet now: repeated GETs at the same resourceVersion give the same bytes.
    const a = await getList();
    const b = await getList();
    if (JSON.parse(a.text).metadata.resourceVersion === JSON.parse(b.text).metadata.resourceVersion) expect(b.text).toBe(a.text);
    expect(Number(JSON.parse(b.text).metadata.resourceVersion)).toBeGreaterThan(0);

    expect(
      (
        await fetch(`${base}/pods/default/web`, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json', ...adminAuthorization(dir) },
          body: manifest({ v: 'two' }),
        })
      ).status,
    ).toBe(200);
    const afterPut = JSON.parse((await getList()).text) as PodList;
    expect(afterPut.items[0].metadata?.labels).toEqual({ v: 'two' });

    expect(
      (await fetch(`${base}/pods/default/web?gracePeriodSeconds=30`, { method: 'DELETE', headers: adminAuthorization(dir) })).status,
    ).toBe(200);
    const afterDelete = JSON.parse((await getList()).text) as PodList;
    expect(afterDelete.items.length === 0 || afterDelete.items[0].metadata?.deletionTimestamp !== undefined).toBe(true);
  });
});

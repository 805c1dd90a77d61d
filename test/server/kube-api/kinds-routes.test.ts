// In-process tests (issue 39 items 5 and 10) of the kube-API's lists and watches of the kinds
// other than pods, over a real uWS server and a fake host: events, namespaces and the node are
// watched (ADDED, then changes, BOOKMARKs, 410 from a too-old version, Tables); `watch=True`
// (the Python client) is a watch; lists carry resourceVersions, come in key order and page with
// limit/continue, pods too, an expired continue token answering 410.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentHost, HealthReport, ResourceChangeKind } from '../../../src/server/host/agent-host.js';
import { createServer, type AgentServer } from '../../../src/server/server.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';
import type { Event, Node, Pod } from '../../../src/shared/api.js';
import { newLogger } from '../../../src/shared/logging.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';

class FakeHost implements AgentHost {
  clock?: FakeClock;
  pods: Pod[] = [];
  events: Event[] = [];
  unschedulable = false;
  listeners = new Set<(r: ResourceChangeKind) => void>();
  podWatchers = new Set<(e: WatchEvent) => void>();
  podRv = 10;
  listPods() {
    return this.pods;
  }
  getPod(ns: string, name: string) {
    return this.pods.find((p) => p.metadata?.namespace === ns && p.metadata?.name === name);
  }
  resourceVersion() {
    return this.podRv;
  }
  healthz(): HealthReport {
    return { ok: true, checks: [] };
  }
  /** A pod history that holds versions from 5 on. */
  watch(from: number | undefined, onEvent: (e: WatchEvent) => void) {
    if (from !== undefined && from > 0 && from < 5) {
      onEvent({
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old' },
        resourceVersion: 0,
        uid: '',
      });
      return () => {};
    }
    onEvent({
      type: 'BOOKMARK',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: String(this.podRv) } },
      resourceVersion: this.podRv,
      uid: '',
    });
    this.podWatchers.add(onEvent);
    return () => this.podWatchers.delete(onEvent);
  }
  eventLists = 0;
  listEvents() {
    this.eventLists++;
    return this.events;
  }
  record(name: string, count = 1) {
    this.events = [
      ...this.events.filter((e) => e.metadata?.name !== name),
      {
        metadata: { name, namespace: 'default' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'Started',
        type: 'Normal',
        message: name,
        count,
      },
    ];
    for (const fn of this.listeners) fn('events');
  }
  onResourceChange(fn: (r: ResourceChangeKind) => void) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  async getNode(): Promise<Node> {
    return {
      metadata: { name: 'n1' },
      spec: this.unschedulable ? { unschedulable: true } : {},
      status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: new Date().toISOString() }] },
    };
  }
  async setNodeUnschedulable(v: boolean) {
    this.unschedulable = v;
    return this.getNode();
  }
}

const pod = (namespace: string, name: string): Pod => ({
  metadata: { namespace, name, uid: `u-${namespace}-${name}` },
  spec: { containers: [{ name: 'c', image: 'x' }] },
  status: { phase: 'Running' },
});

let host: FakeHost;
let server: AgentServer;
let base: string;

beforeAll(async () => {
  host = new FakeHost();
  host.pods = [pod('b', 'p2'), pod('a', 'p9'), pod('b', 'p1'), pod('a', 'p10'), pod('default', 'z')];
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.close());

const json = async (path: string, init?: RequestInit) => {
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

/** watchLines: a watch's lines as they come; `next(n)` resolves once n events have arrived. */
async function openWatch(path: string, init?: RequestInit) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { ...init, signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  return {
    status: res.status,
    async next(n: number) {
      while (text.split('\n').filter((l) => l !== '').length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { type: string; object: any });
    },
    /** until: reads until an event `pred` accepts has come, and resolves with it. */
    async until(pred: (e: { type: string; object: any }) => boolean) {
      for (;;) {
        const found = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as { type: string; object: any })
          .find(pred);
        if (found) return found;
        const { value, done } = await reader.read();
        if (done) throw new Error(`the watch ended before the event; it sent ${text}`);
        text += new TextDecoder().decode(value);
      }
    },
    close: () => controller.abort(),
  };
}

describe('watch of events, namespaces and the node (item 5)', () => {
  it('watches events with watch=True: ADDED, BOOKMARK, then a new event and a recount; resumes from a version; 410 from a too-old one', async () => {
    host.record('e1');
    const list = await json('/api/v1/namespaces/default/events');
    expect(list.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(list.body.items[0].metadata.resourceVersion).toMatch(/^\d+$/);
    const w = await openWatch('/api/v1/namespaces/default/events?watch=True&allowWatchBookmarks=true');
    try {
      expect(w.status).toBe(200);
      expect((await w.next(2)).map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
      host.record('e2');
      host.record('e1', 2);
      const events = await w.next(4);
      expect(events.slice(2).map((e) => [e.type, e.object.metadata.name, e.object.count])).toEqual([
        ['ADDED', 'e2', 1],
        ['MODIFIED', 'e1', 2],
      ]);
      const resumed = await openWatch(`/api/v1/events?watch=1&resourceVersion=${list.body.metadata.resourceVersion}`);
      expect((await resumed.next(2)).map((e) => [e.type, e.object.metadata?.name])).toEqual([
        ['ADDED', 'e2'],
        ['MODIFIED', 'e1'],
      ]);
      resumed.close();
    } finally {
      w.close();
    }
    const gone = await fetch(`${base}/api/v1/events?watch=true&resourceVersion=1`);
    expect(gone.status).toBe(200);
    expect(JSON.parse((await gone.text()).trim())).toMatchObject({
      type: 'ERROR',
      object: { kind: 'Status', code: 410, reason: 'Expired' },
    });
  });

  it('watches namespaces as pods come into a new one, and the node as it is cordoned, as Tables when asked', async () => {
    const ns = await openWatch('/api/v1/namespaces?watch=true', { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    const node = await openWatch('/api/v1/nodes?watch=true');
    try {
      const initial = await ns.next(4);
      expect(initial.every((e) => e.type === 'ADDED' && e.object.kind === 'Table')).toBe(true);
      host.pods = [...host.pods, pod('brand-new', 'p')];
      const added = await ns.until((e) => e.object.rows?.[0]?.cells?.[0] === 'brand-new');
      expect(added).toMatchObject({
        type: 'ADDED',
        object: { kind: 'Table', rows: [{ cells: ['brand-new', 'Active', expect.any(String)] }] },
      });
      expect((await node.next(1))[0]).toMatchObject({ type: 'ADDED', object: { kind: 'Node', metadata: { name: 'n1' } } });
      const patched = await fetch(`${base}/api/v1/nodes/n1`, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/strategic-merge-patch+json' },
        body: '{"spec":{"unschedulable":true}}',
      });
      expect(patched.status).toBe(200);
      expect(await node.until((e) => e.type === 'MODIFIED')).toMatchObject({ type: 'MODIFIED', object: { spec: { unschedulable: true } } });
    } finally {
      host.pods = host.pods.filter((p) => p.metadata?.namespace !== 'brand-new');
      ns.close();
      node.close();
    }
  });

  it('reads watch=false and watch=0 as a list', async () => {
    for (const v of ['false', 'False', '0']) expect((await json(`/api/v1/namespaces?watch=${v}`)).body.kind).toBe('NamespaceList');
  });
});

describe('list semantics (item 10)', () => {
  it('lists pods by namespace, then name, in pages with limit and continue and remainingItemCount', async () => {
    const first = await json('/api/v1/pods?limit=2');
    expect(first.body.items.map((p: Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual(['a/p10', 'a/p9']);
    expect(first.body.metadata).toMatchObject({ resourceVersion: '10', remainingItemCount: 3, continue: expect.any(String) });
    const second = await json(`/api/v1/pods?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`);
    expect(second.body.items.map((p: Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual(['b/p1', 'b/p2']);
    const table = await json(`/api/v1/pods?limit=2&continue=${encodeURIComponent(second.body.metadata.continue)}`, {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    });
    expect(table.body.rows.map((r: { cells: unknown[] }) => r.cells[0])).toEqual(['z']);
    expect(table.body.metadata.continue).toBeUndefined();
  });

  it('keeps the order as pods come and go (the remembered order of the last list is not reused for other pods)', async () => {
    const names = async () => (await json('/api/v1/pods')).body.items.map((p: Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`);
    const before = await names();
    expect(before).toEqual([...before].sort());
    const saved = host.pods;
    try {
      host.pods = [...saved.filter((p) => p.metadata?.name !== 'p9'), pod('a', 'p0')];
      expect(await names()).toEqual(['a/p0', 'a/p10', 'b/p1', 'b/p2', 'default/z']);
      host.pods = saved.slice(1);
      expect(await names()).toEqual(['a/p10', 'a/p9', 'b/p1', 'default/z']);
    } finally {
      host.pods = saved;
    }
  });

  it('answers 410 Expired to a continue token whose resourceVersion the history no longer holds, 400 to one not of this server', async () => {
    const stale = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 3, start: 'b/p1\u0000' })).toString('base64url');
    const gone = await json(`/api/v1/pods?limit=2&continue=${stale}`);
    expect(gone).toMatchObject({
      status: 410,
      body: { kind: 'Status', reason: 'Expired', message: expect.stringContaining('The provided continue parameter is too old') },
    });
    expect((await json('/api/v1/pods?limit=2&continue=nonsense')).status).toBe(400);
    const staleNs = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 3, start: 'b\u0000' })).toString('base64url');
    expect((await json(`/api/v1/namespaces?limit=1&continue=${staleNs}`)).status).toBe(410);
  });

  it('pages the other kinds too, in name order', async () => {
    const first = await json('/api/v1/namespaces?limit=3');
    const names = [...first.body.items.map((n: { metadata: { name: string } }) => n.metadata.name)];
    let token = first.body.metadata.continue as string | undefined;
    while (token) {
      const page = await json(`/api/v1/namespaces?limit=3&continue=${encodeURIComponent(token)}`);
      names.push(...page.body.items.map((n: { metadata: { name: string } }) => n.metadata.name));
      token = page.body.metadata.continue;
    }
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['a', 'b', 'default', 'kube-system']));
  });
});

describe("re-lists on a reported change (on the host's clock)", () => {
  const clocked = new FakeHost();
  const clock = (clocked.clock = new FakeClock());
  let clockedServer: AgentServer | undefined;
  let saved = '';
  beforeAll(async () => {
    clockedServer = await createServer(clocked, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
    saved = base;
    base = `http://127.0.0.1:${clockedServer.port}`;
  });
  afterAll(() => {
    base = saved;
    clockedServer?.close();
  });

  it('re-lists a kind on a reported change only while someone watches it, 50 ms after the change (a list re-lists before it answers)', async () => {
    expect((await json('/api/v1/namespaces/default/events')).status).toBe(200);
    const before = clocked.eventLists;
    for (let i = 0; i < 5; i++) clocked.record(`quiet-${i}`);
    // Past the feed's 50 ms grouping of reported changes: nobody watches events, so nothing re-listed them.
    clock.step(300);
    await flush();
    expect(clocked.eventLists).toBe(before);
    const list = await json('/api/v1/namespaces/default/events');
    expect(list.body.items.map((e: Event) => e.metadata?.name)).toEqual(expect.arrayContaining(['quiet-0', 'quiet-4']));

    const w = await openWatch('/api/v1/namespaces/default/events?watch=1');
    try {
      const watched = clocked.eventLists;
      clocked.record('watched-1');
      clock.step(49);
      await flush();
      expect(clocked.eventLists).toBe(watched);
      clock.step(1);
      for (let i = 0; i < 5; i++) await flush();
      expect(clocked.eventLists).toBeGreaterThan(watched);
    } finally {
      w.close();
    }
  });
});

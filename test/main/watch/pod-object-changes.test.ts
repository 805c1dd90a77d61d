// Issue #39 items 3 and 4, in process over the fake runtime and the agent's own Kubernetes API:
// - every write of the pod object is on the pods' watch (AgentHost.watch): a graceful DELETE shows
//   MODIFIED with deletionTimestamp and deletionGracePeriodSeconds, then MODIFIED with the stopped
//   containers' terminated states, then DELETED carrying both;
// - a write's reply carries the resourceVersion of that write, and a GET right after it shows it:
//   a PUT built from a PUT's reply, a PATCH then GET, a label PATCH twice, a stale version's 409.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { unmountUnder } from '../../../src/workers/volumes/mount.js';
import { newAgent, type Agent } from '../../../src/main/agent.js';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import type { Pod } from '../../../src/shared/api.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';

let agent: Agent | undefined;
let dir: string | undefined;
let token = '';
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  if (dir) await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function startAgent(): Promise<Agent> {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-object-changes-'));
  const options = resolveAgentOptions({
    nodeName: 'object-changes',
    rootDir: join(dir, 'root'),
    runtime: 'fake',
    port: 0,
    logLevel: 'silent',
    workers: 1,
    relistPeriodMs: 300,
    syncFrequencyMs: 600_000,
    podInfraContainerImage: 'pause:1',
  });
  agent = newAgent(options, { logger: pino({ level: 'silent' }) });
  await agent.start();
  token = (await readFile(join(options.rootDir, 'admin.token'), 'utf8')).trim();
  return agent;
}

const podPath = (name: string) => `/api/v1/namespaces/default/pods/${name}`;

async function api(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; json: Pod & { code?: number } }> {
  const res = await fetch(`http://127.0.0.1:${agent!.port}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Pod & { code?: number } };
}

function sleeper(name: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: name } },
    spec: { terminationGracePeriodSeconds: 5, containers: [{ name: 'main', image: 'busybox:1' }] },
  };
}

/** The pod once its container runs and it is Ready (its status then stays as it is while nothing happens). */
const runningPod = (a: Agent, name: string) => {
  const p = a.host.getPod('default', name);
  const ready = p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return p?.status?.containerStatuses?.[0]?.state?.running && ready ? p : undefined;
};

describe("the pods' watch shows every write of the pod object (issue #39 item 3)", () => {
  it('a graceful delete: MODIFIED with both deletion marks, MODIFIED with terminated states, DELETED carrying them, in order', async () => {
    const a = await startAgent();
    await a.host.submitPods!([sleeper('graceful')]);
    await expect.poll(() => runningPod(a, 'graceful'), { timeout: 15_000 }).toBeTruthy();
    const uid = a.host.getPod('default', 'graceful')!.metadata!.uid!;
    const events: WatchEvent[] = [];
    const cancel = a.host.watch!(undefined, (e) => {
      if (e.uid === uid) events.push(e);
    });
    try {
      const deleted = await a.host.deletePod!('default', 'graceful', 3);
      expect(deleted.metadata?.deletionTimestamp).toBeTruthy();
      // The DELETE's answer came after the SyncLoop REMOVE: its MODIFIED is on the watch already.
      const marked = events.filter((e) => e.type === 'MODIFIED' && (e.object as Pod).metadata?.deletionTimestamp);
      expect(marked.length).toBeGreaterThan(0);
      expect((marked[0].object as Pod).metadata).toMatchObject({
        deletionTimestamp: deleted.metadata!.deletionTimestamp,
        deletionGracePeriodSeconds: 3,
      });
      await expect.poll(() => events.some((e) => e.type === 'DELETED'), { timeout: 15_000 }).toBe(true);
    } finally {
      cancel();
    }
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('ADDED');
    expect(types.at(-1)).toBe('DELETED');
    expect(types.filter((t) => t === 'DELETED')).toHaveLength(1);
    const pods = events.map((e) => e.object as Pod);
    const firstMarked = pods.findIndex((p) => p.metadata?.deletionTimestamp);
    const terminatedAt = pods.findIndex((p) => p.status?.containerStatuses?.[0]?.state?.terminated);
    expect(firstMarked).toBeGreaterThan(0);
    expect(terminatedAt).toBeGreaterThan(firstMarked);
    expect(terminatedAt).toBeLessThan(pods.length - 1); // a MODIFIED before DELETED
    expect(types[terminatedAt]).toBe('MODIFIED');
    const last = pods.at(-1)!;
    expect(last.metadata).toMatchObject({
      deletionTimestamp: pods[firstMarked].metadata!.deletionTimestamp,
      deletionGracePeriodSeconds: 3,
    });
    expect(last.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({ exitCode: 0 });
    // Stopped for good: the phase by the exit codes, as generateAPIPodStatus(podIsTerminal) in SyncTerminatingPod.
    expect(last.status?.phase).toBe('Succeeded');
    // resourceVersions strictly increase, each event under its own.
    const rvs = events.map((e) => e.resourceVersion);
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    expect(new Set(rvs).size).toBe(rvs.length);
  }, 30_000);
});

describe("the pods' watch when a pod that never ran is deleted", () => {
  it("an admission refusal's Failed status and reason stay on the watch through DELETED", async () => {
    const a = await startAgent();
    const big = sleeper('too-big');
    big.spec!.containers[0].resources = { requests: { cpu: '100000' } };
    await a.host.submitPods!([big]);
    const refused = a.host.getPod('default', 'too-big')!;
    expect(refused.status).toMatchObject({ phase: 'Failed', reason: 'OutOfcpu' });
    const events: WatchEvent[] = [];
    const cancel = a.host.watch!(undefined, (e) => {
      if (e.uid === refused.metadata!.uid) events.push(e);
    });
    try {
      await a.host.deletePod!('default', 'too-big', 0);
      await expect.poll(() => events.some((e) => e.type === 'DELETED'), { timeout: 15_000 }).toBe(true);
    } finally {
      cancel();
    }
    for (const e of events) expect((e.object as Pod).status, e.type).toMatchObject({ phase: 'Failed', reason: 'OutOfcpu' });
  }, 30_000);
});

describe("a write's reply carries that write's resourceVersion (issue #39 item 4)", () => {
  it("PUT built from a PUT's reply succeeds; PATCH then GET agree; labels twice; a stale version gets 409", async () => {
    const a = await startAgent();
    // Created through the API, so that its stored spec is the defaulted one a PUT of it sends back.
    expect((await api('POST', '/api/v1/namespaces/default/pods', sleeper('rmw'))).status).toBe(201);
    await expect.poll(() => runningPod(a, 'rmw'), { timeout: 15_000 }).toBeTruthy();
    const got = await api('GET', podPath('rmw'));
    const v0 = got.json.metadata!.resourceVersion!;

    // PUT from the GET: a new version, which the reply carries and a GET shows at once.
    const put1 = await api('PUT', podPath('rmw'), { ...got.json, metadata: { ...got.json.metadata, labels: { app: 'rmw', step: '1' } } });
    expect(put1.status).toBe(200);
    expect(Number(put1.json.metadata!.resourceVersion)).toBeGreaterThan(Number(v0));
    expect(put1.json.metadata!.labels).toEqual({ app: 'rmw', step: '1' });
    const after1 = await api('GET', podPath('rmw'));
    expect(after1.json.metadata!.resourceVersion).toBe(put1.json.metadata!.resourceVersion);

    // A second PUT built from the first one's reply.
    const put2 = await api('PUT', podPath('rmw'), { ...put1.json, metadata: { ...put1.json.metadata, labels: { app: 'rmw', step: '2' } } });
    expect(put2.status).toBe(200);
    expect(Number(put2.json.metadata!.resourceVersion)).toBeGreaterThan(Number(put1.json.metadata!.resourceVersion));

    // Each patch type, then a GET: same version, same content.
    const patches: [string, unknown][] = [
      ['application/merge-patch+json', { metadata: { labels: { step: '3' } } }],
      ['application/strategic-merge-patch+json', { metadata: { annotations: { note: 'four' } } }],
      ['application/json-patch+json', [{ op: 'add', path: '/metadata/labels/step', value: '5' }]],
    ];
    let previous = Number(put2.json.metadata!.resourceVersion);
    for (const [type, body] of patches) {
      const patched = await api('PATCH', podPath('rmw'), body, type);
      expect(patched.status, type).toBe(200);
      const rv = Number(patched.json.metadata!.resourceVersion);
      expect(rv, type).toBeGreaterThan(previous);
      const read = await api('GET', podPath('rmw'));
      expect(read.json.metadata!.resourceVersion, type).toBe(String(rv));
      expect(read.json.metadata!.labels, type).toEqual(patched.json.metadata!.labels);
      expect(read.json.metadata!.annotations, type).toEqual(patched.json.metadata!.annotations);
      previous = rv;
    }

    // A PUT with the version before the last write is refused.
    const stale = await api('PUT', podPath('rmw'), {
      ...put2.json,
      metadata: { ...put2.json.metadata, labels: { app: 'rmw', step: 'stale' } },
    });
    expect(stale.status).toBe(409);

    // The DELETE's reply carries the version of the delete; a GET right after shows it.
    const del = await api('DELETE', podPath('rmw'));
    expect(del.status).toBe(200);
    expect(del.json.metadata!.deletionTimestamp).toBeTruthy();
    expect(Number(del.json.metadata!.resourceVersion)).toBeGreaterThan(previous);
    const terminating = await api('GET', podPath('rmw'));
    if (terminating.status === 200)
      expect(Number(terminating.json.metadata!.resourceVersion)).toBeGreaterThanOrEqual(Number(del.json.metadata!.resourceVersion));
  }, 30_000);
});

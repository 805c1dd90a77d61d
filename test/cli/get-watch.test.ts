// Tests of `get pods -w` (src/cli/get.ts, pod-watch.ts) in-process against a real uWS
// server whose host the test steers: relist on 410, resume with backoff after a lost connection.
import { createServer as netServer, connect, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runGetPods, type GetPodsOptions } from '../../src/cli/get.js';
import { newWatchBackoff, watchUrl } from '../../src/cli/pod-watch.js';
import { newStatusManager } from '../../src/main/status/status-manager.js';
import { expiredStatus, newWatchCache } from '../../src/main/watch/watch-cache.js';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { createServer, type AgentServer } from '../../src/server/server.js';
import type { WatchEvent } from '../../src/server/host/watch-event.js';
import type { Pod } from '../../src/shared/api.js';
import { newLogger } from '../../src/shared/logging.js';
import { waitFor } from '../support/docker.js';

function pod(name: string, phase: string, labels: Record<string, string> = { app: 'w' }): Pod {
  return {
    metadata: { namespace: 'default', name, uid: `uid-${name}`, labels, creationTimestamp: new Date().toISOString() },
    spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    status: { phase },
  };
}

/** A host like the agent: pods with statuses in a status manager, its watch cache, and counters. */
function newSteeredHost() {
  const sm = newStatusManager();
  const cache = newWatchCache(sm, { historySize: 100 });
  const pods = new Map<string, Pod>();
  const state = { lists: 0, watchesFrom: [] as (number | undefined)[], expireNextWatch: false as boolean | (() => void) };
  const host: AgentHost = {
    listPods: () => {
      state.lists++;
      return [...pods.values()];
    },
    getPod: () => undefined,
    healthz: () => ({ ok: true, checks: [] }),
    resourceVersion: () => cache.resourceVersion(),
    watch(from: number | undefined, fn: (e: WatchEvent) => void) {
      if (from !== undefined) state.watchesFrom.push(from); // the server's own hub watches from undefined
      if (from !== undefined && state.expireNextWatch) {
        const before = state.expireNextWatch;
        state.expireNextWatch = false;
        if (typeof before === 'function') before();
        fn({ type: 'ERROR', object: expiredStatus(from, cache.resourceVersion()), resourceVersion: 0, uid: '' });
        return () => {};
      }
      return cache.watch(from, fn);
    },
  };
  const set = (p: Pod) => {
    pods.set(p.metadata!.uid!, p);
    sm.setPodStatus(p, p.status!);
  };
  const remove = (uid: string) => {
    pods.delete(uid);
    sm.deletePodStatus(uid);
  };
  return { host, state, set, remove, cache };
}

const opts: GetPodsOptions = { namespace: 'default', selector: '', output: 'table', watch: true, noHeaders: false };

/** Runs runGetPods -w in-process and collects what it prints. */
function startWatch(server: string, backoffMs = 20) {
  const ac = new AbortController();
  const out = { stdout: '', stderr: '' };
  const io = { stdout: (t: string) => (out.stdout += t), stderr: (t: string) => (out.stderr += t), exit: () => {} };
  const done = runGetPods({ server, token: '', rootDir: '/nonexistent' }, opts, io, ac.signal, {
    backoff: { initialMs: backoffMs, maxMs: backoffMs * 4 },
  });
  return { out, done, stop: () => ac.abort() };
}

const rows = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => l.split(/\s+/).slice(0, 3).join(' '));

/** A TCP relay on 127.0.0.1 to `target`: `cut` closes it and every relayed connection, `open` listens again. */
function newRelay(target: number) {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  const relay = {
    open(port: number): Promise<number> {
      server = netServer((down) => {
        const up = connect(target, '127.0.0.1');
        for (const s of [down, up]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        down.pipe(up).pipe(down);
      });
      return new Promise((resolve) => server!.listen(port, '127.0.0.1', () => resolve((server!.address() as { port: number }).port)));
    },
    cut(): Promise<void> {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
    },
  };
  stops.push(() => void relay.cut());
  return relay;
}

const servers: AgentServer[] = [];
const stops: (() => void)[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s();
  for (const s of servers.splice(0)) s.close();
});

async function serve(host: AgentHost, port = 0): Promise<AgentServer> {
  const s = await createServer(host, { address: '127.0.0.1', port, logger: newLogger('silent') });
  servers.push(s);
  return s;
}

describe('get pods -w', () => {
  it('lists once, then prints a row per watch event from the list resourceVersion (Terminating for DELETED)', async () => {
    const h = newSteeredHost();
    h.set(pod('a', 'Running'));
    const server = await serve(h.host);
    const w = startWatch(`http://127.0.0.1:${server.port}`);
    stops.push(w.stop);
    await waitFor(() => h.state.watchesFrom.length === 1, { description: 'the watch' });
    expect(h.state.watchesFrom).toEqual([h.cache.resourceVersion()]);
    h.set(pod('b', 'Pending'));
    h.set(pod('b', 'Running'));
    h.remove('uid-a');
    await waitFor(() => rows(w.out.stdout).length === 4, { description: 'four rows' });
    w.stop();
    expect(await w.done).toBe(0);
    expect(w.out.stdout.split('\n')[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    expect(rows(w.out.stdout)).toEqual(['a 0/1 Running', 'b 0/1 Pending', 'b 0/1 Running', 'a 0/1 Terminating']);
    expect(h.state.lists).toBe(1);
    expect(w.out.stderr).toBe('');
  });

  it('relists on a 410 and prints only the rows that changed, then watches from the new list', async () => {
    const h = newSteeredHost();
    h.set(pod('a', 'Running'));
    h.set(pod('c', 'Running'));
    // The first watch is told its resourceVersion expired; meanwhile a changed, c went, d came.
    h.state.expireNextWatch = () => {
      h.set(pod('a', 'Failed'));
      h.remove('uid-c');
      h.set(pod('d', 'Running'));
    };
    const server = await serve(h.host);
    const w = startWatch(`http://127.0.0.1:${server.port}`);
    stops.push(w.stop);
    await waitFor(() => h.state.watchesFrom.length === 2, { description: 'the watch after the relist' });
    expect(h.state.lists).toBe(2);
    expect(h.state.watchesFrom[1]).toBe(h.cache.resourceVersion());
    h.set(pod('e', 'Pending'));
    await waitFor(() => /\ne\s/.test(w.out.stdout), { description: 'row of e' });
    expect(rows(w.out.stdout)).toEqual([
      'a 0/1 Running',
      'c 0/1 Running',
      'a 0/1 Failed',
      'd 0/1 Running',
      'c 0/1 Terminating',
      'e 0/1 Pending',
    ]);
    expect(w.out.stderr).toBe('');
  });

  it('says so on stderr when the connection is lost, retries with backoff, and resumes from the last resourceVersion', async () => {
    const h = newSteeredHost();
    h.set(pod('a', 'Running'));
    const agent = await serve(h.host);
    // The client reaches the agent through a TCP relay the test cuts and restores (same port).
    const relay = newRelay(agent.port);
    const port = await relay.open(0);
    const w = startWatch(`http://127.0.0.1:${port}`);
    stops.push(w.stop);
    await waitFor(() => h.state.watchesFrom.length === 1, { description: 'the watch' });
    h.set(pod('b', 'Running'));
    await waitFor(() => /\nb\s/.test(w.out.stdout), { description: 'row of b' });
    const seen = h.cache.resourceVersion();
    await relay.cut();
    // While the agent is unreachable: one change the resumed watch must replay.
    h.set(pod('a', 'Failed'));
    await waitFor(() => (w.out.stderr.match(/watch of pods lost/g) ?? []).length >= 2, { description: 'lost, then a failed retry' });
    expect(w.out.stderr.split('\n')[0]).toMatch(/^watch of pods lost: .+; retrying in 0s$/);
    expect(w.out.stderr).toMatch(/ECONNREFUSED/);
    await relay.open(port);
    await waitFor(() => h.state.watchesFrom.length === 2, { timeoutMs: 10_000, description: 'the resumed watch' });
    expect(h.state.watchesFrom[1]).toBe(seen);
    expect(h.state.lists).toBe(1);
    await waitFor(() => /\na\s+\S+\s+Failed/.test(w.out.stdout), { description: 'replayed row of a' });
    expect(rows(w.out.stdout)).toEqual(['a 0/1 Running', 'b 0/1 Running', 'a 0/1 Failed']);
  });

  it('ends with the server message when the watch itself is refused', async () => {
    const h = newSteeredHost();
    const { watch: _omit, ...noWatch } = h.host;
    const server = await serve(noWatch as AgentHost);
    const w = startWatch(`http://127.0.0.1:${server.port}`);
    await expect(w.done).rejects.toMatchObject({ status: 404, message: 'the server could not find the requested resource' });
  });
});

describe('watchUrl and newWatchBackoff', () => {
  it('builds the ws:// (wss://) URL with the query', () => {
    expect(watchUrl('http://127.0.0.1:10250', { namespace: 'default', selector: 'app in (a,b)', resourceVersion: '12' })).toBe(
      'ws://127.0.0.1:10250/watch/pods?resourceVersion=12&namespace=default&labelSelector=app+in+%28a%2Cb%29',
    );
    expect(watchUrl('https://node:10250', { namespace: '', selector: '', resourceVersion: '' })).toBe('wss://node:10250/watch/pods');
  });

  it('doubles the delay up to the cap and starts over after reset', () => {
    const b = newWatchBackoff({ initialMs: 1000, maxMs: 5000 });
    expect([b.next(), b.next(), b.next(), b.next()]).toEqual([1000, 2000, 4000, 5000]);
    b.reset();
    expect(b.next()).toBe(1000);
    expect(() => newWatchBackoff({ initialMs: 0 })).toThrow(/initialMs/);
  });
});

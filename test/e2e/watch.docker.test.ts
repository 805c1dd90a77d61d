// End-to-end: WS /watch/pods and GET /metrics of a whole agent running a static pod in the real dockerd.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { Pod } from '../../src/shared/api.js';
import { adminAuthorization, busyboxPod, isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { waitFor } from '../support/docker.js';

interface Frame {
  type: string;
  object: Pod;
}

function watch(node: TestNode, query = '') {
  const ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}/watch/pods${query}`, { headers: adminAuthorization(node.rootDir) });
  const frames: Frame[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  return { ws, frames };
}

const rv = (f: Frame) => Number(f.object.metadata?.resourceVersion);

describe.skipIf(!inject('dockerAvailable'))('watch and metrics of an agent in Docker', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode();
  });
  afterAll(async () => {
    await node?.cleanup();
  });

  it('streams a static pod from ADDED to Running, then DELETED to a client resuming from a resourceVersion', async () => {
    const a = watch(node);
    await waitFor(() => a.frames.some((f) => f.type === 'BOOKMARK'), { timeoutMs: 10_000, intervalMs: 50, description: 'first bookmark' });
    await node.writeManifest('watched.yaml', busyboxPod('watched', 'exec sleep 3600'));
    const name = `watched-${node.nodeName}`;
    const running = await waitFor(
      () => a.frames.find((f) => f.object.metadata?.name === name && f.type !== 'DELETED' && isRunningAndReady(f.object)),
      { timeoutMs: 90_000, intervalMs: 100, description: 'Running in the watch' },
    );
    const mine = a.frames.filter((f) => f.object.metadata?.name === name);
    expect(mine[0].type).toBe('ADDED');
    expect(mine.slice(1).every((f) => f.type === 'MODIFIED')).toBe(true);
    const versions = a.frames.slice(a.frames.findIndex((f) => f.type === 'BOOKMARK')).map(rv);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    const uid = running.object.metadata?.uid;
    const resumeFrom = rv(running);
    a.ws.close();

    // Metrics of the same run: the pod counts as running and started, its start duration was observed.
    const metrics = await (await node.api('/metrics')).text();
    const value = (series: string) => Number(/^(\S+) (\S+)$/m.exec(metrics.split('\n').find((l) => l.startsWith(`${series} `)) ?? '')?.[2]);
    expect(value('kubelet_running_pods')).toBeGreaterThanOrEqual(1);
    expect(value('kubelet_started_pods_total')).toBeGreaterThanOrEqual(1);
    expect(value('kubelet_pod_start_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value('kubelet_runtime_operations_total{operation_type="sync_pod"}')).toBeGreaterThanOrEqual(1);

    // While nobody watches, the pod goes away; a client resuming from the Running version sees it.
    await rm(join(node.manifestDir, 'watched.yaml'));
    await waitFor(async () => ((await node.pod('watched')) === undefined ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 200,
      description: 'pod removed',
    });
    const b = watch(node, `?resourceVersion=${resumeFrom}`);
    await waitFor(() => b.frames.some((f) => f.type === 'BOOKMARK'), { timeoutMs: 10_000, intervalMs: 50, description: 'resume bookmark' });
    expect(b.frames.every((f) => rv(f) > resumeFrom)).toBe(true);
    expect(b.frames.filter((f) => f.type === 'DELETED').map((f) => f.object.metadata?.uid)).toEqual([uid]);
    expect(b.frames.at(-1)?.type).toBe('BOOKMARK');
    b.ws.close();
  }, 200_000);
});

// Issue 14, item 4: the eviction manager against the real dockerd, with a low threshold configured
// (never by exhausting the machine). memory.available<X with X set below the memory available
// now as the stats collector sees it (MemTotal − working set = MemFree + Inactive(file)); a
// BestEffort pod idles, then a Guaranteed pod fills 3 GiB of a memory-backed emptyDir (within its
// requests) and pushes the available memory below X. The BestEffort pod is evicted first (it is
// over its requests of 0; the Guaranteed one is not): Failed, reason Evicted, the kubelet's
// message, its containers stopped, an `Evicted` event; the node shows MemoryPressure; a new
// BestEffort pod is refused at admission; /metrics counts the eviction. Pods are intake (api)
// pods: static pods are critical and never evicted.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import type { Event, Node, Pod } from '../../src/shared/api.js';
import { formatQuantity } from '../../src/main/eviction/thresholds.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { podContainers } from '../support/runtime.js';

const kMiB = 1024 * 1024;
/** What the Guaranteed pod holds, and how far below the available memory of now the threshold is. */
const kHoldMiB = 3072;
const kMarginMiB = 1536;

/** availableNowBytes: memory.available as the collector and the eviction manager compute it. */
function availableNowBytes(): number {
  const mi = readFileSync('/proc/meminfo', 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB`, 'm').exec(mi)![1]) * 1024;
  return kb('MemFree') + kb('Inactive(file)');
}

async function getPod(node: TestNode, name: string): Promise<Pod | undefined> {
  const res = await node.api(`/pods/default/${name}`);
  return res.status === 200 ? ((await res.json()) as Pod) : undefined;
}

async function post(node: TestNode, pod: unknown): Promise<void> {
  const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pod) });
  expect(res.status, await res.clone().text()).toBe(201);
}

const container = (name: string, command: string, extra: Record<string, unknown> = {}) => ({
  name,
  image: BUSYBOX_IMAGE,
  command: ['sh', '-c', command],
  ...extra,
});

describe.skipIf(!inject('dockerAvailable'))('eviction (issue 14)', () => {
  const start = useTestNodes();

  it('evicts the BestEffort pod first under memory pressure, shows MemoryPressure and refuses a new BestEffort pod', async () => {
    const thresholdMiB = Math.floor(availableNowBytes() / kMiB - kMarginMiB);
    const node = await start({
      evictionHard: { 'memory.available': `${thresholdMiB}Mi` },
      housekeepingIntervalMs: 1000,
      evictionMonitoringIntervalMs: 1000,
    });
    const label = { 'kubelet-ts.test/eviction': node.nodeName };
    await post(node, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'idle', namespace: 'default', labels: label },
      spec: { terminationGracePeriodSeconds: 1, containers: [container('idle', 'exec sleep 3600')] },
    });
    await waitFor(async () => (await getPod(node, 'idle'))?.status?.phase === 'Running', {
      timeoutMs: 60_000,
      intervalMs: 250,
      description: 'idle Running',
    });
    const hold = `${kHoldMiB + 512}Mi`;
    await post(node, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hold', namespace: 'default', labels: label },
      spec: {
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'ram', emptyDir: { medium: 'Memory' } }],
        containers: [
          container('hold', `dd if=/dev/zero of=/ram/fill bs=1M count=${kHoldMiB} 2>/dev/null; exec sleep 3600`, {
            resources: { requests: { memory: hold, cpu: '100m' }, limits: { memory: hold, cpu: '100m' } },
            volumeMounts: [{ name: 'ram', mountPath: '/ram' }],
          }),
        ],
      },
    });

    const evicted = await waitFor(
      async () => {
        const p = await getPod(node, 'idle');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 250, description: 'idle evicted' },
    );
    expect(evicted.status?.reason).toBe('Evicted');
    expect(evicted.status?.message).toMatch(
      /^The node was low on resource: memory\. Threshold quantity: \w+, available: \w+\. Container idle was using \w+, request is 0, has larger consumption of memory\. $/,
    );
    expect(evicted.status?.message).toContain(`Threshold quantity: ${formatQuantity(thresholdMiB * kMiB)},`);
    expect(evicted.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
      message: evicted.status?.message,
    });

    // The first eviction is the BestEffort pod's (the Guaranteed one, within its requests, may follow later).
    const events = (await (await node.api('/events')).json()) as { items: Event[] };
    const evictions = events.items.filter((e) => e.reason === 'Evicted');
    expect(evictions[0]?.involvedObject?.name).toBe('idle');
    expect(evictions[0]?.type).toBe('Warning');
    expect(evictions[0]?.message).toBe(evicted.status?.message);

    // Its containers are stopped and it is not restarted (restartPolicy Always notwithstanding).
    const uid = evicted.metadata!.uid!;
    await waitFor(async () => (await podContainers(uid)).every((c) => !c.running), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: 'idle containers stopped',
    });
    expect((await getPod(node, 'idle'))?.status?.phase).toBe('Failed');

    const n = (await (await node.api('/node')).json()) as Node;
    expect(n.status?.conditions?.find((c) => c.type === 'MemoryPressure')).toMatchObject({
      status: 'True',
      reason: 'KubeletHasInsufficientMemory',
    });

    // Admission under MemoryPressure: a BestEffort pod is refused (the kubelet's eviction admit handler).
    await post(node, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'late', namespace: 'default', labels: label },
      spec: { terminationGracePeriodSeconds: 1, containers: [container('late', 'exec sleep 3600')] },
    });
    const late = await waitFor(
      async () => {
        const p = await getPod(node, 'late');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, description: 'late refused' },
    );
    expect(late.status).toMatchObject({ reason: 'Evicted', message: 'The node had condition: [MemoryPressure]. ' });
    expect(await podContainers(late.metadata!.uid!)).toEqual([]);

    const metrics = await (await node.api('/metrics')).text();
    expect(metrics).toMatch(/^kubelet_evictions\{eviction_signal="memory\.available"\} [1-9]\d*$/m);
  }, 180_000);
});

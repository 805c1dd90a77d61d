// Issue 14, item 3: resource stats against the real dockerd — a container that burns CPU (with a cpu
// limit) and one that holds 60 MiB; after two collections at a short --housekeeping-interval,
// /stats/summary shows usageNanoCores > 0 for the first and workingSetBytes >= 50 MiB for the
// second, /metrics/resource and /metrics/cadvisor carry those series, and `top pods` prints them.
// Before the first read, the periodic collections read the node's figures alone (issue 16).
import { describe, expect, inject, it } from 'vitest';
import type { Summary } from '../../src/shared/stats.js';
import { runCli } from '../../src/main/cli.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, useTestNodes, waitForPod } from '../support/agent.js';
import { testRuntime } from '../support/runtime.js';

const kMiB = 1024 * 1024;

describe.skipIf(!inject('dockerAvailable'))('resource stats (issue 14)', () => {
  const start = useTestNodes();

  it('reports CPU of a busy container and the working set of one holding memory', async () => {
    const node = await start({ housekeepingIntervalMs: 1000 });
    await node.writeManifest(
      'stats.yaml',
      `apiVersion: v1
kind: Pod
metadata:
  name: load
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: burn
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "while :; do :; done"]
      resources: {limits: {cpu: 200m}}
    - name: hold
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "dd if=/dev/zero of=/dev/shm/fill bs=1M count=60 2>/dev/null; exec sleep 3600"]
`,
    );
    const pod = await waitForPod(node, 'load', isRunningAndReady, 60_000);
    const podName = pod.metadata!.name!;
    // Nobody has read per-pod figures yet: the periodic collections (every 1 s here) read the node
    // alone (stats-provider.ts); the first GET below waits for a collection of every pod.
    const quiet = await waitFor(() => node.agent.stats.summary(), {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: 'a periodic collection',
    });
    expect(node.agent.stats.demanded()).toBe(false);
    expect(quiet.pods).toEqual([]);
    expect(quiet.node.memory?.workingSetBytes).toBeGreaterThan(0);
    const summary = await waitFor(
      async () => {
        const res = await node.api('/stats/summary');
        if (res.status !== 200) return undefined;
        const s = (await res.json()) as Summary;
        const p = s.pods.find((x) => x.podRef.name === podName);
        const burn = p?.containers.find((c) => c.name === 'burn');
        const hold = p?.containers.find((c) => c.name === 'hold');
        return (burn?.cpu?.usageNanoCores ?? 0) > 0 && (hold?.memory?.workingSetBytes ?? 0) >= 50 * kMiB ? s : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500, description: 'stats of the load pod' },
    );
    const p = summary.pods.find((x) => x.podRef.name === podName)!;
    expect(p.podRef).toEqual({ name: podName, namespace: 'default', uid: pod.metadata!.uid });
    const burn = p.containers.find((c) => c.name === 'burn')!;
    // The 200m limit holds the burner near a fifth of a core (well under one core).
    expect(burn.cpu!.usageNanoCores!).toBeLessThan(600_000_000);
    expect(burn.cpu!.usageCoreNanoSeconds!).toBeGreaterThan(0);
    expect(p.memory!.workingSetBytes!).toBeGreaterThanOrEqual(50 * kMiB);
    expect(summary.node.nodeName).toBe(node.nodeName);
    expect(node.agent.stats.demanded()).toBe(true);
    expect(summary.node.cpu?.usageNanoCores).toBeGreaterThan(0);
    expect(summary.node.fs?.capacityBytes).toBeGreaterThan(0);
    expect(summary.node.runtime?.imageFs?.capacityBytes).toBeGreaterThan(0);

    const resource = await (await node.api('/metrics/resource')).text();
    expect(resource).toMatch(
      new RegExp(`^container_cpu_usage_seconds_total\\{container="burn",pod="${podName}",namespace="default"\\} [0-9.e+-]+$`, 'm'),
    );
    expect(resource).toMatch(
      new RegExp(`^container_memory_working_set_bytes\\{container="hold",pod="${podName}",namespace="default"\\} \\d+$`, 'm'),
    );
    expect(resource).toMatch(new RegExp(`^pod_memory_working_set_bytes\\{pod="${podName}",namespace="default"\\} \\d+$`, 'm'));
    expect(resource).toMatch(/^scrape_error 0$/m);
    const cadvisor = await (await node.api('/metrics/cadvisor')).text();
    // cAdvisor's labels: `id` the cgroup path; on Docker `image` the spec's and `name` Docker's container name,
    // on containerd (its handler) `image` the image's name there and `name` the container ID.
    const [image, name] =
      testRuntime() === 'docker'
        ? [BUSYBOX_IMAGE, `k8s_hold_${podName}_default_[^"]+`]
        : [`(docker\\.io/)?${BUSYBOX_IMAGE}`, '[0-9a-f]{64}'];
    expect(cadvisor).toMatch(
      new RegExp(
        `^container_memory_working_set_bytes\\{container="hold",id="/[^"]+",image="${image}",name="${name}",namespace="default",pod="${podName}"\\} \\d+$`,
        'm',
      ),
    );
    expect(cadvisor).toMatch(new RegExp(`^container_cpu_usage_seconds_total\\{container="burn",[^}]*pod="${podName}",cpu="total"\\}`, 'm'));

    const out = { stdout: '', stderr: '', code: -1 };
    await runCli(
      ['top', 'pods', '--server', `unix://${node.rootDir}/kubelet-ts.sock`, '--root-dir', node.rootDir],
      {},
      { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), exit: (c) => (out.code = c) },
    );
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)$/);
    const row = lines.find((l) => l.startsWith(podName))!;
    const [, cpu, mem] = row.split(/\s+/);
    expect(Number(cpu.replace(/m$/, ''))).toBeGreaterThan(0);
    expect(Number(mem.replace(/Mi$/, ''))).toBeGreaterThanOrEqual(50);
  }, 45_000);
});

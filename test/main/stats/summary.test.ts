// The Summary assembly (rates from two samples, pod figures from the pod cgroup or summed, volumes,
// ephemeral storage) and the texts of /metrics/resource, /metrics/cadvisor and /metrics/probes.
import { describe, expect, it } from 'vitest';
import type { PodSample, StatsSample } from '../../../src/shared/stats.js';
import { buildSummary, cpuRate, sumUsage } from '../../../src/main/stats/summary.js';
import { cadvisorMetricsText, resourceMetricsText } from '../../../src/main/stats/resource-metrics.js';
import { newProbeMetrics } from '../../../src/main/stats/probe-metrics.js';
import { formatCpu, formatMemory, topNodeTable, topPodsTable } from '../../../src/cli/top.js';

const MiB = 1024 * 1024;
const fs = { capacityBytes: 1000, availableBytes: 400, usedBytes: 600, inodes: 100, inodesFree: 40 };

function pod(uid: string, cpuA: number, cpuB: number, podCgroup: boolean): PodSample {
  return {
    uid,
    name: `p-${uid}`,
    namespace: 'default',
    startedAtMs: 1_000,
    cgroup: podCgroup ? { cpuUsageNs: (cpuA + cpuB) * 2, memoryUsageBytes: 90 * MiB, workingSetBytes: 80 * MiB } : null,
    containers: [
      {
        id: `${uid}-a`,
        metricsName: `k8s_a_p-${uid}_default_${uid}_0`,
        cgroupPath: `/docker/${uid}-a`,
        name: 'a',
        image: 'busybox',
        startedAtMs: 2_000,
        logsUsedBytes: 10,
        cgroup: {
          cpuUsageNs: cpuA,
          memoryUsageBytes: 30 * MiB,
          workingSetBytes: 20 * MiB,
          rssBytes: 15 * MiB,
          pageFaults: 5,
          majorPageFaults: 1,
          memoryLimitBytes: 64 * MiB,
        },
      },
      {
        id: `${uid}-b`,
        metricsName: `k8s_b_p-${uid}_default_${uid}_0`,
        cgroupPath: `/docker/${uid}-b`,
        name: 'b',
        image: 'busybox',
        startedAtMs: 2_000,
        logsUsedBytes: 5,
        cgroup: { cpuUsageNs: cpuB, memoryUsageBytes: 40 * MiB, workingSetBytes: 34 * MiB },
      },
    ],
    volumes: [{ name: 'scratch', usedBytes: 4096, inodesUsed: 2 }],
  };
}

function sample(atMs: number, cpu: number, pods: PodSample[]): StatsSample {
  return {
    observedAtMs: atMs,
    cgroupVersion: 1,
    errors: [],
    pods,
    node: {
      cpuUsageNs: cpu,
      memoryCapacityBytes: 1024 * MiB,
      memoryAvailableBytes: 512 * MiB,
      memoryUsageBytes: 600 * MiB,
      memoryWorkingSetBytes: 400 * MiB,
      memoryRssBytes: 200 * MiB,
      fs,
      imageFs: fs,
      bootTimeMs: 0,
    },
  };
}

describe('buildSummary', () => {
  const prev = sample(10_000, 1e9, [pod('u1', 1e9, 0, false), pod('u2', 0, 0, true)]);
  const cur = sample(20_000, 6e9, [pod('u1', 3e9, 1e9, false), pod('u2', 1e9, 0, true), pod('u3', 5e9, 5e9, false)]);
  const s = buildSummary('n1', cur, prev);

  it('derives usageNanoCores from the two samples for containers, pods and the node', () => {
    expect(s.node).toMatchObject({
      nodeName: 'n1',
      startTime: '1970-01-01T00:00:00Z',
      cpu: { time: '1970-01-01T00:00:20Z', usageNanoCores: 500_000_000, usageCoreNanoSeconds: 6e9 },
    });
    const u1 = s.pods[0];
    expect(u1.containers[0].cpu).toEqual({ time: '1970-01-01T00:00:20Z', usageCoreNanoSeconds: 3e9, usageNanoCores: 200_000_000 });
    expect(u1.containers[1].cpu?.usageNanoCores).toBe(100_000_000);
    expect(u1.cpu).toMatchObject({ usageCoreNanoSeconds: 4e9, usageNanoCores: 300_000_000 }); // summed: no pod cgroup
  });

  it('takes pod figures from the pod cgroup when there is one', () => {
    expect(s.pods[1].cpu).toMatchObject({ usageCoreNanoSeconds: 2e9, usageNanoCores: 200_000_000 });
    expect(s.pods[1].memory).toMatchObject({ usageBytes: 90 * MiB, workingSetBytes: 80 * MiB });
  });

  it('gives no rate to what the previous sample did not have', () => {
    expect(s.pods[2].cpu).toEqual({ time: '1970-01-01T00:00:20Z', usageCoreNanoSeconds: 10e9 });
    expect(s.pods[2].containers[0].cpu?.usageNanoCores).toBeUndefined();
    expect(buildSummary('n1', cur).node.cpu?.usageNanoCores).toBeUndefined();
  });

  it('reports memory with availableBytes only under a limit, logs, volumes and ephemeral storage', () => {
    const [a, b] = s.pods[0].containers;
    expect(a.memory).toEqual({
      time: '1970-01-01T00:00:20Z',
      usageBytes: 30 * MiB,
      workingSetBytes: 20 * MiB,
      rssBytes: 15 * MiB,
      pageFaults: 5,
      majorPageFaults: 1,
      availableBytes: 44 * MiB,
    });
    expect(b.memory?.availableBytes).toBeUndefined();
    expect(a.logs).toMatchObject({ usedBytes: 10, capacityBytes: 1000, availableBytes: 400 });
    expect(s.pods[0].volume).toEqual([
      {
        name: 'scratch',
        time: '1970-01-01T00:00:20Z',
        usedBytes: 4096,
        inodesUsed: 2,
        capacityBytes: 1000,
        availableBytes: 400,
        inodes: 100,
        inodesFree: 40,
      },
    ]);
    expect(s.pods[0]['ephemeral-storage']?.usedBytes).toBe(4096 + 15);
    expect(s.node.fs).toMatchObject({ usedBytes: 600, inodesUsed: 60 });
  });

  it('cpuRate refuses a counter that went back or no time passed', () => {
    expect(cpuRate(5, 1000, 4, 2000)).toBeUndefined();
    expect(cpuRate(5, 1000, 9, 1000)).toBeUndefined();
    expect(cpuRate(0, 0, 1e9, 1000)).toBe(1e9);
    expect(sumUsage([null, null])).toBeNull();
  });
});

describe('metric texts', () => {
  const cur = sample(20_000, 6e9, [pod('u1', 3e9, 1e9, false)]);
  const summary = buildSummary('n1', cur, sample(10_000, 1e9, []));

  it('/metrics/resource uses the kubelet names and labels', async () => {
    const { body, contentType } = await resourceMetricsText(summary, false);
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toContain('# TYPE node_cpu_usage_seconds_total counter\nnode_cpu_usage_seconds_total 6\n');
    expect(body).toMatch(/^node_memory_working_set_bytes 419430400$/m);
    expect(body).toMatch(/^container_cpu_usage_seconds_total\{container="a",pod="p-u1",namespace="default"\} 3$/m);
    expect(body).toMatch(/^container_memory_working_set_bytes\{container="b",pod="p-u1",namespace="default"\} 35651584$/m);
    expect(body).toMatch(/^container_start_time_seconds\{container="a",pod="p-u1",namespace="default"\} 2$/m);
    expect(body).toMatch(/^pod_cpu_usage_seconds_total\{pod="p-u1",namespace="default"\} 4$/m);
    expect(body).toMatch(/^pod_memory_working_set_bytes\{pod="p-u1",namespace="default"\} 56623104$/m);
    expect(body).toMatch(/^scrape_error 0$/m);
  });

  it('/metrics/resource says scrape_error 1 before the first sample and after a failed one', async () => {
    expect((await resourceMetricsText(undefined, false)).body).toMatch(/^scrape_error 1$/m);
    expect((await resourceMetricsText(summary, true)).body).toMatch(/^scrape_error 1$/m);
  });

  it('/metrics/cadvisor uses cAdvisor names and labels', async () => {
    const { body } = await cadvisorMetricsText(cur);
    const l = 'container="a",id="/docker/u1-a",image="busybox",name="k8s_a_p-u1_default_u1_0",namespace="default",pod="p-u1"';
    expect(body).toContain(`container_cpu_usage_seconds_total{${l},cpu="total"} 3\n`);
    expect(body).toContain(`container_memory_working_set_bytes{${l}} 20971520\n`);
    expect(body).toContain(`container_memory_rss{${l}} 15728640\n`);
    expect(body).toContain(`container_memory_usage_bytes{${l}} 31457280\n`);
    expect(body).toContain(`container_memory_failures_total{${l},failure_type="pgmajfault",scope="container"} 1\n`);
    expect(body).toContain(`container_spec_memory_limit_bytes{${l}} 67108864\n`);
    expect(body).toContain(`container_last_seen{${l}} 20\n`);
    expect(body).toMatch(/^machine_memory_bytes 1073741824$/m);
  });

  it('/metrics/probes counts results per probe type and drops a removed pod', async () => {
    const m = newProbeMetrics();
    const p = { uid: 'u1', name: 'web', namespace: 'default' };
    m.observe('readiness', 'success', p, 'app');
    m.observe('readiness', 'success', p, 'app');
    m.observe('liveness', 'failure', p, 'app');
    const text = (await m.text()).body;
    expect(text).toMatch(
      /^prober_probe_total\{probe_type="Readiness",result="successful",container="app",pod="web",namespace="default",pod_uid="u1"\} 2$/m,
    );
    expect(text).toMatch(
      /^prober_probe_total\{probe_type="Liveness",result="failed",container="app",pod="web",namespace="default",pod_uid="u1"\} 1$/m,
    );
    m.forgetPod('u1');
    expect((await m.text()).body).not.toMatch(/pod_uid="u1"/);
  });
});

describe('top tables', () => {
  const summary = buildSummary('n1', sample(20_000, 6e9, [pod('u1', 3e9, 1e9, false)]), sample(10_000, 1e9, [pod('u1', 1e9, 0, false)]));

  it('formats CPU in millicores and memory in Mi as kubectl top', () => {
    expect(formatCpu(12_400_000)).toBe('12m');
    expect(formatCpu(0)).toBe('0m');
    expect(formatMemory(34 * MiB + 5)).toBe('34Mi');
  });

  it('prints pods with and without the namespace column', () => {
    expect(topPodsTable(summary, { namespace: 'default', noHeaders: false })).toBe(
      'NAME   CPU(cores)   MEMORY(bytes)\np-u1   300m         54Mi\n',
    );
    expect(topPodsTable(summary, { namespace: '', noHeaders: true })).toBe('default   p-u1   300m   54Mi\n');
    expect(topPodsTable(summary, { namespace: 'other', noHeaders: true })).toBe('');
  });

  it('prints the node with percentages of allocatable', () => {
    const node = { status: { allocatable: { cpu: '2', memory: '1Gi' } } };
    expect(topNodeTable(summary, node, false)).toBe(
      'NAME   CPU(cores)   CPU%   MEMORY(bytes)   MEMORY%\nn1     500m         25%    400Mi           39%\n',
    );
  });
});

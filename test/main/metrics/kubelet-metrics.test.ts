// Tests of the kubelet metrics (src/main/metrics/kubelet-metrics.ts) and GET /metrics.
import { describe, expect, it } from 'vitest';
import { newKubeletMetrics, snakeCase } from '../../../src/main/metrics/kubelet-metrics.js';
import { newAgentRegistry } from '../../../src/main/metrics/registry.js';
import type { PodSyncResult, RelistResult } from '../../../src/shared/sync-tasks.js';
import { newFakePodSyncRunner } from '../../fakes/fake-pod-sync-runner.js';
import { createServer } from '../../../src/server/server.js';
import { newLogger } from '../../../src/shared/logging.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/shared/runtime-pod.js';

const container = (state: RuntimeContainer['state'], sandbox = false) => ({ state, sandbox }) as RuntimeContainer;

function record(uid: string, sandboxRunning: boolean, states: RuntimeContainer['state'][]): RuntimePod {
  return {
    uid,
    name: uid,
    namespace: 'default',
    sandboxes: [container(sandboxRunning ? 'running' : 'exited', true)],
    containers: states.map((s) => container(s)),
    podIp: '',
    terminationGracePeriodSeconds: 30,
  };
}

function setup() {
  const records = [record('a', true, ['running', 'running']), record('b', true, ['exited']), record('c', false, ['created'])];
  const metrics = newKubeletMetrics(newAgentRegistry(), {
    runtimePods: () => records,
    runnerStats: () => ({ threads: 2, queueSize: 3, completed: 7, utilization: 0.5 }),
    podWorkerStats: () => ({ inFlight: 1, waiting: 2, timers: 0 }),
  });
  return { metrics, records };
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('newKubeletMetrics', () => {
  it('computes running pods and containers by state, pool and pod worker figures when scraped', async () => {
    const { metrics } = setup();
    const { body, contentType } = await metrics.text();
    expect(contentType).toContain('text/plain');
    expect(value(body, 'kubelet_running_pods')).toBe(2);
    expect(value(body, 'kubelet_running_containers{container_state="running"}')).toBe(2);
    expect(value(body, 'kubelet_running_containers{container_state="exited"}')).toBe(1);
    expect(value(body, 'kubelet_running_containers{container_state="created"}')).toBe(1);
    expect(value(body, 'kubelet_ts_worker_pool_queue_size')).toBe(3);
    expect(value(body, 'kubelet_ts_worker_pool_utilization')).toBe(0.5);
    expect(value(body, 'kubelet_ts_worker_pool_tasks_completed_total')).toBe(7);
    expect(value(body, 'kubelet_ts_pod_workers{state="waiting"}')).toBe(2);
    expect(body).toContain('kubelet_ts_event_loop_delay_seconds{quantile="0.99"}');
    metrics.stop();
  });

  it('counts runtime operations, their errors, started pods and containers through the runner decorator', async () => {
    const { metrics } = setup();
    const runner = newFakePodSyncRunner(
      {
        relist: { containers: [] } as unknown as RelistResult,
        syncPod: {
          steps: [
            { action: 'CreatePodSandbox', target: 'p', ok: true },
            { action: 'StartContainer', target: 'main', ok: true },
            { action: 'StartContainer', target: 'side', ok: false, reason: 'CreateContainerError' },
          ],
        } as unknown as PodSyncResult,
      },
      { threads: 1 },
    );
    const wrapped = metrics.instrumentRunner(runner);
    await wrapped.run({ kind: 'syncPod' } as never);
    await wrapped.run({ kind: 'relist' } as never);
    runner.err = new Error('docker down');
    await expect(wrapped.run({ kind: 'relist' } as never)).rejects.toThrow('docker down');
    const { body } = await metrics.text();
    expect(value(body, 'kubelet_runtime_operations_total{operation_type="sync_pod"}')).toBe(1);
    expect(value(body, 'kubelet_runtime_operations_total{operation_type="relist"}')).toBe(2);
    expect(value(body, 'kubelet_runtime_operations_errors_total{operation_type="relist"}')).toBe(1);
    expect(value(body, 'kubelet_runtime_operations_total{operation_type="start_container"}')).toBe(2);
    expect(value(body, 'kubelet_runtime_operations_errors_total{operation_type="start_container"}')).toBe(1);
    expect(value(body, 'kubelet_started_pods_total')).toBe(1);
    expect(value(body, 'kubelet_started_containers_total{container_type="container"}')).toBe(1);
    expect(value(body, 'kubelet_runtime_operations_duration_seconds_count{operation_type="relist"}')).toBe(2);
    metrics.stop();
  });

  it('observes pod start duration once per pod, when Running with every container running', async () => {
    const { metrics } = setup();
    const startTime = new Date(Date.now() - 3_000).toISOString();
    const change = (type: 'ADDED' | 'MODIFIED' | 'DELETED', running: boolean) => ({
      type,
      uid: 'u1',
      resourceVersion: 1,
      pod: {
        metadata: { uid: 'u1' },
        status: {
          phase: running ? 'Running' : 'Pending',
          startTime,
          containerStatuses: [
            { name: 'm', ready: running, restartCount: 0, image: '', imageID: '', state: running ? { running: {} } : { waiting: {} } },
          ],
        },
      },
    });
    metrics.observeStatusChange(change('ADDED', false));
    metrics.observeStatusChange(change('MODIFIED', true));
    metrics.observeStatusChange(change('MODIFIED', true));
    const { body } = await metrics.text();
    expect(value(body, 'kubelet_pod_start_duration_seconds_count')).toBe(1);
    expect(value(body, 'kubelet_pod_start_duration_seconds_sum')).toBeGreaterThanOrEqual(3);
    expect(value(body, 'kubelet_pod_start_duration_seconds_bucket{le="2"}')).toBe(0);
    metrics.stop();
  });

  it('times pod worker bodies by operation type, also when they fail', async () => {
    const { metrics } = setup();
    const work = metrics.timePodWork(async (_uid, w) => {
      if (w.type === 'kill') throw new Error('x');
    });
    await work('u', { type: 'sync' });
    await expect(work('u', { type: 'kill', gracePeriodSeconds: 1, remove: true })).rejects.toThrow('x');
    const { body } = await metrics.text();
    expect(value(body, 'kubelet_pod_worker_duration_seconds_count{operation_type="sync"}')).toBe(1);
    expect(value(body, 'kubelet_pod_worker_duration_seconds_count{operation_type="kill"}')).toBe(1);
    metrics.stop();
  });

  it('snake-cases operation names as the kubelet labels them', () => {
    expect(snakeCase('CreatePodSandbox')).toBe('create_pod_sandbox');
    expect(snakeCase('syncPod')).toBe('sync_pod');
  });
});

describe('GET /metrics', () => {
  it('serves the exposition and counts HTTP requests by method and path', async () => {
    const { metrics } = setup();
    const host = {
      listPods: () => [],
      getPod: () => undefined,
      healthz: () => ({ ok: true, checks: [] }),
      metrics: () => metrics.text(),
      observeHttpRequest: metrics.observeHttpRequest.bind(metrics),
    };
    const server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      await fetch(`${base}/pods`).then((r) => r.text());
      await fetch(`${base}/pods`).then((r) => r.text());
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const body = await res.text();
      expect(value(body, 'kubelet_http_requests_total{method="GET",path="pods",server_type="readwrite",long_running="false"}')).toBe(2);
      expect(value(body, 'kubelet_ts_http_responses_total{code="200"}')).toBe(2);
      expect(value(body, 'kubelet_running_pods')).toBe(2);
    } finally {
      server.close();
      metrics.stop();
    }
  });
});

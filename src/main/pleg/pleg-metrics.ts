/**
 * Counterpart of the PLEG metrics in pkg/kubelet/metrics/metrics.go (PLEGRelistDuration,
 * PLEGRelistInterval, EventedPLEGConnErr, …): a PlegObserver that records into prom-client metrics
 * on the agent's registry (src/main/metrics/registry.ts). Main thread.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { PlegObserver } from './generic-pleg.js';

// The kubelet's buckets for PLEG durations (metrics.DefBuckets-like, in seconds).
const kBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * newPlegMetrics registers on `registry`:
 * `kubelet_pleg_relist_duration_seconds` (histogram), `kubelet_pleg_relist_interval_seconds`
 * (histogram), `kubelet_pleg_event_lag_seconds` (histogram: runtime event emitted → seen on the main
 * thread; kubelet-ts's counterpart of kubelet_evented_pleg_connection_latency_seconds) and
 * `kubelet_evented_pleg_connection_error_count` (counter), and returns the observer feeding them.
 * Call once per registry (prom-client throws on a duplicate name).
 */
export function newPlegMetrics(registry: Registry): PlegObserver {
  const duration = new Histogram({
    name: 'kubelet_pleg_relist_duration_seconds',
    help: 'Duration in seconds for relisting pods in PLEG.',
    buckets: kBuckets,
    registers: [registry],
  });
  const interval = new Histogram({
    name: 'kubelet_pleg_relist_interval_seconds',
    help: 'Interval in seconds between relisting in PLEG.',
    buckets: [...kBuckets, 30, 60, 120],
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'kubelet_pleg_event_lag_seconds',
    help: 'Time in seconds from the container runtime emitting a container event to the PLEG receiving it.',
    buckets: kBuckets,
    registers: [registry],
  });
  const connErr = new Counter({
    name: 'kubelet_evented_pleg_connection_error_count',
    help: "The number of errors encountered on the container runtime's events stream.",
    registers: [registry],
  });
  return {
    relistDuration: (s) => duration.observe(s),
    relistInterval: (s) => interval.observe(s),
    eventLag: (s) => lag.observe(s),
    streamError: () => connErr.inc(),
  };
}

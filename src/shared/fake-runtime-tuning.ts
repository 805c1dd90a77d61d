/**
 * Settings of the fake runtime (`--runtime fake`), the role kubemark's hollow node plays for the
 * kubelet: per-operation latencies and failure rates, so one agent can hold 10,000 pods without a
 * container and still see realistic timing and errors. Pure parsing; safe in any thread.
 */
import { InvalidArgumentError } from './errors.js';
import { parseDuration } from './duration.js';
import type { WorkerBootstrap } from './thread-wire.js';

/** The runtime operations whose latency and failure rate can be set. */
export const kFakeRuntimeOps = ['list', 'inspect', 'create', 'start', 'stop', 'remove'] as const;
export type FakeRuntimeOp = (typeof kFakeRuntimeOps)[number];

/** FakeRuntimeTuning: latency (milliseconds) and failure rate (0..1) per operation; absent = 0. */
export interface FakeRuntimeTuning {
  latencyMs?: Partial<Record<FakeRuntimeOp, number>>;
  failureRate?: Partial<Record<FakeRuntimeOp, number>>;
}

/** A WorkerBootstrap that also carries the fake runtime's tuning (read by the worker when runtime is 'fake'). */
export type FakeWorkerBootstrap = WorkerBootstrap & { fakeRuntime?: FakeRuntimeTuning };

function pairs(flag: string, text: string): [FakeRuntimeOp, string][] {
  if (!text.trim()) return [];
  return text.split(',').map((part) => {
    const eq = part.indexOf('=');
    const op = part.slice(0, eq).trim() as FakeRuntimeOp;
    if (eq < 1 || !kFakeRuntimeOps.includes(op)) {
      throw new InvalidArgumentError(`${flag}: ${JSON.stringify(part)} must be <op>=<value> with op one of ${kFakeRuntimeOps.join(', ')}`);
    }
    return [op, part.slice(eq + 1).trim()];
  });
}

/**
 * parseFakeLatencies parses `--fake-runtime-latency`, e.g. `create=5ms,start=5ms,list=20ms`
 * (Go durations) into milliseconds per operation.
 * @throws InvalidArgumentError naming the flag and the bad part.
 */
export function parseFakeLatencies(text: string): Partial<Record<FakeRuntimeOp, number>> {
  const out: Partial<Record<FakeRuntimeOp, number>> = {};
  for (const [op, v] of pairs('--fake-runtime-latency', text)) {
    try {
      out[op] = parseDuration(v);
    } catch (err) {
      throw new InvalidArgumentError(`--fake-runtime-latency: ${op}=${v}: ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * parseFakeFailureRates parses `--fake-runtime-failure-rate`, e.g. `start=0.01,create=0.001`
 * (probabilities in 0..1) per operation.
 * @throws InvalidArgumentError naming the flag and the bad part.
 */
export function parseFakeFailureRates(text: string): Partial<Record<FakeRuntimeOp, number>> {
  const out: Partial<Record<FakeRuntimeOp, number>> = {};
  for (const [op, v] of pairs('--fake-runtime-failure-rate', text)) {
    const n = Number(v);
    if (v === '' || !Number.isFinite(n) || n < 0 || n > 1)
      throw new InvalidArgumentError(`--fake-runtime-failure-rate: ${op}=${v} must be a number in 0..1`);
    out[op] = n;
  }
  return out;
}

/**
 * Counterpart of k8s.io/component-base/metrics/legacyregistry: the one prom-client Registry of the
 * agent. Subsystems create their metrics against `newAgentRegistry()`'s result (passed in their deps)
 * so that several agents in one process (tests, benches) never share counters.
 */
import { Registry } from 'prom-client';

/** newAgentRegistry returns an empty registry for one agent. */
export function newAgentRegistry(): Registry {
  return new Registry();
}

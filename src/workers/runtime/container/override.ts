/**
 * withOverrides: `runtime` with the methods in `overrides` replaced and every other member passed
 * through, bound to `runtime` (a Proxy, so methods added to ContainerRuntime later pass through
 * without an edit here). The one wrapper shape of fake-tuning.ts and docker-admission.ts. Worker threads only.
 */
import type { ContainerRuntime } from './runtime.js';

export function withOverrides(runtime: ContainerRuntime, overrides: Partial<ContainerRuntime>): ContainerRuntime {
  return new Proxy(runtime, {
    get(target, prop) {
      const own = overrides[prop as keyof ContainerRuntime];
      if (own) return own;
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

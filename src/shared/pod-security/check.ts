/**
 * The shape of one Pod Security Standards check, as upstream's policy.Check and VersionedCheck
 * (staging/src/k8s.io/pod-security-admission/policy/checks.go): an ID, the level it belongs to,
 * the first policy version it applies from, and the IDs of the checks of a lower level it
 * replaces (restricted's `restrictedVolumes` replaces baseline's `hostPathVolumes`).
 */
import type { Obj } from './visit.js';

/** Level: a Pod Security Standards level, least to most restrictive. */
export type Level = 'privileged' | 'baseline' | 'restricted';

/** kLevels: the levels in order of strictness (api.CompareLevels). */
export const kLevels: readonly Level[] = Object.freeze(['privileged', 'baseline', 'restricted']);

/**
 * CheckFailure: why a pod fails a check, as upstream's CheckResult with Allowed false:
 * `reason` (`host ports`…: ForbiddenReason) and `detail` (ForbiddenDetail, may be empty).
 */
export interface CheckFailure {
  reason: string;
  detail: string;
}

/**
 * Check: one check. `run` reads the pod's metadata and spec (untyped JSON) for policy version
 * `minor` (1.minor; `Infinity` for `latest`) and answers a failure or undefined (allowed).
 */
export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** The first policy minor version the check applies from (checks.go MinimumVersion). */
  minVersion: number;
  /** IDs of lower-level checks this one replaces (OverrideCheckIDs). */
  overrides?: readonly string[];
  run(metadata: Obj, spec: Obj, minor: number): CheckFailure | undefined;
}

/** kLatest: the minor version `latest` stands for when compared with a check's minimum. */
export const kLatest = Number.POSITIVE_INFINITY;

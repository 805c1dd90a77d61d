/**
 * Pod Security Standards levels and versions, the namespace labels that choose them, and the
 * evaluation of a pod against one level, as upstream's pod-security-admission
 * (staging/src/k8s.io/pod-security-admission/api/helpers.go: ParseLevel, ParseVersion,
 * PolicyToEvaluate; policy/registry.go: which checks a level and version run, baseline's first,
 * each sorted by ID, restricted replacing the checks it overrides; policy/checks.go
 * AggregateCheckResults: the `reason (detail), …` message). Pure.
 */
import { kBaselineChecks } from './baseline.js';
import { kLatest, type Check, type CheckFailure, type Level } from './check.js';
import { kRestrictedChecks } from './restricted.js';
import { obj, type Obj } from './visit.js';

export type { Level, CheckFailure } from './check.js';

/** The namespace labels (api/constants.go). */
export const kEnforceLevelLabel = 'pod-security.kubernetes.io/enforce';
export const kEnforceVersionLabel = 'pod-security.kubernetes.io/enforce-version';
export const kWarnLevelLabel = 'pod-security.kubernetes.io/warn';
export const kWarnVersionLabel = 'pod-security.kubernetes.io/warn-version';
export const kAuditLevelLabel = 'pod-security.kubernetes.io/audit';
export const kAuditVersionLabel = 'pod-security.kubernetes.io/audit-version';

/** LevelVersion: a level at a policy version: `version` is `latest` or `v1.<minor>`; `minor` is Infinity for latest. */
export interface LevelVersion {
  level: Level;
  version: string;
  minor: number;
}

/** NamespacePolicy: the three modes' level and version (api.Policy). */
export interface NamespacePolicy {
  enforce: LevelVersion;
  warn: LevelVersion;
  audit: LevelVersion;
}

/** LabelError: an invalid PodSecurity label, as field.Invalid on `metadata.labels[<key>]`. */
export interface LabelError {
  field: string;
  value: string;
  message: string;
}

/** kLatestVersion: `latest`. */
export const kLatestVersion = Object.freeze({ version: 'latest', minor: kLatest });

/** levelVersion: `baseline:latest`, as LevelVersion.String(). */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${lv.version}`;
}

/** parseLevel: one of privileged, baseline, restricted; else `restricted` and an error (api.ParseLevel). */
export function parseLevel(value: string): { level: Level; error?: string } {
  if (value === 'privileged' || value === 'baseline' || value === 'restricted') return { level: value };
  return { level: 'restricted', error: 'must be one of privileged, baseline, restricted' };
}

/** parseVersion: `latest` or `v1.<n>`; else `latest` and an error (api.ParseVersion). */
export function parseVersion(value: string): { version: string; minor: number; error?: string } {
  if (value === 'latest') return { ...kLatestVersion };
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(value);
  const minor = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(minor)) return { ...kLatestVersion, error: 'must be "latest" or "v1.x"' };
  return { version: value, minor };
}

/**
 * policyToEvaluate: the namespace's policy from its labels, each mode falling back to `defaults`
 * when its label is absent. An invalid enforce level reads `restricted` (fail closed); an invalid
 * warn or audit level reads `privileged` (fail open); an invalid version reads `latest` — and
 * each is reported in `errors` (api.PolicyToEvaluate).
 */
export function policyToEvaluate(
  labels: Readonly<Record<string, string>> | undefined,
  defaults: NamespacePolicy,
): { policy: NamespacePolicy; errors: LabelError[] } {
  const policy: NamespacePolicy = { enforce: { ...defaults.enforce }, warn: { ...defaults.warn }, audit: { ...defaults.audit } };
  const errors: LabelError[] = [];
  const modes: Array<[keyof NamespacePolicy, string, string, Level]> = [
    ['enforce', kEnforceLevelLabel, kEnforceVersionLabel, 'restricted'],
    ['audit', kAuditLevelLabel, kAuditVersionLabel, 'privileged'],
    ['warn', kWarnLevelLabel, kWarnVersionLabel, 'privileged'],
  ];
  for (const [mode, levelLabel, versionLabel, onError] of modes) {
    const level = labels?.[levelLabel];
    if (level !== undefined) {
      const r = parseLevel(level);
      policy[mode].level = r.error ? onError : r.level;
      if (r.error) errors.push({ field: `metadata.labels[${levelLabel}]`, value: level, message: r.error });
    }
    const version = labels?.[versionLabel];
    if (version !== undefined) {
      const r = parseVersion(version);
      policy[mode].version = r.version;
      policy[mode].minor = r.minor;
      if (r.error) errors.push({ field: `metadata.labels[${versionLabel}]`, value: version, message: r.error });
    }
  }
  return { policy, errors };
}

/** checksFor: the checks `level` runs at version `minor`: baseline's (sorted by ID), then restricted's, less those restricted overrides. */
export function checksFor(level: Level, minor: number): Check[] {
  if (level === 'privileged') return [];
  const restricted = level === 'restricted' ? kRestrictedChecks.filter((c) => c.minVersion <= minor) : [];
  const overridden = new Set(restricted.flatMap((c) => c.overrides ?? []));
  return [...kBaselineChecks.filter((c) => c.minVersion <= minor && !overridden.has(c.id)), ...restricted];
}

/**
 * evaluatePod: the checks `pod` fails at `lv` (empty: allowed), in evaluation order. The pod is
 * read as untyped JSON: a field of the wrong shape is skipped, never thrown on.
 */
export function evaluatePod(lv: LevelVersion, pod: unknown): CheckFailure[] {
  const p = obj(pod) ?? {};
  const metadata = obj(p.metadata) ?? {};
  const spec = obj(p.spec) ?? ({} as Obj);
  const out: CheckFailure[] = [];
  for (const check of checksFor(lv.level, lv.minor)) {
    const r = check.run(metadata, spec, lv.minor);
    if (r) out.push(r);
  }
  return out;
}

/** forbiddenReasons: `host namespaces (hostNetwork=true), hostPort (container "c" uses hostPort 80)` (AggregateCheckResults.ForbiddenReason). */
export function forbiddenReasons(failures: readonly CheckFailure[]): string {
  return failures.map((f) => (f.detail === '' ? f.reason : `${f.reason} (${f.detail})`)).join(', ');
}

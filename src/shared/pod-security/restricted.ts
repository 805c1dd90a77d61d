/**
 * The checks of the Pod Security Standards `restricted` level, on top of baseline's, for the
 * policy versions upstream defines them (staging/src/k8s.io/pod-security-admission/policy:
 * check_restrictedVolumes.go, check_allowPrivilegeEscalation.go, check_runAsNonRoot.go,
 * check_runAsUser.go, check_seccompProfile_restricted.go, check_capabilities_restricted.go),
 * with upstream's reasons and details word for word. As upstream's registry, restrictedVolumes,
 * seccompProfile_restricted and capabilities_restricted replace baseline's hostPathVolumes,
 * seccompProfile_baseline and capabilities_baseline. Pure.
 */
import { validSeccompType } from './baseline.js';
import type { Check, CheckFailure } from './check.js';
import { containerPhrase, containersOf, joinQuote, list, obj, pluralize, securityContextOf, sortedUnique, str, type Obj } from './visit.js';

/** kRestrictedVolumeSources: the volume sources a restricted pod may use (check_restrictedVolumes.go). */
export const kRestrictedVolumeSources: readonly string[] = Object.freeze([
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
]);

/** The other volume sources upstream names in its message (any other source reads `unknown`). */
const kNamedVolumeSources = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
  'storageos',
];

function fail(reason: string, detail: string): CheckFailure {
  return { reason, detail };
}

/** A Windows pod (spec.os.name: windows) is skipped by some checks from 1.25, as upstream. */
function windowsPod(spec: Obj, minor: number): boolean {
  return minor >= 25 && obj(spec.os)?.name === 'windows';
}

const restrictedVolumes: Check = {
  id: 'restrictedVolumes',
  level: 'restricted',
  minVersion: 0,
  overrides: ['hostPathVolumes'],
  run(_m, spec) {
    const bad: string[] = [];
    const types: string[] = [];
    for (const v of list(spec.volumes)) {
      if (kRestrictedVolumeSources.some((k) => v[k] != null)) continue;
      bad.push(str(v.name));
      types.push(kNamedVolumeSources.find((k) => v[k] != null) ?? 'unknown');
    }
    if (bad.length === 0) return undefined;
    const unique = sortedUnique(types);
    return fail(
      'restricted volume types',
      `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', unique.length)} ${joinQuote(unique)}`,
    );
  },
};

const allowPrivilegeEscalation: Check = {
  id: 'allowPrivilegeEscalation',
  level: 'restricted',
  minVersion: 8,
  run(_m, spec, minor) {
    if (windowsPod(spec, minor)) return undefined;
    const bad = containersOf(spec)
      .filter(({ c }) => securityContextOf(c)?.allowPrivilegeEscalation !== false)
      .map((v) => v.name);
    return bad.length > 0
      ? fail('allowPrivilegeEscalation != false', `${containerPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`)
      : undefined;
  },
};

const runAsNonRoot: Check = {
  id: 'runAsNonRoot',
  level: 'restricted',
  minVersion: 0,
  run(_m, spec) {
    if (spec.hostUsers === false) return undefined;
    const podValue = securityContextOf(spec)?.runAsNonRoot;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const v = securityContextOf(c)?.runAsNonRoot;
      if (typeof v === 'boolean') {
        if (!v) explicit.push(name);
      } else if (podValue !== true) implicit.push(name);
    }
    const who = [...(podValue === false ? ['pod'] : []), ...(explicit.length > 0 ? [containerPhrase(explicit)] : [])];
    if (who.length > 0) return fail('runAsNonRoot != true', `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`);
    if (implicit.length > 0)
      return fail('runAsNonRoot != true', `pod or ${containerPhrase(implicit)} must set securityContext.runAsNonRoot=true`);
    return undefined;
  },
};

const runAsUser: Check = {
  id: 'runAsUser',
  level: 'restricted',
  minVersion: 23,
  run(_m, spec) {
    if (spec.hostUsers === false) return undefined;
    const bad = containersOf(spec)
      .filter(({ c }) => securityContextOf(c)?.runAsUser === 0)
      .map((v) => v.name);
    const who = [...(securityContextOf(spec)?.runAsUser === 0 ? ['pod'] : []), ...(bad.length > 0 ? [containerPhrase(bad)] : [])];
    return who.length > 0 ? fail('runAsUser=0', `${who.join(' and ')} must not set runAsUser=0`) : undefined;
  },
};

const seccompProfileRestricted: Check = {
  id: 'seccompProfile_restricted',
  level: 'restricted',
  minVersion: 19,
  overrides: ['seccompProfile_baseline'],
  run(_m, spec, minor) {
    if (windowsPod(spec, minor)) return undefined;
    const values: string[] = [];
    const podProfile = obj(securityContextOf(spec)?.seccompProfile);
    const podBad = podProfile !== undefined && !validSeccompType(podProfile.type);
    if (podBad) values.push(str(podProfile.type));
    const podSet = podProfile !== undefined && !podBad;
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const p = obj(securityContextOf(c)?.seccompProfile);
      if (p) {
        if (!validSeccompType(p.type)) {
          explicit.push(name);
          values.push(str(p.type));
        }
      } else if (!podSet) implicit.push(name);
    }
    const who = [...(podBad ? ['pod'] : []), ...(explicit.length > 0 ? [containerPhrase(explicit)] : [])];
    if (who.length > 0)
      return fail(
        'seccompProfile',
        `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}`,
      );
    if (implicit.length > 0)
      return fail(
        'seccompProfile',
        `pod or ${containerPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      );
    return undefined;
  },
};

const capabilitiesRestricted: Check = {
  id: 'capabilities_restricted',
  level: 'restricted',
  minVersion: 22,
  overrides: ['capabilities_baseline'],
  run(_m, spec, minor) {
    if (windowsPod(spec, minor)) return undefined;
    const missingDrop: string[] = [];
    const adding: string[] = [];
    const caps: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const capabilities = obj(securityContextOf(c)?.capabilities);
      if (!capabilities) {
        missingDrop.push(name);
        continue;
      }
      const drop = Array.isArray(capabilities.drop) ? capabilities.drop : [];
      if (!drop.includes('ALL')) missingDrop.push(name);
      const extra = (Array.isArray(capabilities.add) ? capabilities.add : []).map(str).filter((cap) => cap !== 'NET_BIND_SERVICE');
      if (extra.length > 0) {
        adding.push(name);
        caps.push(...extra);
      }
    }
    const details = [
      ...(missingDrop.length > 0 ? [`${containerPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`] : []),
      ...(adding.length > 0
        ? [`${containerPhrase(adding)} must not include ${joinQuote(sortedUnique(caps))} in securityContext.capabilities.add`]
        : []),
    ];
    return details.length > 0 ? fail('unrestricted capabilities', details.join('; ')) : undefined;
  },
};

/** kRestrictedChecks: every restricted check, sorted by ID as upstream's registry evaluates them. */
export const kRestrictedChecks: readonly Check[] = Object.freeze([
  allowPrivilegeEscalation,
  capabilitiesRestricted,
  restrictedVolumes,
  runAsNonRoot,
  runAsUser,
  seccompProfileRestricted,
]);

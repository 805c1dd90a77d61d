/**
 * The checks of the Pod Security Standards `baseline` level, for the policy versions upstream
 * defines them (staging/src/k8s.io/pod-security-admission/policy/check_*.go: hostNamespaces,
 * privileged, capabilities_baseline, hostPathVolumes, hostPorts, appArmorProfile, seLinuxOptions,
 * procMount, seccompProfile_baseline, sysctls, windowsHostProcess, hostProbesAndHostLifecycle),
 * with upstream's reasons and details word for word (`hostPort` / `container "c" uses hostPort
 * 12080`). Lists checked against upstream's policy tests (check_*_test.go). Pure.
 */
import type { Check, CheckFailure } from './check.js';
import { containerPhrase, containersOf, joinQuote, list, obj, pluralize, securityContextOf, sortedUnique, str, type Obj } from './visit.js';

/** kBaselineCapabilities: the capabilities a baseline pod may add (check_capabilities_baseline.go): the container runtimes' default set minus NET_RAW. */
export const kBaselineCapabilities: readonly string[] = Object.freeze([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/**
 * kSafeSysctlsByVersion: the sysctls a baseline pod may set, with the policy minor version that
 * first allows each (check_sysctls.go: 1.0 the first five; 1.27 ip_local_reserved_ports; 1.29 the
 * TCP keepalive and fin_timeout ones; 1.32 tcp_rmem and tcp_wmem).
 */
export const kSafeSysctlsByVersion: Readonly<Record<string, number>> = Object.freeze({
  'kernel.shm_rmid_forced': 0,
  'net.ipv4.ip_local_port_range': 0,
  'net.ipv4.tcp_syncookies': 0,
  'net.ipv4.ping_group_range': 0,
  'net.ipv4.ip_unprivileged_port_start': 0,
  'net.ipv4.ip_local_reserved_ports': 27,
  'net.ipv4.tcp_keepalive_time': 29,
  'net.ipv4.tcp_fin_timeout': 29,
  'net.ipv4.tcp_keepalive_intvl': 29,
  'net.ipv4.tcp_keepalive_probes': 29,
  'net.ipv4.tcp_rmem': 32,
  'net.ipv4.tcp_wmem': 32,
});

const kAppArmorAnnotationPrefix = 'container.apparmor.security.beta.kubernetes.io/';
const kSeccompPodAnnotation = 'seccomp.security.alpha.kubernetes.io/pod';
const kSeccompContainerAnnotationPrefix = 'container.seccomp.security.alpha.kubernetes.io/';
/** SELinux types a baseline pod may set (check_seLinuxOptions.go), and from 1.31 container_engine_t too. */
const kAllowedSELinuxTypes = ['', 'container_t', 'container_init_t', 'container_kvm_t'];

function fail(reason: string, detail: string): CheckFailure {
  return { reason, detail };
}

/** setters: `pod and containers "a", "b"` — who set a bad value, as upstream joins them. */
function setters(pod: boolean, containers: string[]): string[] {
  return [...(pod ? ['pod'] : []), ...(containers.length > 0 ? [containerPhrase(containers)] : [])];
}

function annotationsOf(metadata: Obj): Record<string, string> {
  const a = obj(metadata.annotations) ?? {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
  return out;
}

const hostNamespaces: Check = {
  id: 'hostNamespaces',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const set = ['hostNetwork', 'hostPID', 'hostIPC'].filter((f) => spec[f] === true).map((f) => `${f}=true`);
    return set.length > 0 ? fail('host namespaces', set.join(', ')) : undefined;
  },
};

const privileged: Check = {
  id: 'privileged',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const bad = containersOf(spec)
      .filter(({ c }) => securityContextOf(c)?.privileged === true)
      .map((v) => v.name);
    return bad.length > 0 ? fail('privileged', `${containerPhrase(bad)} must not set securityContext.privileged=true`) : undefined;
  },
};

const capabilitiesBaseline: Check = {
  id: 'capabilities_baseline',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const bad: string[] = [];
    const caps: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const add = obj(securityContextOf(c)?.capabilities)?.add;
      const extra = (Array.isArray(add) ? add : []).map(str).filter((cap) => !kBaselineCapabilities.includes(cap));
      if (extra.length === 0) continue;
      bad.push(name);
      caps.push(...extra);
    }
    if (bad.length === 0) return undefined;
    return fail(
      'non-default capabilities',
      `${containerPhrase(bad)} must not include ${joinQuote(sortedUnique(caps))} in securityContext.capabilities.add`,
    );
  },
};

const hostPathVolumes: Check = {
  id: 'hostPathVolumes',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const bad = list(spec.volumes)
      .filter((v) => v.hostPath != null)
      .map((v) => str(v.name));
    return bad.length > 0 ? fail('hostPath volumes', `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)}`) : undefined;
  },
};

const hostPorts: Check = {
  id: 'hostPorts',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const bad: string[] = [];
    const ports: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const used = list(c.ports)
        .map((p) => p.hostPort)
        .filter((hp) => typeof hp === 'number' && hp !== 0)
        .map(String);
      if (used.length === 0) continue;
      bad.push(name);
      ports.push(...used);
    }
    if (bad.length === 0) return undefined;
    const unique = sortedUnique(ports);
    return fail(
      'hostPort',
      `${containerPhrase(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('hostPort', 'hostPorts', unique.length)} ${unique.join(', ')}`,
    );
  },
};

function hostsOf(handler: unknown): string[] {
  const h = obj(handler);
  if (!h) return [];
  return [str(obj(h.httpGet)?.host), str(obj(h.tcpSocket)?.host)].filter((x) => x !== '');
}

const hostProbesAndHostLifecycle: Check = {
  id: 'hostProbesAndHostLifecycle',
  level: 'baseline',
  minVersion: 34,
  run(_m, spec) {
    const bad: string[] = [];
    const hosts: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const lifecycle = obj(c.lifecycle) ?? {};
      const found = [c.livenessProbe, c.readinessProbe, c.startupProbe, lifecycle.postStart, lifecycle.preStop].flatMap(hostsOf);
      if (found.length === 0) continue;
      bad.push(name);
      hosts.push(...found);
    }
    if (bad.length === 0) return undefined;
    const names = sortedUnique(bad);
    const unique = sortedUnique(hosts);
    return fail(
      'probe or lifecycle host',
      `${containerPhrase(names)} ${pluralize('uses', 'use', names.length)} ${pluralize('probe or lifecycle host', 'probe or lifecycle hosts', unique.length)} ${joinQuote(unique)}`,
    );
  },
};

const appArmorProfile: Check = {
  id: 'appArmorProfile',
  level: 'baseline',
  minVersion: 0,
  run(metadata, spec) {
    const allowedType = (t: unknown) => t === 'RuntimeDefault' || t === 'Localhost';
    const values: string[] = [];
    const podProfile = obj(securityContextOf(spec)?.appArmorProfile);
    const podBad = podProfile !== undefined && !allowedType(podProfile.type);
    if (podBad) values.push(str(podProfile.type));
    const bad: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const p = obj(securityContextOf(c)?.appArmorProfile);
      if (p && !allowedType(p.type)) {
        bad.push(name);
        values.push(str(p.type));
      }
    }
    const who = setters(podBad, bad);
    const annotations = Object.entries(annotationsOf(metadata))
      .filter(([k, v]) => k.startsWith(kAppArmorAnnotationPrefix) && !(v === '' || v === 'runtime/default' || v.startsWith('localhost/')))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .sort();
    if (annotations.length > 0) who.push(pluralize('annotation', 'annotations', annotations.length));
    if (who.length === 0) return undefined;
    const all = [...sortedUnique(values), ...annotations];
    return fail(
      pluralize('forbidden AppArmor profile', 'forbidden AppArmor profiles', all.length),
      `${who.join(' and ')} must not set AppArmor profile type to ${joinQuote(all)}`,
    );
  },
};

const seLinuxOptions: Check = {
  id: 'seLinuxOptions',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec, minor) {
    const allowedTypes = minor >= 31 ? [...kAllowedSELinuxTypes, 'container_engine_t'] : kAllowedSELinuxTypes;
    const types: string[] = [];
    let user = false;
    let role = false;
    const valid = (o: Obj): boolean => {
      let ok = true;
      if (!allowedTypes.includes(str(o.type))) {
        ok = false;
        types.push(str(o.type));
      }
      if (str(o.user) !== '') {
        ok = false;
        user = true;
      }
      if (str(o.role) !== '') {
        ok = false;
        role = true;
      }
      return ok;
    };
    const podOpts = obj(securityContextOf(spec)?.seLinuxOptions);
    const podBad = podOpts !== undefined && !valid(podOpts);
    const bad = containersOf(spec)
      .filter(({ c }) => {
        const o = obj(securityContextOf(c)?.seLinuxOptions);
        return o !== undefined && !valid(o);
      })
      .map((v) => v.name);
    const who = setters(podBad, bad);
    if (who.length === 0) return undefined;
    const unique = sortedUnique(types);
    const data = [
      ...(unique.length > 0 ? [`${pluralize('type', 'types', unique.length)} ${joinQuote(unique)}`] : []),
      ...(user ? ['user may not be set'] : []),
      ...(role ? ['role may not be set'] : []),
    ];
    return fail('seLinuxOptions', `${who.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}`);
  },
};

const procMount: Check = {
  id: 'procMount',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    // Upstream (1.34+) allows any procMount in a pod with its own user namespace (hostUsers: false).
    if (spec.hostUsers === false) return undefined;
    const bad: string[] = [];
    const types: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const pm = securityContextOf(c)?.procMount;
      if (pm === undefined || pm === null || pm === 'Default') continue;
      bad.push(name);
      types.push(str(pm));
    }
    return bad.length > 0
      ? fail('procMount', `${containerPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedUnique(types))}`)
      : undefined;
  },
};

function seccompAnnotationsFailure(metadata: Obj, spec: Obj): CheckFailure | undefined {
  const a = annotationsOf(metadata);
  const ok = (v: string) => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const bad: string[] = [];
  if (kSeccompPodAnnotation in a && !ok(a[kSeccompPodAnnotation]))
    bad.push(`${kSeccompPodAnnotation}=${JSON.stringify(a[kSeccompPodAnnotation])}`);
  for (const { name } of containersOf(spec)) {
    const key = kSeccompContainerAnnotationPrefix + name;
    if (key in a && !ok(a[key])) bad.push(`${key}=${JSON.stringify(a[key])}`);
  }
  const unique = sortedUnique(bad);
  return unique.length > 0
    ? fail('seccompProfile', `forbidden ${pluralize('annotation', 'annotations', unique.length)} ${unique.join(', ')}`)
    : undefined;
}

/** validSeccompType: RuntimeDefault or Localhost (check_seccompProfile_baseline.go validSeccomp). */
export function validSeccompType(t: unknown): boolean {
  return t === 'RuntimeDefault' || t === 'Localhost';
}

const seccompProfileBaseline: Check = {
  id: 'seccompProfile_baseline',
  level: 'baseline',
  minVersion: 0,
  run(metadata, spec, minor) {
    if (minor < 19) return seccompAnnotationsFailure(metadata, spec);
    const values: string[] = [];
    const podProfile = obj(securityContextOf(spec)?.seccompProfile);
    const podBad = podProfile !== undefined && !validSeccompType(podProfile.type);
    if (podBad) values.push(str(podProfile.type));
    const bad: string[] = [];
    for (const { c, name } of containersOf(spec)) {
      const p = obj(securityContextOf(c)?.seccompProfile);
      if (p && !validSeccompType(p.type)) {
        bad.push(name);
        values.push(str(p.type));
      }
    }
    const who = setters(podBad, bad);
    return who.length > 0
      ? fail(
          'seccompProfile',
          `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedUnique(values))}`,
        )
      : undefined;
  },
};

const sysctls: Check = {
  id: 'sysctls',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec, minor) {
    const bad = list(securityContextOf(spec)?.sysctls)
      .map((s) => str(s.name))
      .filter((n) => !(Object.hasOwn(kSafeSysctlsByVersion, n) && kSafeSysctlsByVersion[n] <= minor));
    return bad.length > 0 ? fail('forbidden sysctls', bad.join(', ')) : undefined;
  },
};

const windowsHostProcess: Check = {
  id: 'windowsHostProcess',
  level: 'baseline',
  minVersion: 0,
  run(_m, spec) {
    const hostProcess = (o: Obj) => obj(securityContextOf(o)?.windowsOptions)?.hostProcess === true;
    const bad = containersOf(spec)
      .filter(({ c }) => hostProcess(c))
      .map((v) => v.name);
    const who = setters(hostProcess(spec), bad);
    return who.length > 0
      ? fail('hostProcess', `${who.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true`)
      : undefined;
  },
};

/** kBaselineChecks: every baseline check, sorted by ID as upstream's registry evaluates them. */
export const kBaselineChecks: readonly Check[] = Object.freeze([
  appArmorProfile,
  capabilitiesBaseline,
  hostNamespaces,
  hostPathVolumes,
  hostPorts,
  hostProbesAndHostLifecycle,
  privileged,
  procMount,
  seLinuxOptions,
  seccompProfileBaseline,
  sysctls,
  windowsHostProcess,
]);

// Counterpart of pkg/apis/core/validation/validation.go validateContainers / validateInitContainers.
/**
 * Container-level checks of {@link validatePod} (validation.ts): names, image, ports, env,
 * resources, volume mounts, probes, lifecycle hooks, and the fields kubelet-ts does not
 * implement. Pure functions over decoded JSON, safe in any thread.
 */
import { isIP } from 'node:net';
import { parseQuantity, quantityError } from './quantity.js';
import { configKeyErrors } from './config-objects.js';
import {
  dns1123LabelErrors,
  dns1123SubdomainErrors,
  envVarNameErrors,
  httpHeaderNameErrors,
  inclusiveRangeError,
  portNameErrors,
  qualifiedNameErrors,
} from './names.js';
import { child, ErrorList, index, isAbsolutePath, isObj, type Obj } from './validation-util.js';
import { validateContainerSecurityContext } from './security-context.js';

/**
 * Container fields kubelet-ts implements (securityContext: security-context.ts's fields). Anything
 * else (volumeDevices, resizePolicy, ...) is reported as `Not supported`. `restartPolicy` is
 * allowed on init containers only, with the value `Always` (a sidecar).
 */
export const kSupportedContainerFields: readonly string[] = [
  'stdin',
  'stdinOnce',
  'tty',
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'env',
  'envFrom',
  'resources',
  'volumeMounts',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'restartPolicy',
  'securityContext',
];
/** ContainerPort fields kubelet-ts implements (hostIP: the address portmap publishes a hostPort on, issue 13). */
export const kSupportedContainerPortFields: readonly string[] = ['name', 'containerPort', 'hostPort', 'protocol', 'hostIP'];
/** EnvVar fields kubelet-ts implements. */
export const kSupportedEnvVarFields: readonly string[] = ['name', 'value', 'valueFrom'];
/** EnvVarSource fields kubelet-ts implements (configMapKeyRef / secretKeyRef read the node's ConfigMaps and Secrets). */
export const kSupportedEnvVarSourceFields: readonly string[] = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'];
/**
 * VolumeMount fields kubelet-ts implements (recursiveReadOnly is not). `mountPropagation`
 * maps to Docker's bind propagation as dockershim did: None → Docker's default (rprivate),
 * HostToContainer → `rslave`, Bidirectional → `rshared` (privileged containers only).
 */
export const kSupportedVolumeMountFields: readonly string[] = [
  'name',
  'mountPath',
  'readOnly',
  'subPath',
  'subPathExpr',
  'mountPropagation',
];
/** The core/v1 MountPropagationMode values. */
export const kMountPropagationModes: readonly string[] = ['None', 'HostToContainer', 'Bidirectional'];
/** ResourceRequirements fields kubelet-ts implements (claims is not). */
export const kSupportedResourceRequirementsFields: readonly string[] = ['limits', 'requests'];
/**
 * Resource names kubelet-ts implements in limits and requests. `ephemeral-storage` is accepted and
 * not enforced (no local-storage eviction of container writable layers). Extended resources
 * (`example.com/foo`, `nvidia.com/gpu`: {@link isExtendedResourceName}) and `hugepages-<size>` are
 * validated as upstream and then refused at admission (src/main/pod/admission.ts: `OutOf<name>`,
 * as the kubelet's predicate admit handler when no device plugin offers them).
 */
export const kSupportedResourceNames: readonly string[] = ['cpu', 'memory', 'ephemeral-storage'];

/**
 * isExtendedResourceName, as v1helper.IsExtendedResourceName: a qualified name with a domain
 * prefix outside `kubernetes.io/` (a native resource), not starting with `requests.`. Pure.
 */
export function isExtendedResourceName(name: string): boolean {
  if (!name.includes('/') || name.includes('kubernetes.io/') || name.startsWith('requests.')) return false;
  return qualifiedNameErrors(name).length === 0;
}

/** isHugePageResourceName, as v1helper.IsHugePageResourceName: `hugepages-<size>` (e.g. `hugepages-2Mi`). */
export function isHugePageResourceName(name: string): boolean {
  return name.startsWith('hugepages-') && quantityError(name.slice('hugepages-'.length)) === null;
}
/** Probe fields kubelet-ts implements (all of core/v1's). */
export const kSupportedProbeFields: readonly string[] = [
  'exec',
  'httpGet',
  'tcpSocket',
  'grpc',
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
];
/** Lifecycle hook handler fields kubelet-ts implements (tcpSocket, which the kubelet ignores, and sleep are not). */
export const kSupportedLifecycleHandlerFields: readonly string[] = ['exec', 'httpGet'];
/** `valueFrom.fieldRef.fieldPath` values kubelet-ts resolves, besides `metadata.labels['k']` and `metadata.annotations['k']`. */
export const kSupportedEnvFieldPaths: readonly string[] = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.podIP',
];
/** `valueFrom.resourceFieldRef.resource` values kubelet-ts resolves. */
export const kSupportedEnvResources: readonly string[] = ['limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'];

const kPullPolicies = ['Always', 'IfNotPresent', 'Never'];
const kProtocols = ['SCTP', 'TCP', 'UDP'];
const kTerminationMessagePolicies = ['File', 'FallbackToLogsOnError'];
const kSchemes = ['HTTP', 'HTTPS'];
const kCpuDivisors = [1e-3, 1];
const kMemoryDivisors = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei'];

/** What container checks need to know about the rest of the pod. */
export interface PodContext {
  /** Names of the pod's volumes (for volumeMounts). */
  volumeNames: ReadonlySet<string>;
  /** Names of all containers and init containers (for resourceFieldRef.containerName). */
  containerNames: ReadonlySet<string>;
  /** spec.hostNetwork. */
  hostNetwork: boolean;
  /** `hostPort/protocol` pairs seen so far in the pod (AccumulateUniqueHostPorts). */
  hostPorts: Set<string>;
}

/**
 * validateContainerList checks `spec.containers` or `spec.initContainers` (`path`), adding each
 * name to `names` and reporting names already in it as `Duplicate value`.
 */
export function validateContainerList(
  el: ErrorList,
  path: string,
  list: unknown[],
  init: boolean,
  ctx: PodContext,
  names: Set<string>,
): void {
  list.forEach((raw, i) => {
    const p = index(path, i);
    if (!isObj(raw)) {
      el.invalid(p, raw, 'must be an object');
      return;
    }
    validateContainer(el, p, raw, init, ctx, names);
  });
}

function validateContainer(el: ErrorList, path: string, c: Obj, init: boolean, ctx: PodContext, names: Set<string>): void {
  el.checkFields(path, c, kSupportedContainerFields);

  const namePath = child(path, 'name');
  const name = el.str(namePath, c.name);
  if (!name) el.required(namePath);
  else {
    for (const m of dns1123LabelErrors(name)) el.invalid(namePath, name, m);
    if (names.has(name)) el.duplicate(namePath, name);
    names.add(name);
  }

  const imagePath = child(path, 'image');
  const image = el.str(imagePath, c.image);
  if (!image) el.required(imagePath);
  else if (image.trim() !== image) el.invalid(imagePath, image, 'must not have leading or trailing whitespace');

  el.strList(child(path, 'command'), c.command);
  el.strList(child(path, 'args'), c.args);
  const wdPath = child(path, 'workingDir');
  const wd = el.str(wdPath, c.workingDir);
  if (wd && !isAbsolutePath(wd)) el.invalid(wdPath, wd, 'must be an absolute path');

  validatePorts(el, child(path, 'ports'), c.ports, ctx);
  validateEnv(el, child(path, 'env'), c.env, ctx);
  validateEnvFrom(el, child(path, 'envFrom'), c.envFrom);
  validateResources(el, child(path, 'resources'), c.resources);
  validateVolumeMounts(
    el,
    child(path, 'volumeMounts'),
    c.volumeMounts,
    ctx,
    isObj(c.securityContext) && c.securityContext.privileged === true,
  );
  validateContainerSecurityContext(el, child(path, 'securityContext'), c.securityContext);
  for (const f of ['stdin', 'stdinOnce', 'tty']) el.bool(child(path, f), c[f]);

  const rpPath = child(path, 'restartPolicy');
  const restartPolicy = el.str(rpPath, c.restartPolicy);
  if (restartPolicy !== undefined && restartPolicy !== '') {
    if (!init) el.forbidden(rpPath, 'may not be set for non-init containers');
    else if (restartPolicy !== 'Always') el.unsupported(rpPath, restartPolicy, ['Always']);
  }
  const sidecar = init && restartPolicy === 'Always';
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle'] as const) {
    if (init && !sidecar && c[probe] !== undefined && c[probe] !== null) {
      el.forbidden(child(path, probe), 'may not be set for init containers without restartPolicy=Always');
    } else if (probe === 'lifecycle') {
      validateLifecycle(el, child(path, probe), c.lifecycle);
    } else {
      validateProbe(el, child(path, probe), c[probe], probe !== 'readinessProbe');
    }
  }

  const tmpPath = child(path, 'terminationMessagePath');
  const tmp = el.str(tmpPath, c.terminationMessagePath);
  if (!tmp) el.required(tmpPath);
  else if (!isAbsolutePath(tmp)) el.invalid(tmpPath, tmp, 'must be an absolute path');
  enumField(el, child(path, 'terminationMessagePolicy'), c.terminationMessagePolicy, kTerminationMessagePolicies);
  enumField(el, child(path, 'imagePullPolicy'), c.imagePullPolicy, kPullPolicies);
}

/** A required string field that must be one of `allowed`. */
export function enumField(el: ErrorList, path: string, v: unknown, allowed: readonly string[]): void {
  const s = el.str(path, v);
  if (!s) {
    if (v === undefined || v === null || v === '') el.required(path);
  } else if (!allowed.includes(s)) el.unsupported(path, s, allowed);
}

function validatePorts(el: ErrorList, path: string, v: unknown, ctx: PodContext): void {
  const ports = el.list(path, v);
  if (!ports) return;
  const portNames = new Set<string>();
  ports.forEach((raw, i) => {
    const p = index(path, i);
    const port = el.obj(p, raw);
    if (!port) return;
    el.checkFields(p, port, kSupportedContainerPortFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, port.name);
    if (name) {
      for (const m of portNameErrors(name)) el.invalid(namePath, name, m);
      if (portNames.has(name)) el.duplicate(namePath, name);
      portNames.add(name);
    }
    const cpPath = child(p, 'containerPort');
    const containerPort = el.int(cpPath, port.containerPort, 'int32');
    if (port.containerPort === undefined || port.containerPort === null || containerPort === 0) el.required(cpPath);
    else if (containerPort !== undefined && (containerPort < 1 || containerPort > 65535))
      el.invalid(cpPath, containerPort, inclusiveRangeError(1, 65535));
    const hpPath = child(p, 'hostPort');
    const hostPort = el.int(hpPath, port.hostPort, 'int32');
    if (hostPort !== undefined && hostPort !== 0 && (hostPort < 1 || hostPort > 65535))
      el.invalid(hpPath, hostPort, inclusiveRangeError(1, 65535));
    const protoPath = child(p, 'protocol');
    enumField(el, protoPath, port.protocol, kProtocols);
    // hostIP, as validateContainerPorts: a valid IP address when set (used with a hostPort: portmap's hostIP).
    if (port.hostIP !== undefined && port.hostIP !== null && port.hostIP !== '') {
      const hipPath = child(p, 'hostIP');
      if (typeof port.hostIP !== 'string' || isIP(port.hostIP) === 0) el.invalid(hipPath, port.hostIP, 'must be a valid IP address');
    }
    if (ctx.hostNetwork && containerPort !== undefined && hostPort !== containerPort) {
      el.invalid(hpPath, hostPort ?? 0, 'must match `containerPort` when `hostNetwork` is true');
    }
    if (hostPort) {
      const key = `${hostPort}/${String(port.protocol)}`;
      if (ctx.hostPorts.has(key)) el.duplicate(hpPath, key);
      ctx.hostPorts.add(key);
    }
  });
}

function validateEnv(el: ErrorList, path: string, v: unknown, ctx: PodContext): void {
  const env = el.list(path, v);
  if (!env) return;
  env.forEach((raw, i) => {
    const p = index(path, i);
    const e = el.obj(p, raw);
    if (!e) return;
    el.checkFields(p, e, kSupportedEnvVarFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, e.name);
    if (!name) el.required(namePath);
    else for (const m of envVarNameErrors(name)) el.invalid(namePath, name, m);
    const value = el.str(child(p, 'value'), e.value);
    const vfPath = child(p, 'valueFrom');
    const vf = el.obj(vfPath, e.valueFrom);
    if (vf) validateEnvVarSource(el, vfPath, vf, value ?? '', ctx);
  });
}

/**
 * validateObjectRef: a `{name, optional}` reference to a ConfigMap or Secret (envFrom's
 * configMapRef/secretRef; with `key`, a configMapKeyRef/secretKeyRef), as validateConfigMapEnvSource
 * and validateSecretKeySelector: the name required and a DNS-1123 subdomain, the key required and
 * a config key (IsConfigMapKey).
 */
function validateObjectRef(el: ErrorList, path: string, ref: Obj, withKey: boolean): void {
  el.checkFields(path, ref, withKey ? ['name', 'key', 'optional'] : ['name', 'optional']);
  const namePath = child(path, 'name');
  const name = el.str(namePath, ref.name);
  if (!name) el.required(namePath);
  else for (const m of dns1123SubdomainErrors(name)) el.invalid(namePath, name, m);
  el.bool(child(path, 'optional'), ref.optional);
  if (!withKey) return;
  const keyPath = child(path, 'key');
  const key = el.str(keyPath, ref.key);
  if (!key) el.required(keyPath);
  else for (const m of configKeyErrors(key)) el.invalid(keyPath, key, m);
}

/** validateEnvFrom: each envFrom source (validateEnvFrom upstream): exactly one of configMapRef/secretRef, an optional `prefix` that is a valid variable name. */
function validateEnvFrom(el: ErrorList, path: string, v: unknown): void {
  const list = el.list(path, v);
  if (!list) return;
  list.forEach((raw, i) => {
    const p = index(path, i);
    const e = el.obj(p, raw);
    if (!e) return;
    el.checkFields(p, e, ['prefix', 'configMapRef', 'secretRef']);
    const prefixPath = child(p, 'prefix');
    const prefix = el.str(prefixPath, e.prefix);
    if (prefix) for (const m of envVarNameErrors(prefix)) el.invalid(prefixPath, prefix, m);
    const refs = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null);
    if (refs.length === 0) el.invalid(p, '', 'must specify one of: `configMapRef` or `secretRef`');
    if (refs.length > 1) el.invalid(p, '', 'may not have more than one field specified at a time');
    for (const k of refs) {
      const ref = el.obj(child(p, k), e[k]);
      if (ref) validateObjectRef(el, child(p, k), ref, false);
    }
  });
}

function validateEnvVarSource(el: ErrorList, path: string, vf: Obj, value: string, ctx: PodContext): void {
  el.checkFields(path, vf, kSupportedEnvVarSourceFields);
  const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((k) => vf[k] !== undefined && vf[k] !== null);
  if (value !== '' && sources.length > 0) el.invalid(path, '', 'may not be specified when `value` is not empty');
  if (sources.length === 0)
    el.invalid(path, '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`');
  if (sources.length > 1) el.invalid(path, '', 'may not have more than one field specified at a time');

  const frPath = child(path, 'fieldRef');
  const fr = el.obj(frPath, vf.fieldRef);
  if (fr) {
    el.checkFields(frPath, fr, ['apiVersion', 'fieldPath']);
    enumField(el, child(frPath, 'apiVersion'), fr.apiVersion, ['v1']);
    const fpPath = child(frPath, 'fieldPath');
    const fp = el.str(fpPath, fr.fieldPath);
    if (!fp) el.required(fpPath);
    else {
      const sub = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(fp);
      if (sub) {
        const key = sub[1] === 'annotations' ? sub[2].toLowerCase() : sub[2];
        for (const m of qualifiedNameErrors(key)) el.invalid(fpPath, sub[2], m);
      } else if (!kSupportedEnvFieldPaths.includes(fp)) {
        el.unsupported(fpPath, fp, [...kSupportedEnvFieldPaths, "metadata.labels['<KEY>']", "metadata.annotations['<KEY>']"]);
      }
    }
  }

  for (const k of ['configMapKeyRef', 'secretKeyRef']) {
    const ref = el.obj(child(path, k), vf[k]);
    if (ref) validateObjectRef(el, child(path, k), ref, true);
  }

  const rfPath = child(path, 'resourceFieldRef');
  const rf = el.obj(rfPath, vf.resourceFieldRef);
  if (rf) {
    el.checkFields(rfPath, rf, ['containerName', 'resource', 'divisor']);
    const cnPath = child(rfPath, 'containerName');
    const cn = el.str(cnPath, rf.containerName);
    if (cn && !ctx.containerNames.has(cn)) el.invalid(cnPath, cn, 'must be the name of a container in the pod');
    const resPath = child(rfPath, 'resource');
    const res = el.str(resPath, rf.resource);
    if (!res) el.required(resPath);
    else if (!kSupportedEnvResources.includes(res)) el.unsupported(resPath, res, kSupportedEnvResources);
    const divPath = child(rfPath, 'divisor');
    if (rf.divisor !== undefined && rf.divisor !== null && res) {
      const why = quantityError(rf.divisor);
      if (why) el.invalid(divPath, rf.divisor, why);
      else if (res.endsWith('.cpu') && !kCpuDivisors.includes(parseQuantity(rf.divisor as string))) {
        el.invalid(divPath, String(rf.divisor), "only divisor's values 1m and 1 are supported with the cpu resource");
      } else if (res.endsWith('.memory') && !kMemoryDivisors.some((d) => parseQuantity(d) === parseQuantity(rf.divisor as string))) {
        el.invalid(
          divPath,
          String(rf.divisor),
          `only divisor's values ${kMemoryDivisors.join(', ')} are supported with the memory resource`,
        );
      }
    }
  }
}

function validateResources(el: ErrorList, path: string, v: unknown): void {
  const r = el.obj(path, v);
  if (!r) return;
  el.checkFields(path, r, kSupportedResourceRequirementsFields);
  const parsed: Record<'limits' | 'requests', Map<string, { raw: unknown; value: number }>> = { limits: new Map(), requests: new Map() };
  for (const kind of ['limits', 'requests'] as const) {
    const kp = child(path, kind);
    const list = el.obj(kp, r[kind]);
    if (!list) continue;
    for (const [name, q] of Object.entries(list)) {
      const qp = index(kp, name);
      if (!kSupportedResourceNames.includes(name) && !isExtendedResourceName(name) && !isHugePageResourceName(name)) el.notSupported(qp);
      else if (quantityError(q)) {
        // A request defaulted from its limit (applyPodDefaults) repeats the limit's value: reported once.
        if (!(kind === 'requests' && isObj(r.limits) && r.limits[name] === q)) el.invalid(qp, q, quantityError(q)!);
      } else {
        const value = parseQuantity(q as string | number, qp);
        if (value < 0) el.invalid(qp, String(q), 'must be greater than or equal to 0');
        else parsed[kind].set(name, { raw: q, value });
      }
    }
  }
  for (const [name, req] of parsed.requests) {
    const lim = parsed.limits.get(name);
    const rp = index(child(path, 'requests'), name);
    if (isExtendedResourceName(name) || isHugePageResourceName(name)) {
      // Not overcommitable (ValidateResourceRequirements): the request must equal the limit.
      if (!lim) el.forbidden(rp, 'Limit must be set for non overcommitable resources');
      else if (req.value !== lim.value) el.invalid(rp, String(req.raw), `must be equal to ${name} limit of ${String(lim.raw)}`);
    } else if (lim && req.value > lim.value) {
      el.invalid(rp, String(req.raw), `must be less than or equal to ${name} limit of ${String(lim.raw)}`);
    }
  }
  for (const kind of ['limits', 'requests'] as const) {
    for (const [name, q] of parsed[kind]) {
      if (isExtendedResourceName(name) && !Number.isInteger(q.value))
        el.invalid(index(child(path, kind), name), String(q.raw), 'must be an integer');
    }
  }
  const hugePages = [...parsed.limits.keys()].some(isHugePageResourceName);
  if (
    hugePages &&
    !parsed.limits.has('cpu') &&
    !parsed.limits.has('memory') &&
    !parsed.requests.has('cpu') &&
    !parsed.requests.has('memory')
  ) {
    el.forbidden(path, 'HugePages require cpu or memory');
  }
}

function validateVolumeMounts(el: ErrorList, path: string, v: unknown, ctx: PodContext, privileged: boolean): void {
  const mounts = el.list(path, v);
  if (!mounts) return;
  const paths = new Set<string>();
  mounts.forEach((raw, i) => {
    const p = index(path, i);
    const m = el.obj(p, raw);
    if (!m) return;
    el.checkFields(p, m, kSupportedVolumeMountFields);
    const namePath = child(p, 'name');
    const name = el.str(namePath, m.name);
    if (!name) el.required(namePath);
    else if (!ctx.volumeNames.has(name)) el.notFound(namePath, name);
    const mpPath = child(p, 'mountPath');
    const mp = el.str(mpPath, m.mountPath);
    if (!mp) el.required(mpPath);
    else {
      if (!isAbsolutePath(mp)) el.invalid(mpPath, mp, 'must be an absolute path');
      if (paths.has(mp)) el.invalid(mpPath, mp, 'must be unique');
      paths.add(mp);
    }
    el.bool(child(p, 'readOnly'), m.readOnly);
    // As ValidateVolumeMounts: subPath and subPathExpr are local descending paths, and exclusive.
    const sp = el.str(child(p, 'subPath'), m.subPath);
    const spe = el.str(child(p, 'subPathExpr'), m.subPathExpr);
    if (sp && spe) el.invalid(child(p, 'subPathExpr'), spe, 'subPathExpr and subPath are mutually exclusive');
    if (sp) validateSubPath(el, child(p, 'subPath'), sp);
    if (spe) validateSubPath(el, child(p, 'subPathExpr'), spe);
    // validateMountPropagation: a known mode; Bidirectional only for a privileged container.
    const mpropPath = child(p, 'mountPropagation');
    const mprop = el.str(mpropPath, m.mountPropagation);
    if (mprop !== undefined && mprop !== '') {
      if (!kMountPropagationModes.includes(mprop)) el.unsupported(mpropPath, mprop, kMountPropagationModes);
      else if (mprop === 'Bidirectional' && !privileged)
        el.forbidden(mpropPath, 'Bidirectional mount propagation is available only to privileged containers');
    }
  });
}

/** A subPath or subPathExpr: relative, no `..` component (validateLocalDescendingPath). */
function validateSubPath(el: ErrorList, field: string, p: string): void {
  if (isAbsolutePath(p)) el.invalid(field, p, 'must be a relative path');
  if (p.split('/').includes('..')) el.invalid(field, p, "must not contain '..'");
  else if (p.startsWith('..')) el.invalid(field, p, "must not start with '..'");
}

function validateProbe(el: ErrorList, path: string, v: unknown, successMustBeOne: boolean): void {
  const probe = el.obj(path, v);
  if (!probe) return;
  el.checkFields(path, probe, kSupportedProbeFields);
  validateHandler(el, path, probe, ['exec', 'httpGet', 'tcpSocket', 'grpc'], []);
  // The timings and thresholds are int32 (seconds); the probe's grace period is an int64 and, when set, positive.
  el.nonNegative(child(path, 'initialDelaySeconds'), probe.initialDelaySeconds, 'int32');
  for (const f of ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'])
    el.atLeast(child(path, f), probe[f], 1, 'int32');
  const tgpPath = child(path, 'terminationGracePeriodSeconds');
  const tgp = el.int(tgpPath, probe.terminationGracePeriodSeconds);
  if (tgp !== undefined && tgp <= 0) el.invalid(tgpPath, tgp, 'must be greater than 0');
  if (successMustBeOne && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    el.invalid(child(path, 'successThreshold'), probe.successThreshold, 'must be 1');
  }
}

function validateLifecycle(el: ErrorList, path: string, v: unknown): void {
  const lc = el.obj(path, v);
  if (!lc) return;
  el.checkFields(path, lc, ['postStart', 'preStop']);
  for (const hook of ['postStart', 'preStop']) {
    const hp = child(path, hook);
    const h = el.obj(hp, lc[hook]);
    if (!h) continue;
    el.checkFields(hp, h, kSupportedLifecycleHandlerFields);
    validateHandler(el, hp, h, kSupportedLifecycleHandlerFields, ['tcpSocket', 'sleep']);
  }
}

/**
 * validateHandler: exactly one of `kinds` (validateHandler / validateLifecycleHandler). `others`
 * are handler kinds reported `Not supported` elsewhere; their presence suppresses `Required value`.
 */
function validateHandler(el: ErrorList, path: string, h: Obj, kinds: readonly string[], others: readonly string[]): void {
  const present = kinds.filter((k) => h[k] !== undefined && h[k] !== null);
  if (present.length === 0 && !others.some((k) => h[k] !== undefined && h[k] !== null)) el.required(path, 'must specify a handler type');
  for (const k of present.slice(1)) el.forbidden(child(path, k), 'may not specify more than 1 handler type');

  const exPath = child(path, 'exec');
  const ex = el.obj(exPath, h.exec);
  if (ex) {
    el.checkFields(exPath, ex, ['command']);
    const cmd = el.strList(child(exPath, 'command'), ex.command);
    if (!cmd || cmd.length === 0) el.required(child(exPath, 'command'));
  }
  const hgPath = child(path, 'httpGet');
  const hg = el.obj(hgPath, h.httpGet);
  if (hg) {
    el.checkFields(hgPath, hg, ['path', 'port', 'host', 'scheme', 'httpHeaders']);
    const pathPath = child(hgPath, 'path');
    if (!el.str(pathPath, hg.path)) el.required(pathPath);
    validatePortNumOrName(el, child(hgPath, 'port'), hg.port);
    el.str(child(hgPath, 'host'), hg.host);
    enumField(el, child(hgPath, 'scheme'), hg.scheme, kSchemes);
    const hdrPath = child(hgPath, 'httpHeaders');
    el.list(hdrPath, hg.httpHeaders)?.forEach((raw, i) => {
      const hp = index(hdrPath, i);
      const hdr = el.obj(hp, raw);
      if (!hdr) return;
      el.checkFields(hp, hdr, ['name', 'value']);
      const np = child(hp, 'name');
      const n = el.str(np, hdr.name);
      if (!n) el.required(np);
      else for (const m of httpHeaderNameErrors(n)) el.invalid(np, n, m);
      el.str(child(hp, 'value'), hdr.value);
    });
  }
  const tsPath = child(path, 'tcpSocket');
  const ts = kinds.includes('tcpSocket') ? el.obj(tsPath, h.tcpSocket) : undefined;
  if (ts) {
    el.checkFields(tsPath, ts, ['port', 'host']);
    validatePortNumOrName(el, child(tsPath, 'port'), ts.port);
    el.str(child(tsPath, 'host'), ts.host);
  }
  // validateGRPCAction: the port is an int32 number (no names) in 1–65535; the service is any string.
  const gPath = child(path, 'grpc');
  const g = kinds.includes('grpc') ? el.obj(gPath, h.grpc) : undefined;
  if (g) {
    el.checkFields(gPath, g, ['port', 'service']);
    const portPath = child(gPath, 'port');
    const port = el.int(portPath, g.port, 'int32');
    if (g.port === undefined || g.port === null) el.required(portPath);
    else if (port !== undefined && (port < 1 || port > 65535)) el.invalid(portPath, port, inclusiveRangeError(1, 65535));
    el.str(child(gPath, 'service'), g.service);
  }
}

/** ValidatePortNumOrName: an integer 1–65535 or an IANA_SVC_NAME. */
function validatePortNumOrName(el: ErrorList, path: string, v: unknown): void {
  if (v === undefined || v === null || v === '') el.required(path);
  else if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 1 || v > 65535) el.invalid(path, v, inclusiveRangeError(1, 65535));
  } else if (typeof v === 'string') {
    for (const m of portNameErrors(v)) el.invalid(path, v, m);
  } else el.invalid(path, v, 'must be an integer or a string');
}

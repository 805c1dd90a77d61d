// Counterpart of pkg/apis/core/validation/validation.go validateContainers / validateInitContainers.
/**
 * Container-level checks of {@link validatePod} (validation.ts): names, image, ports, the
 * container's own scalar fields, and the fields kubelet-ts does not implement. Env
 * (validation-container-env.ts), resources (validation-container-resources.ts), volume mounts
 * (validation-container-mounts.ts), probes and lifecycle hooks (validation-container-probes.ts)
 * have files of their own. Pure functions over decoded JSON, safe in any thread.
 */
import { isIP } from 'node:net';
import { dns1123LabelErrors, inclusiveRangeError, portNameErrors } from './names.js';
import { child, enumField, ErrorList, index, isAbsolutePath, isObj, type Obj } from './validation-util.js';
import { validateContainerSecurityContext } from './security-context.js';
import { validateEnv, validateEnvFrom } from './validation-container-env.js';
import { validateResources } from './validation-container-resources.js';
import { validateVolumeMounts } from './validation-container-mounts.js';
import { validateLifecycle, validateProbe } from './validation-container-probes.js';

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

const kPullPolicies = ['Always', 'IfNotPresent', 'Never'];
const kProtocols = ['SCTP', 'TCP', 'UDP'];
const kTerminationMessagePolicies = ['File', 'FallbackToLogsOnError'];

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

// Counterpart of pkg/apis/core/validation/validation.go ValidatePodCreate / ValidatePodSpec, for the fields we support.
/**
 * validatePod is the one validation every source runs (after applyPodDefaults). It returns
 * every problem, each with its field path and field.ErrorType words, never just the first.
 *
 * Fields kubelet-ts does not implement are reported as `Not supported` rather than silently
 * ignored; the exported `kSupported*Fields` lists are the allow-lists (the README lists them).
 * A field holding only a zero value (false, '', [], {}) asks for nothing and is tolerated.
 * Pure functions over decoded JSON (the input need not match its TypeScript type), safe in any thread.
 */
import type { FieldError } from './errors.js';
import type { Pod } from './api.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors, inclusiveRangeError } from './names.js';
import { parseQuantity, quantityError } from './quantity.js';
import { kAllVolumeSourceFields } from './defaults.js';
import { enumField, validateContainerList, type PodContext } from './validation-container.js';
import { validateRuntimeLimits } from './validation-runtime-limits.js';
import { kSchedulingPodSpecFields, validateSchedulingFields } from './validation-scheduling.js';
import { child, ErrorList, hasBacksteps, index, isAbsolutePath, isObj, type Obj } from './validation-util.js';

export {
  kSupportedContainerFields, kSupportedContainerPortFields, kSupportedEnvVarFields, kSupportedEnvVarSourceFields,
  kSupportedVolumeMountFields, kSupportedResourceRequirementsFields, kSupportedResourceNames, kSupportedProbeFields,
  kSupportedLifecycleHandlerFields, kSupportedEnvFieldPaths, kSupportedEnvResources,
} from './validation-container.js';

/** Top-level Pod fields. `status` is accepted and ignored on input: the agent owns the status. */
export const kSupportedPodFields: readonly string[] = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];
/** ObjectMeta fields kubelet-ts implements (generateName is not: a static pod needs a fixed name). */
export const kSupportedObjectMetaFields: readonly string[] = ['name', 'namespace', 'uid', 'labels', 'annotations'];
/**
 * ObjectMeta fields written by an apiserver, tolerated and ignored so that `kubectl get -o yaml`
 * output can be fed back in. Meaningful ones (ownerReferences, finalizers, deletionTimestamp) are not here.
 */
export const kIgnoredObjectMetaFields: readonly string[] = ['creationTimestamp', 'resourceVersion', 'generation', 'selfLink', 'managedFields'];
/**
 * PodSpec fields kubelet-ts implements. `tolerations` is accepted (and its shape validated) but
 * ignored: on a single node without taints-based eviction it has no effect. `securityContext`
 * must be empty. `priority` is recorded only.
 */
export const kSupportedPodSpecFields: readonly string[] = [
  ...kSchedulingPodSpecFields,
  'containers', 'initContainers', 'volumes', 'restartPolicy', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds',
  'dnsPolicy', 'nodeName', 'hostNetwork', 'shareProcessNamespace', 'serviceAccountName', 'serviceAccount',
  'schedulerName', 'securityContext', 'enableServiceLinks', 'hostname', 'priority', 'tolerations', 'imagePullSecrets',
];
/** Volume fields kubelet-ts implements: exactly one source, emptyDir or hostPath. Other sources are `Not supported`. */
export const kSupportedVolumeFields: readonly string[] = ['name', 'emptyDir', 'hostPath'];

const kRestartPolicies = ['Always', 'OnFailure', 'Never'];
const kDNSPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default'];
const kHostPathTypes = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];
const kEmptyDirMedia = ['', 'Memory'];
const kTotalAnnotationSizeLimitBytes = 256 * 1024;
const kMaxInt32 = 2147483647;

/**
 * validatePod checks a defaulted pod (see applyPodDefaults) as ValidatePodCreate does for the
 * fields we support, and reports the fields we do not support. Returns every FieldError
 * (empty when valid); render them with formatFieldError, e.g.
 * `spec.containers[1].name: Duplicate value: "web"`. Never throws. `status` is not checked.
 */
export function validatePod(pod: Pod): FieldError[] {
  const el = new ErrorList();
  const p = pod as unknown;
  if (!isObj(p)) {
    el.invalid('<root>', p, 'must be an object');
    return el.errors;
  }
  el.checkFields('', p, kSupportedPodFields);
  const meta = el.obj('metadata', p.metadata);
  if (!meta) el.required('metadata');
  else validateObjectMeta(el, 'metadata', meta);
  const spec = el.obj('spec', p.spec);
  if (!spec) el.required('spec');
  else validatePodSpec(el, 'spec', spec);
  return el.errors;
}

/**
 * validatePodForNode: `validatePod` plus this node's own refusal of fields it cannot run yet
 * (`kValidatedButNotYetRun`) and of resource quantities the container runtime cannot take
 * (validation-runtime-limits.ts), as the kubelet's admit handlers refuse a pod the node cannot run.
 * What every source calls before accepting a pod. Never throws.
 */
export function validatePodForNode(pod: Pod): FieldError[] {
  const errors = validatePod(pod);
  const el = new ErrorList();
  const spec = (pod as unknown as { spec?: unknown }).spec;
  if (isObj(spec)) {
    rejectNotYetRun(el, spec);
    validateRuntimeLimits(el, spec);
  }
  return [...errors, ...el.errors];
}

/**
 * Fields whose shape is validated above but which the sync engine does not act on yet: reported
 * `Not supported` so that a pod relying on them is refused rather than run without them (data
 * meant for a tmpfs silently landing on disk would be worse than an error). Remove an entry when
 * the runtime implements it. Keys are paths under `spec`; `containers[]` means every container
 * and init container, `volumes[]` every volume. Empty values (`''`, `[]`) count as unset.
 */
export const kValidatedButNotYetRun: readonly string[] = [
  'volumes[].emptyDir.medium', 'volumes[].emptyDir.sizeLimit',
];

function rejectNotYetRun(el: ErrorList, spec: Obj): void {
  const detail = 'not run by this version of kubelet-ts';
  const isSet = (v: unknown) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);
  const walk = (value: unknown, parts: string[], path: string): void => {
    if (parts.length === 0) {
      if (isSet(value)) el.notSupported(path, detail);
      return;
    }
    if (!isObj(value)) return;
    const [head, ...rest] = parts;
    if (!head.endsWith('[]')) return walk(value[head], rest, child(path, head));
    const lists = head === 'containers[]' ? ['containers', 'initContainers'] : [head.slice(0, -2)];
    for (const list of lists) {
      const items = value[list];
      if (Array.isArray(items)) items.forEach((item, i) => walk(item, rest, `${child(path, list)}[${i}]`));
    }
  };
  for (const key of kValidatedButNotYetRun) walk(spec, key.split('.'), 'spec');
}

function validateObjectMeta(el: ErrorList, path: string, meta: Obj): void {
  el.checkFields(path, meta, kSupportedObjectMetaFields, kIgnoredObjectMetaFields);
  const namePath = child(path, 'name');
  const name = el.str(namePath, meta.name);
  if (!name) el.required(namePath, 'name or generateName is required');
  else for (const m of dns1123SubdomainErrors(name)) el.invalid(namePath, name, m);
  const nsPath = child(path, 'namespace');
  const ns = el.str(nsPath, meta.namespace);
  if (!ns) el.required(nsPath);
  else for (const m of dns1123LabelErrors(ns)) el.invalid(nsPath, ns, m);
  el.str(child(path, 'uid'), meta.uid);

  const labelsPath = child(path, 'labels');
  for (const [k, v] of Object.entries(el.strMap(labelsPath, meta.labels) ?? {})) {
    for (const m of qualifiedNameErrors(k)) el.invalid(labelsPath, k, m);
    for (const m of labelValueErrors(v)) el.invalid(labelsPath, v, m);
  }
  const annPath = child(path, 'annotations');
  let total = 0;
  for (const [k, v] of Object.entries(el.strMap(annPath, meta.annotations) ?? {})) {
    for (const m of qualifiedNameErrors(k.toLowerCase())) el.invalid(annPath, k, m);
    total += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (total > kTotalAnnotationSizeLimitBytes) el.tooLong(annPath, `must have at most ${kTotalAnnotationSizeLimitBytes} bytes`);
}

/** imagePullSecrets: LocalObjectReferences (`{name}`) to Secrets of the pod's namespace, each name a DNS-1123 subdomain. */
function validateImagePullSecrets(el: ErrorList, path: string, v: unknown): void {
  el.list(path, v)?.forEach((raw, i) => {
    const p = `${path}[${i}]`;
    const ref = el.obj(p, raw);
    if (!ref) return;
    el.checkFields(p, ref, ['name']);
    const name = el.str(child(p, 'name'), ref.name);
    if (!name) el.required(child(p, 'name'));
    else for (const m of dns1123SubdomainErrors(name)) el.invalid(child(p, 'name'), name, m);
  });
}

function validatePodSpec(el: ErrorList, path: string, spec: Obj): void {
  el.checkFields(path, spec, kSupportedPodSpecFields);
  validateImagePullSecrets(el, child(path, 'imagePullSecrets'), spec.imagePullSecrets);

  const volumeNames = validateVolumes(el, child(path, 'volumes'), spec.volumes);
  const hostNetwork = el.bool(child(path, 'hostNetwork'), spec.hostNetwork) ?? false;
  el.bool(child(path, 'shareProcessNamespace'), spec.shareProcessNamespace);
  el.bool(child(path, 'enableServiceLinks'), spec.enableServiceLinks);

  const cPath = child(path, 'containers');
  const icPath = child(path, 'initContainers');
  const containers = el.list(cPath, spec.containers) ?? [];
  const initContainers = el.list(icPath, spec.initContainers) ?? [];
  if (containers.length === 0) el.required(cPath);
  const containerNames = new Set<string>();
  for (const c of [...containers, ...initContainers]) if (isObj(c) && typeof c.name === 'string') containerNames.add(c.name);
  const ctx: PodContext = { volumeNames, containerNames, hostNetwork, hostPorts: new Set() };
  // As upstream: containers first, then init containers, which must not reuse a container's name.
  const seen = new Set<string>();
  validateContainerList(el, cPath, containers, false, ctx, seen);
  validateContainerList(el, icPath, initContainers, true, ctx, seen);

  enumField(el, child(path, 'restartPolicy'), spec.restartPolicy, kRestartPolicies);
  const dnsPath = child(path, 'dnsPolicy');
  if (spec.dnsPolicy === 'None') el.notSupported(dnsPath, '"None" needs dnsConfig, which is not supported');
  else enumField(el, dnsPath, spec.dnsPolicy, kDNSPolicies);

  const tgpPath = child(path, 'terminationGracePeriodSeconds');
  el.nonNegative(tgpPath, spec.terminationGracePeriodSeconds);
  const adsPath = child(path, 'activeDeadlineSeconds');
  const ads = el.int(adsPath, spec.activeDeadlineSeconds);
  if (ads !== undefined && (ads < 1 || ads > kMaxInt32)) el.invalid(adsPath, ads, inclusiveRangeError(1, kMaxInt32));

  for (const f of ['nodeName', 'serviceAccountName', 'serviceAccount', 'schedulerName']) {
    const fp = child(path, f);
    const s = el.str(fp, spec[f]);
    if (s) for (const m of dns1123SubdomainErrors(s)) el.invalid(fp, s, m);
  }
  const hnPath = child(path, 'hostname');
  const hostname = el.str(hnPath, spec.hostname);
  if (hostname) for (const m of dns1123LabelErrors(hostname)) el.invalid(hnPath, hostname, m);
  el.int(child(path, 'priority'), spec.priority, 'int32');

  const scPath = child(path, 'securityContext');
  const sc = el.obj(scPath, spec.securityContext);
  if (sc) el.checkFields(scPath, sc, []);
  validateTolerations(el, child(path, 'tolerations'), spec.tolerations);
  validateSchedulingFields(el, path, spec);
}

/** Validates spec.volumes; returns the set of volume names. */
function validateVolumes(el: ErrorList, path: string, v: unknown): Set<string> {
  const names = new Set<string>();
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const vol = el.obj(p, raw);
    if (!vol) return;
    // No PersistentVolume controller binds a claim on a lone node: refused with the reason.
    if (vol.persistentVolumeClaim !== undefined && vol.persistentVolumeClaim !== null) {
      el.notSupported(child(p, 'persistentVolumeClaim'), 'there is no volume binding on a lone node (no apiserver or PersistentVolume controller to bind the claim); use hostPath or emptyDir');
    }
    el.checkFields(p, vol, kSupportedVolumeFields, ['persistentVolumeClaim']);
    const namePath = child(p, 'name');
    const name = el.str(namePath, vol.name);
    if (!name) el.required(namePath);
    else {
      for (const m of dns1123LabelErrors(name)) el.invalid(namePath, name, m);
      if (names.has(name)) el.duplicate(namePath, name);
      names.add(name);
    }
    const sources = kAllVolumeSourceFields.filter((k) => vol[k] !== undefined && vol[k] !== null);
    if (sources.length === 0) el.required(p, 'must specify a volume type');
    for (const k of sources.slice(1)) el.forbidden(child(p, k), 'may not specify more than 1 volume type');

    const edPath = child(p, 'emptyDir');
    const ed = el.obj(edPath, vol.emptyDir);
    if (ed) {
      el.checkFields(edPath, ed, ['medium', 'sizeLimit']);
      const medium = el.str(child(edPath, 'medium'), ed.medium);
      if (medium !== undefined && !kEmptyDirMedia.includes(medium)) el.unsupported(child(edPath, 'medium'), medium, kEmptyDirMedia);
      const slPath = child(edPath, 'sizeLimit');
      if (ed.sizeLimit !== undefined && ed.sizeLimit !== null) {
        const why = quantityError(ed.sizeLimit);
        if (why) el.invalid(slPath, ed.sizeLimit, why);
        else if (parseQuantity(ed.sizeLimit as string | number, slPath) < 0) el.invalid(slPath, String(ed.sizeLimit), 'must be greater than or equal to 0');
      }
    }
    const hpPath = child(p, 'hostPath');
    const hp = el.obj(hpPath, vol.hostPath);
    if (hp) {
      el.checkFields(hpPath, hp, ['path', 'type']);
      const pathPath = child(hpPath, 'path');
      const hostPath = el.str(pathPath, hp.path);
      if (!hostPath) el.required(pathPath);
      else {
        if (!isAbsolutePath(hostPath)) el.invalid(pathPath, hostPath, 'must be an absolute path');
        if (hasBacksteps(hostPath)) el.invalid(pathPath, hostPath, "must not contain '..'");
      }
      const typePath = child(hpPath, 'type');
      const type = el.str(typePath, hp.type);
      if (type !== undefined && !kHostPathTypes.includes(type)) el.unsupported(typePath, type, kHostPathTypes);
    }
  });
  return names;
}

/** validateTolerations: the shape only (validateTolerations upstream); tolerations have no effect here. */
function validateTolerations(el: ErrorList, path: string, v: unknown): void {
  el.list(path, v)?.forEach((raw, i) => {
    const p = index(path, i);
    const t = el.obj(p, raw);
    if (!t) return;
    el.checkFields(p, t, ['key', 'operator', 'value', 'effect', 'tolerationSeconds']);
    const key = el.str(child(p, 'key'), t.key) ?? '';
    if (key) for (const m of qualifiedNameErrors(key)) el.invalid(child(p, 'key'), key, m);
    const opPath = child(p, 'operator');
    const op = el.str(opPath, t.operator) ?? '';
    const value = el.str(child(p, 'value'), t.value) ?? '';
    if (!key && op !== 'Exists') el.invalid(opPath, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"');
    if (op === 'Exists' && value) el.invalid(opPath, t, 'value must be empty when `operator` is \'Exists\'');
    else if (op === 'Equal' || op === '') {
      for (const m of labelValueErrors(value)) el.invalid(child(p, 'value'), value, m);
    } else if (op !== 'Exists') el.unsupported(opPath, op, ['Equal', 'Exists']);
    const effPath = child(p, 'effect');
    const effect = el.str(effPath, t.effect) ?? '';
    if (effect && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) {
      el.unsupported(effPath, effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
    }
    const ts = el.int(child(p, 'tolerationSeconds'), t.tolerationSeconds);
    if (ts !== undefined && effect !== 'NoExecute') el.invalid(effPath, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set");
  });
}

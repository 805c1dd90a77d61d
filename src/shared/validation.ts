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
import { validateEphemeralContainers } from './validation-ephemeral.js';
import type { FieldError } from './errors.js';
import type { Pod } from './api.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors, inclusiveRangeError } from './names.js';
import { validateLabelsAndAnnotations } from './validation-meta.js';
import { parseQuantity, quantityError } from './quantity.js';
import { validateContainerList, type PodContext } from './validation-container.js';
import { validateVolumes } from './validation-volumes.js';
import { validateExecArgs } from './validation-exec-args.js';
import { validateRuntimeLimits } from './validation-runtime-limits.js';
import { kSupportedPodSandboxFields, rejectForeignOS, validatePodSandboxFields } from './validation-sandbox.js';
import { kSchedulingPodSpecFields, validateSchedulingFields } from './validation-scheduling.js';
import { child, enumField, ErrorList, hasBacksteps, index, isAbsolutePath, isObj, type Obj } from './validation-util.js';
import {
  appArmorFromAnnotation,
  kAppArmorAnnotationPrefix,
  rejectUnrunnableSecurity,
  validatePodSecurityContext,
} from './security-context.js';

export { kSupportedContainerFields, kSupportedContainerPortFields } from './validation-container.js';
export {
  kSupportedEnvVarFields,
  kSupportedEnvVarSourceFields,
  kSupportedEnvFieldPaths,
  kSupportedEnvResources,
} from './validation-container-env.js';
export { kSupportedVolumeMountFields } from './validation-container-mounts.js';
export { kSupportedResourceRequirementsFields, kSupportedResourceNames } from './validation-container-resources.js';
export { kSupportedProbeFields, kSupportedLifecycleHandlerFields } from './validation-container-probes.js';

/** Top-level Pod fields. `status` is accepted and ignored on input: the agent owns the status. */
export const kSupportedPodFields: readonly string[] = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];
/** ObjectMeta fields kubelet-ts implements (generateName is not: a static pod needs a fixed name). */
export const kSupportedObjectMetaFields: readonly string[] = ['name', 'namespace', 'uid', 'labels', 'annotations'];
/**
 * ObjectMeta fields written by an apiserver, tolerated and ignored so that `kubectl get -o yaml`
 * output can be fed back in. Meaningful ones (ownerReferences, finalizers, deletionTimestamp) are not here.
 */
export const kIgnoredObjectMetaFields: readonly string[] = [
  'creationTimestamp',
  'resourceVersion',
  'generation',
  'selfLink',
  'managedFields',
];
/**
 * PodSpec fields kubelet-ts implements. `tolerations` is accepted (and its shape validated) but
 * ignored: on a single node without taints-based eviction it has no effect. `securityContext`
 * holds security-context.ts's fields. `priority` is recorded only. `hostUsers: false` is refused
 * by validatePodForNode (no per-pod user namespace with Docker).
 */
export const kSupportedPodSpecFields: readonly string[] = [
  ...kSchedulingPodSpecFields,
  'containers',
  'initContainers',
  'ephemeralContainers',
  'volumes',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeName',
  'hostNetwork',
  'shareProcessNamespace',
  'serviceAccountName',
  'serviceAccount',
  'schedulerName',
  'securityContext',
  'enableServiceLinks',
  'hostname',
  'priority',
  'tolerations',
  'imagePullSecrets',
  'hostUsers',
  ...kSupportedPodSandboxFields,
];
export { kSupportedVolumeFields, kSupportedProjectionFields } from './validation-volumes.js';

const kRestartPolicies = ['Always', 'OnFailure', 'Never'];
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
  if (meta && spec) validateAppArmorAnnotations(el, meta, spec);
  return el.errors;
}

/**
 * validatePodForNode: `validatePod` plus this node's own refusal of fields it cannot run yet
 * (`kValidatedButNotYetRun`) and of resource quantities the container runtime cannot take
 * (validation-runtime-limits.ts) and of arguments execve(2) cannot take (validation-exec-args.ts), as the kubelet's admit handlers refuse a pod the node cannot run.
 * What every source calls before accepting a pod. Never throws.
 */
export function validatePodForNode(pod: Pod): FieldError[] {
  const errors = validatePod(pod);
  const el = new ErrorList();
  const spec = (pod as unknown as { spec?: unknown }).spec;
  if (isObj(spec)) {
    rejectNotYetRun(el, spec);
    rejectForeignOS(el, 'spec', spec);
    rejectUnrunnableSecurity(el, spec);
    validateRuntimeLimits(el, spec);
    validateExecArgs(el, spec);
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
export const kValidatedButNotYetRun: readonly string[] = [];

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
  validateUid(el, child(path, 'uid'), el.str(child(path, 'uid'), meta.uid));

  validateLabelsAndAnnotations(el, path, meta);
}

/** The longest `metadata.uid` accepted: a UUID (36) or a static pod's hash (32) with room to spare. */
export const kMaxUidLength = 128;
const kUidPattern = /^[A-Za-z0-9-]+$/;

/**
 * validateUid: a set `metadata.uid` must be 1–{@link kMaxUidLength} letters, digits or `-` (a
 * UUID as the apiserver writes, or the hex hash of a static pod). The apiserver never checks a
 * UID because it writes it itself (staging/src/k8s.io/apiserver/pkg/registry/rest/create.go
 * FillObjectMetaSystemFields); this node takes it from its sources, and names each container
 * `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>` (split on `_`, as the kubelet's
 * dockershim naming did) and each pod directory `<root-dir>/pods/<uid>`, so `_`, `/` and `.`
 * would make a pod it can never find again, or a path outside its directory. Empty means unset.
 */
function validateUid(el: ErrorList, path: string, uid: string | undefined): void {
  if (!uid) return;
  if (uid.length > kMaxUidLength) el.tooLong(path, `must have at most ${kMaxUidLength} characters`);
  else if (!kUidPattern.test(uid)) {
    el.invalid(
      path,
      uid,
      "must consist of letters, digits or '-' (e.g. a UUID): the node's container names split on '_' and its pod directories on '/'",
    );
  }
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
  validateEphemeralContainers(
    el,
    child(path, 'ephemeralContainers'),
    el.list(child(path, 'ephemeralContainers'), spec.ephemeralContainers) ?? [],
    ctx,
    seen,
  );

  enumField(el, child(path, 'restartPolicy'), spec.restartPolicy, kRestartPolicies);
  validatePodSandboxFields(el, path, spec);

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

  el.bool(child(path, 'hostUsers'), spec.hostUsers);
  validatePodSecurityContext(el, child(path, 'securityContext'), spec.securityContext, { hostNetwork, hostIPC: spec.hostIPC === true });
  validateTolerations(el, child(path, 'tolerations'), spec.tolerations);
  validateSchedulingFields(el, path, spec);
}

/**
 * validateAppArmorAnnotations: each legacy `container.apparmor.security.beta.kubernetes.io/<name>`
 * annotation names a container of the pod and holds `runtime/default`, `unconfined` or
 * `localhost/<profile>` (ValidateAppArmorProfileFormat and the container-name check).
 */
function validateAppArmorAnnotations(el: ErrorList, meta: Obj, spec: Obj): void {
  if (!isObj(meta.annotations)) return;
  const names = new Set<string>();
  for (const list of ['containers', 'initContainers']) {
    const items = spec[list];
    if (Array.isArray(items)) for (const c of items) if (isObj(c) && typeof c.name === 'string') names.add(c.name);
  }
  for (const [k, v] of Object.entries(meta.annotations)) {
    if (!k.startsWith(kAppArmorAnnotationPrefix) || typeof v !== 'string') continue;
    const path = `metadata.annotations[${k}]`;
    if (!names.has(k.slice(kAppArmorAnnotationPrefix.length))) el.invalid(path, k, 'container not found');
    else if (!appArmorFromAnnotation(v))
      el.invalid(path, v, 'invalid AppArmor profile name: must be "runtime/default", "unconfined" or "localhost/<profile>"');
  }
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
    if (!key && op !== 'Exists')
      el.invalid(opPath, op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"');
    if (op === 'Exists' && value) el.invalid(opPath, t, "value must be empty when `operator` is 'Exists'");
    else if (op === 'Equal' || op === '') {
      for (const m of labelValueErrors(value)) el.invalid(child(p, 'value'), value, m);
    } else if (op !== 'Exists') el.unsupported(opPath, op, ['Equal', 'Exists']);
    const effPath = child(p, 'effect');
    const effect = el.str(effPath, t.effect) ?? '';
    if (effect && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) {
      el.unsupported(effPath, effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
    }
    const ts = el.int(child(p, 'tolerationSeconds'), t.tolerationSeconds);
    if (ts !== undefined && effect !== 'NoExecute')
      el.invalid(effPath, effect, "effect must be 'NoExecute' when `tolerationSeconds` is set");
  });
}

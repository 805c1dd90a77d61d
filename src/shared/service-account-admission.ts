/**
 * The apiserver's ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount/admission.go),
 * run by the node's API on the pods it is given (the `api` source: POST and PUT), as the apiserver
 * runs it on a create: `spec.serviceAccountName` defaults to `default`, and unless automounting is
 * off (the pod's `automountServiceAccountToken`, else the ServiceAccount's, else true) every init
 * and app container gets the `kube-api-access-<5 chars>` projected volume mounted read-only at
 * {@link kServiceAccountMountPath} — a bound token (`serviceAccountToken`, 3607 s), the
 * `kube-root-ca.crt` ConfigMap's `ca.crt` and the downward API's `namespace` — unless it mounts
 * something at that path already.
 *
 * Differences from upstream, for a lone node: a ServiceAccount is never looked up (upstream answers
 * 403 `error looking up service account` for one that does not exist): every name a pod gives is a
 * ServiceAccount of its namespace (server/kube-api lists them), so manifests naming their own
 * account keep running. Pods of the other sources (static, etcd) are not admitted, as upstream
 * the kubelet's own sources never pass the apiserver. Pure.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Pod, Volume, VolumeMount } from './api.js';

/** kServiceAccountMountPath: where the token volume is mounted (admission.go DefaultAPITokenMountPath). */
export const kServiceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
/** kServiceAccountVolumePrefix: the generated volume's name prefix (admission.go ServiceAccountVolumeName + "-"). */
export const kServiceAccountVolumePrefix = 'kube-api-access-';
/** kDefaultServiceAccountName: the ServiceAccount of a pod that names none (admission.go DefaultServiceAccountName). */
export const kDefaultServiceAccountName = 'default';
/** kRootCaConfigMapName: the ConfigMap holding the API's CA in every namespace (pkg/controller/certificates/rootcacertpublisher). */
export const kRootCaConfigMapName = 'kube-root-ca.crt';
/**
 * kWarnOnlyBoundTokenExpirationSeconds: the generated volume's token lifetime, seconds (admission.go
 * uses serviceaccount.WarnOnlyBoundTokenExpirationSeconds, 1 h + 7 s, so that a token is known to be one
 * made by admission).
 */
export const kWarnOnlyBoundTokenExpirationSeconds = 3607;

/** utilrand's alphabet (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits). */
const kAlphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** randomVolumeSuffix: 5 characters of utilrand's alphabet (rand.String(5)). */
export function randomVolumeSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += kAlphabet[randomInt(kAlphabet.length)];
  return s;
}

/** Options of {@link admitServiceAccount}. */
export interface ServiceAccountAdmissionOptions {
  /** The ServiceAccount's own `automountServiceAccountToken` (absent = not set: true). */
  serviceAccountAutomount?: boolean;
  /** The generated volume's name when one is added (default `kube-api-access-` + randomVolumeSuffix()). */
  volumeName?: string;
}

/**
 * serviceAccountTokenVolume: the projected volume admission adds (admission.go createVolume):
 * token (3607 s), `kube-root-ca.crt`'s `ca.crt`, and `namespace` from `metadata.namespace`, default mode 0644.
 */
export function serviceAccountTokenVolume(name: string): Volume {
  return {
    name,
    projected: {
      defaultMode: 0o644,
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: kWarnOnlyBoundTokenExpirationSeconds } },
        { configMap: { name: kRootCaConfigMapName, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/** podServiceAccountName: the pod's ServiceAccount (`serviceAccountName`, else the deprecated `serviceAccount`, else `default`). Pure. */
export function podServiceAccountName(pod: Pod): string {
  return pod.spec?.serviceAccountName || pod.spec?.serviceAccount || kDefaultServiceAccountName;
}

/**
 * admitServiceAccount mutates `pod` in place as the ServiceAccount admission plugin does on a create
 * (see the file's comment): sets `spec.serviceAccountName` (and the deprecated `serviceAccount` to
 * match), and when automounting adds the mount to every init and app container without a mount at
 * {@link kServiceAccountMountPath}, and the volume if one was needed and the pod has no
 * `kube-api-access-*` volume yet (an existing one is reused by name). Ephemeral containers are left
 * as they are. A pod without a spec is left alone (validation refuses it). Returns `pod`.
 */
export function admitServiceAccount(pod: Pod, opts: ServiceAccountAdmissionOptions = {}): Pod {
  const spec = pod.spec as (Pod['spec'] & { serviceAccount?: string }) | undefined;
  if (!spec) return pod;
  const name = podServiceAccountName(pod);
  spec.serviceAccountName = name;
  spec.serviceAccount = name;
  const automount = spec.automountServiceAccountToken ?? opts.serviceAccountAutomount ?? true;
  if (!automount) return pod;
  const existing = (spec.volumes ?? []).find((v) => v.name.startsWith(kServiceAccountVolumePrefix));
  const volumeName = existing?.name ?? opts.volumeName ?? `${kServiceAccountVolumePrefix}${randomVolumeSuffix()}`;
  const mount: VolumeMount = { name: volumeName, readOnly: true, mountPath: kServiceAccountMountPath };
  let needsVolume = false;
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if ((c.volumeMounts ?? []).some((m) => m.mountPath === kServiceAccountMountPath)) continue;
    c.volumeMounts = [...(c.volumeMounts ?? []), { ...mount }];
    needsVolume = true;
  }
  if (needsVolume && !existing) spec.volumes = [...(spec.volumes ?? []), serviceAccountTokenVolume(volumeName)];
  return pod;
}

/**
 * admitServiceAccountReplace: {@link admitServiceAccount} for a replace of `old` by `pod` (a PUT): the
 * token volume keeps the name `old` has, so a PUT of the bare manifest changes no container; a pod
 * stored without one (before admission mounted tokens) gets none unless it asks with
 * `automountServiceAccountToken: true`. Mutates and returns `pod`.
 */
export function admitServiceAccountReplace(pod: Pod, old: Pod | undefined): Pod {
  const saVolume = serviceAccountVolumeOf(old);
  return admitServiceAccount(pod, saVolume ? { volumeName: saVolume } : { serviceAccountAutomount: false });
}

/** serviceAccountVolumeOf: the name of the pod's `kube-api-access-*` volume, if it has one (to keep it on a replace). Pure. */
export function serviceAccountVolumeOf(pod: Pod | undefined): string | undefined {
  return pod?.spec?.volumes?.find((v) => v.name.startsWith(kServiceAccountVolumePrefix))?.name;
}

/**
 * serviceAccountUid: the UID of ServiceAccount `namespace/name` on this node: UUID-shaped and stable
 * (SHA-256 of the two), so the UID the API shows and the one in a token's claims agree across
 * restarts. A token is still only good on the node whose key signed it. Pure.
 */
export function serviceAccountUid(namespace: string, name: string): string {
  const h = createHash('sha256').update(`serviceaccount\0${namespace}\0${name}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** ServiceAccountObject: a core/v1 ServiceAccount as the node's API shows it. */
export interface ServiceAccountObject {
  apiVersion: 'v1';
  kind: 'ServiceAccount';
  metadata: { name: string; namespace: string; uid: string; creationTimestamp?: string };
}

/** serviceAccountObject: the ServiceAccount `namespace/name` (created when its namespace was, `creationTimestamp` RFC 3339). Pure. */
export function serviceAccountObject(namespace: string, name: string, creationTimestamp?: string): ServiceAccountObject {
  return {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name, namespace, uid: serviceAccountUid(namespace, name), ...(creationTimestamp ? { creationTimestamp } : {}) },
  };
}

/**
 * Counterpart of the patch struct tags of k8s.io/api/core/v1 (types.go: `patchStrategy:"merge"
 * patchMergeKey:"name"`, `patchStrategy:"merge,retainKeys"`) and of the `x-kubernetes-list-type`
 * / `x-kubernetes-list-map-keys` markers that server-side apply reads: which lists of a Pod merge
 * by which key. Everything not named here is a map merged key by key (maps) or an atomic value
 * replaced whole (lists, scalars), as strategicpatch does for fields without a strategy. Pure data.
 */

/**
 * PatchMeta: the patch strategy of one field. A list with `mergeKey` merges its items (objects) by
 * that key (`items` describes an item); a list with `primitiveMerge` is a set of scalars merged by
 * union (metadata.finalizers); `retainKeys` marks the `merge,retainKeys` lists (volumes). `fields`
 * describes an object's own fields.
 */
export interface PatchMeta {
  mergeKey?: string;
  primitiveMerge?: boolean;
  retainKeys?: boolean;
  items?: PatchMeta;
  fields?: Readonly<Record<string, PatchMeta>>;
}

const kContainer: PatchMeta = {
  fields: {
    ports: { mergeKey: 'containerPort', items: {} },
    env: { mergeKey: 'name', items: {} },
    volumeMounts: { mergeKey: 'mountPath', items: {} },
    volumeDevices: { mergeKey: 'devicePath', items: {} },
  },
};

const kObjectMeta: PatchMeta = {
  fields: {
    finalizers: { primitiveMerge: true },
    ownerReferences: { mergeKey: 'uid', items: {} },
  },
};

const kPodSpec: PatchMeta = {
  fields: {
    volumes: { mergeKey: 'name', retainKeys: true, items: {} },
    initContainers: { mergeKey: 'name', items: kContainer },
    containers: { mergeKey: 'name', items: kContainer },
    ephemeralContainers: { mergeKey: 'name', items: kContainer },
    imagePullSecrets: { mergeKey: 'name', items: {} },
    hostAliases: { mergeKey: 'ip', items: {} },
    topologySpreadConstraints: { mergeKey: 'topologyKey', items: {} },
    resourceClaims: { mergeKey: 'name', retainKeys: true, items: {} },
    schedulingGates: { mergeKey: 'name', items: {} },
  },
};

const kPodStatus: PatchMeta = {
  fields: {
    conditions: { mergeKey: 'type', items: {} },
    podIPs: { mergeKey: 'ip', items: {} },
    hostIPs: { mergeKey: 'ip', items: {} },
    initContainerStatuses: {},
    containerStatuses: {},
    resourceClaimStatuses: { mergeKey: 'name', retainKeys: true, items: {} },
  },
};

/** kPodPatchMeta: the patch strategies of a core/v1 Pod, from its metadata down to its containers' lists. */
export const kPodPatchMeta: PatchMeta = {
  fields: { metadata: kObjectMeta, spec: kPodSpec, status: kPodStatus },
};

/** kConfigObjectPatchMeta: a ConfigMap's or Secret's patch strategies: its metadata's lists only (`data`, `binaryData`, `stringData` are maps merged key by key). */
export const kConfigObjectPatchMeta: PatchMeta = {
  fields: { metadata: kObjectMeta },
};

/** childMeta: the PatchMeta of field `key` under `meta`, or undefined (no strategy: the defaults). */
export function childMeta(meta: PatchMeta | undefined, key: string): PatchMeta | undefined {
  return meta?.fields !== undefined && Object.prototype.hasOwnProperty.call(meta.fields, key) ? meta.fields[key] : undefined;
}

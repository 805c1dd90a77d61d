/**
 * Counterpart of the apiserver's Table printers (pkg/printers/internalversion/printers.go: printPod,
 * printNode, printEvent, printNamespace, printConfigMap, printSecret, with their column
 * definitions) and of meta.k8s.io/v1 Table (k8s.io/apimachinery/pkg/apis/meta/v1 types.go:
 * TableColumnDefinition, TableRow, IncludeObjectPolicy). The pod STATUS, READY and RESTARTS cells
 * come from shared/pod-printer.ts, the one implementation. Pure functions.
 */
import type { Event, Node, Pod } from '../../shared/api.js';
import type { ConfigObject } from '../../shared/config-objects.js';
import type { PersistentVolumeClaim } from '../../shared/pvc.js';
import { podStatusReason } from '../../shared/pod-printer.js';
import { humanDuration, since } from '../../shared/human-duration.js';

/** TableColumn: meta/v1 TableColumnDefinition; `priority` 0 columns are the default view, 1 adds `-o wide`. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

/** IncludeObject: `?includeObject=` (None, Metadata — the default — or Object). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** Table: a meta.k8s.io/v1 Table; `columnDefinitions` is empty in watch events after the first. */
export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  columnDefinitions: TableColumn[];
  rows: { cells: (string | number)[]; object?: unknown }[];
}

/** TablePrinter: one kind's columns and its row cells (cells line up with the columns). */
export interface TablePrinter<T> {
  columns: readonly TableColumn[];
  cells(object: T, nowMs: number): (string | number)[];
}

const col = (name: string, description: string, priority = 0, format = ''): TableColumn => ({
  name,
  type: 'string',
  format,
  description,
  priority,
});
const kNameColumn = col('Name', 'Name must be unique within a namespace (metadata.name).', 0, 'name');
const kAgeColumn = col('Age', 'Time since the object was created (metadata.creationTimestamp).');

/** kPodPrinter: NAME READY STATUS RESTARTS AGE, and IP NODE NOMINATED NODE READINESS GATES (priority 1), as printPod. */
export const kPodPrinter: TablePrinter<Pod> = {
  columns: [
    kNameColumn,
    col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'The aggregate status of the containers in this pod.'),
    col(
      'Restarts',
      'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    ),
    kAgeColumn,
    col('IP', 'IP address allocated to the pod.', 1),
    col('Node', 'Name of the Node the Pod is bound to.', 1),
    col('Nominated Node', 'Name of the node the Pod is nominated to; only set by the scheduler for preemption.', 1),
    col('Readiness Gates', 'Pod readiness gates: conditions that must be True, out of all of them.', 1),
  ],
  cells(pod, nowMs) {
    const s = podStatusReason(pod);
    const restarts = s.lastRestartMs > 0 ? `${s.restarts} (${humanDuration(nowMs - s.lastRestartMs)} ago)` : String(s.restarts);
    const gates = pod.spec?.readinessGates ?? [];
    const conditions = pod.status?.conditions ?? [];
    const gatesCell =
      gates.length === 0
        ? '<none>'
        : `${gates.filter((g) => conditions.some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}`;
    return [
      pod.metadata?.name ?? '',
      `${s.ready}/${s.total}`,
      s.reason,
      restarts,
      since(pod.metadata?.creationTimestamp, nowMs),
      pod.status?.podIP || '<none>',
      pod.spec?.nodeName || '<none>',
      pod.status?.nominatedNodeName || '<none>',
      gatesCell,
    ];
  },
};

function nodeStatus(n: Node): string {
  const ready = (n.status?.conditions ?? []).find((c) => c.type === 'Ready');
  let s = ready?.status === 'True' ? 'Ready' : ready?.status === 'False' ? 'NotReady' : 'Unknown';
  if (n.spec?.unschedulable) s += ',SchedulingDisabled';
  return s;
}

function nodeRoles(n: Node): string {
  const roles = Object.keys(n.metadata?.labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .filter((r) => r !== '');
  const role = n.metadata?.labels?.['kubernetes.io/role'];
  if (role) roles.push(role);
  return roles.length === 0 ? '<none>' : [...new Set(roles)].sort().join(',');
}

/** kNodePrinter: NAME STATUS ROLES AGE VERSION, and INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION CONTAINER-RUNTIME (priority 1), as printNode. */
export const kNodePrinter: TablePrinter<Node> = {
  columns: [
    kNameColumn,
    col('Status', 'The status of the node.'),
    col('Roles', 'The roles of the node.'),
    kAgeColumn,
    col('Version', 'Kubelet version reported by the node.'),
    col('Internal-IP', "The node's InternalIP address.", 1),
    col('External-IP', "The node's ExternalIP address.", 1),
    col('OS-Image', 'OS image reported by the node.', 1),
    col('Kernel-Version', 'Kernel version reported by the node.', 1),
    col('Container-Runtime', 'Container runtime reported by the node.', 1),
  ],
  cells(n, nowMs) {
    const addr = (type: string) => (n.status?.addresses ?? []).find((a) => a.type === type)?.address ?? '<none>';
    const info = n.status?.nodeInfo;
    return [
      n.metadata?.name ?? '',
      nodeStatus(n),
      nodeRoles(n),
      since(n.metadata?.creationTimestamp, nowMs),
      info?.kubeletVersion ?? '',
      addr('InternalIP'),
      addr('ExternalIP'),
      info?.osImage || '<unknown>',
      info?.kernelVersion || '<unknown>',
      info?.containerRuntimeVersion || '<unknown>',
    ];
  },
};

/** eventLastSeen: printEvent's LAST SEEN: the last time, with `(xN over D)` when the event repeated. */
function eventLastSeen(e: Event, nowMs: number): string {
  const last = e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
  const first = e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp;
  const count = e.count ?? e.series?.count ?? 1;
  if (count > 1 && first) return `${since(last, nowMs)} (x${count} over ${since(first, nowMs)})`;
  return since(last, nowMs);
}

/** kEventPrinter: LAST SEEN TYPE REASON OBJECT MESSAGE, with SUBOBJECT SOURCE FIRST SEEN COUNT NAME (priority 1), as printEvent. */
export const kEventPrinter: TablePrinter<Event> = {
  columns: [
    col('Last Seen', 'Time since the event was last seen.'),
    col('Type', 'Type of this event (Normal, Warning).'),
    col('Reason', 'Why the action was taken.'),
    col('Object', 'The object this event is about.'),
    col('Subobject', 'The part of the object this event is about (fieldPath).', 1),
    col('Source', 'The component reporting this event.', 1),
    col('Message', 'A description of the event.'),
    col('First Seen', 'Time since the event was first seen.', 1),
    col('Count', 'How many times this event was seen.', 1),
    col('Name', 'Name of the event.', 1, 'name'),
  ],
  cells(e, nowMs) {
    const io = e.involvedObject ?? {};
    const source = [e.source?.component ?? e.reportingComponent ?? '', e.source?.host ?? ''].filter((s) => s !== '').join(', ');
    return [
      eventLastSeen(e, nowMs),
      e.type ?? '',
      e.reason ?? '',
      `${(io.kind ?? '').toLowerCase()}/${io.name ?? ''}`,
      io.fieldPath ?? '',
      source,
      (e.message ?? '').trim(),
      since(e.firstTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp, nowMs),
      e.count ?? 1,
      e.metadata?.name ?? '',
    ];
  },
};

/** NamespaceObject: a core/v1 Namespace as this node shows one. */
export interface NamespaceObject {
  apiVersion: 'v1';
  kind: 'Namespace';
  metadata: {
    name: string;
    uid?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: { finalizers: string[] };
  status: { phase: 'Active' | 'Terminating' };
}

/** kNamespacePrinter: NAME STATUS AGE, as printNamespace. */
export const kNamespacePrinter: TablePrinter<NamespaceObject> = {
  columns: [kNameColumn, col('Status', 'The status of the namespace.'), kAgeColumn],
  cells: (n, nowMs) => [n.metadata.name, n.status.phase, since(n.metadata.creationTimestamp, nowMs)],
};

/** kConfigMapPrinter: NAME DATA AGE, as printConfigMap. */
export const kConfigMapPrinter: TablePrinter<ConfigObject> = {
  columns: [kNameColumn, { ...col('Data', 'The number of keys.'), type: 'integer' }, kAgeColumn],
  cells: (o, nowMs) => [
    o.metadata?.name ?? '',
    Object.keys(o.data ?? {}).length + Object.keys((o as { binaryData?: object }).binaryData ?? {}).length,
    since(o.metadata?.creationTimestamp, nowMs),
  ],
};

/** kServiceAccountPrinter: NAME SECRETS AGE, as printServiceAccount (no token Secrets: the node's tokens are bound ones). */
export const kServiceAccountPrinter: TablePrinter<{ metadata: { name: string; creationTimestamp?: string } }> = {
  columns: [kNameColumn, { ...col('Secrets', 'The number of secrets of the service account.'), type: 'integer' }, kAgeColumn],
  cells: (o, nowMs) => [o.metadata.name, 0, since(o.metadata.creationTimestamp, nowMs)],
};

/** kSecretPrinter: NAME TYPE DATA AGE, as printSecret. */
export const kSecretPrinter: TablePrinter<ConfigObject> = {
  columns: [kNameColumn, col('Type', 'The type of the secret.'), { ...col('Data', 'The number of keys.'), type: 'integer' }, kAgeColumn],
  cells: (o, nowMs) => {
    // A redacted Secret (redactConfigObject) names its keys in an annotation instead of carrying data.
    const keys = o.data
      ? Object.keys(o.data).length
      : (o.metadata?.annotations?.['kubelet-ts/secret-keys'] ?? '').split(',').filter((k) => k !== '').length;
    return [o.metadata?.name ?? '', (o as { type?: string }).type ?? 'Opaque', keys, since(o.metadata?.creationTimestamp, nowMs)];
  },
};

/** kAccessModeShort: how printPersistentVolumeClaim abbreviates access modes (helper.GetAccessModesAsString). */
const kAccessModeShort: Record<string, string> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};

/**
 * kPvcPrinter: NAME STATUS VOLUME CAPACITY ACCESS MODES STORAGECLASS VOLUMEATTRIBUTESCLASS AGE, as
 * printPersistentVolumeClaim (pkg/printers/internalversion): STATUS `Terminating` once deleted.
 */
export const kPvcPrinter: TablePrinter<ConfigObject> = {
  columns: [
    kNameColumn,
    col('Status', 'The phase of the claim.'),
    col('Volume', 'The volume bound.'),
    col('Capacity', 'The capacity bound.'),
    col('Access Modes', 'The access modes bound.'),
    col('StorageClass', 'The storage class.'),
    col('VolumeAttributesClass', 'The volume attributes class.'),
    kAgeColumn,
  ],
  cells: (o, nowMs) => {
    const c = o as PersistentVolumeClaim;
    const status = c.metadata?.deletionTimestamp ? 'Terminating' : (c.status?.phase ?? 'Pending');
    const modes = (c.status?.accessModes ?? []).map((m) => kAccessModeShort[m] ?? m).join(',');
    return [
      c.metadata?.name ?? '',
      status,
      c.spec?.volumeName ?? '',
      String(c.status?.capacity?.storage ?? ''),
      modes,
      c.spec?.storageClassName ?? '',
      '<unset>',
      since(c.metadata?.creationTimestamp, nowMs),
    ];
  },
};

/** rowObject: a row's `object` by `?includeObject=`: the whole object, its PartialObjectMetadata, or none. */
function rowObject(object: { apiVersion?: string; kind?: string; metadata?: unknown }, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata ?? {} };
}

/**
 * toTable builds a meta.k8s.io/v1 Table of `objects` (each with apiVersion/kind set) with
 * `printer`'s columns; `noHeaders` leaves `columnDefinitions` empty (watch events after the
 * first, as the apiserver's watch encoder does). Pure.
 */
export function toTable<T extends { apiVersion?: string; kind?: string; metadata?: unknown }>(
  printer: TablePrinter<T>,
  objects: readonly T[],
  opts: {
    include: IncludeObject;
    nowMs: number;
    resourceVersion?: string;
    noHeaders?: boolean;
    continue?: string;
    remainingItemCount?: number;
  },
): Table {
  const rows = objects.map((o) => {
    const row: Table['rows'][number] = { cells: printer.cells(o, opts.nowMs) };
    const object = rowObject(o, opts.include);
    if (object !== undefined) row.object = object;
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: {
      ...(opts.resourceVersion === undefined ? {} : { resourceVersion: opts.resourceVersion }),
      ...(opts.continue === undefined ? {} : { continue: opts.continue }),
      ...(opts.remainingItemCount === undefined ? {} : { remainingItemCount: opts.remainingItemCount }),
    },
    columnDefinitions: opts.noHeaders ? [] : [...printer.columns],
    rows,
  };
}

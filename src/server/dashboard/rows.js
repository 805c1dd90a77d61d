// The pod table: one row per pod UID, updated in place (keyed: a changed pod touches only its own
// cells, a new pod is inserted at its sorted place, nothing is re-rendered). The STATUS, READY and
// RESTARTS columns are kubectl get pods' (podStatusReason of src/shared/pod-printer.ts, served
// compiled as /dashboard/pod-printer.js); CPU and MEMORY are kubectl top pod's, with sparklines.
import { $, setText, el, age } from './dom.js';
import { podStatusReason } from './pod-printer.js';
import { usage, formatCpu, formatMemory, drawSparkline, latest } from './stats.js';
import { lastEventFor } from './events.js';

/** uid → entry { uid, pod, row, cells, summary, created, haystack, phase } */
export const pods = new Map();
/** The entries in table order (the current sort). */
let order = [];
let sortMode = 'name';
let hooks = { onSelect() {}, onDelete() {}, onChanged() {} };
const namespaces = new Set();
let nodeName = '';
let selectedUid = '';

/** setRowHooks: `onSelect(uid)` on a row click, `onDelete(uid, button)` on its Delete, `onChanged(uid, pod|undefined)` after each change. */
export function setRowHooks(h) {
  hooks = { ...hooks, ...h };
}

/**
 * statusTone: the badge colour class of a STATUS word: ok (Running), done (Completed, Succeeded),
 * wait (Pending, ContainerCreating, Init:i/n, PodInitializing, NotReady), term (Terminating) or bad
 * (CrashLoopBackOff, ImagePullBackOff, Error, OOMKilled, ExitCode:N, Init:Error, Failed, …).
 */
export function statusTone(reason) {
  if (reason === 'Running') return 'ok';
  if (reason === 'Completed' || reason === 'Succeeded') return 'done';
  if (reason === 'Terminating') return 'term';
  if (['Pending', 'ContainerCreating', 'PodInitializing', 'NotReady', 'Unknown'].includes(reason) || /^Init:\d+\/\d+$/.test(reason))
    return 'wait';
  return 'bad';
}

function sortValue(entry) {
  if (sortMode === 'cpu') return latest(usage.get(entry.uid)?.cpu) ?? -1;
  if (sortMode === 'memory') return latest(usage.get(entry.uid)?.mem) ?? -1;
  if (sortMode === 'restarts') return entry.summary.restarts;
  return 0;
}

/** compare: the current sort, highest first for the figures, then namespace/name/uid. */
function compare(a, b) {
  if (sortMode !== 'name') {
    const d = b.sortValue - a.sortValue;
    if (d !== 0) return d;
  }
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

function insertAt(entry) {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compare(order[mid], entry) < 0) lo = mid + 1;
    else hi = mid;
  }
  order.splice(lo, 0, entry);
  $('pod-rows').insertBefore(entry.row, order[lo + 1]?.row ?? null);
}

/** setSort: `name` | `cpu` | `memory` | `restarts`; reorders the rows (moves only those out of place). */
export function setSort(mode) {
  sortMode = mode;
  resort();
}

function resort() {
  for (const e of order) e.sortValue = sortValue(e);
  order.sort(compare);
  const tbody = $('pod-rows');
  let cursor = tbody.firstElementChild;
  for (const e of order) {
    if (e.row === cursor) cursor = cursor.nextElementSibling;
    else tbody.insertBefore(e.row, cursor);
  }
}

function newRow(uid) {
  const row = el('tr', { data: { uid } });
  const cells = {};
  for (const name of ['namespace', 'name', 'status', 'ready', 'restarts', 'age', 'cpu', 'memory', 'node', 'event', 'actions']) {
    cells[name] = row.appendChild(el('td', { className: `col-${name}` }));
  }
  cells.badge = cells.status.appendChild(el('span', { className: 'status' }));
  for (const name of ['cpu', 'memory']) {
    cells[`${name}Text`] = cells[name].appendChild(el('span', { className: 'figure' }));
    cells[`${name}Spark`] = cells[name].appendChild(el('canvas', { className: 'spark', width: 56, height: 18 }));
  }
  cells.actions.appendChild(el('button', { type: 'button', className: 'delete', textContent: 'Delete' }));
  return { row, cells };
}

/** applyBatch applies one frame's watch events (Map uid → {type, object}). */
export function applyBatch(batch) {
  for (const [uid, event] of batch) {
    if (event.type === 'DELETED') removePod(uid);
    else upsertPod(uid, event.object);
  }
}

function upsertPod(uid, pod) {
  let entry = pods.get(uid);
  const key = `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}\u0000${uid}`;
  const summary = podStatusReason(pod);
  if (!entry) {
    entry = { uid, ...newRow(uid), key, pod, summary, sortValue: 0 };
    pods.set(uid, entry);
    entry.sortValue = sortValue(entry);
    insertAt(entry);
    const ns = pod.metadata.namespace ?? 'default';
    if (!namespaces.has(ns)) addNamespace(ns);
    if (!nodeName && pod.spec?.nodeName) setNodeName(pod.spec.nodeName);
    if (uid === selectedUid) entry.row.classList.add('selected');
    renderRowStats(entry);
  } else if (entry.summary.reason !== summary.reason && !entry.row.hidden) {
    // Web Animations: no forced layout (a class toggle would need a reflow per row to restart).
    entry.row.animate([{ backgroundColor: '#fefcbf' }, { backgroundColor: 'transparent' }], { duration: 1000, easing: 'ease-out' });
  }
  entry.pod = pod;
  entry.summary = summary;
  entry.phase = pod.status?.phase ?? 'Pending';
  const { cells } = entry;
  setText(cells.namespace, pod.metadata.namespace ?? 'default');
  setText(cells.name, pod.metadata.name);
  setText(cells.badge, summary.reason);
  cells.status.dataset.status = summary.reason;
  cells.badge.title = summary.reason;
  cells.badge.dataset.tone = statusTone(summary.reason);
  entry.row.dataset.phase = entry.phase;
  setText(cells.ready, `${summary.ready}/${summary.total}`);
  cells.ready.classList.toggle('partial', summary.ready < summary.total && entry.phase === 'Running');
  setText(
    cells.restarts,
    summary.restarts && summary.lastRestartMs ? `${summary.restarts} (${age(summary.lastRestartMs)} ago)` : String(summary.restarts),
  );
  cells.restarts.classList.toggle('some', summary.restarts > 0);
  setText(cells.node, pod.spec?.nodeName || nodeName);
  entry.created = Date.parse(pod.metadata.creationTimestamp ?? pod.status?.startTime ?? '') || entry.created || Date.now();
  setText(cells.age, age(entry.created));
  const labels = Object.entries(pod.metadata.labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  entry.haystack =
    `${pod.metadata.namespace} ${pod.metadata.name} ${summary.reason} ${entry.phase} ${pod.spec?.nodeName || nodeName} ${labels}`.toLowerCase();
  renderEvent(entry);
  applyFilter(entry);
  if (sortMode === 'restarts' && entry.sortValue !== summary.restarts) {
    order.splice(order.indexOf(entry), 1);
    entry.sortValue = summary.restarts;
    insertAt(entry);
  }
  hooks.onChanged(uid, pod);
}

function removePod(uid) {
  const entry = pods.get(uid);
  if (!entry) return;
  pods.delete(uid);
  const i = order.indexOf(entry);
  if (i >= 0) order.splice(i, 1);
  entry.row.remove();
  hooks.onChanged(uid, undefined);
}

/** select marks the row of `uid` as the one shown in the detail panel ('' = none). */
export function select(uid) {
  pods.get(selectedUid)?.row.classList.remove('selected');
  selectedUid = uid;
  pods.get(uid)?.row.classList.add('selected');
}

/** renderStats writes the CPU and memory cells and sparklines of the visible rows (after a stats poll); resorts when sorted by them. */
export function renderStats() {
  for (const entry of pods.values()) renderRowStats(entry);
  if (sortMode === 'cpu' || sortMode === 'memory') resort();
}

/** renderRowStats writes one row's CPU and memory figures, and its sparklines when the row is shown. */
function renderRowStats(entry) {
  const u = usage.get(entry.uid);
  setText(entry.cells.cpuText, formatCpu(latest(u?.cpu)));
  setText(entry.cells.memoryText, formatMemory(latest(u?.mem)));
  if (entry.row.hidden || !u) return;
  drawSparkline(entry.cells.cpuSpark, u.cpu, '#326ce5', 5);
  drawSparkline(entry.cells.memorySpark, u.mem, '#805ad5', 4 * 1024 * 1024);
}

function renderEvent(entry) {
  const e = lastEventFor(entry.uid);
  setText(entry.cells.event, e ? `${e.reason}: ${e.message}` : '');
  entry.cells.event.classList.toggle('warning', e?.type === 'Warning');
  if (e) entry.cells.event.title = e.message;
}

/** renderEvents refreshes every row's Last event cell (after an events poll). */
export function renderEvents() {
  for (const entry of pods.values()) renderEvent(entry);
}

/** tickAges rewrites the AGE cells of the visible rows (once a second). */
export function tickAges() {
  for (const entry of pods.values()) if (!entry.row.hidden) setText(entry.cells.age, age(entry.created));
}

function addNamespace(ns) {
  namespaces.add(ns);
  const selectEl = $('filter-namespace');
  const option = el('option', { value: ns, textContent: ns });
  const after = [...selectEl.options].slice(1).find((o) => o.value > ns);
  selectEl.insertBefore(option, after ?? null);
}

function applyFilter(entry) {
  const ns = $('filter-namespace').value;
  const text = $('filter-text').value.trim().toLowerCase();
  const show =
    (!ns || (entry.pod.metadata.namespace ?? 'default') === ns) && (!text || text.split(/\s+/).every((t) => entry.haystack.includes(t)));
  if (entry.row.hidden === show) {
    entry.row.hidden = !show;
    if (show) renderRowStats(entry); // hidden rows' sparklines are not drawn
  }
}

/** applyAllFilters re-applies the namespace and text filters to every row. */
export function applyAllFilters() {
  for (const entry of pods.values()) applyFilter(entry);
}

/** setNodeName names the node (GET /node, else the first pod's spec.nodeName) for pods without spec.nodeName. */
export function setNodeName(name) {
  nodeName = name;
  $('node-name').textContent = `node ${name}`;
  for (const entry of pods.values()) if (!entry.pod.spec?.nodeName) setText(entry.cells.node, name);
}

$('pod-rows').addEventListener('click', (e) => {
  const row = e.target.closest('tr');
  const uid = row?.dataset.uid;
  if (!uid || !pods.has(uid)) return;
  const button = e.target.closest('button.delete');
  if (button) hooks.onDelete(uid, button);
  else hooks.onSelect(uid);
});

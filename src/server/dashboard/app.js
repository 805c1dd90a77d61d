// kubelet-ts live dashboard (plain ES module, no build step): watches WS /watch/pods and keeps one
// table row per pod UID up to date. Events are queued per pod and applied once per animation
// frame (keyed row updates, never a full re-render), so 500 pods and bursts of changes stay cheap.
// The page itself loads without a token. Reads work anonymously on a loopback agent; when an API
// call answers 401 (a write such as a row's Delete, or any read under --anonymous-auth=false) it
// asks for a bearer token (e.g. the agent's <root-dir>/admin.token), keeps it in sessionStorage,
// sends it as `Authorization: Bearer` on fetch and as the apiserver's
// `base64url.bearer.authorization.k8s.io.` subprotocol on the watch.

const $ = (id) => document.getElementById(id);
const kPhases = ['Running', 'Pending', 'Succeeded', 'Failed', 'Unknown'];
/** Latency buckets (upper bounds, seconds) of the pod start histogram. */
const kBuckets = [0.5, 1, 2, 5, 10, 20, 30, 60, Infinity];
const kBucketLabels = ['<.5s', '.5–1', '1–2', '2–5', '5–10', '10–20', '20–30', '30–60', '>60s'];

/** uid → { pod, row, cells, key, haystack } */
const pods = new Map();
/** Sorted row keys (`namespace/name\0uid`) for keyed insertion. */
const order = [];
/** Pending watch events by uid, applied on the next animation frame. */
let pending = new Map();
let frameRequested = false;
let summaryDirty = true;
const namespaces = new Set();
/** uid → last core/v1 Event (from GET /events). */
const lastEvents = new Map();
/** Pod start latencies in seconds, and the bookkeeping to measure ADDED → Running once per pod. */
const latencies = [];
const addedAt = new Map();
const measured = new Set();
let resourceVersion = '';
let live = false;
/** UIDs not yet confirmed by a fresh list (after a reconnect without resourceVersion). */
let stale = null;
let retryMs = 500;
/** This node's name (GET /node, else the first pod's spec.nodeName): shown for pods without spec.nodeName. */
let nodeName = '';

// ---------------------------------------------------------------- bearer token (--token-auth-file)

const kTokenKey = 'kubelet-ts.token';
/** The subprotocol offered beside the token's: the server echoes it back (a browser needs one). */
const kWatchProtocol = 'watch.kubelet-ts';
const kBearerProtocolPrefix = 'base64url.bearer.authorization.k8s.io.';
let token = sessionStorage.getItem(kTokenKey) ?? '';
/** True while the token prompt is shown: the watch waits for a token instead of retrying. */
let waitingForToken = false;

/** fetch of an API path with the token; a 401 shows the prompt. `used` is the token sent. */
async function api(path) {
  const used = token;
  const res = await fetch(path, { headers: { Accept: 'application/json', ...(used ? { Authorization: `Bearer ${used}` } : {}) } });
  if (res.status === 401) askForToken(used);
  return res;
}

/**
 * deletePod: the row's Delete action, `DELETE /pods/{ns}/{name}` with the token. A 401 shows the
 * prompt without stopping the (anonymous) watch; the user signs in and clicks Delete again. Other
 * failures (403 for a read-only token, 404 for a static pod) show the Status message on the button.
 */
async function deletePod(namespace, name, button) {
  const used = token;
  button.disabled = true;
  try {
    const res = await fetch(`/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`, {
      method: 'DELETE', headers: { Accept: 'application/json', ...(used ? { Authorization: `Bearer ${used}` } : {}) },
    });
    if (res.ok) {
      button.textContent = 'Deleting…';
      return;
    }
    if (res.status === 401) askForToken(used, { write: true });
    const status = await res.json().catch(() => ({}));
    button.title = status.message ?? `${res.status}`;
    button.textContent = res.status === 401 ? 'Sign in to delete' : `Refused (${res.status})`;
  } catch {
    button.textContent = 'Agent unreachable';
  } finally {
    button.disabled = false;
  }
}

/** base64url without padding of the token's UTF-8 bytes (Go's base64.RawURLEncoding). */
function base64url(text) {
  let bin = '';
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * askForToken shows the prompt after a 401 answered to a request sent with `used` ('' = none).
 * For a write (`write: true`) the watch keeps running: anonymous reads may still be allowed.
 */
function askForToken(used, { write = false } = {}) {
  if (used !== token) return; // a newer token was entered meanwhile
  if (used) {
    token = '';
    sessionStorage.removeItem(kTokenKey);
    $('token-error').textContent = 'That token was refused.';
  }
  if (write) {
    $('token-form').hidden = false;
    $('token-input').focus();
    return;
  }
  if (waitingForToken) return;
  waitingForToken = true;
  setConn('auth', 'token needed');
  $('token-form').hidden = false;
  $('token-input').focus();
}

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const value = $('token-input').value.trim();
  if (!value) return;
  token = value;
  sessionStorage.setItem(kTokenKey, token);
  $('token-input').value = '';
  $('token-error').textContent = '';
  $('token-form').hidden = true;
  waitingForToken = false;
  retryMs = 500;
  clearTimeout(retryTimer);
  connect();
  void loadNode();
});

// ---------------------------------------------------------------- watch connection

/** The watch socket while it is connecting or open. */
let socket = null;
let retryTimer;

function connect() {
  if (waitingForToken || socket) return;
  const url = new URL('/watch/pods', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (resourceVersion) url.searchParams.set('resourceVersion', resourceVersion);
  else stale = new Set(pods.keys());
  live = false;
  setConn('connecting', 'connecting…');
  const used = token;
  const ws = new WebSocket(url, used ? [`${kBearerProtocolPrefix}${base64url(used)}`, kWatchProtocol] : []);
  socket = ws;
  let opened = false;
  ws.onopen = () => {
    opened = true;
    retryMs = 500;
  };
  ws.onmessage = (msg) => {
    let event;
    try {
      event = JSON.parse(msg.data);
    } catch {
      return;
    }
    onEvent(event);
  };
  ws.onclose = async () => {
    socket = null;
    // A refused handshake does not tell the page why: ask an API path whether a token is needed.
    if (!opened) await needsToken(used);
    if (waitingForToken) return; // the prompt's submit reconnects
    setConn('down', `disconnected — retrying in ${Math.round(retryMs / 1000)}s`);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };
}

/** needsToken asks GET /node with `used`: a 401 shows the prompt (unless a newer token was entered). */
async function needsToken(used) {
  try {
    const res = await fetch('/node', { headers: { Accept: 'application/json', ...(used ? { Authorization: `Bearer ${used}` } : {}) } });
    if (res.status === 401) askForToken(used);
  } catch {
    // the agent is down: retry as usual
  }
}

function onEvent(event) {
  const { type, object } = event;
  if (type === 'ERROR') {
    // 410 Gone/Expired: our resourceVersion is too old (or from an earlier agent run): list again.
    resourceVersion = '';
    return;
  }
  const rv = object?.metadata?.resourceVersion;
  if (rv) resourceVersion = rv;
  if (type === 'BOOKMARK') {
    if (stale) {
      for (const uid of stale) queue(uid, { type: 'DELETED', object: pods.get(uid)?.pod });
      stale = null;
    }
    live = true;
    setConn('live', 'live');
    $('rv').textContent = `resourceVersion ${resourceVersion}`;
    return;
  }
  const uid = object?.metadata?.uid;
  if (!uid) return;
  stale?.delete(uid);
  if (type === 'ADDED' && live && !addedAt.has(uid)) addedAt.set(uid, performance.now());
  queue(uid, event);
}

function queue(uid, event) {
  pending.set(uid, event);
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(flush);
  }
}

function setConn(state, text) {
  const el = $('conn');
  el.dataset.state = state;
  el.textContent = text;
}

// ---------------------------------------------------------------- rows

function flush() {
  frameRequested = false;
  const batch = pending;
  pending = new Map();
  for (const [uid, event] of batch) {
    if (event.type === 'DELETED') removePod(uid);
    else upsertPod(uid, event.object);
  }
  if (batch.size) {
    summaryDirty = true;
    $('rv').textContent = `resourceVersion ${resourceVersion}`;
  }
  if (summaryDirty) renderSummary();
}

function rowKey(pod) {
  return `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}\u0000${pod.metadata.uid}`;
}

function insertSorted(key) {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (order[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  order.splice(lo, 0, key);
  return lo;
}

function removeSorted(key) {
  const i = order.indexOf(key);
  if (i >= 0) order.splice(i, 1);
}

function newRow(uid) {
  const row = document.createElement('tr');
  row.dataset.uid = uid;
  const cells = {};
  for (const name of ['namespace', 'name', 'phase', 'ready', 'restarts', 'age', 'node', 'event', 'actions']) {
    const td = document.createElement('td');
    td.className = `col-${name}`;
    row.appendChild(td);
    cells[name] = td;
  }
  const badge = document.createElement('span');
  badge.className = 'phase';
  cells.phase.appendChild(badge);
  cells.badge = badge;
  const del = document.createElement('button');
  del.type = 'button';
  del.className = 'delete';
  del.textContent = 'Delete';
  del.addEventListener('click', () => {
    const pod = pods.get(uid)?.pod;
    if (pod) void deletePod(pod.metadata.namespace ?? 'default', pod.metadata.name, del);
  });
  cells.actions.appendChild(del);
  return { row, cells };
}

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

function displayPhase(pod) {
  if (pod.metadata?.deletionTimestamp) return 'Terminating';
  return pod.status?.phase ?? 'Pending';
}

function upsertPod(uid, pod) {
  let entry = pods.get(uid);
  const key = rowKey(pod);
  if (!entry) {
    entry = { ...newRow(uid), key, pod };
    pods.set(uid, entry);
    const i = insertSorted(key);
    const next = order[i + 1];
    const tbody = $('pod-rows');
    tbody.insertBefore(entry.row, next ? pods.get(next.split('\u0000')[1])?.row ?? null : null);
    const ns = pod.metadata.namespace ?? 'default';
    if (!namespaces.has(ns)) addNamespace(ns);
    if (!nodeName && pod.spec?.nodeName) setNodeName(pod.spec.nodeName);
  } else if (entry.phase !== displayPhase(pod) && entry.phase !== undefined && !entry.row.hidden) {
    // Web Animations: no forced layout (a class toggle would need a reflow per row to restart).
    entry.row.animate([{ backgroundColor: '#fefcbf' }, { backgroundColor: 'transparent' }], { duration: 1000, easing: 'ease-out' });
  }
  entry.pod = pod;
  const { cells } = entry;
  const phase = displayPhase(pod);
  entry.phase = phase;
  const statuses = pod.status?.containerStatuses ?? [];
  const total = pod.spec?.containers?.length ?? statuses.length;
  const ready = statuses.filter((c) => c.ready).length;
  const restarts = statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0);
  setText(cells.namespace, pod.metadata.namespace ?? 'default');
  setText(cells.name, pod.metadata.name);
  setText(cells.badge, phase);
  cells.badge.dataset.phase = phase;
  cells.phase.dataset.phase = phase;
  setText(cells.ready, `${ready}/${total}`);
  cells.ready.classList.toggle('partial', ready < total && phase === 'Running');
  setText(cells.restarts, String(restarts));
  cells.restarts.classList.toggle('some', restarts > 0);
  setText(cells.node, pod.spec?.nodeName || nodeName);
  entry.created = Date.parse(pod.status?.startTime ?? pod.metadata.creationTimestamp ?? '') || entry.created || Date.now();
  setText(cells.age, age(entry.created));
  entry.ready = ready;
  entry.total = total;
  entry.restarts = restarts;
  const labels = Object.entries(pod.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(' ');
  entry.haystack = `${pod.metadata.namespace} ${pod.metadata.name} ${phase} ${pod.spec?.nodeName || nodeName} ${labels} ${pod.status?.reason ?? ''}`.toLowerCase();
  renderEvent(uid, entry);
  applyFilter(entry);
  measureStart(uid, pod);
}

function removePod(uid) {
  const entry = pods.get(uid);
  if (!entry) return;
  pods.delete(uid);
  removeSorted(entry.key);
  entry.row.remove();
  addedAt.delete(uid);
  measured.delete(uid);
}

// ---------------------------------------------------------------- filters

function addNamespace(ns) {
  namespaces.add(ns);
  const select = $('filter-namespace');
  const option = document.createElement('option');
  option.value = ns;
  option.textContent = ns;
  const after = [...select.options].slice(1).find((o) => o.value > ns);
  select.insertBefore(option, after ?? null);
}

function applyFilter(entry) {
  const ns = $('filter-namespace').value;
  const text = $('filter-text').value.trim().toLowerCase();
  const show = (!ns || (entry.pod.metadata.namespace ?? 'default') === ns) && (!text || text.split(/\s+/).every((t) => entry.haystack.includes(t)));
  if (entry.row.hidden === show) entry.row.hidden = !show;
}

function applyAllFilters() {
  for (const entry of pods.values()) applyFilter(entry);
  summaryDirty = true;
  renderSummary();
}

// ---------------------------------------------------------------- summary and latency chart

function renderSummary() {
  summaryDirty = false;
  const counts = Object.fromEntries(kPhases.map((p) => [p, 0]));
  let ready = 0;
  let total = 0;
  let restarts = 0;
  let shown = 0;
  for (const e of pods.values()) {
    const phase = e.pod.status?.phase ?? 'Pending';
    counts[phase in counts ? phase : 'Unknown']++;
    ready += e.ready;
    total += e.total;
    restarts += e.restarts;
    if (!e.row.hidden) shown++;
  }
  setText($('count-total'), String(pods.size));
  for (const p of kPhases) setText($(`count-${p}`), String(counts[p]));
  setText($('count-ready'), `${ready}/${total}`);
  setText($('count-restarts'), String(restarts));
  setText($('shown'), pods.size === shown ? `${pods.size} pods` : `${shown} of ${pods.size} pods shown`);
  $('empty').hidden = pods.size > 0;
  renderChart();
}

function measureStart(uid, pod) {
  if (measured.has(uid)) return;
  const statuses = pod.status?.containerStatuses ?? [];
  if (pod.status?.phase !== 'Running' || statuses.length === 0 || !statuses.every((c) => c.state?.running)) return;
  measured.add(uid);
  let seconds;
  if (addedAt.has(uid)) {
    seconds = (performance.now() - addedAt.get(uid)) / 1000; // seen ADDED live → seen Running
  } else {
    // Listed already running: from the status' timestamps (first seen → last container started).
    const start = Date.parse(pod.status.startTime ?? '');
    const started = Math.max(...statuses.map((c) => Date.parse(c.state.running.startedAt ?? '')));
    if (Number.isFinite(start) && Number.isFinite(started)) seconds = Math.max(0, (started - start) / 1000);
  }
  if (seconds !== undefined) latencies.push(seconds);
}

function quantile(sorted, q) {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const svgNs = 'http://www.w3.org/2000/svg';
let chartDrawnFor = -1;

function renderChart() {
  if (chartDrawnFor === latencies.length) return;
  chartDrawnFor = latencies.length;
  const counts = kBuckets.map(() => 0);
  for (const s of latencies) counts[kBuckets.findIndex((b) => s <= b)]++;
  const max = Math.max(1, ...counts);
  const svg = $('latency-chart');
  svg.replaceChildren();
  const w = 320 / kBuckets.length;
  counts.forEach((n, i) => {
    const h = Math.round((n / max) * 62);
    const rect = document.createElementNS(svgNs, 'rect');
    rect.setAttribute('x', String(i * w + 3));
    rect.setAttribute('y', String(72 - h));
    rect.setAttribute('width', String(w - 6));
    rect.setAttribute('height', String(Math.max(h, n ? 1 : 0)));
    rect.setAttribute('rx', '2');
    const title = document.createElementNS(svgNs, 'title');
    title.textContent = `${kBucketLabels[i]}: ${n} pods`;
    rect.appendChild(title);
    svg.appendChild(rect);
    const label = document.createElementNS(svgNs, 'text');
    label.setAttribute('x', String(i * w + w / 2));
    label.setAttribute('y', '86');
    label.setAttribute('text-anchor', 'middle');
    label.textContent = kBucketLabels[i];
    svg.appendChild(label);
    if (n) {
      const count = document.createElementNS(svgNs, 'text');
      count.setAttribute('x', String(i * w + w / 2));
      count.setAttribute('y', String(70 - h));
      count.setAttribute('text-anchor', 'middle');
      count.setAttribute('class', 'count');
      count.textContent = String(n);
      svg.appendChild(count);
    }
  });
  const sorted = [...latencies].sort((a, b) => a - b);
  $('latency-summary').textContent = latencies.length
    ? `— ${latencies.length} pods, p50 ${quantile(sorted, 0.5).toFixed(1)}s, p99 ${quantile(sorted, 0.99).toFixed(1)}s`
    : '— no pod started yet';
}

// ---------------------------------------------------------------- age and events

function age(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${m % 60 ? `${m % 60}m` : ''}` : `${Math.floor(h / 24)}d`;
}

function renderEvent(uid, entry) {
  const e = lastEvents.get(uid) ?? lastEvents.get(`${entry.pod.metadata.namespace ?? 'default'}/${entry.pod.metadata.name}`);
  setText(entry.cells.event, e ? `${e.reason}: ${e.message}` : '');
  entry.cells.event.classList.toggle('warning', e?.type === 'Warning');
  if (e) entry.cells.event.title = e.message;
}

async function pollEvents() {
  try {
    const res = waitingForToken ? undefined : await api('/events');
    if (res?.ok) {
      const list = await res.json();
      lastEvents.clear();
      const items = [...(list.items ?? [])].sort((a, b) => eventTime(a) - eventTime(b));
      for (const e of items) {
        const o = e.involvedObject ?? {};
        if (o.uid) lastEvents.set(o.uid, e);
        if (o.name) lastEvents.set(`${o.namespace ?? 'default'}/${o.name}`, e);
      }
      for (const [uid, entry] of pods) renderEvent(uid, entry);
    }
    // 404: the server has no /events (older agent): the column stays empty.
  } catch {
    // the agent is down; the watch reconnect shows it
  }
  setTimeout(pollEvents, 3000);
}

function eventTime(e) {
  return Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '') || 0;
}

function setNodeName(name) {
  nodeName = name;
  $('node-name').textContent = `node ${name}`;
  for (const entry of pods.values()) if (!entry.pod.spec?.nodeName) setText(entry.cells.node, name);
}

async function loadNode() {
  try {
    const res = await api('/node');
    if (res.ok) {
      const node = await res.json();
      if (node?.metadata?.name) setNodeName(node.metadata.name);
    }
  } catch {
    // no /node: the first pod's spec.nodeName names the node
  }
}

setInterval(() => {
  for (const entry of pods.values()) if (!entry.row.hidden) setText(entry.cells.age, age(entry.created));
}, 1000);

$('filter-namespace').addEventListener('change', applyAllFilters);
$('filter-text').addEventListener('input', applyAllFilters);
renderSummary();
connect();
void loadNode();
void pollEvents();

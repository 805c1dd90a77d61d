// The summary cards (pods by phase, ready containers, restarts) and the pod start latency
// histogram (ADDED seen live → all containers running, or from the status' timestamps for pods
// listed already running), rendered at most once per frame.
import { $, setText } from './dom.js';
import { statusTone } from './rows.js';

/**
 * The cards by phase, with one more: Failing, the pods whose STATUS is a failure (CrashLoopBackOff,
 * ImagePullBackOff, Error, …) while their phase is still Running or Pending, so the Running card
 * counts only pods kubectl would print as Running (or NotReady, Terminating).
 */
const kPhases = ['Running', 'Failing', 'Pending', 'Succeeded', 'Failed', 'Unknown'];
/** Latency buckets (upper bounds, seconds) of the pod start histogram. */
const kBuckets = [0.5, 1, 2, 5, 10, 20, 30, 60, Infinity];
const kBucketLabels = ['<.5s', '.5–1', '1–2', '2–5', '5–10', '10–20', '20–30', '30–60', '>60s'];
const svgNs = 'http://www.w3.org/2000/svg';

/** Pod start latencies in seconds, and the bookkeeping to measure once per pod. */
const latencies = [];
const addedAt = new Map();
const measured = new Set();
let chartDrawnFor = -1;

/** noteLiveAdd: pod `uid` was ADDED after the initial list (its start latency is measured from now). */
export function noteLiveAdd(uid) {
  if (!addedAt.has(uid)) addedAt.set(uid, performance.now());
}

/** forget drops the bookkeeping of a deleted pod. */
export function forget(uid) {
  addedAt.delete(uid);
  measured.delete(uid);
}

/** measureStart records pod `uid`'s start latency once all its containers run. */
export function measureStart(uid, pod) {
  if (measured.has(uid)) return;
  const statuses = pod.status?.containerStatuses ?? [];
  if (pod.status?.phase !== 'Running' || statuses.length === 0 || !statuses.every((c) => c.state?.running)) return;
  measured.add(uid);
  let seconds;
  if (addedAt.has(uid)) {
    seconds = (performance.now() - addedAt.get(uid)) / 1000;
  } else {
    const start = Date.parse(pod.status.startTime ?? '');
    const started = Math.max(...statuses.map((c) => Date.parse(c.state.running.startedAt ?? '')));
    // A pod listed already running (adopted after an agent restart, or opened late): measured from its
    // status only when those say when it started; a container started before the pod's startTime
    // (a startTime set again by a restarted agent) tells nothing, so it is left out, not drawn as 0 s.
    if (Number.isFinite(start) && Number.isFinite(started) && started >= start) seconds = (started - start) / 1000;
  }
  if (seconds !== undefined) latencies.push(seconds);
}

/** renderSummary writes the cards from the table's entries (see rows.js). */
export function renderSummary(entries) {
  const counts = Object.fromEntries(kPhases.map((p) => [p, 0]));
  let ready = 0;
  let total = 0;
  let restarts = 0;
  let shown = 0;
  let size = 0;
  for (const e of entries) {
    size++;
    const failing = (e.phase === 'Running' || e.phase === 'Pending') && statusTone(e.summary.reason) === 'bad';
    counts[failing ? 'Failing' : e.phase in counts ? e.phase : 'Unknown']++;
    ready += e.summary.ready;
    total += e.summary.total;
    restarts += e.summary.restarts;
    if (!e.row.hidden) shown++;
  }
  setText($('count-total'), String(size));
  for (const p of kPhases) setText($(`count-${p}`), String(counts[p]));
  setText($('count-ready'), `${ready}/${total}`);
  setText($('count-restarts'), String(restarts));
  setText($('shown'), size === shown ? `${size} pods` : `${shown} of ${size} pods shown`);
  $('empty').hidden = size > 0;
  renderChart();
}

function quantile(sorted, q) {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function svg(tag, attrs, text) {
  const node = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderChart() {
  if (chartDrawnFor === latencies.length) return;
  chartDrawnFor = latencies.length;
  const counts = kBuckets.map(() => 0);
  for (const s of latencies) counts[kBuckets.findIndex((b) => s <= b)]++;
  const max = Math.max(1, ...counts);
  const chart = $('latency-chart');
  chart.replaceChildren();
  const w = 320 / kBuckets.length;
  counts.forEach((n, i) => {
    const h = Math.round((n / max) * 62);
    const rect = svg('rect', { x: i * w + 3, y: 72 - h, width: w - 6, height: Math.max(h, n ? 1 : 0), rx: 2 });
    rect.appendChild(svg('title', {}, `${kBucketLabels[i]}: ${n} pods`));
    chart.appendChild(rect);
    chart.appendChild(svg('text', { x: i * w + w / 2, y: 86, 'text-anchor': 'middle' }, kBucketLabels[i]));
    if (n) chart.appendChild(svg('text', { x: i * w + w / 2, y: 70 - h, 'text-anchor': 'middle', class: 'count' }, String(n)));
  });
  const sorted = [...latencies].sort((a, b) => a - b);
  $('latency-summary').textContent = latencies.length
    ? `— ${latencies.length} pods, p50 ${quantile(sorted, 0.5).toFixed(1)}s, p99 ${quantile(sorted, 0.99).toFixed(1)}s`
    : '— no pod started yet';
}

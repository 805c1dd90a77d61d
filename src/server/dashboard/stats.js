// Per-pod CPU and memory from the Summary API (GET /stats/summary, stats/v1alpha1), polled every
// 10 s: a short history per pod UID for the rows' sparklines, and the node's CPU and memory gauges
// in the header (usage against the Node's status.capacity, as `kubectl top node` computes its %).
import { $, setText } from './dom.js';
import { api } from './session.js';

/** kPollMs: the poll period, milliseconds (the kubelet's default housekeeping collects every 10 s). */
export const kPollMs = 10_000;
/** Samples kept per pod (30 × 10 s = 5 minutes). */
const kHistory = 30;

/** uid → { cpu: millicores[], mem: working-set bytes[] }, oldest first. */
export const usage = new Map();
/** The node's capacity: cores and bytes (from GET /node), once known. */
const capacity = { cores: 0, bytes: 0 };

/** latest: the last value of `values`, or undefined. */
export function latest(values) {
  return values?.length ? values[values.length - 1] : undefined;
}

/** formatCpu: millicores as kubectl top prints them (`12m`), '' when unknown. */
export function formatCpu(milli) {
  return milli === undefined ? '' : `${Math.round(milli)}m`;
}

/** formatMemory: bytes as kubectl top prints them (`34Mi`), '' when unknown. */
export function formatMemory(bytes) {
  if (bytes === undefined) return '';
  if (bytes >= 1024 ** 3 * 10) return `${Math.round(bytes / 1024 ** 3)}Gi`;
  return `${Math.round(bytes / 1024 ** 2)}Mi`;
}

/** parseQuantity: a Kubernetes quantity (`2`, `500m`, `8039748Ki`, `2Gi`, `1e3`) as a number of units; NaN when malformed. */
export function parseQuantity(text) {
  const m = /^([0-9.]+(?:e[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(text ?? '').trim());
  if (!m) return NaN;
  const scale = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 }[m[2]] ?? 1;
  return Number(m[1]) * scale;
}

/** setNodeCapacity takes a Node's status.capacity (`cpu`, `memory` quantities). */
export function setNodeCapacity(cap) {
  const cores = parseQuantity(cap?.cpu);
  const bytes = parseQuantity(cap?.memory);
  if (cores > 0) capacity.cores = cores;
  if (bytes > 0) capacity.bytes = bytes;
}

function push(list, value) {
  list.push(value);
  if (list.length > kHistory) list.shift();
}

/**
 * applySummary folds one Summary into the history: a pod's CPU in millicores (usageNanoCores / 1e6)
 * and memory as its working set (the eviction manager's and kubectl top's figure); pods missing from
 * the summary are forgotten. Renders the node gauges.
 */
export function applySummary(summary) {
  const seen = new Set();
  for (const p of summary.pods ?? []) {
    const uid = p.podRef?.uid;
    if (!uid) continue;
    seen.add(uid);
    let u = usage.get(uid);
    if (!u) usage.set(uid, (u = { cpu: [], mem: [] }));
    if (p.cpu?.usageNanoCores !== undefined) push(u.cpu, p.cpu.usageNanoCores / 1e6);
    if (p.memory?.workingSetBytes !== undefined) push(u.mem, p.memory.workingSetBytes);
  }
  for (const uid of usage.keys()) if (!seen.has(uid)) usage.delete(uid);
  const n = summary.node ?? {};
  const cpuMilli = n.cpu?.usageNanoCores !== undefined ? n.cpu.usageNanoCores / 1e6 : undefined;
  const mem = n.memory?.workingSetBytes ?? n.memory?.usageBytes;
  const memCap = capacity.bytes || (mem !== undefined && n.memory?.availableBytes !== undefined ? mem + n.memory.availableBytes : 0);
  gauge('cpu', cpuMilli, capacity.cores * 1000, (v) => `${(v / 1000).toFixed(2)} / ${capacity.cores || '?'} cores`);
  gauge('mem', mem, memCap, (v) => `${(v / 1024 ** 3).toFixed(1)} / ${(memCap / 1024 ** 3).toFixed(1)} GiB`);
}

function gauge(name, value, max, label) {
  const root = $(`gauge-${name}`);
  if (value === undefined) return;
  const pct = max > 0 ? Math.min(100, (value / max) * 100) : 0;
  root.querySelector('.fill').style.width = `${pct.toFixed(1)}%`;
  root.querySelector('.fill').dataset.level = pct > 90 ? 'high' : pct > 70 ? 'mid' : 'low';
  setText(root.querySelector('.value'), `${Math.round(pct)}%`);
  root.title = label(value);
}

/** pollStats fetches /stats/summary now and every kPollMs; `onUpdate()` runs after each good answer. 503 (not collected yet) and 404 are skipped quietly. */
export function pollStats(onUpdate) {
  const tick = async () => {
    try {
      const res = await api('/stats/summary?only_cpu_and_memory=true');
      if (res.ok) {
        applySummary(await res.json());
        onUpdate();
      }
    } catch {
      // the agent is down; the watch shows it
    }
    setTimeout(tick, kPollMs);
  };
  void tick();
}

/**
 * drawSparkline draws `values` (oldest first, up to 30 polls) as a line across the canvas, scaled to
 * their range or `minSpan` (same unit as the values: millicores, bytes) if that is larger;
 * an empty list clears it. Device-pixel-ratio aware.
 */
export function drawSparkline(canvas, values, color, minSpan) {
  const dpr = window.devicePixelRatio || 1;
  const w = 56;
  const h = 18;
  if (canvas.width !== w * dpr) {
    canvas.width = w * dpr;
    canvas.height = h * dpr;
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  if (values.length === 0) return;
  // Scaled to its own range, but at least `minSpan` (noise of a few KiB is no curve); the figure beside it gives the value.
  const min = Math.min(...values);
  const span = Math.max(Math.max(...values) - min, minSpan);
  const y = (v) => h - 2 - ((v - min) / span) * (h - 4);
  const step = values.length > 1 ? w / (values.length - 1) : 0;
  ctx.beginPath();
  values.forEach((v, i) => {
    if (i === 0) ctx.moveTo(i * step, y(v));
    else ctx.lineTo(i * step, y(v));
  });
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5;
  ctx.stroke();
  if (values.length === 1) {
    ctx.fillStyle = color;
    ctx.fillRect(0, y(values[0]) - 1.5, 3, 3);
  }
}

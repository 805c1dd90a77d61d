// kubelet-ts live dashboard, entry module (plain ES modules, no build step): wires the watch
// (watch.js) to the keyed pod table (rows.js), the summary cards (summary.js), the stats poll
// (stats.js), the events poll (events.js), the detail panel (detail.js, logs.js, terminal.js) and
// the delete confirmation (confirm.js). Each watch batch is applied in one animation frame.
import { $ } from './dom.js';
import { api, onSignIn } from './session.js';
import { startWatch } from './watch.js';
import {
  pods,
  applyBatch,
  setRowHooks,
  setSort,
  renderStats,
  renderEvents,
  tickAges,
  applyAllFilters,
  setNodeName,
  select,
} from './rows.js';
import { renderSummary, noteLiveAdd, forget, measureStart } from './summary.js';
import { pollStats, setNodeCapacity, usage } from './stats.js';
import { pollEvents } from './events.js';
import { openDetail, detailPodChanged, detailEventsChanged, detailTick, setDetailHooks } from './detail.js';
import { deletePod } from './confirm.js';

/**
 * What bench/dashboard.ts and the browser tests read: frames in which a watch batch was applied,
 * the pod changes in them, the last batch's end (performance.now(), ms), its DOM work and all batches' (ms), the
 * stats polls applied, and a pod's number of stats samples.
 */
const frames = {
  batches: 0,
  changes: 0,
  lastApplyEndMs: 0,
  lastApplyWorkMs: 0,
  applyWorkMs: 0,
  stats: 0,
  samples: (uid) => usage.get(uid)?.cpu.length ?? 0,
};
window.kubeletTsDashboard = frames;

/**
 * A pod's detail has a URL: `#pod/NAMESPACE/NAME` (set when a row is opened, cleared when the panel
 * closes). Opened at load or on a hash change as soon as the watch has shown that pod.
 */
let wantedPod = parseHash();
function parseHash() {
  const m = /^#pod\/([^/]+)\/([^/]+)$/.exec(location.hash);
  return m ? { namespace: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) } : undefined;
}
function openWanted() {
  if (!wantedPod) return;
  for (const [uid, e] of pods) {
    if ((e.pod.metadata.namespace ?? 'default') === wantedPod.namespace && e.pod.metadata.name === wantedPod.name) {
      wantedPod = undefined;
      select(uid);
      openDetail(uid, e.pod);
      return;
    }
  }
}
window.addEventListener('hashchange', () => {
  wantedPod = parseHash();
  openWanted();
});

setRowHooks({
  onSelect(uid) {
    select(uid);
    const pod = pods.get(uid).pod;
    history.replaceState(
      null,
      '',
      `#pod/${encodeURIComponent(pod.metadata.namespace ?? 'default')}/${encodeURIComponent(pod.metadata.name)}`,
    );
    openDetail(uid, pod);
  },
  onDelete(uid, button) {
    void deletePod(pods.get(uid).pod, button);
  },
  onChanged(uid, pod) {
    if (pod) measureStart(uid, pod);
    else forget(uid);
    detailPodChanged(uid, pod);
  },
});
setDetailHooks({
  onClose: () => {
    select('');
    if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  },
  onDelete: (pod, button) => void deletePod(pod, button),
});

startWatch({
  apply(batch) {
    const start = performance.now();
    applyBatch(batch);
    renderSummary(pods.values());
    openWanted();
    if (batch.size) {
      frames.batches++;
      frames.changes += batch.size;
      frames.lastApplyEndMs = performance.now();
      frames.lastApplyWorkMs = frames.lastApplyEndMs - start;
      frames.applyWorkMs += frames.lastApplyWorkMs;
    }
  },
  knownUids: () => [...pods.keys()],
  podOf: (uid) => pods.get(uid)?.pod,
  onLiveAdd: noteLiveAdd,
});

async function loadNode() {
  try {
    const res = await api('/node');
    if (res.ok) {
      const node = await res.json();
      if (node?.metadata?.name) setNodeName(node.metadata.name);
      setNodeCapacity(node?.status?.capacity);
    }
  } catch {
    // no /node: the first pod's spec.nodeName names the node
  }
}

const refilter = () => {
  applyAllFilters();
  renderSummary(pods.values());
};
$('filter-namespace').addEventListener('change', refilter);
$('filter-text').addEventListener('input', refilter);
$('sort').addEventListener('change', () => setSort($('sort').value));
onSignIn(() => void loadNode());
setInterval(() => {
  tickAges();
  detailTick();
}, 1000);
renderSummary(pods.values());
void loadNode().then(() =>
  pollStats(() => {
    frames.stats++;
    renderStats();
  }),
);
pollEvents(() => {
  renderEvents();
  detailEventsChanged();
});

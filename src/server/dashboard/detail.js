// The pod detail panel (the role of the Kubernetes Dashboard's pod detail page and of
// `kubectl describe pod`): containers with state, reason, exit code and restarts; conditions; the
// events of this pod's UID only; the YAML (GET /pods/{ns}/{name} with Accept: application/yaml, as
// `kubectl get pod -o yaml`); the log tail of a chosen container following live; and a terminal.
// Only the open pod is rendered, and only when it (or the events) changed.
import { $, setText, el, age, podPath } from './dom.js';
import { api } from './session.js';
import { podStatusReason } from './pod-printer.js';
import { statusTone } from './rows.js';
import { eventsFor } from './events.js';
import { followLogs } from './logs.js';
import { openTerminal } from './terminal.js';

let current = { uid: '', pod: undefined, gone: false };
let tab = 'overview';
let logs;
let terminal;
let hooks = { onClose() {}, onDelete() {} };

/** setDetailHooks: `onClose()` when the panel closes, `onDelete(pod, button)` for its Delete button. */
export function setDetailHooks(h) {
  hooks = { ...hooks, ...h };
}

/** openDetail shows pod `uid` (its last watched object `pod`) on the Overview tab. */
export function openDetail(uid, pod) {
  if (current.uid !== uid) {
    stopStreams();
    current = { uid, pod, gone: false };
    fillContainerSelects(pod);
  }
  $('detail').hidden = false;
  document.body.classList.add('with-detail');
  render();
  showTab(tab === 'terminal' || tab === 'logs' ? tab : 'overview');
}

/** closeDetail hides the panel and ends its log follow and terminal. */
export function closeDetail() {
  stopStreams();
  current = { uid: '', pod: undefined, gone: false };
  $('detail').hidden = true;
  document.body.classList.remove('with-detail');
  hooks.onClose();
}

/** detailPodChanged: the watch changed (pod) or deleted (undefined) pod `uid`. */
export function detailPodChanged(uid, pod) {
  if (uid !== current.uid) return;
  if (pod) current.pod = pod;
  else current.gone = true;
  render();
}

/** detailTick re-renders the open pod once a second (its ages: started, since, last transition). */
export function detailTick() {
  if (current.uid) render();
}

/** detailEventsChanged: a new events list arrived. */
export function detailEventsChanged() {
  if (current.uid) renderEvents();
}

function stopStreams() {
  logs?.stop();
  logs = undefined;
  terminal?.close();
  terminal = undefined;
  setText($('term-state'), '');
}

function containerNames(pod) {
  return [...(pod.spec?.containers ?? []).map((c) => c.name), ...(pod.spec?.initContainers ?? []).map((c) => c.name)];
}

function fillContainerSelects(pod) {
  for (const id of ['logs-container', 'term-container']) {
    $(id).replaceChildren(...containerNames(pod).map((name) => el('option', { value: name, textContent: name })));
  }
}

function render() {
  const { pod } = current;
  if (!pod) return;
  const summary = podStatusReason(pod);
  setText($('detail-title'), `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`);
  const badge = $('detail-status');
  setText(badge, current.gone ? 'Deleted' : summary.reason);
  badge.dataset.tone = current.gone ? 'term' : statusTone(summary.reason);
  setText(
    $('detail-meta'),
    `UID ${pod.metadata.uid} · IP ${pod.status?.podIP || '—'} · QoS ${pod.status?.qosClass ?? '—'} · ready ${summary.ready}/${summary.total} · started ${pod.status?.startTime ? `${age(Date.parse(pod.status.startTime))} ago` : '—'}`,
  );
  renderContainers(pod);
  renderConditions(pod);
  renderEvents();
}

function stateText(state) {
  if (state?.running) return ['Running', '', '', state.running.startedAt ? `since ${age(Date.parse(state.running.startedAt))}` : ''];
  if (state?.waiting) return ['Waiting', state.waiting.reason ?? '', '', state.waiting.message ?? ''];
  if (state?.terminated) {
    const t = state.terminated;
    return ['Terminated', t.reason ?? '', String(t.exitCode ?? ''), t.message ?? (t.signal ? `signal ${t.signal}` : '')];
  }
  return ['—', '', '', ''];
}

function cells(values, className = '') {
  return el(
    'tr',
    { className },
    values.map((v) => el('td', { textContent: v, title: v })),
  );
}

function renderContainers(pod) {
  const statuses = [
    ...(pod.status?.initContainerStatuses ?? []).map((s) => ({ ...s, init: true })),
    ...(pod.status?.containerStatuses ?? []),
  ];
  const specs = [...(pod.spec?.initContainers ?? []).map((c) => ({ ...c, init: true })), ...(pod.spec?.containers ?? [])];
  const rows = specs.map((spec) => {
    const s = statuses.find((x) => x.name === spec.name && !!x.init === !!spec.init);
    const [state, reason, exitCode, detail] = stateText(s?.state);
    const last = s?.lastState?.terminated;
    const lastText = last ? `${last.reason ?? 'Terminated'} (exit ${last.exitCode})` : '';
    const row = cells([
      `${spec.name}${spec.init ? ' (init)' : ''}`,
      spec.image ?? '',
      state,
      reason,
      exitCode,
      String(s?.restartCount ?? 0),
      s?.ready ? 'true' : 'false',
      lastText,
      detail,
    ]);
    row.dataset.container = spec.name;
    row.dataset.state = state;
    return row;
  });
  $('detail-containers').replaceChildren(...rows);
}

function renderConditions(pod) {
  const rows = (pod.status?.conditions ?? []).map((c) =>
    cells([c.type, c.status, c.reason ?? '', c.lastTransitionTime ? `${age(Date.parse(c.lastTransitionTime))} ago` : '']),
  );
  $('detail-conditions').replaceChildren(...(rows.length ? rows : [cells(['none yet', '', '', ''], 'muted')]));
}

function renderEvents() {
  const list = eventsFor(current.uid);
  const rows = list.map((e) => {
    const when = Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '');
    const row = cells([
      e.type ?? '',
      e.reason ?? '',
      Number.isFinite(when) ? `${age(when)} ago` : '',
      e.count > 1 ? `×${e.count}` : '',
      e.message ?? '',
    ]);
    if (e.type === 'Warning') row.classList.add('warning');
    return row;
  });
  $('detail-events').replaceChildren(...(rows.length ? rows : [cells(['', 'none', '', '', ''], 'muted')]));
}

async function loadYaml() {
  const pre = $('detail-yaml');
  if (!current.pod) return;
  pre.textContent = 'loading…';
  try {
    const res = await api(podPath(current.pod), { headers: { Accept: 'application/yaml' } });
    pre.textContent = res.ok ? await res.text() : `${res.status}: ${(await res.json().catch(() => ({}))).message ?? res.statusText}`;
  } catch (err) {
    pre.textContent = `failed: ${err.message}`;
  }
}

function startLogs() {
  logs?.stop();
  if (!current.pod) return;
  logs = followLogs(current.pod, $('logs-container').value, $('detail-logs'), (s) => setText($('logs-state'), s));
}

function startTerminal() {
  terminal?.close();
  if (!current.pod) return;
  terminal = openTerminal(current.pod, $('term-container').value, $('terminal'), (s) => setText($('term-state'), s));
}

function showTab(name) {
  tab = name;
  for (const b of document.querySelectorAll('#detail .tabs button')) b.setAttribute('aria-selected', String(b.dataset.tab === name));
  for (const s of document.querySelectorAll('#detail .tab')) s.hidden = s.id !== `tab-${name}`;
  if (name === 'yaml') void loadYaml();
  if (name === 'logs' && !logs) startLogs();
  if (name === 'terminal' && !terminal) startTerminal();
  if (name !== 'logs') {
    logs?.stop();
    logs = undefined;
  }
}

for (const b of document.querySelectorAll('#detail .tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
$('detail-close').addEventListener('click', closeDetail);
$('detail-delete').addEventListener('click', () => current.pod && !current.gone && hooks.onDelete(current.pod, $('detail-delete')));
$('logs-container').addEventListener('change', startLogs);
$('term-connect').addEventListener('click', startTerminal);
$('yaml-refresh').addEventListener('click', () => void loadYaml());
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && !$('detail').hidden && !$('confirm-dialog').open && !e.target.closest?.('.xterm')) closeDetail();
});

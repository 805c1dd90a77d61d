// Small DOM helpers shared by the dashboard's modules (plain ES module, no build step).

/** $ returns the element with that id. */
export const $ = (id) => document.getElementById(id);

/** setText writes `text` only when it differs (no layout work for an unchanged cell). */
export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

/** el builds an element: `props` are assigned (className, textContent, dataset values under `data`), `children` appended. */
export function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  const { data, ...rest } = props;
  Object.assign(node, rest);
  if (data) Object.assign(node.dataset, data);
  for (const c of children) node.append(c);
  return node;
}

/** setConn shows the watch connection's state in the header (`live`, `connecting`, `down`, `auth`). */
export function setConn(state, text) {
  const node = $('conn');
  node.dataset.state = state;
  node.textContent = text;
}

/** age formats the time since `ms` (epoch milliseconds) as kubectl's AGE column does (45s, 12m, 3h4m, 2d). */
export function age(ms) {
  const s = Math.max(0, Math.floor((Date.now() - ms) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h${m % 60 ? `${m % 60}m` : ''}` : `${Math.floor(h / 24)}d`;
}

/** podPath: `/pods/{ns}/{name}` with both parts encoded. */
export function podPath(pod) {
  return `/pods/${encodeURIComponent(pod.metadata.namespace ?? 'default')}/${encodeURIComponent(pod.metadata.name)}`;
}

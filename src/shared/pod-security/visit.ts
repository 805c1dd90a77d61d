/**
 * Helpers of the Pod Security Standards checks, as upstream's policy helpers
 * (staging/src/k8s.io/pod-security-admission/policy/helpers.go and visitor.go): every container of a
 * pod (containers, initContainers, ephemeralContainers), and the wording helpers of the messages
 * (`pluralize`, `joinQuote`). Pure; the pod is read as untyped JSON so that a check never throws on
 * a field of the wrong shape (validation refuses those before admission; a check just skips them).
 */

/** Obj: a JSON object. */
export type Obj = Record<string, unknown>;

/** isObj: a JSON object (not null, not an array). */
export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** obj: `v` when it is a JSON object, else undefined. */
export function obj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

/** list: the objects of `v` when it is an array (other items skipped), else []. */
export function list(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObj) : [];
}

/** str: `v` when it is a string, else ''. */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** VisitedContainer: one container of a pod, its name and its field path (`spec.containers[0]`). */
export interface VisitedContainer {
  c: Obj;
  name: string;
  path: string;
}

/** containersOf: the containers of `spec` in upstream's visiting order: initContainers, containers, ephemeralContainers. */
export function containersOf(spec: Obj): VisitedContainer[] {
  const out: VisitedContainer[] = [];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    const items = spec[key];
    if (!Array.isArray(items)) continue;
    items.forEach((c, i) => {
      if (isObj(c)) out.push({ c, name: str(c.name), path: `spec.${key}[${i}]` });
    });
  }
  return out;
}

/** securityContextOf: a container's (or the pod spec's) securityContext object, or undefined. */
export function securityContextOf(o: Obj): Obj | undefined {
  return obj(o.securityContext);
}

/** pluralize: `singular` for a count of 1, else `plural` (helpers.go). */
export function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

/** joinQuote: `"a", "b"` — each item JSON-quoted, joined by ", " (helpers.go joinQuote). */
export function joinQuote(items: readonly string[]): string {
  return items.map((s) => JSON.stringify(s)).join(', ');
}

/** sortedUnique: the distinct strings of `items`, sorted as Go's sets.List sorts (by UTF-16 code unit, which equals bytewise for ASCII). */
export function sortedUnique(items: Iterable<string>): string[] {
  return [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** containerPhrase: `container "a"` or `containers "a", "b"`. */
export function containerPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

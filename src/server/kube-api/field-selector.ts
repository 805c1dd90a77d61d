/**
 * Counterpart of k8s.io/apimachinery/pkg/fields (selector.go: ParseSelector, the `=`, `==` and `!=`
 * terms and their backslash escapes) and of each resource's field label set (the registry's
 * GetAttrs / AddFieldLabelConversionFunc: pkg/registry/core/pod/strategy.go PodToSelectableFields,
 * event/strategy.go, node/strategy.go, namespace/strategy.go; an unknown label is refused with
 * `field label not supported: <label>`). Pure functions.
 */
import type { Event, Node, Pod } from '../../shared/api.js';
import type { ConfigObject } from '../../shared/config-objects.js';
import { InvalidArgumentError } from '../../shared/errors.js';

/** FieldRequirement: one term of a field selector (`status.phase!=Running`). */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** FieldSelector: the terms, ANDed; empty matches everything. */
export type FieldSelector = FieldRequirement[];

/** splitTerms splits on unescaped commas (fields.splitTerms). */
function splitTerms(input: string): string[] {
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '\\' && i + 1 < input.length) {
      cur += c + input[++i];
    } else if (c === ',') {
      terms.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  terms.push(cur);
  return terms;
}

/** unescape: `\\`, `\,` and `\=` → the character (fields.UnescapeValue); any other escape is an error. */
function unescape(raw: string, term: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== '\\') {
      if (raw[i] === ',' || raw[i] === '=')
        throw new InvalidArgumentError(`fieldSelector: invalid selector: '${term}'; unescaped '${raw[i]}' in value`);
      out += raw[i];
      continue;
    }
    const n = raw[++i];
    if (n !== '\\' && n !== ',' && n !== '=')
      throw new InvalidArgumentError(`fieldSelector: invalid selector: '${term}'; invalid escape sequence`);
    out += n;
  }
  return out;
}

/**
 * parseFieldSelector parses `?fieldSelector=` as fields.ParseSelector: comma-separated terms
 * `field=value`, `field==value` or `field!=value`; an empty string selects everything. Pure.
 * @throws InvalidArgumentError `fieldSelector: invalid selector: '<term>'; can't understand '<term>'`.
 */
export function parseFieldSelector(input: string): FieldSelector {
  const out: FieldSelector = [];
  if (input.trim() === '') return out;
  for (const term of splitTerms(input)) {
    if (term === '') continue;
    let m: RegExpExecArray | null;
    // The first unescaped operator splits the term; `!=` and `==` before `=`.
    if ((m = /^((?:[^\\=!]|\\.)*)(!=|==|=)(.*)$/s.exec(term)) === null) {
      throw new InvalidArgumentError(`fieldSelector: invalid selector: '${term}'; can't understand '${term}'`);
    }
    const field = m[1].trim();
    if (field === '') throw new InvalidArgumentError(`fieldSelector: invalid selector: '${term}'; field name is empty`);
    out.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescape(m[3], term) });
  }
  return out;
}

/** FieldSet: a resource's selectable fields, label → value (fields.Set). */
export type FieldSet = Readonly<Record<string, string>>;

/**
 * matchesFieldSelector: every term holds for `fields`. A term naming a label not in `fields`
 * never gets here: {@link checkFieldLabels} refuses it first.
 */
export function matchesFieldSelector(selector: FieldSelector, fields: FieldSet): boolean {
  return selector.every((r) => (fields[r.field] === r.value) === (r.op === '='));
}

/**
 * checkFieldLabels refuses a selector naming a label the resource does not offer, as the
 * apiserver's field label conversion does.
 * @param labels the labels the resource supports (the keys of its FieldSet).
 * @throws InvalidArgumentError `field label not supported: <label>`.
 */
export function checkFieldLabels(selector: FieldSelector, labels: readonly string[]): void {
  for (const r of selector) {
    if (!labels.includes(r.field)) throw new InvalidArgumentError(`field label not supported: ${r.field}`);
  }
}

function meta(o: { metadata?: { name?: string; namespace?: string } }, namespaced: boolean): Record<string, string> {
  const f: Record<string, string> = { 'metadata.name': o.metadata?.name ?? '' };
  if (namespaced) f['metadata.namespace'] = o.metadata?.namespace ?? 'default';
  return f;
}

/** podFields: a Pod's field set as PodToSelectableFields (spec.nodeName, restartPolicy, schedulerName, serviceAccountName, hostNetwork, status.phase, podIP, nominatedNodeName). */
export function podFields(pod: Pod): FieldSet {
  return {
    ...meta(pod, true),
    'spec.nodeName': pod.spec?.nodeName ?? '',
    'spec.restartPolicy': pod.spec?.restartPolicy ?? '',
    'spec.schedulerName': pod.spec?.schedulerName ?? '',
    'spec.serviceAccountName': pod.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': String(pod.spec?.hostNetwork === true),
    'status.phase': pod.status?.phase ?? '',
    'status.podIP': pod.status?.podIP ?? '',
    'status.nominatedNodeName': pod.status?.nominatedNodeName ?? '',
  };
}

/** kPodFieldLabels: the field selectors pods support (PodToSelectableFields), for parseListFilter. */
export const kPodFieldLabels: readonly string[] = Object.freeze(Object.keys(podFields({})));

/** eventFields: an Event's field set as the event registry's (involvedObject.*, reason, reportingComponent, source, type). */
export function eventFields(e: Event): FieldSet {
  const io = e.involvedObject ?? {};
  return {
    ...meta(e, true),
    'involvedObject.kind': io.kind ?? '',
    'involvedObject.namespace': io.namespace ?? '',
    'involvedObject.name': io.name ?? '',
    'involvedObject.uid': io.uid ?? '',
    'involvedObject.apiVersion': io.apiVersion ?? '',
    'involvedObject.resourceVersion': io.resourceVersion ?? '',
    'involvedObject.fieldPath': io.fieldPath ?? '',
    reason: e.reason ?? '',
    reportingComponent: e.reportingComponent ?? '',
    source: e.source?.component ?? '',
    type: e.type ?? '',
  };
}

/** nodeFields: a Node's field set (metadata.name, spec.unschedulable). */
export function nodeFields(n: Node): FieldSet {
  return { ...meta(n, false), 'spec.unschedulable': String(n.spec?.unschedulable === true) };
}

/** namespaceFields: a Namespace's field set (metadata.name, status.phase). */
export function namespaceFields(n: { metadata?: { name?: string }; status?: { phase?: string } }): FieldSet {
  return { ...meta(n, false), 'status.phase': n.status?.phase ?? '' };
}

/** serviceAccountFields: a ServiceAccount's field set (metadata.name, metadata.namespace). */
export function serviceAccountFields(o: { metadata?: { name?: string; namespace?: string } }): FieldSet {
  return meta(o, true);
}

/** configObjectFields: a ConfigMap's field set (metadata.*), a Secret's with `type`. */
export function configObjectFields(o: ConfigObject): FieldSet {
  return o.kind === 'Secret' ? { ...meta(o, true), type: o.type ?? 'Opaque' } : meta(o, true);
}

// Counterpart of pkg/kubelet/config/common.go tryDecodeSinglePod / tryDecodePodList: decoding pod manifests.
/**
 * Turns manifest text (a file, a URL's body, a request body) into Pod objects. YAML streams may
 * hold several documents; a `List` or `PodList` expands to its items. Every problem of every
 * document is collected and thrown together as one InvalidManifestError. Pure functions (no
 * I/O), safe in any thread.
 */
import { isCollection, isScalar, parseAllDocuments, visit, YAMLParseError, type Document } from 'yaml';
import { kKubernetesYaml } from './yaml-options.js';
import { kMaxManifestDepth, manifestDepth } from './manifest-depth.js';
import type { Pod } from './api.js';
import { InvalidManifestError, type FieldError } from './errors.js';
import { applyPodDefaults } from './defaults.js';
import { validatePodForNode } from './validation.js';
import { isObj } from './validation-util.js';
import { isConfigObjectKind, normalizeConfigObject, type ConfigObject } from './config-objects.js';

/** Manifest text formats. YAML also reads JSON; `json` parses strictly with JSON.parse. */
export type ManifestFormat = 'yaml' | 'json';

/**
 * One pod found in a manifest, with `path`: the prefix that locates it in the text for error
 * messages — `''` for a lone pod, `[1]` for the second document of a stream, `items[2]` for a
 * List item, `[1].items[2]` for both.
 */
export interface ManifestEntry {
  pod: Pod;
  path: string;
}

function joinPath(prefix: string, field: string): string {
  if (!prefix) return field;
  if (!field) return prefix;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}

/** prefixFieldErrors: `errors` with each field path prefixed by `prefix` (see {@link ManifestEntry.path}). */
export function prefixFieldErrors(prefix: string, errors: FieldError[]): FieldError[] {
  return errors.map((e) => ({ ...e, field: joinPath(prefix, e.field) }));
}

/**
 * describeValue names what a value that is not a manifest object is — its type and size, never its
 * content: a file that is not a manifest at all (a symlink to /proc/self/environ, a key file) is a
 * string document, and quoting it put the file's content in the agent's log (issue #11 finding
 * 4). As the kubelet's decoder, whose errors name the Go type it could not decode into.
 */
function describeValue(value: unknown): string {
  if (typeof value === 'string') return `a string (${Buffer.byteLength(value)} bytes)`;
  if (Array.isArray(value)) return `a list (${value.length} items)`;
  return value === null ? 'null' : `a ${typeof value}`;
}

/**
 * jsonSyntaxError: the detail of a JSON.parse error without V8's quote of the text (Node 20
 * quotes up to a few dozen characters of it: `Unexpected token 'S', "{"x": SECRET}" is not valid
 * JSON`); the position is kept when V8 gives one.
 */
function jsonSyntaxError(err: Error): string {
  const at = /at position (\d+)/.exec(err.message);
  if (at) return `JSON syntax error at position ${at[1]}`;
  return err.message.includes('"') || err.message.includes("'") ? 'JSON syntax error: not valid JSON' : `JSON syntax error: ${err.message}`;
}

/** ObjectEntry: one ConfigMap or Secret document found in a manifest (raw, not yet checked), with its path as in {@link ManifestEntry}. */
export interface ObjectEntry {
  object: Record<string, unknown>;
  path: string;
}

/**
 * parseManifestEntries is {@link parseManifests} keeping each pod's location in the text
 * (for error paths). Same rules and errors: a ConfigMap or Secret is refused (`kind: Unsupported
 * value`); the sources that take them beside pods use {@link parseManifestDocuments}.
 */
export function parseManifestEntries(text: string, origin: string, format: ManifestFormat = 'yaml'): ManifestEntry[] {
  return parseDocuments(text, origin, format, false).pods;
}

/**
 * parseManifestDocuments is {@link parseManifestEntries} that also takes `kind: ConfigMap` and
 * `kind: Secret` documents (alone, in a List, or in a multi-document stream) beside the pods, as
 * `podman kube play` and `kubectl apply -f` take a file mixing them. Same errors; the supported
 * kinds named in a wrong kind's error are then "Pod", "ConfigMap", "Secret".
 */
export function parseManifestDocuments(
  text: string,
  origin: string,
  format: ManifestFormat = 'yaml',
): { pods: ManifestEntry[]; objects: ObjectEntry[] } {
  return parseDocuments(text, origin, format, true);
}

function parseDocuments(
  text: string,
  origin: string,
  format: ManifestFormat,
  allowObjects: boolean,
): { pods: ManifestEntry[]; objects: ObjectEntry[] } {
  const errors: FieldError[] = [];
  const objects: ObjectEntry[] = [];
  // Before any parser: they recurse, and a deep enough text overflowed the stack, then crashed the process.
  if (manifestDepth(text, format) > kMaxManifestDepth) {
    const syntax = format === 'json' ? 'JSON' : 'YAML';
    throw new InvalidManifestError(origin, [
      { field: '[0]', type: 'Invalid value', detail: `${syntax} syntax error: nested more than ${kMaxManifestDepth} levels deep` },
    ]);
  }
  // Each document's value, or its syntax errors; handled in document order below.
  const docs: { value?: unknown; syntaxErrors?: FieldError[]; index: number }[] = [];
  let docCount: number;
  if (format === 'json') {
    docCount = 1;
    if (text.trim() !== '') {
      try {
        docs.push({ value: JSON.parse(text) as unknown, index: 0 });
      } catch (e) {
        docs.push({ syntaxErrors: [{ field: '[0]', type: 'Invalid value', detail: jsonSyntaxError(e as Error) }], index: 0 });
      }
    }
  } else {
    // uniqueKeys off: the yaml package checks it by comparing every key with every other one
    // (quadratic: a 10 MB mapping took minutes); duplicateKeyErrors does it in one pass instead.
    const parsed = parseAllDocuments(text, { ...kKubernetesYaml, uniqueKeys: false });
    const list = Array.isArray(parsed) ? parsed : [];
    docCount = list.length;
    list.forEach((doc, i) => {
      if (doc.errors.length === 0) doc.errors.push(...duplicateKeyErrors(doc, text), ...recursiveAliasErrors(doc, text));
      if (doc.errors.length > 0) {
        const syntaxErrors: FieldError[] = [];
        for (const err of doc.errors) {
          const pos = err.linePos?.[0];
          const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
          // With prettyErrors (the default) the message ends in " at line L, column C:" and a snippet.
          const message = err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
          syntaxErrors.push({ field: `[${i}]`, type: 'Invalid value', detail: `YAML syntax error${where}: ${message}` });
        }
        docs.push({ syntaxErrors, index: i });
        return;
      }
      try {
        docs.push({ value: doc.toJS({ maxAliasCount: 100 }) as unknown, index: i });
      } catch (e) {
        // An unresolved alias, or too many (a "billion laughs" alias bomb): bad input, not a crash.
        docs.push({
          syntaxErrors: [{ field: `[${i}]`, type: 'Invalid value', detail: `YAML syntax error: ${(e as Error).message}` }],
          index: i,
        });
      }
    });
  }

  const entries: ManifestEntry[] = [];
  for (const { value, syntaxErrors, index } of docs) {
    if (syntaxErrors) {
      errors.push(...syntaxErrors);
      continue;
    }
    if (value === null || value === undefined) continue; // an empty document
    const docPath = docCount > 1 ? `[${index}]` : '';
    if (!isObj(value)) {
      errors.push({
        field: `[${index}]`,
        type: 'Invalid value',
        detail: `must be an object (a Pod, List or PodList), not ${describeValue(value)}`,
      });
      continue;
    }
    if (value.kind === 'List' || value.kind === 'PodList') {
      checkApiVersion(value, docPath, errors);
      const itemsPath = joinPath(docPath, 'items');
      if (value.items === undefined || value.items === null) continue; // an empty list
      if (!Array.isArray(value.items)) {
        errors.push({ field: itemsPath, type: 'Invalid value', detail: `must be a list, not ${describeValue(value.items)}` });
        continue;
      }
      value.items.forEach((item, j) => {
        const itemPath = `${itemsPath}[${j}]`;
        if (!isObj(item))
          errors.push({ field: itemPath, type: 'Invalid value', detail: `must be an object (a Pod), not ${describeValue(item)}` });
        else if (allowObjects && isConfigObjectKind(item.kind)) objects.push({ object: item, path: itemPath });
        else if (checkPod(item, itemPath, errors, allowObjects)) entries.push({ pod: item as Pod, path: itemPath });
      });
    } else if (allowObjects && isConfigObjectKind(value.kind)) {
      objects.push({ object: value, path: docPath });
    } else if (checkPod(value, docPath, errors, allowObjects)) {
      entries.push({ pod: value as Pod, path: docPath });
    }
  }
  if (errors.length > 0) throw new InvalidManifestError(origin, errors);
  return { pods: entries, objects };
}

function checkApiVersion(o: Record<string, unknown>, path: string, errors: FieldError[]): boolean {
  const field = joinPath(path, 'apiVersion');
  if (o.apiVersion === undefined || o.apiVersion === null || o.apiVersion === '') {
    errors.push({ field, type: 'Required value' });
    return false;
  }
  if (o.apiVersion !== 'v1') {
    errors.push({ field, type: 'Unsupported value', value: o.apiVersion, detail: 'supported values: "v1"' });
    return false;
  }
  return true;
}

/** Reports a wrong apiVersion or kind; true when the object is a v1 Pod. `withObjects`: ConfigMap and Secret are named as supported too. */
function checkPod(o: Record<string, unknown>, path: string, errors: FieldError[], withObjects = false): boolean {
  const versionOk = checkApiVersion(o, path, errors);
  const field = joinPath(path, 'kind');
  if (o.kind === undefined || o.kind === null || o.kind === '') {
    errors.push({ field, type: 'Required value' });
    return false;
  }
  if (o.kind !== 'Pod') {
    errors.push({
      field,
      type: 'Unsupported value',
      value: o.kind,
      detail: withObjects ? 'supported values: "Pod", "ConfigMap", "Secret"' : 'supported values: "Pod"',
    });
    return false;
  }
  return versionOk;
}

/**
 * parseManifests decodes manifest text into raw pods (not yet defaulted or validated).
 * - `format` `yaml` (default) reads a multi-document YAML stream (JSON is YAML too); `json`
 *   reads one JSON value. Empty documents are skipped; empty text gives [].
 * - A `List` or `PodList` (`apiVersion: v1`, with `items`) expands to its items.
 * - Every object must be `apiVersion: v1`, `kind: Pod`.
 * @param origin the file, URL or request the text came from; named in the error.
 * @throws InvalidManifestError(origin, errors) listing ALL problems: syntax errors on the
 *   document (`[1]: Invalid value: YAML syntax error at line 7, column 3: ...`), a wrong kind
 *   (`[2].kind: Unsupported value: "Deployment": supported values: "Pod"`); paths are prefixed
 *   by the document index when the stream holds several documents, and by `items[j]` in a list.
 */
export function parseManifests(text: string, origin: string, format?: ManifestFormat): Pod[] {
  return parseManifestEntries(text, origin, format).map((e) => e.pod);
}

/**
 * loadPods: parse, then applyPodDefaults and validatePod on each pod. All or nothing: returns
 * the defaulted pods only when every one is valid (the caller decides what a bad file means).
 * @throws InvalidManifestError(origin, errors) with every error of every pod, paths prefixed as
 *   in {@link parseManifests} (e.g. `[1].spec.containers[0].image: Required value`).
 */
export function loadPods(text: string, origin: string, format?: ManifestFormat): Pod[] {
  const entries = parseManifestEntries(text, origin, format);
  const errors: FieldError[] = [];
  const pods = entries.map(({ pod, path }) => {
    const defaulted = applyPodDefaults(pod);
    errors.push(...prefixFieldErrors(path, validatePodForNode(defaulted)));
    return defaulted;
  });
  if (errors.length > 0) throw new InvalidManifestError(origin, errors);
  return pods;
}

/**
 * normalizeObjectEntries checks and normalises each ConfigMap/Secret entry (normalizeConfigObject)
 * and refuses two with the same kind and `namespace/name` in one manifest (`Duplicate value`).
 * @returns the objects, and every error with its path prefixed as in {@link parseManifests}.
 */
export function normalizeObjectEntries(entries: ObjectEntry[]): { objects: ConfigObject[]; errors: FieldError[] } {
  const objects: ConfigObject[] = [];
  const errors: FieldError[] = [];
  const seen = new Map<string, string>();
  for (const { object, path } of entries) {
    const r = normalizeConfigObject(object);
    if (r.errors) {
      errors.push(...prefixFieldErrors(path, r.errors));
      continue;
    }
    const key = `${r.object.kind}/${r.object.metadata?.namespace}/${r.object.metadata?.name}`;
    if (seen.has(key)) {
      errors.push({
        field: joinPath(path, 'metadata.name'),
        type: 'Duplicate value',
        value: r.object.metadata?.name,
        detail: `also at ${seen.get(key) || 'the first document'}`,
      });
      continue;
    }
    seen.set(key, path);
    objects.push(r.object);
  }
  return { objects, errors };
}

/**
 * duplicateKeyErrors finds keys that repeat within one mapping (YAML 1.2 forbids them, and the
 * apiserver's strict decoding refuses them) in one pass per mapping, with the yaml package's own
 * error type and position so that messages read `… at line L, column C: Map keys must be unique`.
 */
function duplicateKeyErrors(doc: Document.Parsed, text: string): Document.Parsed['errors'] {
  const errors: Document.Parsed['errors'] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const item of map.items) {
        const key = isScalar(item.key) ? item.key.value : item.key;
        if (!seen.has(key)) {
          seen.add(key);
          continue;
        }
        const range = (item.key as { range?: [number, number, number] } | null)?.range ?? [0, 0, 0];
        errors.push(new YAMLParseError([range[0], range[1]], 'DUPLICATE_KEY', 'Map keys must be unique'));
      }
    },
  });
  for (const e of errors) {
    const before = text.slice(0, e.pos[0]);
    const line = before.split('\n').length;
    e.linePos = [{ line, col: e.pos[0] - before.lastIndexOf('\n') }];
  }
  return errors;
}

/**
 * recursiveAliasErrors finds aliases inside the very node their anchor names (`a: &a [*a]`): the
 * yaml package would build a cyclic object from them, which is no manifest and which nothing
 * downstream (validation, JSON, hashing) can walk. go-yaml, which the apiserver's sigs.k8s.io/yaml
 * decodes with, refuses them likewise ("anchor 'a' value contains itself"). One walk of the document.
 */
function recursiveAliasErrors(doc: Document.Parsed, text: string): Document.Parsed['errors'] {
  const errors: Document.Parsed['errors'] = [];
  visit(doc, {
    Alias(_, alias, path) {
      const inside = path.some((n) => isCollection(n) && n.anchor === alias.source);
      if (!inside) return;
      const start = alias.range?.[0] ?? 0;
      const e = new YAMLParseError([start, alias.range?.[1] ?? start], 'BAD_ALIAS', `anchor "${alias.source}" value contains itself`);
      const before = text.slice(0, start);
      e.linePos = [{ line: before.split('\n').length, col: start - before.lastIndexOf('\n') }];
      errors.push(e);
    },
  });
  return errors;
}

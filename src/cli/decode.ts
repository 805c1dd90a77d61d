// Counterpart of kubectl's decoding of an answer (k8s.io/apimachinery runtime decoding and
// resource.Builder): a body of the wrong shape is an error naming the request, never a crash.
/**
 * Checks of the shape of what the agent answered before the commands use it: a server (or a
 * proxy, or another program on the port) answering `{}` to `GET /pods` gets
 * `error: GET /pods: the answer is not a PodList: "items" is missing in {}` (exit 1), as kubectl
 * says `Object 'Kind' is missing in '{}'`, instead of a TypeError from deep in the printing.
 * Pure functions; every one throws ClientError (exit code 1 through runClient).
 */
import type { Pod, PodList } from '../shared/api.js';
import { ClientError } from './client.js';

/** A short JSON rendering of `v` for the error (at most 200 characters). */
function shown(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 200 ? `${s.slice(0, 200)}…` : s;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * listItems: `v.items` of an answer that must be a list of `kind` (`PodList`, `EventList`), each
 * item an object.
 * @throws ClientError `<request>: the answer is not a <kind>: "items" is missing in <body>` (or
 *   `is not a list`, `item N is not an object`).
 */
export function listItems<T>(v: unknown, kind: string, request: string): T[] {
  const fail = (why: string) => new ClientError(`${request}: the answer is not a ${kind}: ${why}`);
  if (!isObject(v)) throw fail(`it is ${shown(v)}`);
  if (v.items === undefined || v.items === null) throw fail(`"items" is missing in ${shown(v)}`);
  if (!Array.isArray(v.items)) throw fail(`"items" is not a list: ${shown(v.items)}`);
  const bad = v.items.findIndex((i) => !isObject(i));
  if (bad >= 0) throw fail(`item ${bad} is not an object: ${shown(v.items[bad])}`);
  return v.items as T[];
}

/** podList: an answer that must be a PodList (see {@link listItems}); its items and resourceVersion. @throws ClientError */
export function podList(v: unknown, request: string): PodList {
  const items = listItems<Pod>(v, 'PodList', request);
  const meta = (v as { metadata?: unknown }).metadata;
  return { ...(v as PodList), items, metadata: isObject(meta) ? meta : {} };
}

/** pod: an answer that must be one Pod (an object with an object `metadata`). @throws ClientError `<request>: the answer is not a Pod: …` */
export function pod(v: unknown, request: string): Pod {
  if (!isObject(v) || !isObject(v.metadata))
    throw new ClientError(
      `${request}: the answer is not a Pod: ${isObject(v) ? `"metadata" is missing in ${shown(v)}` : `it is ${shown(v)}`}`,
    );
  return v as Pod;
}

/** object: an answer that must be a JSON object holding the object fields `fields` (e.g. the stats Summary's `node`). @throws ClientError */
export function objectWith<T>(v: unknown, kind: string, fields: readonly string[], request: string, lists: readonly string[] = []): T {
  const fail = (why: string) => new ClientError(`${request}: the answer is not a ${kind}: ${why}`);
  if (!isObject(v)) throw fail(`it is ${shown(v)}`);
  for (const f of fields) if (!isObject(v[f])) throw fail(`"${f}" is missing in ${shown(v)}`);
  for (const f of lists) if (!Array.isArray(v[f])) throw fail(`"${f}" is missing in ${shown(v)}`);
  return v as T;
}

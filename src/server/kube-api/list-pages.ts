/**
 * Counterpart of the apiserver's chunked lists (k8s.io/apiserver/pkg/storage/etcd3/store.go
 * GetList with ListOptions.Limit/Continue, and k8s.io/apiserver/pkg/storage/continue.go): a list
 * is ordered by its storage key (`namespace/name`, or `name` for cluster-scoped objects); `limit`
 * cuts it, and `metadata.continue` is an opaque token — base64url of `{"v":"meta.k8s.io/v1",
 * "rv":N,"start":"<key of the next object>\u0000"}` as upstream's — that names where the next page
 * starts and the resourceVersion of the first page. A token whose version the watch history no
 * longer holds answers 410 Expired, as a compacted etcd revision does. Pure functions.
 */
import type { Status } from '../../shared/api.js';
import { statusError } from '../http/status.js';

/** ListPage: a list request's `limit` (0: all) and its decoded `continue` token. */
export interface ListPage {
  limit: number;
  continueFrom?: { resourceVersion: number; start: string };
}

/** ListMetaOut: the `metadata` of a List answer. */
export interface ListMetaOut {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** encodeContinue: the token of a page that starts at `start` of the list at `resourceVersion`. */
export function encodeContinue(resourceVersion: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: resourceVersion, start: `${start}\u0000` })).toString('base64url');
}

/**
 * parseListPage reads `limit` and `continue` of a list.
 * @returns the page, or a 400 BadRequest Status naming the parameter (a `limit` that is not a
 *   non-negative integer; a `continue` that is not a token of this server; a `continue` with a
 *   `resourceVersion` other than empty or "0", as upstream refuses).
 */
export function parseListPage(query: URLSearchParams): ListPage | Status {
  const l = query.get('limit') ?? '';
  if (l !== '' && !/^\d+$/.test(l))
    return statusError(400, 'BadRequest', `limit: Invalid value: ${JSON.stringify(l)}: must be a non-negative integer`);
  const page: ListPage = { limit: l === '' ? 0 : Number(l) };
  const token = query.get('continue') ?? '';
  if (token === '') return page;
  const rv = query.get('resourceVersion') ?? '';
  if (rv !== '' && rv !== '0') return statusError(400, 'BadRequest', 'specifying resource version is not allowed when using continue');
  let decoded: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as typeof decoded;
  } catch {
    decoded = {};
  }
  if (
    decoded?.v !== 'meta.k8s.io/v1' ||
    !Number.isInteger(decoded.rv) ||
    (decoded.rv as number) <= 0 ||
    typeof decoded.start !== 'string' ||
    !decoded.start.endsWith('\u0000')
  ) {
    return statusError(
      400,
      'BadRequest',
      `continue: Invalid value: ${JSON.stringify(token)}: continue key is not valid: not a continue token of this server`,
    );
  }
  page.continueFrom = { resourceVersion: decoded.rv as number, start: decoded.start.slice(0, -1) };
  return page;
}

/** continueExpired: the apiserver's 410 for a continue token whose resourceVersion was compacted. */
export function continueExpired(): Status {
  return statusError(
    410,
    'Expired',
    'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
  );
}

/** byKey: compares two storage keys as the apiserver's list order does (bytewise). */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * pageOf cuts one page out of `items` (already filtered and in key order).
 * @param resourceVersion the list's version now (a first page), kept by the token for the next ones.
 * @param filtered a label or field selector was applied: `remainingItemCount` is then left out, as upstream.
 * @returns the page's items and its list metadata (`resourceVersion`: the first page's).
 */
export function pageOf<T>(
  items: readonly T[],
  keyOf: (o: T) => string,
  page: ListPage,
  resourceVersion: number | undefined,
  filtered: boolean,
): { items: T[]; metadata: ListMetaOut } {
  const listVersion = page.continueFrom?.resourceVersion ?? resourceVersion;
  const metadata: ListMetaOut = listVersion === undefined ? {} : { resourceVersion: String(listVersion) };
  const from = page.continueFrom ? firstAtOrAfter(items, keyOf, page.continueFrom.start) : 0;
  if (page.limit === 0 || items.length - from <= page.limit) return { items: items.slice(from), metadata };
  const out = items.slice(from, from + page.limit);
  metadata.continue = encodeContinue(listVersion ?? 0, keyOf(items[from + page.limit]));
  if (!filtered) metadata.remainingItemCount = items.length - from - page.limit;
  return { items: out, metadata };
}

function firstAtOrAfter<T>(items: readonly T[], keyOf: (o: T) => string, start: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareKeys(keyOf(items[mid]), start) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

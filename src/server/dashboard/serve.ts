// Counterpart of the Kubernetes Dashboard's static asset server (kubernetes/dashboard src/app/backend handler/static): the live page's files.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { statusReply, type HttpReply } from '../reply.js';
import type { RouteContext } from '../router.js';
import { notFound } from '../status.js';

/**
 * kDashboardDir: the directory the page's files are read from — always the source tree's
 * src/server/dashboard/ (tsc does not copy non-TS files to dist/, so from dist/src/server/dashboard/
 * we climb back to the project root).
 */
export const kDashboardDir = fileURLToPath(
  import.meta.url.endsWith('.ts') ? new URL('./', import.meta.url) : new URL('../../../../src/server/dashboard/', import.meta.url),
);

/** The files served, by name, with their content types; nothing else under the directory is served. */
const kAssets: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'style.css': 'text/css; charset=utf-8',
};

/**
 * kDashboardAssetPaths: every request path that serves one of the page's static files (`GET /` and
 * `GET /dashboard/{file}`). They hold no data, so auth.ts serves them without a token.
 */
export const kDashboardAssetPaths: readonly string[] = Object.freeze(['/', ...Object.keys(kAssets).map((name) => `/dashboard/${name}`)]);

const cache = new Map<string, HttpReply>();

function asset(name: string): HttpReply {
  let reply = cache.get(name);
  if (!reply) {
    const contentType = kAssets[name];
    if (!contentType) return statusReply(notFound('dashboard assets', name));
    const body = readFileSync(`${kDashboardDir}/${name}`, 'utf8');
    reply = { status: 200, contentType, body, headers: { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' } };
    cache.set(name, reply);
  }
  return reply;
}

/** dashboardIndexHandler answers `GET /`: the dashboard page (index.html). Read once, then cached. */
export function dashboardIndexHandler(_ctx: RouteContext): HttpReply {
  return asset('index.html');
}

/** dashboardAssetHandler answers `GET /dashboard/{file}` for the page's script and stylesheet; 404 for any other name. */
export function dashboardAssetHandler({ params }: RouteContext): HttpReply {
  return asset(params.file);
}

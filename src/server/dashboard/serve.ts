// Counterpart of the Kubernetes Dashboard's static asset server (kubernetes/dashboard src/app/backend handler/static): the live page's files.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { statusReply, type HttpReply } from '../http/reply.js';
import { notFound, statusError } from '../http/status.js';

/**
 * kDashboardDir: the directory the page's own files are read from — always the source tree's
 * src/server/dashboard/ (tsc does not copy non-TS files to dist/, so from dist/src/server/dashboard/
 * we climb back to the project root).
 */
export const kDashboardDir = fileURLToPath(
  import.meta.url.endsWith('.ts') ? new URL('./', import.meta.url) : new URL('../../../../src/server/dashboard/', import.meta.url),
);

/** The project root (where package.json, dist/ and node_modules/ are). */
const kRoot = join(kDashboardDir, '..', '..', '..');
const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

const kJs = 'text/javascript; charset=utf-8';
const kCss = 'text/css; charset=utf-8';

/** The page's own modules (src/server/dashboard/*.js, plain ES modules, no build step). */
const kOwnModules = [
  'app.js',
  'dom.js',
  'session.js',
  'watch.js',
  'rows.js',
  'summary.js',
  'stats.js',
  'events.js',
  'detail.js',
  'logs.js',
  'terminal.js',
  'confirm.js',
];

/**
 * kAssets: the files served, by request name → [file, content type]; nothing else is served.
 * - the page's own files;
 * - pod-printer.js: the compiled src/shared/pod-printer.ts (dist/, built by `npm run build`; it has
 *   only type imports, so it runs in the browser as is): the page's Status column is the very
 *   podStatusReason the client's `get pods` prints;
 * - xterm.mjs, xterm.css, addon-fit.mjs: @xterm/xterm's and @xterm/addon-fit's ES modules and
 *   stylesheet, from node_modules (self-contained: no imports).
 */
const kAssets: Readonly<Record<string, readonly [file: () => string, contentType: string]>> = {
  'index.html': [() => join(kDashboardDir, 'index.html'), 'text/html; charset=utf-8'],
  'style.css': [() => join(kDashboardDir, 'style.css'), kCss],
  ...Object.fromEntries(kOwnModules.map((name) => [name, [() => join(kDashboardDir, name), kJs] as const])),
  'pod-printer.js': [() => join(kRoot, 'dist', 'src', 'shared', 'pod-printer.js'), kJs],
  'xterm.mjs': [() => join(packageDir('@xterm/xterm'), 'lib', 'xterm.mjs'), kJs],
  'xterm.css': [() => join(packageDir('@xterm/xterm'), 'css', 'xterm.css'), kCss],
  'addon-fit.mjs': [() => join(packageDir('@xterm/addon-fit'), 'lib', 'addon-fit.mjs'), kJs],
};

/** kDashboardAssetNames: the names served under `/dashboard/{name}`. */
export const kDashboardAssetNames: readonly string[] = Object.freeze(Object.keys(kAssets));

/**
 * kDashboardAssetPaths: every request path that serves one of the page's static files (`GET /` and
 * `GET /dashboard/{file}`). They hold no data, so auth.ts serves them without a token.
 */
export const kDashboardAssetPaths: readonly string[] = Object.freeze(['/', ...kDashboardAssetNames.map((name) => `/dashboard/${name}`)]);

/**
 * DashboardRequest: what the handlers read of the router's RouteContext (its decoded `:params`).
 * Declared here, not imported from router.ts, so that the dashboard's file server stays out of the
 * server's import cycles (auth.ts reads kDashboardAssetPaths; #41 item 3).
 */
export interface DashboardRequest {
  readonly params: Readonly<Record<string, string>>;
}

const cache = new Map<string, HttpReply>();

function asset(name: string): HttpReply {
  let reply = cache.get(name);
  if (!reply) {
    const entry = Object.hasOwn(kAssets, name) ? kAssets[name] : undefined;
    if (!entry) return statusReply(notFound('dashboard assets', name));
    let body: string;
    try {
      body = readFileSync(entry[0](), 'utf8');
    } catch (err) {
      // Not cached: a later `npm run build` (pod-printer.js) or install makes it appear.
      const why = name === 'pod-printer.js' ? ' (run `npm run build`: it is the compiled src/shared/pod-printer.ts)' : '';
      return statusReply(statusError(503, 'ServiceUnavailable', `dashboard asset ${name} is missing${why}: ${(err as Error).message}`));
    }
    reply = { status: 200, contentType: entry[1], body, headers: { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' } };
    cache.set(name, reply);
  }
  return reply;
}

/** dashboardIndexHandler answers `GET /`: the dashboard page (index.html). Read once, then cached. */
export function dashboardIndexHandler(_ctx: DashboardRequest): HttpReply {
  return asset('index.html');
}

/**
 * dashboardAssetHandler answers `GET /dashboard/{file}` for the page's modules, stylesheets and the
 * xterm.js files ({@link kDashboardAssetNames}); 404 `Status` for any other name, 503 when a listed
 * file is missing on disk (pod-printer.js before a build).
 */
export function dashboardAssetHandler({ params }: DashboardRequest): HttpReply {
  return asset(params.file);
}

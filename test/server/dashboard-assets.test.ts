// The dashboard's fixed asset list (src/server/dashboard/serve.ts) and the YAML answer of
// GET /pods/{ns}/{name} that its YAML tab reads (the apiserver's Accept negotiation).
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AgentHost } from '../../src/server/host/agent-host.js';
import { dashboardAssetHandler, kDashboardAssetNames, kDashboardAssetPaths, kDashboardDir } from '../../src/server/dashboard/serve.js';
import type { RouteContext } from '../../src/server/routes/router.js';
import { getPodHandler, prefersYaml } from '../../src/server/routes/pods.js';
import { parse as parseYaml } from 'yaml';

const built = existsSync(new URL('../../dist/src/shared/pod-printer.js', import.meta.url));

function serve(file: string) {
  return dashboardAssetHandler({ params: { file } } as unknown as RouteContext) as { status: number; contentType: string; body: string };
}

describe('dashboard assets', () => {
  it.each(kDashboardAssetNames.filter((n) => n !== 'pod-printer.js' || built))('serves %s with its content type', (name) => {
    const reply = serve(name);
    expect(reply.status).toBe(200);
    expect(reply.contentType).toMatch(name.endsWith('.css') ? /^text\/css/ : name.endsWith('.html') ? /^text\/html/ : /^text\/javascript/);
    expect(reply.body.length).toBeGreaterThan(0);
    expect(kDashboardAssetPaths).toContain(`/dashboard/${name}`);
  });

  it.each(['nope.js', '../package.json', '__proto__', 'constructor', 'serve.ts', 'xterm.js.map'])(
    'answers 404 for %j (not in the list)',
    (name) => {
      const reply = serve(name);
      expect(reply.status).toBe(404);
      expect(JSON.parse(reply.body)).toMatchObject({ kind: 'Status', code: 404 });
    },
  );

  it('lists every module the page imports (relative imports of each served script resolve to a served name)', () => {
    const scripts = kDashboardAssetNames.filter((n) => n.endsWith('.js') && n !== 'pod-printer.js');
    const imported = new Set<string>();
    for (const name of scripts) {
      const text = readFileSync(`${kDashboardDir}/${name}`, 'utf8');
      for (const m of text.matchAll(/^import [^;]*? from '([^']+)';$/gms)) imported.add(m[1]);
    }
    expect(imported.size).toBeGreaterThan(5);
    for (const spec of imported) {
      expect(spec, 'a browser cannot resolve bare specifiers').toMatch(/^\.\//);
      expect(kDashboardAssetNames).toContain(spec.slice(2));
    }
    const html = readFileSync(`${kDashboardDir}/index.html`, 'utf8');
    for (const m of html.matchAll(/(?:src|href)="\/dashboard\/([^"]+)"/g)) expect(kDashboardAssetNames).toContain(m[1]);
  });

  it.runIf(built)(
    'serves the compiled pod-printer and the xterm modules without runtime imports (they run in the browser as they are)',
    () => {
      for (const name of ['pod-printer.js', 'xterm.mjs', 'addon-fit.mjs']) {
        const body = serve(name).body;
        expect(body, name).not.toMatch(/^\s*import\s/m);
        expect(body, name).not.toMatch(/\brequire\(/);
      }
      expect(serve('pod-printer.js').body).toContain('export function podStatusReason');
    },
  );
});

describe('GET /pods/{ns}/{name} as YAML', () => {
  const pod = {
    metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
    spec: { containers: [{ name: 'main', image: 'busybox' }] },
    status: { phase: 'Running' },
  };
  const host = { getPod: (ns: string, name: string) => (ns === 'default' && name === 'web' ? pod : undefined) } as unknown as AgentHost;
  const get = (accept: string, name = 'web') =>
    getPodHandler({
      host,
      params: { namespace: 'default', name },
      req: { method: 'get', path: `/pods/default/${name}`, query: new URLSearchParams(), headers: accept ? { accept } : {} },
    });

  it.each([
    ['application/yaml', true],
    ['application/x-yaml, application/json', true],
    ['text/yaml;q=0.9', true],
    ['application/json, application/yaml', false],
    ['*/*', false],
    ['', false],
    ['text/html', false],
  ])('prefersYaml(%j) is %s', (accept, yes) => {
    expect(prefersYaml(accept)).toBe(yes);
  });

  it('answers the Pod as YAML when asked, as JSON otherwise, and a JSON Status for a missing pod', () => {
    const yaml = get('application/yaml') as { status: number; contentType: string; body: string };
    expect(yaml.status).toBe(200);
    expect(yaml.contentType).toBe('application/yaml');
    expect(parseYaml(yaml.body)).toEqual({ apiVersion: 'v1', kind: 'Pod', ...pod });
    expect(yaml.body.startsWith('apiVersion: v1\nkind: Pod\n')).toBe(true);
    const json = get('application/json') as { contentType: string; body: string };
    expect(json.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(json.body).kind).toBe('Pod');
    const missing = get('application/yaml', 'nope') as { status: number; body: string };
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ kind: 'Status', reason: 'NotFound' });
  });
});

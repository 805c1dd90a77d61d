import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentHost, HealthReport } from '../../src/server/host/agent-host.js';
import { checkNativeUws, createServer, type AgentServer } from '../../src/server/server.js';
import type { Pod } from '../../src/shared/api.js';
import { newLogger } from '../../src/shared/logging.js';

function pod(namespace: string, name: string, labels: Record<string, string> = {}): Pod {
  return {
    metadata: { namespace, name, uid: `uid-${namespace}-${name}`, labels },
    spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    status: { phase: 'Running' },
  };
}

class FakeAgentHost implements AgentHost {
  pods: Pod[] = [
    pod('default', 'web', { app: 'web', tier: 'front' }),
    pod('default', 'db', { app: 'db', tier: 'back' }),
    pod('kube-system', 'web', { app: 'web', tier: 'back' }),
    pod('kube-system', 'plain'),
  ];
  health: HealthReport = { ok: true, checks: [{ name: 'syncloop', ok: true }] };
  listPods(): Pod[] {
    return this.pods;
  }
  getPod(namespace: string, name: string): Pod | undefined {
    return this.pods.find((p) => p.metadata?.namespace === namespace && p.metadata?.name === name);
  }
  healthz(): HealthReport {
    return this.health;
  }
}

const host = new FakeAgentHost();
let server: AgentServer;
let base: string;

beforeAll(async () => {
  server = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server?.close();
});

async function getJson(path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${path}`, init);
  return { status: res.status, body: await res.json(), headers: res.headers };
}

function names(list: { items: Pod[] }): string[] {
  return list.items.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`);
}

describe('createServer', () => {
  it('listens on an ephemeral port when asked for port 0', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.port).toBeLessThan(65536);
  });

  it('finds the native uWebSockets.js binary loaded', () => {
    const sharedObjects = (process.report.getReport() as unknown as { sharedObjects: string[] }).sharedObjects;
    expect(() => checkNativeUws(sharedObjects)).not.toThrow();
  });

  it('refuses to start when the native binary is not loaded', () => {
    expect(() => checkNativeUws(['/lib/x86_64-linux-gnu/libc.so.6'])).toThrow(/uws_linux_x64_115\.node is not loaded/);
  });

  it("refuses a port another process's server already listens on (no SO_REUSEPORT sharing)", async () => {
    const { spawn } = await import('node:child_process');
    const { createServer: netServer } = await import('node:net');
    // A fixed port (not 0): uSockets shares an explicitly named port unless told not to.
    const free = await new Promise<number>((resolve) => {
      const s = netServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const script = `import { createServer } from ${JSON.stringify(new URL('../../src/server/server.ts', import.meta.url).pathname)};
      import { newLogger } from ${JSON.stringify(new URL('../../src/shared/logging.ts', import.meta.url).pathname)};
      const s = await createServer({ listPods: () => [], getPod: () => undefined, healthz: () => ({ ok: true, checks: [] }) }, { address: '127.0.0.1', port: ${free}, logger: newLogger('silent') });
      process.stdout.write(String(s.port) + '\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
        child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
      });
      await expect(createServer(host, { address: '127.0.0.1', port, logger: newLogger('silent') })).rejects.toThrow(
        `cannot listen on 127.0.0.1:${port}`,
      );
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('fails clearly when the port is taken', async () => {
    await expect(createServer(host, { address: '127.0.0.1', port: server.port, logger: newLogger('silent') })).rejects.toThrow(
      `cannot listen on 127.0.0.1:${server.port}`,
    );
  });
});

describe('GET /healthz', () => {
  it('answers 200 ok when every check passes', async () => {
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('ok');
  });

  it('lists the checks with ?verbose', async () => {
    const res = await fetch(`${base}/healthz?verbose`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('[+]syncloop ok\nhealthz check passed\n');
  });

  it('answers 500 listing the failing checks', async () => {
    host.health = {
      ok: false,
      checks: [
        { name: 'syncloop', ok: true },
        { name: 'pleg', ok: false, message: 'relist not run for 3m0s' },
      ],
    };
    try {
      const res = await fetch(`${base}/healthz`);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).toContain('[-]pleg failed: relist not run for 3m0s');
      expect(text).toContain('[+]syncloop ok');
      expect(text).toContain('healthz check failed');
    } finally {
      host.health = { ok: true, checks: [{ name: 'syncloop', ok: true }] };
    }
  });
});

describe('GET /pods', () => {
  it('answers a PodList of every pod with its status', async () => {
    const { status, body, headers } = await getJson('/pods');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toBe('application/json');
    expect(body).toMatchObject({ apiVersion: 'v1', kind: 'PodList', metadata: {} });
    expect(names(body)).toEqual(['default/web', 'default/db', 'kube-system/web', 'kube-system/plain']);
    expect(body.items[0].status).toEqual({ phase: 'Running' });
  });

  it('filters by ?namespace=', async () => {
    const { body } = await getJson('/pods?namespace=kube-system');
    expect(names(body)).toEqual(['kube-system/web', 'kube-system/plain']);
  });

  it.each([
    ['app=web', ['default/web', 'kube-system/web']],
    ['app==web,tier=front', ['default/web']],
    ['tier!=back', ['default/web', 'kube-system/plain']],
    ['tier', ['default/web', 'default/db', 'kube-system/web']],
    ['!tier', ['kube-system/plain']],
    ['app=nothing', []],
  ])('filters by ?labelSelector=%s', async (selector, expected) => {
    const { body } = await getJson(`/pods?labelSelector=${encodeURIComponent(selector)}`);
    expect(names(body)).toEqual(expected);
  });

  it('combines namespace and labelSelector', async () => {
    const { body } = await getJson(`/pods?namespace=default&labelSelector=${encodeURIComponent('tier=back')}`);
    expect(names(body)).toEqual(['default/db']);
  });

  it('answers 400 Status for a bad selector', async () => {
    const { status, body } = await getJson(`/pods?labelSelector=${encodeURIComponent('app in web')}`);
    expect(status).toBe(400);
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'BadRequest', code: 400 });
  });

  it('ignores a trailing slash', async () => {
    const { status, body } = await getJson('/pods/');
    expect(status).toBe(200);
    expect(body.kind).toBe('PodList');
  });
});

describe('GET /pods/{namespace}/{name}', () => {
  it('answers the Pod', async () => {
    const { status, body } = await getJson('/pods/kube-system/web');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'kube-system', name: 'web' },
      status: { phase: 'Running' },
    });
  });

  it('answers 404 NotFound Status for an unknown pod', async () => {
    const { status, body } = await getJson('/pods/default/nope');
    expect(status).toBe(404);
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'pods' },
      code: 404,
    });
  });

  it('decodes percent-encoded path segments', async () => {
    host.pods.push(pod('default', 'a.b'));
    try {
      const { status, body } = await getJson('/pods/default/a%2Eb');
      expect(status).toBe(200);
      expect(body.metadata.name).toBe('a.b');
    } finally {
      host.pods.pop();
    }
  });
});

describe('errors', () => {
  it.each(['/nope', '/pods/default', '/pods/default/web/extra', '/healthz/x'])('answers 404 Status for %s', async (path) => {
    const { status, body } = await getJson(path);
    expect(status).toBe(404);
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
  });

  it.each([
    ['POST', '/healthz', 'GET'],
    ['DELETE', '/pods', 'GET, POST'],
    ['PATCH', '/pods/default/web', 'GET, PUT, DELETE'],
  ])('answers 405 Status for %s %s', async (method, path, allow) => {
    const { status, body, headers } = await getJson(path, { method, body: method === 'DELETE' ? undefined : '{}' });
    expect(status).toBe(405);
    expect(headers.get('allow')).toBe(allow);
    expect(body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'MethodNotAllowed', code: 405 });
  });

  it('answers 400 Status for a malformed percent-encoding', async () => {
    const { status, body } = await getJson('/pods/default/%E0%A4%A');
    expect(status).toBe(400);
    expect(body.reason).toBe('BadRequest');
  });

  it('answers 500 InternalError Status when the agent throws', async () => {
    const original = host.listPods;
    host.listPods = () => {
      throw new Error('pod manager broken');
    };
    try {
      const { status, body } = await getJson('/pods');
      expect(status).toBe(500);
      expect(body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
      expect(body.message).toContain('pod manager broken');
    } finally {
      host.listPods = original;
    }
  });
});

describe('close', () => {
  it('stops listening', async () => {
    const other = await createServer(host, { address: '127.0.0.1', port: 0, logger: newLogger('silent') });
    const url = `http://127.0.0.1:${other.port}/healthz`;
    expect((await fetch(url)).status).toBe(200);
    other.close();
    other.close(); // idempotent
    await expect(fetch(url, { headers: { connection: 'close' } })).rejects.toThrow();
  });
});

// Test helpers for the CRI suites against the containerd of tools/lib/containerd.sh; the role of the node e2e suite's CRI setup (test/e2e_node/remote, cri-tools' critest framework: per-test sandboxes removed after each test).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { RemoteImageService } from '../../src/workers/runtime/cri/remote-image.js';
import { RemoteRuntimeService } from '../../src/workers/runtime/cri/remote-runtime.js';
import type { ImageManagerService, RuntimeService } from '../../src/workers/runtime/cri/services.js';
import type { CriInput, PodSandboxConfig } from '../../src/workers/runtime/cri/types.js';

/**
 * readRunEnv reads `.run/<name>.env` (the KEY=VALUE files tools/lib/*.sh write: registry.env,
 * containerd.env) into a record; null when the file is absent.
 */
export function readRunEnv(name: string): Record<string, string> | null {
  const file = join(import.meta.dirname, `../../.run/${name}.env`);
  if (!existsSync(file)) return null;
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.includes('='));
  return Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * criEndpointOrSkip: the endpoint of tools/lib/containerd.sh's containerd (`unix:///…`, from
 * KUBELET_TS_CRI_ENDPOINT, else .run/containerd.env), or null when it is absent — and then, with KUBELET_TS_REQUIRE_CRI=1 (set by
 * tools/test after containerd.sh up), it throws instead: CI must never skip the CRI suites silently.
 * Without the variable a missing containerd prints one notice and the suites skip.
 */
export function criEndpointOrSkip(): string | null {
  const endpoint = process.env.KUBELET_TS_CRI_ENDPOINT || (readRunEnv('containerd')?.KUBELET_TS_CRI_ENDPOINT ?? null);
  const problem =
    endpoint === null
      ? 'no .run/containerd.env (tools/lib/containerd.sh up writes it)'
      : !isSocket(endpoint.replace(/^unix:\/\//, ''))
        ? `no socket at ${endpoint}`
        : undefined;
  if (problem === undefined) return endpoint;
  if (process.env.KUBELET_TS_REQUIRE_CRI === '1') {
    throw new Error(`containerd (CRI) is required (KUBELET_TS_REQUIRE_CRI=1) but not usable: ${problem}; run tools/lib/containerd.sh up`);
  }
  process.stderr.write(
    `[cri] containerd (CRI) not available (${problem}); the CRI suites are skipped. Start it with tools/lib/containerd.sh up.\n`,
  );
  return null;
}

/** CriRun: the CRI services under test (the test containerd's clients, or the Docker implementation) and what one test file makes, labelled with a run label of its own. */
export interface CriRun {
  runtime: RuntimeService;
  images: ImageManagerService;
  /** The label every sandbox and container of this file carries: `{ 'kubelet-ts.test-run': <unique> }`. */
  label: Record<string, string>;
  /** A pod log directory of its own (removed at the end). */
  logDirectory(): Promise<string>;
  /** A sandbox config labelled with the run label; `name` becomes the pod name, a unique UID is made. */
  sandboxConfig(name: string, logDirectory: string, more?: CriInput<PodSandboxConfig>): CriInput<PodSandboxConfig>;
  /** Stop and remove every sandbox carrying the run label (and so its containers); never another. */
  cleanup(): Promise<void>;
}

/**
 * useCriRun makes a {@link CriRun} for a describe block on `endpoint` (null: a skipped block, see
 * below) and registers an afterAll that
 * removes every sandbox labelled with its run label, the log directories it made, and closes the
 * clients. Tests also call `cleanup()` in their own `finally`.
 */
export function useCriRun(endpoint: string | null): CriRun {
  // vitest runs a skipped describe's body too (to collect its tests): without an endpoint the
  // clients point nowhere, no hook is registered, and nothing calls them.
  const target = endpoint ?? 'unix:///nonexistent/kubelet-ts-cri.sock';
  const runtime = new RemoteRuntimeService(target, { requestTimeoutMs: 60_000 });
  const images = new RemoteImageService(target, { requestTimeoutMs: 60_000 });
  return useServiceRun(runtime, images, endpoint !== null);
}

/**
 * useServiceRun: a {@link CriRun} over any CRI services (`runtime`, `images`); with `active` it
 * registers the afterAll of useCriRun (cleanup by the run label, log directories removed, both
 * services closed, then `afterCleanup` if given). Inactive (a skipped block): no hook.
 */
export function useServiceRun(
  runtime: RuntimeService,
  images: ImageManagerService,
  active: boolean,
  afterCleanup?: (label: Record<string, string>) => Promise<unknown>,
): CriRun {
  const label = { 'kubelet-ts.test-run': `cri-${randomBytes(6).toString('hex')}` };
  const dirs: string[] = [];
  const run: CriRun = {
    runtime,
    images,
    label,
    async logDirectory() {
      const dir = await mkdtemp(join(tmpdir(), 'kts-cri-logs-'));
      dirs.push(dir);
      return dir;
    },
    sandboxConfig(name, logDirectory, more = {}) {
      const uid = `${label['kubelet-ts.test-run']}-${randomBytes(4).toString('hex')}`;
      return {
        metadata: { name, uid, namespace: 'kts-cri-test', attempt: 0 },
        log_directory: logDirectory,
        ...more,
        labels: { ...label, ...(more.labels ?? {}) },
      };
    },
    async cleanup() {
      const sandboxes = await runtime.listPodSandbox({ label_selector: label });
      for (const s of sandboxes) {
        await runtime.stopPodSandbox(s.id).catch(() => undefined);
        await runtime.removePodSandbox(s.id).catch(() => undefined);
      }
    },
  };
  if (!active) return run;
  afterAll(async () => {
    try {
      await run.cleanup();
      await afterCleanup?.(label);
    } finally {
      runtime.close();
      images.close();
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    }
  });
  return run;
}

/** RegistryImage: an image {@link pushVariantImage} put in a test registry. */
export interface RegistryImage {
  /** e.g. `127.0.0.1:5055/kubelet-ts/busybox:cri-0a1b2c3d`. */
  ref: string;
  /** The image ID (its config digest), which no other image shares. */
  id: string;
}

/**
 * pushVariantImage puts into the registry at `registry` (`127.0.0.1:PORT`, Basic `auth` if given) a
 * variant of the test image the registry already holds (kubelet-ts/busybox:1.35): the same layers
 * under a config carrying `label`, so its image ID is its own. Needed because the CRI's RemoveImage
 * removes every reference of an image ID: pulling and removing the plain test image would take
 * docker.io/kubelet-ts/busybox:1.35 out of the runtime too. Speaks the registry's HTTP API (v2).
 */
export async function pushVariantImage(
  registry: string,
  label: Record<string, string>,
  auth?: { username: string; password: string },
): Promise<RegistryImage> {
  const base = `http://${registry}/v2/kubelet-ts/busybox`;
  const headers: Record<string, string> = auth
    ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` }
    : {};
  const kManifest = 'application/vnd.docker.distribution.manifest.v2+json';
  const ok = async (res: Response, what: string): Promise<Response> => {
    if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
    return res;
  };
  const manifest = (await (
    await ok(await fetch(`${base}/manifests/1.35`, { headers: { ...headers, accept: kManifest } }), 'GET manifest')
  ).json()) as {
    config: { digest: string; size: number };
  };
  const config = (await (await ok(await fetch(`${base}/blobs/${manifest.config.digest}`, { headers }), 'GET config')).json()) as {
    config?: { Labels?: Record<string, string> | null };
  };
  config.config = { ...config.config, Labels: { ...(config.config?.Labels ?? {}), ...label } };
  const body = Buffer.from(JSON.stringify(config));
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  const upload = await ok(await fetch(`${base}/blobs/uploads/`, { method: 'POST', headers }), 'POST upload');
  const location = new URL(upload.headers.get('location') ?? '', `http://${registry}`);
  location.searchParams.set('digest', digest);
  await ok(
    await fetch(location, { method: 'PUT', headers: { ...headers, 'content-type': 'application/octet-stream' }, body }),
    'PUT config',
  );
  const tag = `cri-${randomBytes(4).toString('hex')}`;
  const next = { ...manifest, config: { ...manifest.config, digest, size: body.length } };
  await ok(
    await fetch(`${base}/manifests/${tag}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': kManifest },
      body: JSON.stringify(next),
    }),
    'PUT manifest',
  );
  return { ref: `${registry}/kubelet-ts/busybox:${tag}`, id: digest };
}

// Unit tests of the serialized image puller (pkg/kubelet/images puller + pull backoff) and the
// Docker config.json keyring, over a counting fake runtime and a real temp directory for the locks.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  isInPullBackoff,
  kLockPollMs,
  newImagePuller,
  nextPullBackoff,
  parseDockerConfig,
  registryHost,
} from '../../../src/workers/images/image-puller.js';
import { newFakeRuntime } from '../../../src/workers/runtime/fake/fake-runtime.js';
import { FakeClock, flush } from '../../fakes/fake-clock.js';
import type { ContainerRuntime, RegistryAuth } from '../../../src/workers/runtime/container/runtime.js';

/**
 * countingRuntime: a runtime whose pulls are counted; each pull answers on the next macrotask, or,
 * after hold(), only once release() is called (a pull in flight for as long as a test needs).
 */
function countingRuntime() {
  const base = newFakeRuntime({ images: [] });
  const present = new Set<string>();
  const pulls: Array<{ ref: string; auth?: RegistryAuth }> = [];
  let gate: Promise<void> | undefined;
  let open = (): void => {};
  const rt: ContainerRuntime = {
    ...base,
    async imageExists(ref) {
      return present.has(ref) ? { id: `sha256:${ref}` } : null;
    },
    async pullImage(ref, auth) {
      pulls.push({ ref, auth });
      await (gate ?? flush());
      if (ref.includes('missing')) throw new Error(`manifest for ${ref} not found`);
      present.add(ref);
    },
  };
  const hold = () => (gate = new Promise<void>((resolve) => (open = resolve)));
  const release = () => {
    gate = undefined;
    open();
  };
  return { rt, pulls, hold, release };
}

describe('image puller', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-puller-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pulls an image once for many concurrent callers in one thread', async () => {
    const { rt, pulls } = countingRuntime();
    const puller = newImagePuller(rt, { rootDir: dir });
    await Promise.all(Array.from({ length: 10 }, () => puller.pull('127.0.0.1:5055/a:1')));
    expect(pulls.map((p) => p.ref)).toEqual(['127.0.0.1:5055/a:1']);
  });

  it('pulls an image once across pullers (threads) sharing a root dir: the other waits on its clock for the lock to go', async () => {
    const { rt, pulls, hold, release } = countingRuntime();
    const clock = new FakeClock();
    const a = newImagePuller(rt, { rootDir: dir }, { clock });
    const b = newImagePuller(rt, { rootDir: dir }, { clock });
    hold();
    let done = false;
    const all = Promise.all([a.pull('r/x:1'), b.pull('r/x:1'), a.pull('r/x:1'), b.pull('r/x:1')]).then(() => (done = true));
    // One holds the lock and pulls; the other found it held and polls on the fake clock.
    await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true));
    expect(pulls).toHaveLength(1);
    release();
    await vi.waitFor(async () => {
      await clock.advance(kLockPollMs);
      expect(done).toBe(true);
    });
    await all;
    expect(pulls).toHaveLength(1);
  });

  it('pulls different images independently and lets a failed pull be retried', async () => {
    const { rt, pulls } = countingRuntime();
    const puller = newImagePuller(rt, { rootDir: dir });
    await Promise.all([puller.pull('r/x:1'), puller.pull('r/y:1')]);
    await expect(puller.pull('r/missing:1')).rejects.toThrow('not found');
    await expect(puller.pull('r/missing:1')).rejects.toThrow('not found');
    expect(pulls.map((p) => p.ref).sort()).toEqual(['r/missing:1', 'r/missing:1', 'r/x:1', 'r/y:1']);
  });

  it('sends the credentials of the image registry from the Docker config file', async () => {
    const { rt, pulls } = countingRuntime();
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        auths: {
          '127.0.0.1:5056': { auth: Buffer.from('kts:secret').toString('base64') },
          'https://index.docker.io/v1/': { username: 'hub', password: 'pw' },
        },
      }),
    );
    const puller = newImagePuller(rt, { rootDir: dir, credentialsFile: file });
    await puller.pull('127.0.0.1:5056/kubelet-ts/busybox:1.35');
    await puller.pull('127.0.0.1:5055/kubelet-ts/busybox:1.35');
    await puller.pull('library/busybox:1');
    expect(pulls.map((p) => p.auth)).toEqual([
      { username: 'kts', password: 'secret', serveraddress: '127.0.0.1:5056' },
      undefined,
      { username: 'hub', password: 'pw', serveraddress: 'docker.io' },
    ]);
  });
});

describe('registry credentials and pull backoff', () => {
  it.each([
    ['busybox', 'docker.io'],
    ['library/busybox:1', 'docker.io'],
    ['127.0.0.1:5055/a/b:1', '127.0.0.1:5055'],
    ['localhost/a', 'localhost'],
    ['registry.example/a@sha256:00', 'registry.example'],
  ])('registryHost(%s) is %s', (ref, host) => {
    expect(registryHost(ref)).toBe(host);
  });

  it('rejects a credentials file that is not JSON or has a bad auth, naming the file', () => {
    expect(() => parseDockerConfig('{', '/etc/creds.json')).toThrow('/etc/creds.json: not valid JSON');
    expect(() =>
      parseDockerConfig(JSON.stringify({ auths: { h: { auth: Buffer.from('nocolon').toString('base64') } } }), 'c.json'),
    ).toThrow('c.json: auths["h"].auth must be base64 of "user:password"');
  });

  it('backs off 10 s after the first failure, doubling to 300 s', () => {
    let e = nextPullBackoff(undefined, 0);
    expect(e).toEqual({ backoffMs: 10_000, lastUpdateMs: 0 });
    expect(isInPullBackoff(e, 9_999)).toBe(true);
    expect(isInPullBackoff(e, 10_000)).toBe(false);
    for (let i = 0; i < 10; i++) e = nextPullBackoff(e, 1000 * i);
    expect(e.backoffMs).toBe(300_000);
    // idle for more than twice the maximum: starts over
    expect(nextPullBackoff(e, 9 * 1000 + 600_001).backoffMs).toBe(10_000);
  });
});

describe('image puller with IfNotPresent', () => {
  it('does not pull again when another puller finished the image before the lock was taken', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kts-puller-'));
    try {
      const { rt, pulls } = countingRuntime();
      const a = newImagePuller(rt, { rootDir: dir });
      const b = newImagePuller(rt, { rootDir: dir });
      await a.pull('r/x:1', { ifNotPresent: true });
      await b.pull('r/x:1', { ifNotPresent: true });
      await b.pull('r/x:1'); // Always: pulls again
      expect(pulls).toHaveLength(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('pullSecretAuths (imagePullSecrets, credentialprovider/secrets)', () => {
  it("takes the dockerconfigjson entry for the image's registry, names the missing and the unusable ones", async () => {
    const { pullSecretAuths } = await import('../../../src/workers/images/image-puller.js');
    const cfg = (host: string) =>
      Buffer.from(JSON.stringify({ auths: { [host]: { auth: Buffer.from('u:p').toString('base64') } } })).toString('base64');
    const pod = {
      spec: { containers: [], imagePullSecrets: [{ name: 'gone' }, { name: 'other-reg' }, { name: 'ok' }, { name: 'opaque' }] },
    } as never;
    const objects = {
      configMaps: {},
      secrets: {
        gone: null,
        'other-reg': { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': cfg('elsewhere:5000') } },
        ok: { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': cfg('127.0.0.1:5056') } },
        opaque: { type: 'Opaque', data: { x: 'eA==' } },
      },
    } as never;
    expect(pullSecretAuths(pod, objects, '127.0.0.1:5056/kubelet-ts/busybox:1.35')).toEqual({
      auths: [{ username: 'u', password: 'p', serveraddress: '127.0.0.1:5056' }],
      missing: ['gone'],
      invalid: ['opaque'],
    });
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKubeletConfig } from '../../../src/main/options/kubelet-config.js';
import { isInvalidInput } from '../../../src/shared/errors.js';

const kHeader = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function configFile(text: string): Promise<string> {
  const path = join(dir, `config-${++n}.yaml`);
  await writeFile(path, text);
  return path;
}

async function loadError(text: string): Promise<{ path: string; message: string }> {
  const path = await configFile(text);
  const err = await loadKubeletConfig(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isInvalidInput(err)).toBe(true);
  return { path, message: (err as Error).message };
}

describe('loadKubeletConfig', () => {
  it('maps every supported KubeletConfiguration field onto options', async () => {
    const path = await configFile(
      kHeader +
        [
          'staticPodPath: /etc/kubelet-ts/manifests',
          'staticPodURL: http://127.0.0.1:8080/pods',
          'staticPodURLHeader:',
          '  Authorization: ["Bearer x"]',
          '  X-Multi: [a, b]',
          'fileCheckFrequency: 5s',
          'httpCheckFrequency: 1m30s',
          'syncFrequency: 2m',
          'address: 0.0.0.0',
          'port: 10255',
          'maxPods: 250',
          'nodeStatusUpdateFrequency: 500ms',
          'registerNode: false',
          'podInfraContainerImage: example/pause:3',
        ].join('\n'),
    );
    expect(await loadKubeletConfig(path)).toEqual({
      podManifestPath: '/etc/kubelet-ts/manifests',
      manifestUrl: 'http://127.0.0.1:8080/pods',
      manifestUrlHeaders: { Authorization: ['Bearer x'], 'X-Multi': ['a', 'b'] },
      fileCheckFrequencyMs: 5_000,
      httpCheckFrequencyMs: 90_000,
      syncFrequencyMs: 120_000,
      address: '0.0.0.0',
      port: 10255,
      maxPods: 250,
      nodeStatusUpdateFrequencyMs: 500,
      registerNode: false,
      podInfraContainerImage: 'example/pause:3',
    });
  });

  it('returns only the fields the file sets', async () => {
    const path = await configFile(`${kHeader}maxPods: 20\n`);
    expect(await loadKubeletConfig(path)).toEqual({ maxPods: 20 });
  });

  it('accepts JSON, which is YAML', async () => {
    const path = await configFile(
      JSON.stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', port: 10260 }),
    );
    expect(await loadKubeletConfig(path)).toEqual({ port: 10260 });
  });

  it('resolves a relative staticPodPath against the config file directory', async () => {
    const path = await configFile(`${kHeader}staticPodPath: manifests\n`);
    expect(await loadKubeletConfig(path)).toEqual({ podManifestPath: join(dir, 'manifests') });
  });

  it('rejects an unknown field naming the file and the field', async () => {
    const { path, message } = await loadError(`${kHeader}cgroupDriver: systemd\n`);
    expect(message).toContain(path);
    expect(message).toContain('unknown field "cgroupDriver"');
  });

  it.each([
    ['a wrong apiVersion', 'apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n'],
    ['a wrong kind', 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Pod\n'],
    ['a missing apiVersion and kind', 'port: 10250\n'],
  ])('rejects %s naming the file', async (_what, text) => {
    const { path, message } = await loadError(text);
    expect(message).toContain(path);
    expect(message).toContain('kubelet.config.k8s.io/v1beta1');
  });

  it.each([
    ['syncFrequency: often', 'syncFrequency: invalid duration "often"'],
    ['syncFrequency: [1]', 'syncFrequency must be a duration'],
    ['port: "10250"', 'port must be an integer'],
    ['port: 0.5', 'port must be an integer'],
    ['maxPods: -1', 'maxPods must be an integer >= 1'],
    ['registerNode: "yes"', 'registerNode must be true or false'],
    ['address: not-an-ip', 'address must be an IP address'],
    ['staticPodURLHeader: {A: b}', 'staticPodURLHeader A must be a list of strings'],
    ['staticPodURL: ftp://x', 'staticPodURL must be an http(s) URL'],
  ])('rejects %j naming the file and the field', async (line, expected) => {
    const { path, message } = await loadError(`${kHeader}${line}\n`);
    expect(message).toContain(`${path}: ${expected}`);
  });

  it('rejects a duplicate field (strict decoding)', async () => {
    const { path, message } = await loadError(`${kHeader}port: 1\nport: 2\n`);
    expect(message).toContain(path);
    expect(message).toMatch(/invalid YAML/);
  });

  it('rejects an empty file', async () => {
    const { message } = await loadError('  \n');
    expect(message).toMatch(/kubelet config file is empty/);
  });

  it('rejects a YAML document that is not a mapping', async () => {
    const { path, message } = await loadError('- a\n- b\n');
    expect(message).toContain(path);
  });

  it('reports an unreadable file with its path', async () => {
    const missing = join(dir, 'does-not-exist.yaml');
    await expect(loadKubeletConfig(missing)).rejects.toThrow(missing);
  });
});

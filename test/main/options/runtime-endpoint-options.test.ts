// The runtime chosen by --container-runtime-endpoint / --image-service-endpoint / --runtime / --docker-endpoint (src/main/options/runtime-endpoint-options.ts), through the real CLI parser and the --config loader.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { parseCli } from '../../../src/main/cli.js';
import { runtimeEndpointOf } from '../../../src/main/options/runtime-endpoint-options.js';
import { checkRuntimeEndpoint } from '../../../src/shared/runtime-endpoint.js';

const kContainerd = 'unix:///run/containerd/containerd.sock';

describe('--container-runtime-endpoint and --image-service-endpoint', () => {
  it('without them: Docker at --docker-endpoint, unchanged', async () => {
    const o = await parseCli([]);
    expect(o.runtime).toBe('docker');
    expect(runtimeEndpointOf(o)).toEqual({ runtime: 'docker', dockerSocketPath: '/var/run/docker.sock' });
  });

  it('a CRI socket picks the CRI runtime over gRPC; the image endpoint defaults to it', async () => {
    const o = await parseCli(['--container-runtime-endpoint', kContainerd]);
    expect(o.runtime).toBe('remote');
    expect(runtimeEndpointOf(o)).toEqual({
      runtime: 'remote',
      dockerSocketPath: '/var/run/docker.sock',
      containerRuntimeEndpoint: kContainerd,
      imageServiceEndpoint: kContainerd,
    });
    const split = await parseCli([
      '--container-runtime-endpoint',
      kContainerd,
      '--image-service-endpoint',
      'unix:///run/images.sock',
      '--runtime',
      'remote',
    ]);
    expect(runtimeEndpointOf(split)).toMatchObject({ runtime: 'remote', imageServiceEndpoint: 'unix:///run/images.sock' });
  });

  it("Docker's own socket as the endpoint keeps the Docker implementation (no CRI there)", async () => {
    const o = await parseCli(['--container-runtime-endpoint', 'unix:///var/run/docker.sock']);
    expect(o.runtime).toBe('docker');
    const other = await parseCli(['--docker-endpoint', 'unix:///run/d2.sock', '--container-runtime-endpoint', 'unix:///run/d2.sock']);
    expect(runtimeEndpointOf(other)).toEqual({ runtime: 'docker', dockerSocketPath: '/run/d2.sock' });
  });

  it('refuses a bad endpoint naming the flag and the value', async () => {
    await expect(parseCli(['--container-runtime-endpoint', 'tcp://127.0.0.1:1234'])).rejects.toThrow(
      /--container-runtime-endpoint "tcp:\/\/127.0.0.1:1234": protocol "tcp" not supported/,
    );
    await expect(parseCli(['--container-runtime-endpoint', '/run/containerd/containerd.sock'])).rejects.toThrow(
      /--container-runtime-endpoint "\/run\/containerd\/containerd.sock": no scheme/,
    );
    await expect(parseCli(['--container-runtime-endpoint', kContainerd, '--image-service-endpoint', 'unix://rel.sock'])).rejects.toThrow(
      /--image-service-endpoint "unix:\/\/rel.sock": the socket path must be absolute/,
    );
  });

  it('refuses conflicting flags naming both', async () => {
    await expect(parseCli(['--runtime', 'fake', '--container-runtime-endpoint', kContainerd])).rejects.toThrow(
      /--runtime fake cannot be used with --container-runtime-endpoint/,
    );
    await expect(parseCli(['--runtime', 'docker', '--container-runtime-endpoint', kContainerd])).rejects.toThrow(
      /--runtime docker cannot be used with --container-runtime-endpoint/,
    );
    await expect(parseCli(['--runtime', 'remote'])).rejects.toThrow(/--runtime remote needs --container-runtime-endpoint/);
    await expect(parseCli(['--runtime', 'remote', '--container-runtime-endpoint', 'unix:///var/run/docker.sock'])).rejects.toThrow(
      /is Docker's socket/,
    );
    await expect(parseCli(['--image-service-endpoint', kContainerd])).rejects.toThrow(
      /--image-service-endpoint .* needs --container-runtime-endpoint/,
    );
    expect(() => resolveAgentOptions({ runtime: 'bogus' as never })).toThrow(/--runtime must be one of docker, remote, fake/);
  });

  it('takes containerRuntimeEndpoint and imageServiceEndpoint from a KubeletConfiguration file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kts-cre-'));
    try {
      const file = join(dir, 'k.yaml');
      await writeFile(
        file,
        `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncontainerRuntimeEndpoint: ${kContainerd}\n`,
      );
      const o = await parseCli(['--config', file]);
      expect(runtimeEndpointOf(o)).toMatchObject({ runtime: 'remote', containerRuntimeEndpoint: kContainerd });
      await writeFile(file, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageServiceEndpoint: "npipe://x"\n');
      await expect(parseCli(['--config', file])).rejects.toThrow(/imageServiceEndpoint "npipe:\/\/x": protocol "npipe" not supported/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('checkRuntimeEndpoint (every thread bootstrap)', () => {
  it('accepts each runtime with what it needs and names the bad field', () => {
    expect(() => checkRuntimeEndpoint({ dockerSocketPath: '/var/run/docker.sock' })).not.toThrow();
    expect(() => checkRuntimeEndpoint({ runtime: 'fake', dockerSocketPath: '' })).not.toThrow();
    expect(() => checkRuntimeEndpoint({ runtime: 'remote', dockerSocketPath: '', containerRuntimeEndpoint: kContainerd })).not.toThrow();
    expect(() => checkRuntimeEndpoint({ runtime: 'docker', dockerSocketPath: '' })).toThrow(
      'workerData.dockerSocketPath must be a non-empty string',
    );
    expect(() => checkRuntimeEndpoint({ runtime: 'remote', dockerSocketPath: '' })).toThrow(
      /workerData.containerRuntimeEndpoint undefined: not a string/,
    );
    expect(() => checkRuntimeEndpoint({ runtime: 'podman' as never, dockerSocketPath: '' }, 'options.endpoint')).toThrow(
      'options.endpoint.runtime must be one of docker, remote, fake, got "podman"',
    );
  });
});

// cni-exec against small shell-script plugins (no root needed) and, when installed, the real plugins' VERSION.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  cniArgsString,
  execCniPlugin,
  pluginStdin,
  pluginVersionInfo,
  type CniExecRequest,
} from '../../../src/workers/network/cni-exec.js';
import { podCniArgs, resultIps, hostInterfaces } from '../../../src/workers/network/cni-pod-network.js';
import { FakeClock } from '../../fakes/fake-clock.js';

describe('pluginStdin and CNI_ARGS', () => {
  it('injects name, cniVersion, prevResult, and runtimeConfig only for declared capabilities', () => {
    const base = { networkName: 'net', cniVersion: '1.0.0', capabilityArgs: { portMappings: [{ hostPort: 1 }], bandwidth: { rate: 1 } } };
    expect(
      pluginStdin({
        ...base,
        plugin: { type: 'portmap', capabilities: { portMappings: true, bandwidth: false } },
        prevResult: { ips: [] },
      }),
    ).toEqual({
      type: 'portmap',
      capabilities: { portMappings: true, bandwidth: false },
      name: 'net',
      cniVersion: '1.0.0',
      runtimeConfig: { portMappings: [{ hostPort: 1 }] },
      prevResult: { ips: [] },
    });
    expect(pluginStdin({ ...base, plugin: { type: 'bridge', name: 'other', cniVersion: '0.3.1' } })).toEqual({
      type: 'bridge',
      name: 'net',
      cniVersion: '1.0.0',
    });
  });

  it('builds CNI_ARGS as the kubelet does', () => {
    expect(podCniArgs({ sandboxId: 'abc', podUid: 'u-1', podName: 'web', podNamespace: 'default' })).toBe(
      'IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web;K8S_POD_INFRA_CONTAINER_ID=abc;K8S_POD_UID=u-1',
    );
    expect(
      cniArgsString([
        ['A', 'x;y'],
        ['B', '2'],
      ]),
    ).toBe('B=2');
  });

  it('reads the IPs of a result, the sandbox interface first, and its host-side interfaces', () => {
    const r = {
      interfaces: [{ name: 'br0' }, { name: 'veth1' }, { name: 'eth0', sandbox: '/proc/1/ns/net' }],
      ips: [
        { address: '10.0.0.1/24', interface: 0 },
        { address: '10.0.0.5/24', interface: 2 },
      ],
    };
    expect(resultIps(r)).toEqual(['10.0.0.5', '10.0.0.1']);
    expect(hostInterfaces(r)).toEqual(['br0', 'veth1']);
    expect(resultIps(null)).toEqual([]);
    expect(hostInterfaces({ interfaces: [{ name: '../x' }] })).toEqual([]);
  });
});

describe('execCniPlugin with script plugins', () => {
  let bin: string;
  const req = (type: string, over: Partial<CniExecRequest> = {}): CniExecRequest => ({
    command: 'ADD',
    binDirs: [bin],
    plugin: { type },
    networkName: 'net',
    cniVersion: '1.0.0',
    containerId: 'c0ffee',
    netns: '/x',
    ifName: 'eth0',
    args: 'IgnoreUnknown=1',
    ...over,
  });
  const script = async (name: string, body: string): Promise<void> => {
    await writeFile(join(bin, name), `#!/bin/sh\n${body}\n`);
    await chmod(join(bin, name), 0o755);
  };
  beforeAll(async () => {
    bin = await mkdtemp(join(tmpdir(), 'kts-h1-exec-'));
    await script(
      'echoenv',
      `cat > "${'$'}0.stdin"; echo "{\\"cniVersion\\":\\"1.0.0\\",\\"env\\":\\"$CNI_COMMAND $CNI_CONTAINERID $CNI_NETNS $CNI_IFNAME $CNI_ARGS $CNI_PATH\\"}"`,
    );
    await script('errjson', 'cat >/dev/null; echo \'{"code":11,"msg":"busy","details":"try later"}\'; exit 1');
    await script('errtext', 'cat >/dev/null; echo "plain failure" >&2; exit 3');
    await script('sleeper', 'exec sleep 30');
    await script('chatty', 'cat >/dev/null; head -c 2000000 /dev/zero | tr "\\0" a');
    await script('silent', 'cat >/dev/null; exit 0');
  });
  afterAll(async () => {
    await rm(bin, { recursive: true, force: true });
  });

  it('passes the CNI_* environment and the config on stdin, and parses the result', async () => {
    const out = await execCniPlugin(req('echoenv', { prevResult: { ips: [] } }));
    expect(out).toEqual({ cniVersion: '1.0.0', env: `ADD c0ffee /x eth0 IgnoreUnknown=1 ${bin}` });
    expect(JSON.parse(await readFile(join(bin, 'echoenv.stdin'), 'utf8'))).toEqual({
      type: 'echoenv',
      name: 'net',
      cniVersion: '1.0.0',
      prevResult: { ips: [] },
    });
  });

  it('turns the error object into ERR_NETWORK naming plugin and command; code 11 is retriable', async () => {
    await expect(execCniPlugin(req('errjson'))).rejects.toMatchObject({
      code: 'ERR_NETWORK',
      retriable: true,
      message: expect.stringMatching(/^CNI plugin errjson ADD \(network net.*\): busy: try later \(CNI error code 11\)$/),
    });
  });

  it('falls back to stderr when the plugin prints no error object', async () => {
    await expect(execCniPlugin(req('errtext', { command: 'DEL' }))).rejects.toMatchObject({
      code: 'ERR_NETWORK',
      retriable: false,
      message: expect.stringContaining('errtext DEL'),
    });
    await expect(execCniPlugin(req('errtext'))).rejects.toThrow('plain failure');
  });

  it('kills a plugin that outlives the timeout (on the clock it is given)', async () => {
    const clock = new FakeClock();
    const run = execCniPlugin(req('sleeper', { timeoutMs: 200 }), clock);
    run.catch(() => {});
    await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true)); // the plugin runs, its timer armed
    clock.step(199);
    expect(clock.hasWaiters()).toBe(true);
    clock.step(1);
    await expect(run).rejects.toMatchObject({
      code: 'ERR_NETWORK',
      retriable: true,
      message: expect.stringContaining('timed out after 200 ms'),
    });
  });

  it('bounds the output', async () => {
    await expect(execCniPlugin(req('chatty'))).rejects.toThrow('printed more than');
  });

  it('accepts an empty stdout for DEL, not for ADD', async () => {
    expect(await execCniPlugin(req('silent', { command: 'DEL' }))).toBeNull();
    await expect(execCniPlugin(req('silent'))).rejects.toThrow('printed no result');
  });

  it('names a plugin that is not in the path', async () => {
    await expect(execCniPlugin(req('nope'))).rejects.toThrow(`failed to find plugin "nope" in path [${bin}]`);
  });

  it.skipIf(!existsSync('/usr/lib/cni/bridge'))('reads VERSION of the installed plugins: up to 1.0.0, no GC (1.1.0)', async () => {
    const v = await pluginVersionInfo(['/usr/lib/cni'], 'bridge');
    expect(v.supportedVersions).toContain('1.0.0');
    expect(v.supportedVersions).not.toContain('1.1.0');
  });
});

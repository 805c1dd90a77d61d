// Tests of network/network-setup.ts: which configuration the node uses, the default written once, readiness.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cidrOf } from '../../../src/main/network/pod-cidr.js';
import {
  defaultConfFileOf,
  podCidrFileOf,
  setUpNodeNetwork,
  type NetworkStatus,
  type NodeNetwork,
  type NodeNetworkOptions,
} from '../../../src/main/network/network-setup.js';

describe('setUpNodeNetwork', () => {
  let base: string;
  const nets: NodeNetwork[] = [];
  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'kubelet-ts-netsetup-'));
  });
  afterEach(async () => {
    await Promise.all(nets.splice(0).map((n) => n.stop()));
    await rm(base, { recursive: true, force: true });
  });

  const options = (over: Partial<NodeNetworkOptions> = {}): NodeNetworkOptions => ({
    networkPlugin: 'cni',
    runtime: 'docker',
    cniBinDir: join(base, 'bin'),
    cniConfDir: join(base, 'conf'),
    cniCacheDir: join(base, 'root', 'cni', 'cache'),
    rootDir: join(base, 'root'),
    nodeName: 'n1',
    podCIDR: '',
    podMasquerade: false,
    nodeIp: '127.0.0.1',
    ...over,
  });
  const setUp = async (o: NodeNetworkOptions, onChange?: (s: NetworkStatus) => void) => {
    const n = await setUpNodeNetwork(o, {
      logger: pino({ level: 'silent' }),
      onChange,
      claim: { claimDir: join(base, 'claims'), hostNetworks: async () => [] },
    });
    nets.push(n);
    return n;
  };
  const installPlugins = async (dir: string, names = ['bridge', 'host-local', 'portmap', 'loopback']) => {
    await mkdir(dir, { recursive: true });
    for (const n of names) {
      await writeFile(join(dir, n), '#!/bin/sh\nexit 1\n');
      await chmod(join(dir, n), 0o755);
    }
  };

  it('writes the default network once under the root dir and reuses it on a restart', async () => {
    await installPlugins(join(base, 'bin'));
    const first = await setUp(options());
    const file = defaultConfFileOf(join(base, 'root'));
    expect(first.settings).toEqual({
      plugin: 'cni',
      binDirs: [join(base, 'bin')],
      confFile: file,
      cacheDir: join(base, 'root', 'cni', 'cache'),
      hostPortIp: '127.0.0.1',
    });
    const list = JSON.parse(await readFile(file, 'utf8'));
    expect(list.name).toBe('kubelet-ts');
    expect(list.plugins[0]).toMatchObject({
      type: 'bridge',
      bridge: first.bridge,
      ipMasq: false,
      ipam: { type: 'host-local', ranges: [[{ subnet: first.podCIDR }]], dataDir: join(base, 'root', 'cni', 'networks') },
    });
    expect(first.bridge).toMatch(/^kts-[0-9a-f]{8}$/);
    expect(first.status()).toEqual({ ready: true, message: '' });
    const { ino } = await stat(file);
    await first.stop();
    const second = await setUp(options());
    expect(second.podCIDR).toBe(first.podCIDR);
    expect((await stat(file)).ino).toBe(ino); // not written again
  });

  it("keeps the node's pod CIDR in <root-dir>/pod-cidr: a deleted conflist does not make it take a second range while its bridge is up", async () => {
    await installPlugins(join(base, 'bin'));
    const first = await setUp(options());
    expect((await readFile(podCidrFileOf(join(base, 'root')), 'utf8')).trim()).toBe(first.podCIDR);
    await first.stop();
    await rm(defaultConfFileOf(join(base, 'root')));
    // The stopped agent's bridge is still up, with its pods' addresses: the pool search skips that range.
    const cidr = first.podCIDR;
    const up = { cidr: cidrOf(cidr)!, what: `address on ${first.bridge}`, dev: first.bridge };
    const second = await setUpNodeNetwork(options(), {
      logger: pino({ level: 'silent' }),
      claim: { claimDir: join(base, 'claims'), hostNetworks: async () => [up] },
    });
    nets.push(second);
    expect(second.podCIDR).toBe(cidr);
    expect(second.bridge).toBe(first.bridge);
    expect(JSON.parse(await readFile(defaultConfFileOf(join(base, 'root')), 'utf8')).plugins[0].ipam.ranges[0][0].subnet).toBe(cidr);
  });

  it("--pod-masquerade turns the bridge's ipMasq on", async () => {
    await setUp(options({ podMasquerade: true, podCIDR: '10.77.0.0/24' }));
    const list = JSON.parse(await readFile(defaultConfFileOf(join(base, 'root')), 'utf8'));
    expect(list.plugins[0]).toMatchObject({ ipMasq: true, ipam: { ranges: [[{ subnet: '10.77.0.0/24' }]] } });
  });

  it('uses a configuration of --cni-conf-dir when there is one, and writes none of its own', async () => {
    await installPlugins(join(base, 'bin'), ['ptp', 'host-local', 'loopback']);
    await mkdir(join(base, 'conf'));
    const user = join(base, 'conf', '50-user.conflist');
    await writeFile(
      user,
      JSON.stringify({
        cniVersion: '1.0.0',
        name: 'user',
        plugins: [{ type: 'ptp', ipam: { type: 'host-local', subnet: '10.99.0.0/24' } }],
      }),
    );
    const n = await setUp(options());
    expect(n.settings.confFile).toBe(user);
    expect(n.bridge).toBe('');
    expect(n.status().ready).toBe(true);
    await expect(stat(defaultConfFileOf(join(base, 'root')))).rejects.toThrow(/ENOENT/);
  });

  it('is not ready while plugin binaries are missing, and ready once they are installed', async () => {
    const changes: NetworkStatus[] = [];
    const n = await setUp(options({ cniBinDir: `${join(base, 'empty')}:${join(base, 'bin')}` }), (s) => changes.push(s));
    expect(n.status().ready).toBe(false);
    expect(n.status().message).toMatch(
      /^cni plugin not initialized: no plugin binary loopback, bridge, host-local, portmap in --cni-bin-dir /,
    );
    expect(n.nodeMessage()).toBe(
      `container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: ${n.status().message}`,
    );
    await installPlugins(join(base, 'bin'), ['bridge', 'loopback']);
    expect((await n.check()).message).toMatch(/no plugin binary host-local, portmap in/);
    await installPlugins(join(base, 'bin'));
    expect(await n.check()).toEqual({ ready: true, message: '' });
    expect(n.nodeMessage()).toBe('');
    expect(changes.map((c) => c.ready)).toEqual([false, false, true]);
  });

  it('is not ready when its configuration goes away or stops parsing', async () => {
    await installPlugins(join(base, 'bin'));
    const n = await setUp(options());
    await writeFile(n.settings.confFile, '{not json');
    expect((await n.check()).message).toMatch(/^cni plugin not initialized: .*10-kubelet-ts\.conflist/);
  });

  it('has no pod network with --network-plugin none or the fake runtime, always ready', async () => {
    for (const o of [options({ networkPlugin: 'none' }), options({ runtime: 'fake' })]) {
      const n = await setUp(o);
      expect(n.settings).toMatchObject({ plugin: 'none', confFile: '', hostPortIp: '127.0.0.1' });
      expect(n.status().ready).toBe(true);
    }
    await expect(stat(join(base, 'root'))).rejects.toThrow(/ENOENT/);
  });

  it('refuses a colliding --pod-cidr naming the flag', async () => {
    await expect(setUp(options({ podCIDR: '127.0.0.0/24' }))).rejects.toThrow(
      /^--pod-cidr 127\.0\.0\.0\/24 collides with the host's loopback/,
    );
  });
});

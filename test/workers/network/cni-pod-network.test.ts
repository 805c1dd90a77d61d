// The CNI client against the real plugins in /usr/lib/cni, real network namespaces and real iptables (issue 13).
// Needs root and the plugins: skipped otherwise (CI is root and installs them with tools/).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultNetworkConfigList } from '../../../src/io/cni-config.js';
import type { NodeNetworkSettings } from '../../../src/shared/node-settings.js';
import { execCniPlugin } from '../../../src/workers/network/cni-exec.js';
import { newCniPodNetwork } from '../../../src/workers/network/cni-pod-network.js';
import { newPodNetwork } from '../../../src/workers/network/network-service.js';
import type { PodNetworkSetUp } from '../../../src/workers/network/pod-network.js';

const kCanRun = process.getuid?.() === 0 && existsSync('/usr/lib/cni/bridge') && existsSync('/usr/bin/busybox');
if (!kCanRun) console.warn('cni-pod-network.test.ts skipped: needs root, /usr/lib/cni (containernetworking-plugins) and busybox');

const hex = (n: number): string => randomBytes(n).toString('hex');
const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8' });

/** A /24 in 10.250.x.0/24 the host does not route. */
function freeSubnet(): { subnet: string; prefix: string } {
  const routes = sh('ip', ['-4', 'route', 'show', 'table', 'all']) + sh('ip', ['-4', '-o', 'addr']);
  for (let i = 0; i < 50; i++) {
    const x = 1 + Math.floor(Math.random() * 254);
    if (!routes.includes(`10.250.${x}.`)) return { subnet: `10.250.${x}.0/24`, prefix: `10.250.${x}.` };
  }
  throw new Error('no free 10.250.x.0/24');
}

async function waitFor<T>(what: string, f: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    try {
      return await f();
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what}: ${String(last)}`);
}

async function get(url: string): Promise<string> {
  const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return r.text();
}

describe.skipIf(!kCanRun)('CniPodNetwork with the real plugins', () => {
  const id = hex(3);
  const nsNames = ['a', 'b', 'c', 'd'].map((x) => `kts-h1-${id}-${x}`);
  const nsPath = (i: number): string => `/var/run/netns/${nsNames[i]!}`;
  const bridge = `ktsh1${id}`;
  const netName = `kts-h1-${id}`;
  const { subnet, prefix } = freeSubnet();
  const hostPort = 20000 + Math.floor(Math.random() * 20000);
  let dir: string;
  let dataDir: string;
  let settings: NodeNetworkSettings;
  const children: ChildProcess[] = [];
  const pod = (sandboxId: string, netns: number, ports = true): PodNetworkSetUp => ({
    sandboxId,
    podUid: `uid-${sandboxId.slice(0, 8)}`,
    podName: `p-${sandboxId.slice(0, 6)}`,
    podNamespace: 'h1',
    netnsPath: nsPath(netns),
    portMappings: ports ? [{ hostPort, containerPort: 8080, protocol: 'tcp', hostIP: '127.0.0.1' }] : [],
  });
  const podA = pod(hex(32), 0);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-h1-cni-'));
    dataDir = join(dir, 'networks');
    await mkdir(join(dir, 'net.d'));
    await writeFile(
      join(dir, 'net.d', 'h1.conflist'),
      JSON.stringify(defaultNetworkConfigList({ name: netName, bridge, subnet, dataDir, masquerade: false })),
    );
    await mkdir(join(dir, 'www'));
    await writeFile(join(dir, 'www', 'index.html'), `hello from ${id}\n`);
    settings = {
      plugin: 'cni',
      binDirs: ['/usr/lib/cni'],
      confFile: join(dir, 'net.d', 'h1.conflist'),
      cacheDir: join(dir, 'cache'),
      hostPortIp: '127.0.0.1',
    };
    for (const n of nsNames) sh('ip', ['netns', 'add', n]);
  });

  afterAll(async () => {
    for (const c of children) if (c.pid !== undefined && c.exitCode === null) process.kill(c.pid, 'SIGKILL');
    // Whatever a failed test left: DEL every cached entry and lease of our network (removes its iptables rules).
    if (settings)
      await newCniPodNetwork(settings)
        .reconcile(new Set())
        .catch(() => {});
    for (const n of nsNames) execFileSync('ip', ['netns', 'del', n], { stdio: 'ignore' });
    try {
      execFileSync('ip', ['link', 'del', bridge], { stdio: 'ignore' });
    } catch {
      // never created
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const leases = async (): Promise<string[]> =>
    (await readdir(join(dataDir, netName)).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
  const natRules = (): string => sh('iptables', ['-t', 'nat', '-S']);

  it('ADD gives the pod an IP in the subnet that the host reaches, and the hostPort on 127.0.0.1', async () => {
    const net = newPodNetwork(settings);
    expect(net.enabled).toBe(true);
    const status = await net.setUpPod(podA);
    expect(status.ips).toHaveLength(1);
    const ip = status.ips[0]!;
    expect(ip.startsWith(prefix)).toBe(true);
    expect(await leases()).toEqual([ip]);
    const httpd = spawn('ip', ['netns', 'exec', nsNames[0]!, 'busybox', 'httpd', '-f', '-p', `${ip}:8080`, '-h', join(dir, 'www')], {
      stdio: 'ignore',
    });
    children.push(httpd);
    expect(await waitFor('pod IP', () => get(`http://${ip}:8080/`))).toBe(`hello from ${id}\n`);
    expect(await waitFor('hostPort', () => get(`http://127.0.0.1:${hostPort}/`))).toBe(`hello from ${id}\n`);
    // lo is up in the sandbox (the loopback network).
    expect(sh('ip', ['netns', 'exec', nsNames[0]!, 'ip', '-o', 'link', 'show', 'lo'])).toMatch(/[<,]UP[,>]/);
  });

  it('gives the pod only the subnet route and adds no masquerade for the subnet', () => {
    const routes = sh('ip', ['netns', 'exec', nsNames[0]!, 'ip', '-4', 'route']).trim().split('\n');
    expect(routes).toHaveLength(1);
    expect(routes[0]).toMatch(new RegExp(`^${subnet.replace(/\./g, '\\.').replace('/', '\\/')} dev eth0`));
    const masq = natRules()
      .split('\n')
      .filter((l) => l.includes('MASQUERADE') && l.includes(prefix));
    expect(masq).toEqual([]);
    expect(natRules()).toContain(podA.sandboxId); // portmap's rules are there, labelled with the container ID
  });

  it('keeps the status across a new CniPodNetwork (an agent restart) and checks the pod quick and full', async () => {
    const first = await newCniPodNetwork(settings).podNetworkStatus(podA.sandboxId);
    const again = newCniPodNetwork(settings);
    expect(await again.podNetworkStatus(podA.sandboxId)).toEqual(first);
    expect(first?.ips[0]?.startsWith(prefix)).toBe(true);
    expect(await again.checkPod(podA, podA.netnsPath, 'quick')).toBe(true);
    expect(await again.checkPod(podA, podA.netnsPath, 'full')).toBe(true);
    expect(await again.podNetworkStatus(hex(32))).toBeNull();
  });

  it('DEL releases the IP, the cache entry and the port rules, and is idempotent', async () => {
    const net = newCniPodNetwork(settings);
    for (const c of children.splice(0)) if (c.pid !== undefined && c.exitCode === null) process.kill(c.pid, 'SIGKILL');
    await net.tearDownPod(podA, podA.netnsPath);
    expect(await leases()).toEqual([]);
    expect(await net.podNetworkStatus(podA.sandboxId)).toBeNull();
    expect(await net.checkPod(podA, podA.netnsPath, 'quick')).toBe(false);
    expect(natRules()).not.toContain(podA.sandboxId);
    await net.tearDownPod(podA, podA.netnsPath);
    await net.tearDownPod(podA, '/proc/999999999/ns/net');
  });

  it('reconcile releases the leases and entries of sandboxes that are gone and keeps the live one', async () => {
    const live = pod(hex(32), 0, false);
    const net = newCniPodNetwork(settings, undefined);
    const liveIp = (await net.setUpPod(live)).ips[0]!;
    // kill -9 after the chain's ADD and before the cache write: no entry at all, only the lease and portmap's rules.
    const list = defaultNetworkConfigList({ name: netName, bridge, subnet, dataDir, masquerade: false });
    const ghost = hex(32);
    const base = {
      binDirs: settings.binDirs,
      networkName: netName,
      cniVersion: list.cniVersion,
      containerId: ghost,
      netns: nsPath(1),
      ifName: 'eth0',
      args: 'IgnoreUnknown=1',
    };
    const r = await execCniPlugin({ ...base, command: 'ADD', plugin: list.plugins[0]! });
    await execCniPlugin({
      ...base,
      command: 'ADD',
      plugin: list.plugins[1]!,
      prevResult: r,
      capabilityArgs: { portMappings: [{ hostPort: hostPort + 1, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' }] },
    });
    // kill -9 in the middle of setUpPod: the entry written before the ADD (result null) is left.
    const halfway = pod(hex(32), 2);
    const crashing = newCniPodNetwork(settings, undefined, {
      afterAddBeforeCache: () => {
        throw new Error('simulated kill -9');
      },
    });
    await expect(crashing.setUpPod(halfway)).rejects.toThrow('simulated kill -9');
    expect(await net.podNetworkStatus(halfway.sandboxId)).toBeNull();
    expect(await leases()).toHaveLength(3);
    expect(natRules()).toContain(ghost);
    expect(natRules()).toContain(halfway.sandboxId);

    const { released } = await newCniPodNetwork(settings).reconcile(new Set([live.sandboxId]));
    expect(released.sort()).toEqual([ghost, halfway.sandboxId].sort());
    expect(await leases()).toEqual([liveIp]);
    expect(natRules()).not.toContain(ghost);
    expect(natRules()).not.toContain(halfway.sandboxId);
    expect(await net.podNetworkStatus(live.sandboxId)).toEqual({ ips: [liveIp] });
    // Nothing more to release.
    expect((await net.reconcile(new Set([live.sandboxId]))).released).toEqual([]);
    await net.tearDownPod(live, live.netnsPath);
    expect(await leases()).toEqual([]);
  });

  it('a plugin that fails gives ERR_NETWORK with its msg, and the ADD before it is undone', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, 'h1fail'),
      '#!/bin/sh\ncat >/dev/null\necho \'{"cniVersion":"1.0.0","code":7,"msg":"h1 says no","details":"because"}\'\nexit 1\n',
    );
    await chmod(join(bin, 'h1fail'), 0o755);
    const list = defaultNetworkConfigList({ name: netName, bridge, subnet, dataDir, masquerade: false });
    list.plugins.push({ type: 'h1fail' });
    await writeFile(join(dir, 'net.d', 'fail.conflist'), JSON.stringify(list));
    const net = newCniPodNetwork({ ...settings, binDirs: [bin, '/usr/lib/cni'], confFile: join(dir, 'net.d', 'fail.conflist') });
    const p = pod(hex(32), 3);
    const err = await net.setUpPod(p).catch((e: unknown) => e as { code?: string; message: string });
    expect(err).toMatchObject({ code: 'ERR_NETWORK' });
    expect((err as Error).message).toContain('h1fail ADD');
    expect((err as Error).message).toContain('h1 says no: because');
    expect(await leases()).toEqual([]);
    expect(natRules()).not.toContain(p.sandboxId);
    expect(await net.podNetworkStatus(p.sandboxId)).toBeNull();
  });

  it('a plugin type that is not installed gives ERR_NETWORK naming it', async () => {
    await writeFile(
      join(dir, 'net.d', 'nope.conflist'),
      JSON.stringify({ cniVersion: '1.0.0', name: `${netName}-nope`, plugins: [{ type: 'kts-h1-nope' }] }),
    );
    const net = newCniPodNetwork({ ...settings, confFile: join(dir, 'net.d', 'nope.conflist') });
    await expect(net.setUpPod(pod(hex(32), 2))).rejects.toMatchObject({
      code: 'ERR_NETWORK',
      message: expect.stringContaining('failed to find plugin "kts-h1-nope"'),
    });
  });

  it('checkPod is false once the pod lost its interface, quick and full', async () => {
    const net = newCniPodNetwork(settings);
    const p = pod(hex(32), 3, false);
    await net.setUpPod(p);
    expect(await net.checkPod(p, p.netnsPath, 'full')).toBe(true);
    sh('ip', ['netns', 'exec', nsNames[3]!, 'ip', 'link', 'del', 'eth0']); // the veth pair goes with it
    expect(await net.checkPod(p, p.netnsPath, 'quick')).toBe(false);
    expect(await net.checkPod(p, p.netnsPath, 'full')).toBe(false);
    await net.tearDownPod(p, p.netnsPath);
    expect(await leases()).toEqual([]);
  });
});

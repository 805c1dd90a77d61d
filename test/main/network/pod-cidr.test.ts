// Tests of network/pod-cidr.ts: --pod-cidr checks, host collisions, the host-wide claim.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  bridgeNameFor,
  cidrOf,
  claimPodCidr,
  findHostCollision,
  parseIpJson,
  parsePodCidr,
  parseProcNetRoute,
  type HostNetEntry,
} from '../../../src/main/network/pod-cidr.js';

const entry = (text: string, dev = 'eth0', what = `route ${text} dev ${dev}`): HostNetEntry => ({ cidr: cidrOf(text)!, dev, what });

describe('parsePodCidr', () => {
  it.each([
    ['10.1.0.0', 'must be an IPv4 CIDR'],
    ['10.1.0.0/33', 'must be an IPv4 CIDR'],
    ['300.1.0.0/24', 'must be an IPv4 CIDR'],
    ['fd00::/64', 'must be an IPv4 CIDR'],
    ['10.0.0.0/7', 'prefix length of 8 to 28'],
    ['10.0.0.0/29', 'prefix length of 8 to 28'],
    ['10.1.2.3/24', 'host bits set (did you mean 10.1.2.0/24?)'],
  ])('refuses %s naming --pod-cidr', (text, rule) => {
    expect(() => parsePodCidr(text)).toThrow(/^--pod-cidr must/);
    expect(() => parsePodCidr(text)).toThrow(rule);
  });

  it('accepts /8 to /28 network addresses', () => {
    expect(parsePodCidr('10.0.0.0/8').prefixLength).toBe(8);
    expect(parsePodCidr('192.168.7.16/28')).toMatchObject({ text: '192.168.7.16/28', prefixLength: 28 });
  });
});

describe('host collisions', () => {
  const host = parseIpJson(
    JSON.stringify([
      { dst: 'default', gateway: '192.0.2.1', dev: 'eth0' },
      { dst: '192.0.2.0/24', dev: 'eth0' },
      { dst: '10.222.0.0/24', dev: 'kts-0ade0000' },
      { type: 'local', dst: '10.9.9.9', dev: 'eth1', table: 'local' },
    ]),
    JSON.stringify([{ ifname: 'eth2', addr_info: [{ family: 'inet', local: '172.30.1.5', prefixlen: 16 }] }]),
  );

  it('reads routes of every table and addresses, leaving out default routes', () => {
    expect(host.map((e) => e.cidr.text)).toEqual(['192.0.2.0/24', '10.222.0.0/24', '10.9.9.9/32', '172.30.0.0/16']);
  });

  it.each([
    ['192.0.2.128/25', 'route 192.0.2.0/24 dev eth0 (table main)'],
    ['10.9.0.0/16', 'route local 10.9.9.9 dev eth1 (table local)'],
    ['172.30.4.0/24', 'address 172.30.1.5/16 on eth2'],
    ['127.0.0.0/24', 'loopback 127.0.0.0/8'],
    ['169.254.3.0/24', 'link-local 169.254.0.0/16'],
  ])('%s collides with %s', (cidr, what) => {
    expect(findHostCollision(parsePodCidr(cidr), host)?.what).toBe(what);
  });

  it("does not count the range's own bridge (left by an earlier run) nor a range nobody uses", () => {
    expect(findHostCollision(parsePodCidr('10.222.0.0/24'), host)).toBeUndefined();
    expect(findHostCollision(parsePodCidr('10.222.0.0/23'), host, 'kts-other')?.what).toBe(
      'route 10.222.0.0/24 dev kts-0ade0000 (table main)',
    );
    expect(findHostCollision(parsePodCidr('10.50.0.0/24'), host)).toBeUndefined();
  });

  it('reads /proc/net/route when ip is missing', () => {
    const text =
      'Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\n' +
      'eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\n' +
      'eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\n';
    expect(parseProcNetRoute(text).map((e) => e.what)).toEqual(['route 192.0.2.0/24 dev eth0 (table main)']);
  });

  it('names bridges kts- and the hex network address', () => {
    expect(bridgeNameFor(parsePodCidr('10.222.3.0/24'))).toBe('kts-0ade0300');
    expect(bridgeNameFor(parsePodCidr('10.222.3.0/24')).length).toBeLessThanOrEqual(15);
  });
});

describe('claimPodCidr', () => {
  let dir: string;
  const noHost = { hostNetworks: async () => [] as HostNetEntry[] };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-pod-cidr-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const opts = (rootDir: string, given = '', previous = '') => ({ given, previous, nodeName: `n-${rootDir}`, rootDir, claimDir: dir });

  it('claims the first free /24 of 10.222.0.0/16 in a file holding pid, node and root dir', async () => {
    const c = await claimPodCidr(opts('/r/a'), noHost);
    expect(c.cidr.text).toBe('10.222.0.0/24');
    expect(c.bridge).toBe('kts-0ade0000');
    expect(JSON.parse(await readFile(join(dir, '10.222.0.0_24'), 'utf8'))).toEqual({
      pid: process.pid,
      nodeName: 'n-/r/a',
      rootDir: '/r/a',
    });
    await c.release();
    await expect(readFile(join(dir, '10.222.0.0_24'))).rejects.toThrow(/ENOENT/);
  });

  it('skips /24s the host routes', async () => {
    const c = await claimPodCidr(opts('/r/a'), { hostNetworks: async () => [entry('10.222.0.0/23')] });
    expect(c.cidr.text).toBe('10.222.2.0/24');
  });

  it('skips a /24 whose bridge a stopped agent left up (its pods may hold the addresses), yet a restart keeps its own', async () => {
    const left = { hostNetworks: async () => [entry('10.222.0.0/24', 'kts-0ade0000')] };
    expect((await claimPodCidr(opts('/r/new'), left)).cidr.text).toBe('10.222.1.0/24');
    expect((await claimPodCidr(opts('/r/old', '', '10.222.0.0/24'), left)).cidr.text).toBe('10.222.0.0/24');
  });

  it('gives two agents (started at once) different CIDRs', async () => {
    const [a, b, c] = await Promise.all(['/r/a', '/r/b', '/r/c'].map((r) => claimPodCidr(opts(r), noHost)));
    expect(new Set([a.cidr.text, b.cidr.text, c.cidr.text]).size).toBe(3);
  });

  it('refuses a given CIDR that collides with a route, naming --pod-cidr and the route', async () => {
    await expect(claimPodCidr(opts('/r/a', '10.1.2.0/24'), { hostNetworks: async () => [entry('10.0.0.0/8', 'tun0')] })).rejects.toThrow(
      "--pod-cidr 10.1.2.0/24 collides with the host's route 10.0.0.0/8 dev tun0",
    );
    await expect(claimPodCidr(opts('/r/a', '127.0.0.0/24'), noHost)).rejects.toThrow(
      /--pod-cidr 127\.0\.0\.0\/24 collides with the host's loopback/,
    );
  });

  it('refuses a given CIDR a live agent holds, and takes a stale one over', async () => {
    const a = await claimPodCidr(opts('/r/a', '10.50.0.0/24'), noHost);
    await expect(claimPodCidr(opts('/r/b', '10.50.0.0/24'), noHost)).rejects.toThrow(
      /--pod-cidr 10\.50\.0\.0\/24 is already the pod CIDR of node n-\/r\/a/,
    );
    expect(a.cidr.text).toBe('10.50.0.0/24');
    // A claim whose process is dead (a child that has exited) is stale.
    const child = spawn(process.execPath, ['-e', '']);
    const deadPid = await new Promise<number>((r) => child.on('exit', () => r(child.pid!)));
    await writeFile(join(dir, '10.60.0.0_24'), JSON.stringify({ pid: deadPid, nodeName: 'gone', rootDir: '/r/gone' }));
    const b = await claimPodCidr(opts('/r/b', '10.60.0.0/24'), noHost);
    expect(JSON.parse(await readFile(b.file, 'utf8')).rootDir).toBe('/r/b');
    // Without --pod-cidr the stale one is taken over too (it is the first of the pool here).
    await writeFile(join(dir, '10.222.0.0_24'), JSON.stringify({ pid: deadPid, nodeName: 'gone', rootDir: '/r/gone' }));
    expect((await claimPodCidr(opts('/r/c'), noHost)).cidr.text).toBe('10.222.0.0/24');
  });

  it('keeps its CIDR on a restart: its own claim, and the subnet it used before', async () => {
    await claimPodCidr(opts('/r/x'), noHost); // 10.222.0.0/24 to another agent
    const first = await claimPodCidr(opts('/r/a', '', ''), noHost);
    expect(first.cidr.text).toBe('10.222.1.0/24');
    // Restarted without having released (kill -9): the claim by the same root dir is ours.
    const again = await claimPodCidr(opts('/r/a', '', first.cidr.text), noHost);
    expect(again.cidr.text).toBe('10.222.1.0/24');
    await again.release();
    // Released at stop: the restart gets its old subnet back.
    const restarted = await claimPodCidr(opts('/r/a', '', '10.222.1.0/24'), noHost);
    expect(restarted.cidr.text).toBe('10.222.1.0/24');
    await restarted.release();
    // Taken by another live agent meanwhile: the restart gets another, never the other's.
    expect((await claimPodCidr(opts('/r/y'), noHost)).cidr.text).toBe('10.222.1.0/24');
    expect((await claimPodCidr(opts('/r/a', '', '10.222.1.0/24'), noHost)).cidr.text).toBe('10.222.2.0/24');
  });

  it('release leaves a claim another agent took over alone', async () => {
    const a = await claimPodCidr(opts('/r/a', '10.70.0.0/24'), noHost);
    await writeFile(a.file, JSON.stringify({ pid: process.pid, nodeName: 'b', rootDir: '/r/b' }));
    await a.release();
    expect(JSON.parse(await readFile(a.file, 'utf8')).rootDir).toBe('/r/b');
  });
});

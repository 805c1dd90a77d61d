// Counterpart of the kubelet's --pod-cidr handling (pkg/kubelet/kubelet_network.go updatePodCIDR) plus what a node's IPAM owner decides: which range the agent's own network uses.
/**
 * The pod CIDR of the agent's default network (issue 13): parsing and checking `--pod-cidr`,
 * refusing a range the host already routes or holds an address in, choosing a free /24 of
 * 10.222.0.0/16 when none is given, and claiming it host-wide so that the several agents of one
 * machine (tests start many at once) never share a range or a bridge.
 *
 * The claim is a file `/run/kubelet-ts/pod-cidrs/<a.b.c.d>_<len>` made with an exclusive create,
 * holding `{pid, nodeName, rootDir}`. A claim whose pid is dead is stale and taken over; a claim
 * with the same rootDir is this agent's own (a restart). Choosing and taking over happen under a
 * short lock file (`.lock` in the same directory) so that two agents never take the same stale
 * claim. Main thread, at agent start and stop.
 */
import { execFile } from 'node:child_process';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InvalidArgumentError } from '../../shared/errors.js';

const execFileAsync = promisify(execFile);

/** PodCidr: a parsed IPv4 CIDR; `network` is the range's first address as a 32-bit unsigned number. */
export interface PodCidr {
  /** The canonical text `a.b.c.d/len` (host bits zero). */
  text: string;
  network: number;
  prefixLength: number;
}

/** HostNetEntry: one IPv4 range the host routes or has an address in, with what to name in an error. */
export interface HostNetEntry {
  cidr: PodCidr;
  /** e.g. `route 10.0.0.0/8 dev eth0 (table main)` or `address 127.0.0.1/8 on lo`. */
  what: string;
  /** The interface, '' when unknown. */
  dev: string;
}

/** kPodCidrClaimDir: where the host-wide claims are kept (tmpfs: a reboot frees every claim). */
export const kPodCidrClaimDir = '/run/kubelet-ts/pod-cidrs';

/** kDefaultPodCidrPool: the range the default /24s are chosen from, in order. */
export const kDefaultPodCidrPool = '10.222.0.0/16';

function ipv4ToNumber(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const o = m.slice(1, 5).map(Number);
  if (o.some((x) => x > 255)) return undefined;
  return ((o[0] << 24) >>> 0) + (o[1] << 16) + (o[2] << 8) + o[3];
}

/** numberToIpv4: a 32-bit unsigned number as `a.b.c.d`. Pure. */
export function numberToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function mask(prefixLength: number): number {
  return prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
}

/** cidrOf: `a.b.c.d/len` (or a bare address = /32) → PodCidr with the host bits cleared; undefined if not IPv4. Pure. */
export function cidrOf(text: string): PodCidr | undefined {
  const [addr, len, extra] = text.split('/');
  if (extra !== undefined) return undefined;
  const ip = ipv4ToNumber(addr);
  const prefixLength = len === undefined ? 32 : /^\d{1,2}$/.test(len) ? Number(len) : NaN;
  if (ip === undefined || !(prefixLength >= 0 && prefixLength <= 32)) return undefined;
  const network = (ip & mask(prefixLength)) >>> 0;
  return { text: `${numberToIpv4(network)}/${prefixLength}`, network, prefixLength };
}

/**
 * parsePodCidr checks a `--pod-cidr` value: an IPv4 CIDR `a.b.c.d/len` with len 8..28 (a /28 holds
 * 13 pods: the gateway and the broadcast address take two more) and no host bits set. Pure.
 * @param label names the setting in the error (`--pod-cidr`, or `<file>: podCIDR`).
 * @throws InvalidArgumentError `--pod-cidr must be …, got "…"`.
 */
export function parsePodCidr(text: string, label = '--pod-cidr'): PodCidr {
  const c = cidrOf(text.trim());
  if (!c || !text.includes('/'))
    throw new InvalidArgumentError(`${label} must be an IPv4 CIDR such as 10.222.0.0/24, got ${JSON.stringify(text)}`);
  if (c.prefixLength < 8 || c.prefixLength > 28)
    throw new InvalidArgumentError(`${label} must have a prefix length of 8 to 28, got ${JSON.stringify(text)}`);
  if (c.text !== text.trim())
    throw new InvalidArgumentError(`${label} must not have host bits set (did you mean ${c.text}?), got ${JSON.stringify(text)}`);
  return c;
}

/** cidrsOverlap: true when the two ranges share an address. Pure. */
export function cidrsOverlap(a: PodCidr, b: PodCidr): boolean {
  const len = Math.min(a.prefixLength, b.prefixLength);
  return (a.network & mask(len)) >>> 0 === (b.network & mask(len)) >>> 0;
}

/**
 * bridgeNameFor: the Linux bridge of the default network over `cidr`: `kts-` and the 8 hex digits
 * of its network address (12 characters, within IFNAMSIZ 15): unique per claimed CIDR, never
 * docker0, cni0 or podman0. Pure.
 */
export function bridgeNameFor(cidr: PodCidr): string {
  return `kts-${cidr.network.toString(16).padStart(8, '0')}`;
}

/** The ranges every host has, whatever its tables say: loopback and link-local. */
const kAlwaysTaken: HostNetEntry[] = [
  { cidr: cidrOf('127.0.0.0/8')!, what: 'loopback 127.0.0.0/8', dev: 'lo' },
  { cidr: cidrOf('169.254.0.0/16')!, what: 'link-local 169.254.0.0/16', dev: '' },
];

/**
 * findHostCollision: the first entry of `host` (plus loopback 127/8 and link-local 169.254/16)
 * that overlaps `cidr`, undefined if none. Entries on `ownBridge` (this range's own bridge, left by
 * an earlier run) do not count. Pure.
 */
export function findHostCollision(cidr: PodCidr, host: HostNetEntry[], ownBridge = bridgeNameFor(cidr)): HostNetEntry | undefined {
  return [...kAlwaysTaken, ...host].find((e) => e.dev !== ownBridge && cidrsOverlap(cidr, e.cidr));
}

interface IpRoute {
  dst?: string;
  dev?: string;
  table?: string;
  type?: string;
}
interface IpAddr {
  ifname?: string;
  addr_info?: { family?: string; local?: string; prefixlen?: number }[];
}

/**
 * parseIpJson: the entries of `ip -j -4 route show table all` and `ip -j -4 addr` output
 * (iproute2's JSON). Default routes (dst `default`, a /0) are left out: every range "collides"
 * with them and they say nothing about the range being in use. Pure; bad JSON → [].
 */
export function parseIpJson(routesJson: string, addrsJson: string): HostNetEntry[] {
  const out: HostNetEntry[] = [];
  const parse = <T>(s: string): T[] => {
    try {
      const v = JSON.parse(s) as unknown;
      return Array.isArray(v) ? (v as T[]) : [];
    } catch {
      return [];
    }
  };
  for (const r of parse<IpRoute>(routesJson)) {
    if (!r.dst || r.dst === 'default') continue;
    const cidr = cidrOf(r.dst);
    if (!cidr || cidr.prefixLength === 0) continue;
    out.push({
      cidr,
      dev: r.dev ?? '',
      what: `route ${r.type && r.type !== 'unicast' ? `${r.type} ` : ''}${r.dst}${r.dev ? ` dev ${r.dev}` : ''} (table ${r.table ?? 'main'})`,
    });
  }
  for (const a of parse<IpAddr>(addrsJson)) {
    for (const i of a.addr_info ?? []) {
      if (i.family !== undefined && i.family !== 'inet') continue;
      const cidr = i.local ? cidrOf(`${i.local}/${i.prefixlen ?? 32}`) : undefined;
      if (cidr) out.push({ cidr, dev: a.ifname ?? '', what: `address ${i.local}/${i.prefixlen} on ${a.ifname ?? '?'}` });
    }
  }
  return out;
}

/**
 * parseProcNetRoute: the entries of `/proc/net/route` (the main table; little-endian hex), the
 * fallback when `ip` is not installed. Default routes are left out. Pure.
 */
export function parseProcNetRoute(text: string): HostNetEntry[] {
  const out: HostNetEntry[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 8) continue;
    const le = (h: string) => {
      const n = parseInt(h, 16);
      return (((n & 255) << 24) >>> 0) + (((n >>> 8) & 255) << 16) + (((n >>> 16) & 255) << 8) + (n >>> 24);
    };
    const dst = le(f[1]);
    const m = le(f[7]);
    let len = 0;
    for (let b = m; b !== 0; b = (b << 1) >>> 0) len++; // a contiguous netmask: count its leading ones
    if (len === 0) continue;
    const cidr = cidrOf(`${numberToIpv4(dst)}/${len}`);
    if (cidr) out.push({ cidr, dev: f[0], what: `route ${cidr.text} dev ${f[0]} (table main)` });
  }
  return out;
}

/**
 * readHostNetworks: what the host routes (every table) and the addresses it holds, IPv4, from
 * `ip -j -4 route show table all` and `ip -j -4 addr`; without a working `ip`, /proc/net/route.
 * Never throws (nothing readable → []; loopback and link-local are added by findHostCollision).
 */
export async function readHostNetworks(): Promise<HostNetEntry[]> {
  try {
    const [routes, addrs] = await Promise.all([
      execFileAsync('ip', ['-j', '-4', 'route', 'show', 'table', 'all'], { timeout: 5_000 }),
      execFileAsync('ip', ['-j', '-4', 'addr'], { timeout: 5_000 }),
    ]);
    return parseIpJson(routes.stdout, addrs.stdout);
  } catch {
    return parseProcNetRoute(await readFile('/proc/net/route', 'utf8').catch(() => ''));
  }
}

/** PodCidrClaim: a range this agent holds host-wide; release() removes the claim (idempotent, never throws). */
export interface PodCidrClaim {
  cidr: PodCidr;
  bridge: string;
  /** The claim file. */
  file: string;
  release(): Promise<void>;
}

/** ClaimPodCidrOptions: the inputs of {@link claimPodCidr}. */
export interface ClaimPodCidrOptions {
  /** --pod-cidr, '' = choose. */
  given: string;
  /** The subnet of the default network the agent wrote before (a restart keeps it), '' = none. */
  previous: string;
  nodeName: string;
  rootDir: string;
  /** Default {@link kPodCidrClaimDir}; tests pass their own. */
  claimDir?: string;
  /** Default {@link kDefaultPodCidrPool}. */
  pool?: string;
}

/** ClaimPodCidrDeps: the host's view (tests inject one) and the pid the claim records. */
export interface ClaimPodCidrDeps {
  hostNetworks?: () => Promise<HostNetEntry[]>;
  pid?: number;
}

interface ClaimRecord {
  pid: number;
  nodeName: string;
  rootDir: string;
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readClaim(file: string): Promise<ClaimRecord | undefined> {
  try {
    const v = JSON.parse(await readFile(file, 'utf8')) as Partial<ClaimRecord>;
    return { pid: Number(v.pid), nodeName: String(v.nodeName ?? ''), rootDir: String(v.rootDir ?? '') };
  } catch {
    return undefined; // unreadable or half-written: treated as stale
  }
}

async function exclusiveWrite(file: string, text: string): Promise<boolean> {
  try {
    const fh = await open(file, 'wx', 0o644);
    try {
      await fh.writeFile(text);
    } finally {
      await fh.close();
    }
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

/** withClaimLock runs `fn` holding `<dir>/.lock` (exclusive create; a lock of a dead pid is broken). */
async function withClaimLock<T>(dir: string, pid: number, fn: () => Promise<T>): Promise<T> {
  const lock = join(dir, '.lock');
  for (let attempt = 0; ; attempt++) {
    if (await exclusiveWrite(lock, JSON.stringify({ pid }))) break;
    const holder = await readClaim(lock);
    if (!holder || !pidAlive(holder.pid)) {
      // Break a dead holder's lock by renaming it away (one breaker wins the rename).
      await rename(lock, `${lock}.broken-${pid}`)
        .then(() => unlink(`${lock}.broken-${pid}`))
        .catch(() => undefined);
      continue;
    }
    if (attempt > 500) throw new Error(`${lock}: held by pid ${holder.pid} for too long`);
    await new Promise((r) => setTimeout(r, 10));
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

/**
 * claimPodCidr: the pod CIDR of this agent's default network, claimed host-wide.
 * - `given` (--pod-cidr): checked ({@link parsePodCidr}) and against the host
 *   ({@link findHostCollision}); claimed unless a live agent with another rootDir holds it.
 * - else `previous` (the subnet of the conflist this agent wrote before), when it is still free:
 *   adopted sandboxes keep their IPs.
 * - else the first /24 of `pool` that collides with nothing of the host (its `kts-` bridge left up
 *   by a stopped agent included: that agent's pods may still hold its addresses) and no live claim.
 * @throws InvalidArgumentError naming --pod-cidr and the colliding route, address or agent; or
 *   when the pool has no free /24 left.
 */
export async function claimPodCidr(o: ClaimPodCidrOptions, deps: ClaimPodCidrDeps = {}): Promise<PodCidrClaim> {
  const dir = o.claimDir ?? kPodCidrClaimDir;
  const pid = deps.pid ?? process.pid;
  const host = await (deps.hostNetworks ?? readHostNetworks)();
  await mkdir(dir, { recursive: true });
  const record = JSON.stringify({ pid, nodeName: o.nodeName, rootDir: o.rootDir } satisfies ClaimRecord);
  const fileOf = (c: PodCidr) => join(dir, c.text.replace('/', '_'));
  const claimed = (c: PodCidr): PodCidrClaim => {
    const file = fileOf(c);
    return {
      cidr: c,
      bridge: bridgeNameFor(c),
      file,
      async release() {
        const now = await readClaim(file);
        if (now && now.rootDir === o.rootDir) await unlink(file).catch(() => undefined);
      },
    };
  };
  /** tryClaim: null when claimed; else who holds it. */
  const tryClaim = async (c: PodCidr): Promise<string | null> => {
    const file = fileOf(c);
    if (await exclusiveWrite(file, record)) return null;
    const holder = await readClaim(file);
    if (holder && holder.rootDir !== o.rootDir && pidAlive(holder.pid))
      return `node ${holder.nodeName} (pid ${holder.pid}, root dir ${holder.rootDir})`;
    // Ours from an earlier run, or stale: take it over (under the lock, so only one agent does).
    const tmp = `${file}.tmp-${pid}`;
    await unlink(tmp).catch(() => undefined);
    await exclusiveWrite(tmp, record);
    await rename(tmp, file);
    return null;
  };
  return withClaimLock(dir, pid, async () => {
    if (o.given !== '') {
      const c = parsePodCidr(o.given);
      const hit = findHostCollision(c, host);
      if (hit)
        throw new InvalidArgumentError(`--pod-cidr ${c.text} collides with the host's ${hit.what}; choose a range the host does not use`);
      const holder = await tryClaim(c);
      if (holder) throw new InvalidArgumentError(`--pod-cidr ${c.text} is already the pod CIDR of ${holder} on this machine`);
      return claimed(c);
    }
    const prev = o.previous !== '' ? cidrOf(o.previous) : undefined;
    if (prev && prev.prefixLength >= 8 && !findHostCollision(prev, host) && (await tryClaim(prev)) === null) return claimed(prev);
    const pool = cidrOf(o.pool ?? kDefaultPodCidrPool)!;
    const count = pool.prefixLength >= 24 ? 1 : 2 ** (24 - pool.prefixLength);
    for (let i = 0; i < count; i++) {
      const c = cidrOf(`${numberToIpv4(pool.network + i * 256)}/24`)!;
      // Here a range's own bridge counts too: one that is still up belongs to an agent that stopped
      // (claim released) and left its pods running with addresses of that range.
      if (findHostCollision(c, host, '')) continue;
      if ((await tryClaim(c)) === null) return claimed(c);
    }
    throw new InvalidArgumentError(
      `--pod-cidr: no free /24 left in ${pool.text} (the host or other agents use them all); give one with --pod-cidr`,
    );
  });
}

// Counterpart of libcni's result cache (api.go cacheAdd / getCachedResult / delCachedResult, `<cacheDir>/results/<net>-<containerID>-<ifname>`) and host-local's lease files (plugins/ipam/host-local/backend/disk).
/**
 * The CNI result cache of set-up sandboxes and the reading of host-local's leases. Files are the
 * truth: several worker threads (and an agent restart) share them. Every write is atomic (a temp
 * file in the same directory, then rename). Runs on worker threads.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NetworkConfigList } from '../../io/cni-config.js';

/**
 * CniCacheEntry: what the cache keeps of one sandbox's attachment to one network (libcni's cached
 * `kind: cniCacheV1` record, plus the pod identity). `result` is null while the ADD is under way:
 * the entry is written before the first plugin runs, so an agent killed mid-ADD leaves a record
 * (with the capability args portmap's DEL needs) that reconcile releases.
 */
export interface CniCacheEntry {
  kind: 'cniCacheV1';
  containerId: string;
  ifName: string;
  networkName: string;
  /** The list the ADD ran with (DEL and CHECK run with it even if the conf file changed since). */
  config: NetworkConfigList;
  /** CNI_ARGS of the ADD. */
  cniArgs: string;
  capabilityArgs: Record<string, unknown>;
  /** The final result of the chain, or null while the ADD runs. */
  result: unknown;
  /** CNI_NETNS of the ADD. */
  netns: string;
  podUid: string;
  podName: string;
  podNamespace: string;
  /** When the entry was last written, epoch ms. */
  writtenAtMs: number;
}

/** cacheFilePath: `<cacheDir>/results/<network>-<containerId>-<ifName>` (libcni's layout). Pure. */
export function cacheFilePath(cacheDir: string, networkName: string, containerId: string, ifName: string): string {
  return join(cacheDir, 'results', `${networkName}-${containerId}-${ifName}`);
}

/**
 * writeCacheEntry writes `e` atomically (temp file + rename; the directory is created).
 * @throws the fs error (ENOSPC, EACCES) — the caller turns it into ERR_NETWORK.
 */
export async function writeCacheEntry(cacheDir: string, e: CniCacheEntry): Promise<void> {
  const file = cacheFilePath(cacheDir, e.networkName, e.containerId, e.ifName);
  await mkdir(join(cacheDir, 'results'), { recursive: true });
  const tmp = `${file}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(tmp, JSON.stringify(e), { mode: 0o600 });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

function parseEntry(text: string): CniCacheEntry | null {
  try {
    const v = JSON.parse(text) as Partial<CniCacheEntry>;
    if (v?.kind !== 'cniCacheV1' || typeof v.containerId !== 'string' || typeof v.ifName !== 'string' || typeof v.networkName !== 'string')
      return null;
    if (!v.config || !Array.isArray(v.config.plugins)) return null;
    return v as CniCacheEntry;
  } catch {
    return null;
  }
}

/** readCacheEntry: the entry, or null when there is none or it does not parse (never throws). */
export async function readCacheEntry(
  cacheDir: string,
  networkName: string,
  containerId: string,
  ifName: string,
): Promise<CniCacheEntry | null> {
  try {
    return parseEntry(await readFile(cacheFilePath(cacheDir, networkName, containerId, ifName), 'utf8'));
  } catch {
    return null;
  }
}

/** removeCacheEntry deletes the entry; idempotent. */
export async function removeCacheEntry(cacheDir: string, networkName: string, containerId: string, ifName: string): Promise<void> {
  await rm(cacheFilePath(cacheDir, networkName, containerId, ifName), { force: true });
}

/** listCacheEntries: every parseable entry of network `networkName` (temp files and others' skipped). Never throws. */
export async function listCacheEntries(cacheDir: string, networkName: string): Promise<CniCacheEntry[]> {
  let names: string[];
  try {
    names = await readdir(join(cacheDir, 'results'));
  } catch {
    return [];
  }
  const out: CniCacheEntry[] = [];
  for (const n of names) {
    if (!n.startsWith(`${networkName}-`) || n.includes('.tmp-')) continue;
    let e: CniCacheEntry | null = null;
    try {
      e = parseEntry(await readFile(join(cacheDir, 'results', n), 'utf8'));
    } catch {
      // removed meanwhile
    }
    if (e && e.networkName === networkName) out.push(e);
  }
  return out;
}

/** HostLocalLease: one host-local lease file: the IP is the file name, the owner its content. */
export interface HostLocalLease {
  ip: string;
  containerId: string;
  /** Second line of the file (host-local ≥ 0.8 writes `<id>\r\n<ifname>`); '' for older files. */
  ifName: string;
  file: string;
}

/** kHostLocalDefaultDataDir: host-local's dataDir when the config gives none. */
export const kHostLocalDefaultDataDir = '/var/lib/cni/networks';

/**
 * listHostLocalLeases: the leases in `<dataDir>/<networkName>/` (files named by an IPv4 or IPv6
 * address; `last_reserved_ip.*` and `lock` skipped). Never throws (a missing dir is []).
 */
export async function listHostLocalLeases(dataDir: string, networkName: string): Promise<HostLocalLease[]> {
  const dir = join(dataDir, networkName);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: HostLocalLease[] = [];
  for (const n of names) {
    if (!/^[0-9.]+$/.test(n) && !/^[0-9a-fA-F:_]+$/.test(n)) continue;
    try {
      const [id = '', ifName = ''] = (await readFile(join(dir, n), 'utf8')).split(/\r?\n/);
      if (id.trim() !== '') out.push({ ip: n, containerId: id.trim(), ifName: ifName.trim(), file: join(dir, n) });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

// Counterpart of the kubelet's CNI network plugin (pkg/kubelet/dockershim/network/cni/cni.go: SetUpPod, TearDownPod, GetPodNetworkStatus, the `cni-loopback` network) over libcni's api.go (AddNetworkList, DelNetworkList, CheckNetworkList).
/**
 * CniPodNetwork: the {@link PodNetwork} of `plugin: 'cni'`. A sandbox is joined first to the
 * loopback network on `lo` (as the kubelet's CNI plugin did), then to the configured list on
 * `eth0`: ADD through the chain (each plugin's result is the next one's `prevResult`), DEL in
 * reverse order with the cached result, CHECK in order. The result is cached under
 * `settings.cacheDir` (cni-cache.ts) before setUpPod returns; the files are the truth, shared by
 * every worker thread and kept across agent restarts. Runs on worker threads.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { kLoopbackNetworkConfigList, loadNetworkConfigList, compareCniVersions, type NetworkConfigList } from '../../io/cni-config.js';
import { realClock, type Clock } from '../../shared/clock.js';
import { AgentError, InvalidArgumentError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logging.js';
import type { NodeNetworkSettings } from '../../shared/node-settings.js';
import { cniArgsString, execCniPlugin, type CniCommand } from './cni-exec.js';
import {
  kHostLocalDefaultDataDir,
  listCacheEntries,
  listHostLocalLeases,
  readCacheEntry,
  removeCacheEntry,
  writeCacheEntry,
  type CniCacheEntry,
} from './cni-cache.js';
import type { PodNetwork, PodNetworkSetUp, PodNetworkStatus, PodNetworkTarget, PortMapping } from './pod-network.js';

/** kPodInterface: the pod's interface name (the kubelet's `eth0`). */
export const kPodInterface = 'eth0';

/** CniPodNetworkOptions: test and tuning knobs (all optional). */
export interface CniPodNetworkOptions {
  /** Milliseconds one plugin run may take (default cni-exec's 60 s). */
  execTimeoutMs?: number;
  /** Test hook: called after the chain's ADD succeeded and before the final cache write (a kill -9 there is what reconcile must repair). */
  afterAddBeforeCache?: (t: PodNetworkSetUp) => Promise<void> | void;
  /** The thread's Clock (default realClock): plugin timeouts and the cache entries' writtenAtMs. */
  clock?: Clock;
}

/**
 * A portmap DEL does nothing without `portMappings` (containernetworking-plugins 1.1.1 cmdDel);
 * the mappings' values do not matter (the chains are found by container ID). A lease found with
 * no cache entry has lost its mappings: this placeholder makes portmap remove its chains anyway.
 */
const kPlaceholderPortMappings: PortMapping[] = [{ hostPort: 1, containerPort: 1, protocol: 'tcp', hostIP: '' }];

/** CniPodNetwork: see the file comment. Build it with {@link newCniPodNetwork}. */
export class CniPodNetwork implements PodNetwork {
  readonly enabled = true;
  private listPromise: Promise<NetworkConfigList> | undefined;

  constructor(
    private readonly settings: NodeNetworkSettings,
    private readonly logger?: Logger,
    private readonly options: CniPodNetworkOptions = {},
  ) {}

  /** The configured list, read once per instance (a restart of the agent reads it again). */
  private list(): Promise<NetworkConfigList> {
    this.listPromise ??= loadNetworkConfigList(this.settings.confFile).catch((e: unknown) => {
      this.listPromise = undefined; // a fixed file is picked up at the next call
      throw new AgentError('ERR_NETWORK', `CNI network configuration: ${(e as Error).message}`, { cause: e });
    });
    return this.listPromise;
  }

  private run(
    command: CniCommand,
    list: NetworkConfigList,
    i: number,
    containerId: string,
    netns: string,
    ifName: string,
    args: string,
    prevResult: unknown,
    capabilityArgs: Record<string, unknown>,
  ): Promise<unknown> {
    return execCniPlugin(
      {
        command,
        binDirs: this.settings.binDirs,
        plugin: list.plugins[i]!,
        networkName: list.name,
        cniVersion: list.cniVersion,
        containerId,
        netns,
        ifName,
        args,
        prevResult,
        capabilityArgs,
        ...(this.options.execTimeoutMs !== undefined ? { timeoutMs: this.options.execTimeoutMs } : {}),
      },
      this.options.clock,
    );
  }

  /** ADD of every plugin in order; on a failure the plugins are DELeted (reverse) before the error is rethrown (libcni + the kubelet's undo). */
  private async addChain(
    list: NetworkConfigList,
    containerId: string,
    netns: string,
    ifName: string,
    args: string,
    caps: Record<string, unknown>,
  ): Promise<unknown> {
    let prev: unknown;
    for (let i = 0; i < list.plugins.length; i++) {
      try {
        prev = await this.run('ADD', list, i, containerId, netns, ifName, args, prev, caps);
      } catch (e) {
        await this.delChain(list, containerId, netns, ifName, args, prev, caps).catch((d: unknown) => {
          this.logger?.warn({ containerID: containerId, err: d }, 'CNI DEL after a failed ADD failed');
        });
        throw e;
      }
    }
    return prev;
  }

  /** DEL of every plugin in reverse order with the cached result; all are tried, the first error is thrown. */
  private async delChain(
    list: NetworkConfigList,
    containerId: string,
    netns: string,
    ifName: string,
    args: string,
    cached: unknown,
    caps: Record<string, unknown>,
  ): Promise<void> {
    let first: unknown;
    for (let i = list.plugins.length - 1; i >= 0; i--) {
      try {
        await this.run('DEL', list, i, containerId, netns, ifName, args, cached, caps);
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  }

  /**
   * setUpPod: loopback ADD on `lo`, then a cache entry with `result: null` (the intent), then the
   * chain's ADD on eth0, then the cache entry with the result — all before resolving to its IPs.
   * @throws AgentError ERR_NETWORK (the ADD undone by DEL and the entry removed).
   */
  async setUpPod(t: PodNetworkSetUp): Promise<PodNetworkStatus> {
    const list = await this.list();
    const args = podCniArgs(t);
    const lo = kLoopbackNetworkConfigList as NetworkConfigList;
    await this.run('ADD', lo, 0, t.sandboxId, t.netnsPath, 'lo', args, undefined, {});
    const caps: Record<string, unknown> = t.portMappings.length > 0 ? { portMappings: t.portMappings } : {};
    const entry: CniCacheEntry = {
      kind: 'cniCacheV1',
      containerId: t.sandboxId,
      ifName: kPodInterface,
      networkName: list.name,
      config: list,
      cniArgs: args,
      capabilityArgs: caps,
      result: null,
      netns: t.netnsPath,
      podUid: t.podUid,
      podName: t.podName,
      podNamespace: t.podNamespace,
      writtenAtMs: (this.options.clock ?? realClock).now(),
    };
    await this.write(entry);
    let result: unknown;
    try {
      result = await this.addChain(list, t.sandboxId, t.netnsPath, kPodInterface, args, caps);
    } catch (e) {
      await removeCacheEntry(this.settings.cacheDir, list.name, t.sandboxId, kPodInterface);
      throw e;
    }
    await this.options.afterAddBeforeCache?.(t);
    try {
      await this.write({ ...entry, result, writtenAtMs: (this.options.clock ?? realClock).now() });
    } catch (e) {
      await this.delChain(list, t.sandboxId, t.netnsPath, kPodInterface, args, result, caps).catch(() => {});
      throw e;
    }
    const status = { ips: resultIps(result) };
    this.logger?.debug(
      { pod: `${t.podNamespace}/${t.podName}`, podUID: t.podUid, containerID: t.sandboxId, ips: status.ips },
      'Pod network set up',
    );
    return status;
  }

  private async write(e: CniCacheEntry): Promise<void> {
    try {
      await writeCacheEntry(this.settings.cacheDir, e);
    } catch (err) {
      throw new AgentError(
        'ERR_NETWORK',
        `CNI result cache ${this.settings.cacheDir}: cannot write the entry of ${e.containerId.slice(0, 12)}: ${(err as Error).message}`,
        { cause: err, retriable: true },
      );
    }
  }

  /**
   * tearDownPod: DEL of the chain in reverse order with the cached config, args and result (the
   * current list when nothing is cached), then loopback DEL, then the entry is removed. A netns path
   * that no longer exists is passed as '' (the spec allows it for DEL; IPAM is released by ID).
   * @throws AgentError ERR_NETWORK when a plugin's DEL fails (the entry is kept for a retry).
   */
  async tearDownPod(t: PodNetworkTarget, netnsPath: string): Promise<void> {
    const list = await this.list();
    const cached = await readCacheEntry(this.settings.cacheDir, list.name, t.sandboxId, kPodInterface);
    const netns = (await exists(netnsPath)) ? netnsPath : '';
    await this.release(cached ?? undefined, list, t.sandboxId, netns, kPodInterface, podCniArgs(t));
    const lo = kLoopbackNetworkConfigList as NetworkConfigList;
    if (netns !== '') {
      await this.run('DEL', lo, 0, t.sandboxId, netns, 'lo', podCniArgs(t), undefined, {}).catch((e: unknown) => {
        this.logger?.debug({ containerID: t.sandboxId, err: e }, 'CNI loopback DEL failed');
      });
    }
  }

  /** DEL through the chain for one attachment, then the cache entry is removed. */
  private async release(
    cached: CniCacheEntry | undefined,
    list: NetworkConfigList,
    containerId: string,
    netns: string,
    ifName: string,
    args: string,
  ): Promise<void> {
    const useList = cached?.config ?? list;
    const caps = cached ? cached.capabilityArgs : { portMappings: kPlaceholderPortMappings };
    // A DEL needs portMappings for portmap to clean up; an entry written before ADD of a pod without hostPorts has none and needs none.
    await this.delChain(useList, containerId, netns, ifName, cached?.cniArgs ?? args, cached?.result ?? undefined, caps);
    await removeCacheEntry(this.settings.cacheDir, useList.name, containerId, ifName);
  }

  /** podNetworkStatus: the IPs of the cached result; null with no entry or an ADD not finished. One file read. */
  async podNetworkStatus(sandboxId: string): Promise<PodNetworkStatus | null> {
    const list = await this.list();
    const e = await readCacheEntry(this.settings.cacheDir, list.name, sandboxId, kPodInterface);
    if (!e || e.result === null || e.result === undefined) return null;
    return { ips: resultIps(e.result) };
  }

  /**
   * checkPod: quick — the finished entry is there, the netns path (when given) exists and every
   * host-side interface of the result (the bridge, the veth: interfaces without `sandbox`) is in
   * /sys/class/net; full — also CNI CHECK of the chain (skipped for `disableCheck` or a version
   * below 0.4.0, libcni's rule). A CHECK error is logged and makes it false. portmap's CHECK is
   * skipped for a pod without an IPv6 address: portmap ≤ 1.2 (Debian's 1.1.1) fails it looking for
   * ip6tables rules it never made (containernetworking/plugins#819).
   */
  async checkPod(t: PodNetworkTarget, netnsPath: string, mode: 'quick' | 'full'): Promise<boolean> {
    const list = await this.list();
    const e = await readCacheEntry(this.settings.cacheDir, list.name, t.sandboxId, kPodInterface);
    if (!e || e.result === null || e.result === undefined) return false;
    if (netnsPath !== '' && !(await exists(netnsPath))) return false;
    for (const name of hostInterfaces(e.result)) {
      if (!(await exists(join('/sys/class/net', name)))) return false;
    }
    if (mode === 'quick' || e.config.disableCheck === true || compareCniVersions(e.config.cniVersion, '0.4.0') < 0) return true;
    try {
      for (let i = 0; i < e.config.plugins.length; i++) {
        if (skipBuggyCheck(e.config.plugins[i]!.type, e.result)) continue;
        await this.run('CHECK', e.config, i, t.sandboxId, netnsPath, kPodInterface, e.cniArgs, e.result, e.capabilityArgs);
      }
      return true;
    } catch (err) {
      this.logger?.warn(
        { pod: `${t.podNamespace}/${t.podName}`, podUID: t.podUid, containerID: t.sandboxId, err },
        'CNI CHECK failed: the sandbox lost its network',
      );
      return false;
    }
  }

  /**
   * reconcile: DEL (CNI_NETNS '') of every cache entry whose sandbox is not live, then of every
   * host-local lease of the configured list whose container ID is not live (a kill -9 mid-ADD or
   * mid-DEL). Entries and leases are read first, then `liveSandboxIds()` (see PodNetwork.reconcile:
   * so an ADD under way is never released). Assumes the network is the agent's own (as the
   * kubelet assumes one runtime per node). Each release is logged; a failed one is logged and left
   * for the next call. Never rejects (a broken conf file: logged, nothing released).
   */
  async reconcile(liveSandboxIds: ReadonlySet<string> | (() => Promise<ReadonlySet<string>>)): Promise<{ released: string[] }> {
    const released: string[] = [];
    let list: NetworkConfigList;
    try {
      list = await this.list();
    } catch (e) {
      this.logger?.warn({ err: e }, 'CNI reconcile skipped');
      return { released };
    }
    const entries = await listCacheEntries(this.settings.cacheDir, list.name);
    const leases = [];
    for (const dataDir of hostLocalDataDirs(list)) leases.push(...(await listHostLocalLeases(dataDir, list.name)));
    const live = typeof liveSandboxIds === 'function' ? await liveSandboxIds() : liveSandboxIds;
    const attempted = new Set<string>();
    for (const e of entries) {
      if (live.has(e.containerId)) continue;
      attempted.add(e.containerId);
      try {
        await this.release(e, list, e.containerId, '', e.ifName, e.cniArgs);
        released.push(e.containerId);
        this.logger?.info(
          { pod: `${e.podNamespace}/${e.podName}`, podUID: e.podUid, containerID: e.containerId },
          'Released the pod network of a sandbox that is gone',
        );
      } catch (err) {
        this.logger?.warn({ containerID: e.containerId, err }, 'CNI DEL of a sandbox that is gone failed');
      }
    }
    for (const l of leases) {
      if (live.has(l.containerId) || attempted.has(l.containerId)) continue;
      attempted.add(l.containerId);
      const args = cniArgsString([
        ['IgnoreUnknown', '1'],
        ['K8S_POD_INFRA_CONTAINER_ID', l.containerId],
      ]);
      try {
        await this.release(undefined, list, l.containerId, '', l.ifName || kPodInterface, args);
        released.push(l.containerId);
        this.logger?.info({ containerID: l.containerId, ip: l.ip }, 'Released an IP lease of a sandbox that is gone');
      } catch (err) {
        this.logger?.warn({ containerID: l.containerId, ip: l.ip, err }, 'CNI DEL of a leaked IP lease failed');
      }
    }
    return { released };
  }
}

/** podCniArgs: CNI_ARGS as the kubelet passes them (IgnoreUnknown, K8S_POD_NAMESPACE, K8S_POD_NAME, K8S_POD_INFRA_CONTAINER_ID, K8S_POD_UID). Pure. */
export function podCniArgs(t: PodNetworkTarget): string {
  return cniArgsString([
    ['IgnoreUnknown', '1'],
    ['K8S_POD_NAMESPACE', t.podNamespace],
    ['K8S_POD_NAME', t.podName],
    ['K8S_POD_INFRA_CONTAINER_ID', t.sandboxId],
    ['K8S_POD_UID', t.podUid],
  ]);
}

/** resultIps: the addresses of a 0.3.0+ result's `ips` without prefix length, those on the sandbox's interface first. Pure; [] for a bad result. */
export function resultIps(result: unknown): string[] {
  const r = result as { ips?: { address?: unknown; interface?: unknown }[]; interfaces?: { sandbox?: unknown }[] } | null;
  if (!r || !Array.isArray(r.ips)) return [];
  const inSandbox = (i: unknown): boolean =>
    typeof i === 'number' && Array.isArray(r.interfaces) && typeof r.interfaces[i]?.sandbox === 'string' && r.interfaces[i]?.sandbox !== '';
  const ips = r.ips.filter((x) => typeof x?.address === 'string');
  return [...ips.filter((x) => inSandbox(x.interface)), ...ips.filter((x) => !inSandbox(x.interface))].map((x) =>
    String(x.address).replace(/\/\d+$/, ''),
  );
}

/** hostInterfaces: the result's interfaces on the host side (no `sandbox`). Pure. */
export function hostInterfaces(result: unknown): string[] {
  const r = result as { interfaces?: { name?: unknown; sandbox?: unknown }[] } | null;
  if (!r || !Array.isArray(r.interfaces)) return [];
  return r.interfaces
    .filter((i) => typeof i?.name === 'string' && /^[^/.][^/]*$/.test(i.name) && (i.sandbox === undefined || i.sandbox === ''))
    .map((i) => String(i.name));
}

/** skipBuggyCheck: true for portmap on an IPv4-only result (containernetworking/plugins#819). Pure. */
export function skipBuggyCheck(type: string, result: unknown): boolean {
  return type === 'portmap' && !resultIps(result).some((ip) => ip.includes(':'));
}

/** hostLocalDataDirs: the dataDir of every host-local ipam in the list (host-local's default when unset). Pure. */
export function hostLocalDataDirs(list: NetworkConfigList): string[] {
  const dirs = new Set<string>();
  for (const p of list.plugins) {
    const ipam = p.ipam as { type?: unknown; dataDir?: unknown } | undefined;
    if (ipam?.type === 'host-local')
      dirs.add(typeof ipam.dataDir === 'string' && ipam.dataDir !== '' ? ipam.dataDir : kHostLocalDefaultDataDir);
  }
  return [...dirs];
}

async function exists(path: string): Promise<boolean> {
  if (path === '') return false;
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * newCniPodNetwork builds the CNI PodNetwork for `settings` (`plugin: 'cni'`).
 * @throws InvalidArgumentError naming the field for an empty or relative confFile or cacheDir, or no binDirs.
 */
export function newCniPodNetwork(settings: NodeNetworkSettings, logger?: Logger, options: CniPodNetworkOptions = {}): CniPodNetwork {
  if (!settings.confFile || !settings.confFile.startsWith('/'))
    throw new InvalidArgumentError(
      `network settings: confFile: Invalid value: ${JSON.stringify(settings.confFile)}: must be an absolute path`,
    );
  if (!settings.cacheDir || !settings.cacheDir.startsWith('/'))
    throw new InvalidArgumentError(
      `network settings: cacheDir: Invalid value: ${JSON.stringify(settings.cacheDir)}: must be an absolute path`,
    );
  if (settings.binDirs.length === 0) throw new InvalidArgumentError('network settings: binDirs: Required value');
  return new CniPodNetwork(settings, logger, options);
}

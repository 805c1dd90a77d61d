// Counterpart of the kubelet's network plugin initialisation (dockershim's cni.go initCNI / getDefaultCNINetwork) and of runtimeState.networkErrors fed by updateRuntimeUp (pkg/kubelet/kubelet.go, runtime.go).
/**
 * The node's pod network on the main thread (issue 13): at start it picks the network
 * configuration (the first valid one of --cni-conf-dir, else the agent's own default bridge
 * written under `<root-dir>/cni/net.d/`), claims the pod CIDR of that default, and resolves the
 * {@link NodeNetworkSettings} the worker threads get. Then, every 5 s (cheap file-system checks),
 * it re-checks that the configuration still loads and its plugin binaries are in --cni-bin-dir:
 * the network's readiness, as containerd's NetworkReady condition and the kubelet's
 * runtimeState.networkErrors. The Node's Ready / NetworkUnavailable conditions and the pod
 * syncer (non-hostNetwork pods wait while it is not ready) read {@link NodeNetwork.status}.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { defaultNetworkConfigList, findNetworkConfigFile, loadNetworkConfigList, missingPluginBinaries } from '../../io/cni-config.js';
import type { Logger } from '../../shared/logging.js';
import { kNoPodNetwork, type NodeNetworkSettings } from '../../shared/node-settings.js';
import type { RuntimeName } from '../../shared/runtime-endpoint.js';
import { claimPodCidr, type ClaimPodCidrDeps, type PodCidrClaim } from './pod-cidr.js';
import { realClock, type Clock, type TimerHandle } from '../../shared/clock.js';

/** kDefaultNetworkName: the `name` of the agent's default network configuration. */
export const kDefaultNetworkName = 'kubelet-ts';

/** kNetworkRecheckPeriodMs: how often readiness is re-checked, milliseconds (the kubelet's updateRuntimeUp runs every 5 s). */
export const kNetworkRecheckPeriodMs = 5_000;

/**
 * kNetworkNotReadyErrorMsg: the start of a pod's `NetworkNotReady` event message (the kubelet's
 * NetworkNotReadyErrorMsg), followed by `: <NodeNetwork.nodeMessage>`.
 */
export const kNetworkNotReadyErrorMsg = 'network is not ready';

/** defaultConfFileOf: the agent's own default network configuration file, `<rootDir>/cni/net.d/10-kubelet-ts.conflist`. */
export function defaultConfFileOf(rootDir: string): string {
  return join(rootDir, 'cni', 'net.d', '10-kubelet-ts.conflist');
}

/** NetworkStatus: the network's readiness; `message` is the error while not ready ('' when ready). */
export interface NetworkStatus {
  ready: boolean;
  /** e.g. `cni plugin not initialized: no binary for bridge, portmap in --cni-bin-dir /x`. */
  message: string;
}

/** NodeNetworkOptions: the flags {@link setUpNodeNetwork} reads (AgentOptions fields of the same names). */
export interface NodeNetworkOptions {
  networkPlugin: 'cni' | 'none';
  /** 'remote': the CRI runtime sets up its sandboxes' network itself (CNI through the runtime); the agent's own CNI is Docker's. */
  runtime: RuntimeName;
  /** `:`-separated (--cni-bin-dir). */
  cniBinDir: string;
  cniConfDir: string;
  cniCacheDir: string;
  rootDir: string;
  nodeName: string;
  /** --pod-cidr, '' = chosen. */
  podCIDR: string;
  podMasquerade: boolean;
  /** --node-ip: where hostPorts are published. */
  nodeIp: string;
}

/** NodeNetworkDeps: the logger; `onChange` is told when readiness flips (main thread); `claim` is passed on to claimPodCidr (tests). */
export interface NodeNetworkDeps {
  logger: Logger;
  onChange?: (status: NetworkStatus) => void;
  claim?: ClaimPodCidrDeps & { claimDir?: string };
  /** Re-check period, milliseconds (default {@link kNetworkRecheckPeriodMs}). */
  recheckPeriodMs?: number;
  /** The clock of the re-checks; default the real clock. */
  clock?: Clock;
}

/** NodeNetwork: the node's pod network as resolved at start. */
export interface NodeNetwork {
  /** What the worker threads get (WorkerBootstrap.network). */
  readonly settings: NodeNetworkSettings;
  /** The default network's bridge when the agent's own configuration is in use, else ''. */
  readonly bridge: string;
  /** The claimed pod CIDR of the default network, else ''. */
  readonly podCIDR: string;
  /** The last readiness seen (a `none` plugin is always ready). */
  status(): NetworkStatus;
  /**
   * nodeMessage: the Node `Ready` condition's message while not ready, the kubelet's
   * `container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: <message>`;
   * '' when ready.
   */
  nodeMessage(): string;
  /** check re-reads the configuration and the plugin binaries now; resolves with (and stores) the result. Never throws. */
  check(): Promise<NetworkStatus>;
  /** start re-checks every recheck period until stop(). */
  start(): void;
  /** stop ends the re-checks and releases the pod CIDR claim. Idempotent. */
  stop(): Promise<void>;
}

/**
 * podCidrFileOf: `<rootDir>/pod-cidr`, where the node keeps the pod CIDR of its default network
 * once chosen (one line, e.g. `10.222.0.0/24`), as a node keeps its `spec.podCIDR`: a restart
 * reuses it even when the conflist derived from it was deleted, so the node never takes a second
 * range while its pods hold addresses of the first.
 */
export function podCidrFileOf(rootDir: string): string {
  return join(rootDir, 'pod-cidr');
}

/** readRecordedPodCidr: the pod CIDR recorded in {@link podCidrFileOf}, '' when absent or unreadable. */
async function readRecordedPodCidr(rootDir: string): Promise<string> {
  return (await readFile(podCidrFileOf(rootDir), 'utf8').catch(() => '')).trim();
}

/** subnetOfConfList: the first host-local `subnet` in a conflist's text (ranges or the old `subnet` field), '' if none or not JSON. Pure. */
export function subnetOfConfList(text: string): string {
  try {
    const list = JSON.parse(text) as { plugins?: { ipam?: { subnet?: unknown; ranges?: { subnet?: unknown }[][] } }[] };
    for (const p of list.plugins ?? []) {
      const s = p.ipam?.ranges?.[0]?.[0]?.subnet ?? p.ipam?.subnet;
      if (typeof s === 'string') return s;
    }
  } catch {
    // not ours or damaged: choose anew
  }
  return '';
}

/** writeFileAtomic: tmp + rename, so that a reader (the workers, a restart) never sees half a file. */
async function writeFileAtomic(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode: 0o644 });
  await rename(tmp, file);
}

/**
 * nodeNetworkMessage: the kubelet's Node Ready message for a network error `message`. Pure.
 */
export function nodeNetworkMessage(message: string): string {
  return `container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: ${message}`;
}

class NodeNetworkImpl implements NodeNetwork {
  #status: NetworkStatus;
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(
    readonly settings: NodeNetworkSettings,
    readonly bridge: string,
    private readonly claim: PodCidrClaim | undefined,
    private readonly deps: NodeNetworkDeps,
  ) {
    this.#status = settings.plugin === 'none' ? { ready: true, message: '' } : { ready: false, message: 'cni plugin not initialized' };
  }

  get podCIDR(): string {
    return this.claim?.cidr.text ?? '';
  }

  status(): NetworkStatus {
    return this.#status;
  }

  nodeMessage(): string {
    return this.#status.ready ? '' : nodeNetworkMessage(this.#status.message);
  }

  async check(): Promise<NetworkStatus> {
    if (this.settings.plugin === 'none') return this.#status;
    let next: NetworkStatus;
    try {
      const list = await loadNetworkConfigList(this.settings.confFile);
      const missing = await missingPluginBinaries(this.settings.binDirs, list);
      next =
        missing.length === 0
          ? { ready: true, message: '' }
          : {
              ready: false,
              message: `cni plugin not initialized: no plugin binary ${missing.join(', ')} in --cni-bin-dir ${this.settings.binDirs.join(':')}`,
            };
    } catch (e) {
      next = { ready: false, message: `cni plugin not initialized: ${(e as Error).message}` };
    }
    const changed = next.ready !== this.#status.ready || next.message !== this.#status.message;
    this.#status = next;
    if (changed) {
      const log = this.deps.logger;
      if (next.ready) log.info({ confFile: this.settings.confFile }, 'Pod network is ready');
      else log.warn({ confFile: this.settings.confFile, detail: next.message }, 'Pod network is not ready');
      this.deps.onChange?.(next);
    }
    return next;
  }

  start(): void {
    if (this.settings.plugin === 'none' || this.#timer || this.#stopped) return;
    this.#timer = (this.deps.clock ?? realClock).setInterval(() => void this.check(), this.deps.recheckPeriodMs ?? kNetworkRecheckPeriodMs);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    (this.deps.clock ?? realClock).clearInterval(this.#timer);
    await this.claim?.release();
  }
}

/**
 * setUpNodeNetwork resolves the node's pod network at agent start (main thread, once):
 * - `--network-plugin none`, the fake runtime or a CRI runtime (`remote`, whose RunPodSandbox sets
 *   up the network itself, as the kubelet leaves CNI to it since dockershim's removal):
 *   {@link kNoPodNetwork} (with hostPortIp), always ready.
 * - a valid configuration in --cni-conf-dir (the first by name, libcni's order): it is used, no
 *   pod CIDR is claimed (its IPAM is the user's).
 * - else the agent's default (`defaultNetworkConfigList`: name `kubelet-ts`, bridge
 *   `kts-<hex of the network>`, host-local over the claimed pod CIDR with its leases in
 *   `<root-dir>/cni/networks`, no masquerade unless --pod-masquerade), written atomically to
 *   `<root-dir>/cni/net.d/10-kubelet-ts.conflist` when its content changed. A restart without
 *   --pod-cidr keeps the pod CIDR recorded in `<root-dir>/pod-cidr` (podCidrFileOf), else the
 *   subnet of the file written before, while it is free.
 * The first readiness check has run when it resolves.
 * @throws InvalidArgumentError for a colliding or taken --pod-cidr (naming it and what it collides
 *   with), an unlistable --cni-conf-dir; an fs error when the root dir cannot be written.
 */
export async function setUpNodeNetwork(o: NodeNetworkOptions, deps: NodeNetworkDeps): Promise<NodeNetwork> {
  if (o.networkPlugin === 'none' || o.runtime !== 'docker') {
    return new NodeNetworkImpl({ ...kNoPodNetwork, hostPortIp: o.nodeIp }, '', undefined, deps);
  }
  const binDirs = o.cniBinDir.split(':').filter((d) => d !== '');
  await mkdir(o.cniCacheDir, { recursive: true });
  let confFile = await findNetworkConfigFile(o.cniConfDir);
  let claim: PodCidrClaim | undefined;
  if (confFile === undefined) {
    confFile = defaultConfFileOf(o.rootDir);
    const previousConf = subnetOfConfList(await readFile(confFile, 'utf8').catch(() => ''));
    // The recorded pod CIDR first (the conflist may be gone); the conflist's for a root dir of an older version.
    const recorded = await readRecordedPodCidr(o.rootDir);
    const previous = recorded || previousConf;
    claim = await claimPodCidr(
      { given: o.podCIDR, previous, nodeName: o.nodeName, rootDir: o.rootDir, claimDir: deps.claim?.claimDir },
      deps.claim,
    );
    try {
      const dataDir = join(o.rootDir, 'cni', 'networks');
      await mkdir(dataDir, { recursive: true });
      const text = `${JSON.stringify(defaultNetworkConfigList({ name: kDefaultNetworkName, bridge: claim.bridge, subnet: claim.cidr.text, dataDir, masquerade: o.podMasquerade }), null, 2)}\n`;
      const before = await readFile(confFile, 'utf8').catch(() => '');
      if (previous !== '' && previous !== claim.cidr.text) {
        deps.logger.warn(
          { confFile, from: previous, to: claim.cidr.text },
          'Pod CIDR changed: pods already running keep their old addresses until recreated',
        );
      }
      if (before !== text) await writeFileAtomic(confFile, text);
      if (recorded !== claim.cidr.text) await writeFileAtomic(podCidrFileOf(o.rootDir), `${claim.cidr.text}\n`);
    } catch (e) {
      await claim.release();
      throw e;
    }
    deps.logger.info({ confFile, podCIDR: claim.cidr.text, bridge: claim.bridge }, 'Using the default pod network');
  } else {
    if (o.podCIDR !== '')
      deps.logger.warn(
        { confFile, podCIDR: o.podCIDR },
        'Ignoring --pod-cidr: the network configuration of --cni-conf-dir has its own IPAM',
      );
    deps.logger.info({ confFile }, 'Using the pod network of --cni-conf-dir');
  }
  const net = new NodeNetworkImpl(
    { plugin: 'cni', binDirs, confFile, cacheDir: o.cniCacheDir, hostPortIp: o.nodeIp },
    claim?.bridge ?? '',
    claim,
    deps,
  );
  await net.check();
  return net;
}

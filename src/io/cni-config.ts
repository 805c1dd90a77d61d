// Counterpart of libcni's conf.go (ConfFromBytes, ConfListFromBytes, ConfListFromConf, ConfFiles) and the kubelet's getDefaultCNINetwork (pkg/kubelet/dockershim/network/cni/cni.go).
/**
 * The CNI network configuration: parsing and checking a `.conflist` / `.conf` / `.json`, finding
 * the node's configuration in `--cni-conf-dir`, the agent's own default list, and which plugin
 * binaries are missing from `--cni-bin-dir`. Pure functions plus file-system reads (no plugin is
 * run here): imported by the main thread (flags, Node condition) and by worker threads (the CNI
 * client, workers/network/cni-pod-network.ts).
 *
 * Errors: InvalidArgumentError naming the file and the field, e.g.
 * `/etc/cni/net.d/10-x.conflist: plugins[1].type: Required value`.
 */
import { constants as fsConstants } from 'node:fs';
import { access, readdir, readFile, stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { InvalidArgumentError } from '../shared/errors.js';

/** CniPluginConf: one plugin's configuration in a list (the spec's "plugin configuration object"): `type` names the binary. */
export interface CniPluginConf {
  type: string;
  [k: string]: unknown;
}

/** NetworkConfigList: a network configuration list (the spec's "network configuration"), plugins run in order on ADD. */
export interface NetworkConfigList {
  cniVersion: string;
  name: string;
  plugins: CniPluginConf[];
  /** CHECK is not run for this network (libcni's DisableCheck). */
  disableCheck?: boolean;
}

/**
 * kSupportedCniVersions: the `cniVersion`s this client speaks (and Debian's containernetworking-plugins
 * 1.1.1 speak): 0.3.0 to 1.0.0, i.e. the result shape with `interfaces`/`ips`. 0.1.0/0.2.0 (the old
 * `ip4` result) and 1.1.0 (GC, STATUS: not in plugins 1.1.1) are refused by {@link parseNetworkConfig}.
 */
export const kSupportedCniVersions: readonly string[] = Object.freeze(['0.3.0', '0.3.1', '0.4.0', '1.0.0']);

/** kCniConfExtensions: the file name endings libcni's ConfFiles and the kubelet read in a conf dir. */
export const kCniConfExtensions: readonly string[] = Object.freeze(['.conf', '.conflist', '.json']);

/** kNetworkNameRe: the spec's network name rule (SPEC.md "Network configuration format": `name`). */
const kNetworkNameRe = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
/** A plugin type is a file name in CNI_PATH: no path separator, no `..` (never run an arbitrary path). */
const kPluginTypeRe = /^[a-zA-Z0-9][a-zA-Z0-9_.+-]*$/;

/**
 * compareCniVersions: -1/0/1 comparing two `x.y.z` versions numerically (a missing part counts 0).
 * Pure; for a non-numeric part the comparison is of NaN (treated as equal): check versions first.
 */
export function compareCniVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkPlugin(file: string, field: string, v: unknown): CniPluginConf {
  if (!isObject(v)) throw new InvalidArgumentError(`${file}: ${field}: Invalid value: must be an object`);
  if (v.type === undefined || v.type === '') throw new InvalidArgumentError(`${file}: ${field}.type: Required value`);
  if (typeof v.type !== 'string' || !kPluginTypeRe.test(v.type)) {
    throw new InvalidArgumentError(
      `${file}: ${field}.type: Invalid value: ${JSON.stringify(v.type)}: must be a plugin binary name (letters, digits, '_', '.', '+', '-'; no '/')`,
    );
  }
  if (v.ipam !== undefined) {
    if (!isObject(v.ipam)) throw new InvalidArgumentError(`${file}: ${field}.ipam: Invalid value: must be an object`);
    if (v.ipam.type !== undefined && (typeof v.ipam.type !== 'string' || !kPluginTypeRe.test(v.ipam.type))) {
      throw new InvalidArgumentError(
        `${file}: ${field}.ipam.type: Invalid value: ${JSON.stringify(v.ipam.type)}: must be a plugin binary name`,
      );
    }
  }
  if (v.capabilities !== undefined && !isObject(v.capabilities))
    throw new InvalidArgumentError(`${file}: ${field}.capabilities: Invalid value: must be an object`);
  return v as CniPluginConf;
}

function checkVersion(file: string, field: string, v: unknown): string {
  if (v === undefined || v === '') throw new InvalidArgumentError(`${file}: ${field}: Required value`);
  if (typeof v !== 'string' || !kSupportedCniVersions.includes(v)) {
    throw new InvalidArgumentError(
      `${file}: ${field}: Unsupported value: ${JSON.stringify(v)}: supported values: ${kSupportedCniVersions.map((s) => `"${s}"`).join(', ')}`,
    );
  }
  return v;
}

function checkName(file: string, v: unknown): string {
  if (v === undefined || v === '') throw new InvalidArgumentError(`${file}: name: Required value`);
  if (typeof v !== 'string' || !kNetworkNameRe.test(v)) {
    throw new InvalidArgumentError(
      `${file}: name: Invalid value: ${JSON.stringify(v)}: must start with a letter or digit and contain only letters, digits, '_', '.' and '-'`,
    );
  }
  return v;
}

/**
 * parseNetworkConfig parses one configuration file's text. A `.conflist` (an object with `plugins`)
 * as libcni's ConfListFromBytes; a single-plugin `.conf`/`.json` (an object with `type`) as
 * ConfFromBytes + ConfListFromConf: a one-plugin list of the same name and cniVersion. Leniency
 * beyond libcni: a `.conf`/`.json` holding a list (with `plugins`, without `type`) is read as a
 * list. Each plugin's `cniVersion`/`name` are not read here: the client injects the list's (as libcni).
 * Pure.
 * @param file the path, only for messages (its extension picks conf vs list).
 * @throws InvalidArgumentError `<file>: <field>: …` for bad JSON, a missing/invalid `name`
 *   (the spec's rule), a `cniVersion` not in {@link kSupportedCniVersions}, an empty `plugins`,
 *   a plugin without `type` (`plugins[1].type: Required value`) or with a path for a type,
 *   a non-boolean `disableCheck`.
 */
export function parseNetworkConfig(text: string, file: string): NetworkConfigList {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new InvalidArgumentError(`${file}: invalid JSON: ${(e as Error).message}`);
  }
  if (!isObject(raw)) throw new InvalidArgumentError(`${file}: must be a JSON object`);
  const asList = file.endsWith('.conflist') || (raw.plugins !== undefined && raw.type === undefined);
  const name = checkName(file, raw.name);
  const cniVersion = checkVersion(file, 'cniVersion', raw.cniVersion);
  if (!asList) {
    const plugin = checkPlugin(file, '(plugin)', raw);
    const { name: _n, cniVersion: _v, ...rest } = plugin;
    void _n;
    void _v;
    return { cniVersion, name, plugins: [rest as CniPluginConf] };
  }
  if (raw.plugins === undefined) throw new InvalidArgumentError(`${file}: plugins: Required value`);
  if (!Array.isArray(raw.plugins)) throw new InvalidArgumentError(`${file}: plugins: Invalid value: must be an array`);
  if (raw.plugins.length === 0) throw new InvalidArgumentError(`${file}: plugins: Required value: at least one plugin`);
  const plugins = raw.plugins.map((p, i) => checkPlugin(file, `plugins[${i}]`, p));
  const out: NetworkConfigList = { cniVersion, name, plugins };
  if (raw.disableCheck !== undefined) {
    if (typeof raw.disableCheck !== 'boolean') throw new InvalidArgumentError(`${file}: disableCheck: Invalid value: must be a boolean`);
    out.disableCheck = raw.disableCheck;
  }
  return out;
}

/**
 * loadNetworkConfigList reads and parses `file` (see {@link parseNetworkConfig}).
 * @throws InvalidArgumentError naming the file when it cannot be read or does not parse.
 */
export async function loadNetworkConfigList(file: string): Promise<NetworkConfigList> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(`${file}: cannot read the CNI network configuration: ${(e as Error).message}`);
  }
  return parseNetworkConfig(text, file);
}

/** NetworkConfigScan: what {@link scanNetworkConfigDir} found. */
export interface NetworkConfigScan {
  /** The chosen file (absolute if confDir is), undefined when none parses. */
  file?: string;
  list?: NetworkConfigList;
  /** Files passed over (before the chosen one, by name), with why: for a log line or a Node condition message. */
  skipped: { file: string; message: string }[];
}

/**
 * scanNetworkConfigDir: the kubelet's getDefaultCNINetwork over libcni's ConfFiles — the files of
 * `confDir` ending in `.conf`, `.conflist`, `.json` (regular files, not recursive), sorted by name;
 * the first that parses with at least one plugin wins; the others before it are `skipped` with
 * their error. A missing `confDir` is an empty scan.
 * @throws InvalidArgumentError when `confDir` exists but cannot be listed (not a directory, EACCES).
 */
export async function scanNetworkConfigDir(confDir: string): Promise<NetworkConfigScan> {
  let names: string[];
  try {
    names = await readdir(confDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { skipped: [] };
    throw new InvalidArgumentError(`--cni-conf-dir ${confDir}: cannot list: ${(e as Error).message}`);
  }
  const skipped: NetworkConfigScan['skipped'] = [];
  for (const n of names.filter((x) => kCniConfExtensions.some((ext) => x.endsWith(ext))).sort()) {
    const file = join(confDir, n);
    try {
      if (!(await stat(file)).isFile()) continue;
      const list = await loadNetworkConfigList(file);
      return { file, list, skipped };
    } catch (e) {
      skipped.push({ file, message: (e as Error).message });
    }
  }
  return { skipped };
}

/**
 * findNetworkConfigFile: the path of the network configuration the node uses from `confDir`
 * (see {@link scanNetworkConfigDir} for the order and what is skipped), undefined when there is none.
 * @throws InvalidArgumentError when `confDir` exists but cannot be listed.
 */
export async function findNetworkConfigFile(confDir: string): Promise<string | undefined> {
  return (await scanNetworkConfigDir(confDir)).file;
}

/** DefaultNetworkOptions: the inputs of {@link defaultNetworkConfigList}. */
export interface DefaultNetworkOptions {
  /** The network name (the spec's name rule), e.g. `kubelet-ts`. */
  name: string;
  /** The Linux bridge to create (≤ 15 characters), named after the agent: never docker0 or podman's. */
  bridge: string;
  /** The pod CIDR, IPv4 `a.b.c.d/n` (--pod-cidr). */
  subnet: string;
  /** host-local's lease directory (absolute), e.g. `<root-dir>/cni/networks`. */
  dataDir: string;
  /** The bridge plugin's ipMasq (--pod-masquerade; off by default: no pod traffic leaves the node). */
  masquerade: boolean;
}

/**
 * defaultNetworkConfigList: the agent's own network when `--cni-conf-dir` holds none (issue 13):
 * `bridge` (isGateway true so the bridge holds the subnet's gateway, isDefaultGateway false and no
 * IPAM routes so the pod's only route is the subnet's, ipMasq = masquerade, hairpinMode so a pod
 * reaches itself through its hostPort) with host-local over `subnet`, then `portmap`
 * (`capabilities.portMappings`, `snat: true` so hostPorts on 127.0.0.1 work). cniVersion 1.0.0. Pure.
 * @throws InvalidArgumentError for a bad name, bridge name (empty, > 15, a `/`), subnet (not IPv4
 *   CIDR) or a relative dataDir.
 */
export function defaultNetworkConfigList(o: DefaultNetworkOptions): NetworkConfigList {
  checkName('default network', o.name);
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,14}$/.test(o.bridge)) {
    throw new InvalidArgumentError(
      `default network: bridge: Invalid value: ${JSON.stringify(o.bridge)}: 1 to 15 letters, digits, '_', '.', '-'`,
    );
  }
  if (!isIpv4Cidr(o.subnet))
    throw new InvalidArgumentError(`--pod-cidr: Invalid value: ${JSON.stringify(o.subnet)}: must be an IPv4 CIDR, e.g. 10.88.0.0/24`);
  if (!isAbsolute(o.dataDir))
    throw new InvalidArgumentError(`default network: dataDir: Invalid value: ${JSON.stringify(o.dataDir)}: must be absolute`);
  return {
    cniVersion: '1.0.0',
    name: o.name,
    plugins: [
      {
        type: 'bridge',
        bridge: o.bridge,
        isGateway: true,
        isDefaultGateway: false,
        ipMasq: o.masquerade,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: o.subnet }]], dataDir: o.dataDir },
      },
      { type: 'portmap', capabilities: { portMappings: true }, snat: true },
    ],
  };
}

/** isIpv4Cidr: true for `a.b.c.d/n` with octets 0..255 and n 0..32. Pure. */
export function isIpv4Cidr(s: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(s);
  if (!m) return false;
  return m.slice(1, 5).every((x) => Number(x) <= 255) && Number(m[5]) <= 32;
}

/**
 * pluginTypesOf: the binaries a list runs — `loopback` (the client's `lo` network), each plugin's
 * type and each `ipam.type` — in first-use order, without duplicates. Pure.
 */
export function pluginTypesOf(list: NetworkConfigList): string[] {
  const out = new Set<string>(['loopback']);
  for (const p of list.plugins) {
    out.add(p.type);
    const ipam = p.ipam as { type?: unknown } | undefined;
    if (ipam && typeof ipam.type === 'string' && ipam.type !== '') out.add(ipam.type);
  }
  return [...out];
}

/**
 * missingPluginBinaries: the plugin types of `list` ({@link pluginTypesOf}) found as an executable
 * regular file in none of `binDirs` (libcni's FindInPath) — [] when all are there. Never throws
 * (an unreadable dir counts as not having the binary).
 */
export async function missingPluginBinaries(binDirs: string[], list: NetworkConfigList): Promise<string[]> {
  const missing: string[] = [];
  for (const t of pluginTypesOf(list)) {
    if ((await findPluginBinary(binDirs, t)) === undefined) missing.push(t);
  }
  return missing;
}

/**
 * findPluginBinary: the path of plugin `type` in the first of `binDirs` holding it as an
 * executable regular file (libcni invoke.FindInPath), undefined if none. Never throws.
 */
export async function findPluginBinary(binDirs: string[], type: string): Promise<string | undefined> {
  if (!kPluginTypeRe.test(type)) return undefined;
  for (const d of binDirs) {
    const p = join(d, type);
    try {
      if (!(await stat(p)).isFile()) continue;
      await access(p, fsConstants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * kLoopbackNetworkConfigList: the network the client sets up on `lo` before the configured one,
 * as the kubelet's CNI plugin did with its `cni-loopback` network.
 */
export const kLoopbackNetworkConfigList: Readonly<NetworkConfigList> = Object.freeze({
  cniVersion: '1.0.0',
  name: 'cni-loopback',
  plugins: [{ type: 'loopback' }],
});

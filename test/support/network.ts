// Test helpers for the pod network (issue 13): what a test node leaves on the host and how it is removed.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { defaultConfFileOf } from '../../src/main/network/network-setup.js';
import { claimPodCidr } from '../../src/main/network/pod-cidr.js';
import { newPodNetwork } from '../../src/workers/network/network-service.js';

const execFileAsync = promisify(execFile);

/** DefaultNetworkOf: the bridge and subnet of the default network an agent wrote under `rootDir`, undefined if it wrote none. */
export async function defaultNetworkOf(rootDir: string): Promise<{ bridge: string; subnet: string } | undefined> {
  try {
    const list = JSON.parse(await readFile(defaultConfFileOf(rootDir), 'utf8')) as {
      plugins: { type: string; bridge?: string; ipam?: { ranges?: { subnet: string }[][] } }[];
    };
    const b = list.plugins.find((p) => p.type === 'bridge');
    const subnet = b?.ipam?.ranges?.[0]?.[0]?.subnet;
    return b?.bridge && subnet ? { bridge: b.bridge, subnet } : undefined;
  } catch {
    return undefined;
  }
}

/** linkExists: true when the host has a network interface `name`. */
export async function linkExists(name: string): Promise<boolean> {
  return execFileAsync('ip', ['link', 'show', 'dev', name]).then(
    () => true,
    () => false,
  );
}

/**
 * removeDefaultNetworkBridge deletes the bridge of the default network of a stopped agent whose
 * containers are gone (`ip link del`, only if it exists). The agent released its pod CIDR at stop:
 * the bridge is removed while holding that claim again, so a new agent that took the same CIDR
 * (and so the same bridge name) in the meantime keeps its bridge. Never throws.
 */
export async function removeDefaultNetworkBridge(rootDir: string): Promise<void> {
  const net = await defaultNetworkOf(rootDir);
  if (!net || !(await linkExists(net.bridge))) return;
  let claim;
  try {
    claim = await claimPodCidr({ given: net.subnet, previous: '', nodeName: 'test-cleanup', rootDir }, { hostNetworks: async () => [] });
  } catch {
    return; // another live agent holds this CIDR now: its bridge
  }
  try {
    await execFileAsync('ip', ['link', 'del', 'dev', net.bridge]).catch(() => undefined);
  } finally {
    await claim.release();
  }
}

/**
 * releaseNodeNetwork undoes what the default network of a stopped agent on `rootDir` left on the
 * host once its containers are gone: every pod's CNI DEL (reconcile with no live sandbox: the IPAM
 * leases, the veths, portmap's per-pod iptables chains — a container removed by force is never
 * torn down by its agent), then the bridge (removeDefaultNetworkBridge). For test cleanup: the
 * agent's cache dir must be the default `<root-dir>/cni/cache`. Never throws.
 */
export async function releaseNodeNetwork(rootDir: string): Promise<void> {
  const confFile = defaultConfFileOf(rootDir);
  if (!existsSync(confFile)) return;
  const network = newPodNetwork({
    plugin: 'cni',
    binDirs: ['/usr/lib/cni', '/opt/cni/bin'],
    confFile,
    cacheDir: join(rootDir, 'cni', 'cache'),
    hostPortIp: '127.0.0.1',
  });
  await network.reconcile(new Set()).catch(() => undefined);
  await removeDefaultNetworkBridge(rootDir);
}

// A hand-written fake of the PodNetwork seam (src/workers/network/pod-network.ts) for unit tests:
// IPs from a counter, every call recorded (into a shared call log, to check the order against a
// FakeRuntime's calls), failures injected per operation.
import { AgentError } from '../../src/shared/errors.js';
import type { PodNetwork, PodNetworkSetUp, PodNetworkStatus, PodNetworkTarget } from '../../src/workers/network/pod-network.js';

/** FakePodNetwork: a PodNetwork whose state is a Map of sandbox ID → IP. */
export interface FakePodNetwork extends PodNetwork {
  /** `net:add:<id>` (ADD begins), `net:added:<id>` (ADD done), `net:del:<id>`, `net:check:<id>:<mode>`, `net:reconcile:<n live>`, in order (into the log given). */
  readonly calls: string[];
  /** The set-up requests, in order. */
  readonly setUps: PodNetworkSetUp[];
  /** Sandbox ID → its IP (what podNetworkStatus answers). */
  readonly ips: Map<string, string>;
  /** Next setUpPod rejects with this message (once). */
  failNextAdd?: string;
  /** Every tearDownPod rejects with this message while set. */
  failDel?: string;
  /** setUpPod takes this long (milliseconds; default 0): lets a test see what runs during an ADD. */
  addDelayMs?: number;
  /** Sandbox IDs whose checkPod answers false. */
  readonly lost: Set<string>;
}

/** newFakePodNetwork: `calls` is the log to append to (e.g. a FakeRuntime's `calls`). */
export function newFakePodNetwork(calls: string[] = []): FakePodNetwork {
  let next = 2;
  const net: FakePodNetwork = {
    enabled: true,
    calls,
    setUps: [],
    ips: new Map(),
    lost: new Set(),
    async setUpPod(t: PodNetworkSetUp): Promise<PodNetworkStatus> {
      calls.push(`net:add:${t.sandboxId}`);
      net.setUps.push(t);
      if (net.addDelayMs) await new Promise((r) => setTimeout(r, net.addDelayMs));
      if (net.failNextAdd) {
        const msg = net.failNextAdd;
        net.failNextAdd = undefined;
        throw new AgentError('ERR_NETWORK', msg);
      }
      const ip = `10.250.0.${next++}`;
      net.ips.set(t.sandboxId, ip);
      calls.push(`net:added:${t.sandboxId}`);
      return { ips: [ip] };
    },
    async tearDownPod(t: PodNetworkTarget): Promise<void> {
      calls.push(`net:del:${t.sandboxId}`);
      if (net.failDel) throw new AgentError('ERR_NETWORK', net.failDel);
      net.ips.delete(t.sandboxId);
    },
    async podNetworkStatus(id: string): Promise<PodNetworkStatus | null> {
      const ip = net.ips.get(id);
      return ip ? { ips: [ip] } : null;
    },
    async checkPod(t: PodNetworkTarget, _netns: string, mode: 'quick' | 'full'): Promise<boolean> {
      calls.push(`net:check:${t.sandboxId}:${mode}`);
      return net.ips.has(t.sandboxId) && !net.lost.has(t.sandboxId);
    },
    async reconcile(liveSet: ReadonlySet<string> | (() => Promise<ReadonlySet<string>>)): Promise<{ released: string[] }> {
      const live = typeof liveSet === 'function' ? await liveSet() : liveSet;
      calls.push(`net:reconcile:${live.size}`);
      const released = [...net.ips.keys()].filter((id) => !live.has(id));
      for (const id of released) net.ips.delete(id);
      return { released };
    },
  };
  return net;
}

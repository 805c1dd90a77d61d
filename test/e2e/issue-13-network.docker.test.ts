// Issue 13 against the real agent, dockerd, CNI plugins (/usr/lib/cni) and iptables: pods on the
// node's own default bridge reach each other by pod IP; status.podIP = the downward API env = the
// pod's /etc/hosts line; a hostPort on 127.0.0.1 answers from the host; a hostNetwork pod keeps the
// host's IP; the pod's only route is the bridge's subnet and the host has no MASQUERADE for the pod
// CIDR; an agent restart keeps the IPs and restarts nothing; a lost network (the host veth deleted)
// → SandboxChanged and a new IP; httpGet and tcpSocket probes reach the pod IP. Every address talked to is a pod IP on the node's bridge or loopback.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { defaultNetworkOf } from '../support/network.js';

const execFileAsync = promisify(execFile);
const kHostPort = 20_000 + Math.floor(Math.random() * 20_000);

function pod(name: string, spec: object): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { test: 'issue-13-network' } },
    spec: { terminationGracePeriodSeconds: 1, ...spec },
  } as unknown as Pod;
}

const server = pod('server', {
  containers: [
    {
      name: 'httpd',
      image: BUSYBOX_IMAGE,
      ports: [{ containerPort: 8080, hostPort: kHostPort, hostIP: '127.0.0.1' }],
      env: [{ name: 'MY_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
      // Probes of a pod with an IP go straight to it (no netns helper): its readiness says they got in.
      readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 },
      livenessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1, failureThreshold: 3 },
      command: [
        'sh',
        '-c',
        'echo "ip=$MY_IP"; echo "iflink=$(cat /sys/class/net/eth0/iflink)"; cat /proc/net/route | sed "s/^/route /"; grep server /etc/hosts | sed "s/^/hosts /"; mkdir -p /www; echo hello-from-server > /www/index.html; exec httpd -f -p 8080 -h /www',
      ],
    },
  ],
});

const hostnet = pod('hostnet', {
  hostNetwork: true,
  containers: [{ name: 'main', image: BUSYBOX_IMAGE, command: ['sh', '-c', 'exec sleep 3600'] }],
});

function client(ip: string): Pod {
  return pod('client', {
    // No `-T`: this busybox's wget segfaults with a timeout option.
    containers: [
      {
        name: 'wget',
        image: BUSYBOX_IMAGE,
        command: ['sh', '-c', `until wget -qO- http://${ip}:8080/; do sleep 0.3; done; exec sleep 3600`],
      },
    ],
  });
}

async function post(node: TestNode, p: Pod): Promise<void> {
  const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(p) });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function get(node: TestNode, name: string): Promise<Pod> {
  return (await (await node.api(`/pods/default/${name}`)).json()) as Pod;
}

async function running(node: TestNode, name: string): Promise<Pod> {
  let last: Pod | undefined;
  return waitFor(
    async () => {
      const p = (last = await get(node, name));
      return p.status?.phase === 'Running' && p.status.podIP && (p.status.containerStatuses ?? []).every((c) => c.state?.running)
        ? p
        : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, description: `pod ${name} running with an IP` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; status: ${JSON.stringify(last?.status)}`);
  });
}

async function logs(node: TestNode, name: string, container: string): Promise<string> {
  return (await node.api(`/containerLogs/default/${name}/${container}`)).text();
}

async function logLine(node: TestNode, name: string, container: string, re: RegExp): Promise<RegExpExecArray> {
  return waitFor(async () => re.exec(await logs(node, name, container)) ?? undefined, {
    timeoutMs: 20_000,
    intervalMs: 200,
    description: `${re} in the log of ${name}`,
  });
}

/** hex little-endian IPv4 of /proc/net/route → dotted. */
function routeAddr(hex: string): string {
  return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
}

function inSubnet(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const n = (a: string) => a.split('.').reduce((acc, x) => (acc << 8) + Number(x), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (n(ip) & mask) >>> 0 === (n(base) & mask) >>> 0;
}

describe.skipIf(!inject('dockerAvailable'))('issue 13: pod network', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ syncFrequencyMs: 2_000 });
  }, 30_000);
  afterAll(async () => {
    if (!node) return;
    // Deleted through the agent so that each sandbox gets its DEL (portmap's iptables rules go with it).
    for (const name of ['client', 'server', 'hostnet'])
      await node.api(`/pods/default/${name}?gracePeriodSeconds=0`, { method: 'DELETE' }).catch(() => undefined);
    await waitFor(async () => (await node.pods()).length === 0, { timeoutMs: 20_000, intervalMs: 200, description: 'pods removed' }).catch(
      () => undefined,
    );
    await node.cleanup();
  }, 40_000);

  it('networks pods as the kubelet with CNI does: pod IPs, hostPort, hostNetwork, routes, restart, lost network', async () => {
    await post(node, server);
    await post(node, hostnet);
    const s = await running(node, 'server');
    await waitFor(async () => (await get(node, 'server')).status?.containerStatuses?.[0]?.ready === true, {
      timeoutMs: 30_000,
      intervalMs: 200,
      description: 'server Ready by its probes to the pod IP',
    });
    const ip = s.status!.podIP!;
    const net = (await defaultNetworkOf(node.rootDir))!;
    expect(net, 'the node wrote its own default network').toBeDefined();
    expect(inSubnet(ip, net.subnet)).toBe(true);
    expect(s.status!.podIPs).toEqual([{ ip }]);

    // Downward API env and the kubelet-managed /etc/hosts carry the pod IP.
    expect((await logLine(node, 'server', 'httpd', /^ip=(.*)$/m))[1]).toBe(ip);
    expect((await logLine(node, 'server', 'httpd', /^hosts (\S+)\s+server\b/m))[1]).toBe(ip);

    // The pod's routes: only the bridge's subnet (no default route: nothing leaves the node).
    const log = await logLine(node, 'server', 'httpd', /^iflink=\d+$/m).then(() => logs(node, 'server', 'httpd'));
    const routes = log
      .split('\n')
      .filter((l) => l.startsWith('route ') && !l.includes('Iface'))
      .map((l) => l.split(/\s+/));
    expect(routes.length).toBeGreaterThan(0);
    for (const r of routes) {
      expect(routeAddr(r[2]), `route ${r.join(' ')}`).not.toBe('0.0.0.0');
      expect(inSubnet(routeAddr(r[2]), net.subnet)).toBe(true);
    }
    // The host: no MASQUERADE for the pod CIDR (--pod-masquerade is off).
    const nat = (await execFileAsync('iptables', ['-t', 'nat', '-S'])).stdout;
    expect(nat.split('\n').filter((l) => l.includes(net.subnet) && l.includes('MASQUERADE'))).toEqual([]);

    // Pod to pod by pod IP.
    await post(node, client(ip));
    await running(node, 'client');
    await logLine(node, 'client', 'wget', /hello-from-server/);

    // The hostPort answers on 127.0.0.1 from the host (portmap).
    const body = await waitFor(
      async () =>
        fetch(`http://127.0.0.1:${kHostPort}/`).then(
          (r) => r.text(),
          () => undefined,
        ),
      { timeoutMs: 10_000, intervalMs: 200, description: 'the hostPort' },
    );
    expect(body).toContain('hello-from-server');

    // A hostNetwork pod: the host's IP, no CNI (its sandbox runs in the host's network).
    const h = await running(node, 'hostnet');
    expect(h.status!.podIP).toBe(node.options.nodeIp);

    // An agent restart keeps the IPs and restarts no container.
    const ids = async () =>
      Object.fromEntries(
        await Promise.all(
          ['server', 'client', 'hostnet'].map(
            async (n) => [n, (await get(node, n)).status!.containerStatuses!.map((c) => `${c.containerID}/${c.restartCount}`)] as const,
          ),
        ),
      );
    const before = await ids();
    const clientIp = (await get(node, 'client')).status!.podIP;
    await node.restart();
    const after = await running(node, 'server');
    expect(after.status!.podIP).toBe(ip);
    expect((await running(node, 'client')).status!.podIP).toBe(clientIp);
    // A few resyncs (every 2 s) after the restart: the adopted sandboxes were checked (CNI CHECK) and kept.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await ids()).toEqual(before);

    // A lost network: the server's host-side veth deleted → SandboxChanged, a new sandbox with a new IP.
    const iflink = (await logLine(node, 'server', 'httpd', /^iflink=(\d+)$/m))[1];
    const links = (await execFileAsync('ip', ['-o', 'link', 'show', 'master', net.bridge])).stdout;
    const veth = new RegExp(`^${iflink}: ([^:@]+)[@:]`, 'm').exec(links)?.[1];
    expect(veth, `the host veth of ifindex ${iflink} on ${net.bridge}`).toBeTruthy();
    await execFileAsync('ip', ['link', 'del', 'dev', veth!]);
    const moved = await waitFor(
      async () => {
        const p = await get(node, 'server');
        return p.status?.podIP && p.status.podIP !== ip && p.status.containerStatuses?.every((c) => c.state?.running) ? p : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, description: 'the server with a new IP' },
    );
    expect(inSubnet(moved.status!.podIP!, net.subnet)).toBe(true);
    const events = (await (await node.api('/events')).json()) as {
      items: { reason?: string; message?: string; involvedObject?: { name?: string } }[];
    };
    expect(
      events.items.filter((e) => e.involvedObject?.name === 'server' && e.reason === 'SandboxChanged').map((e) => e.message),
    ).toContain('Pod sandbox changed, it will be killed and re-created.');
  }, 150_000);
});

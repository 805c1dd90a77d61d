import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { applyPodDefaults } from '../../../src/shared/defaults.js';
import { managedHostsFileContent, nodeHostsFileContent, podSandboxHostname } from '../../../src/workers/dns/etc-hosts.js';
import { getPodDNS, parseResolvConf, resolvConfContent, type NodeDNSSettings } from '../../../src/workers/dns/pod-dns.js';
import { podCgroupName, resourceConfigForPod } from '../../../src/workers/cm/pod-cgroup.js';

const pod = (spec: Record<string, unknown> = {}, name = 'web-0'): Pod =>
  applyPodDefaults({ metadata: { name, namespace: 'ns', uid: 'u-1' }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec } } as Pod);
const host = 'nameserver 10.0.0.2\nnameserver 10.0.0.3\n# a comment\nsearch corp.example old.example.\noptions ndots:1 timeout:2\n';
const node = (o: Partial<NodeDNSSettings> = {}): NodeDNSSettings => ({
  clusterDNS: [],
  clusterDomain: '',
  hostResolvConf: host,
  noResolvConf: false,
  ...o,
});

describe('the kubelet-managed /etc/hosts', () => {
  it('has the header, localhost lines, the FQDN and hostname per pod IP, then the hostAliases', () => {
    const p = pod({ hostname: 'h', subdomain: 'sub', hostAliases: [{ ip: '10.1.1.1', hostnames: ['a', 'b'] }] });
    expect(managedHostsFileContent(p, ['10.2.0.5'], 'cluster.local')).toBe(
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' +
        'fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n' +
        '10.2.0.5\th.sub.ns.svc.cluster.local\th\n\n# Entries added by HostAliases.\n10.1.1.1\ta\tb\n',
    );
  });
  it('puts the hostname on 127.0.1.1 while the pod has no IP', () => {
    expect(managedHostsFileContent(pod(), [], '')).toContain('127.0.1.1\tweb-0\n');
  });
  it("hostNetwork: the node's file with the aliases", () => {
    expect(nodeHostsFileContent(pod({ hostAliases: [{ ip: '1.1.1.1', hostnames: ['x'] }] }), '127.0.0.1 localhost\n')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.1.1.1\tx\n',
    );
  });
});

describe('the pod hostname', () => {
  it('is spec.hostname or the pod name, cut to 63 characters without a trailing dash', () => {
    expect(podSandboxHostname(pod(), '')).toBe('web-0');
    expect(podSandboxHostname(pod({}, `${'a'.repeat(62)}-b`), '')).toBe('a'.repeat(62));
    expect(podSandboxHostname(pod({ hostNetwork: true }), '')).toBeUndefined();
  });
  it('is the FQDN with setHostnameAsFQDN, refused past 64 characters', () => {
    expect(podSandboxHostname(pod({ subdomain: 's', setHostnameAsFQDN: true }), 'cluster.local')).toBe('web-0.s.ns.svc.cluster.local');
    expect(() => podSandboxHostname(pod({ hostname: 'h'.repeat(45), subdomain: 's', setHostnameAsFQDN: true }), 'cluster.local')).toThrow(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${'h'.repeat(45)}.s.ns.svc.cluster.local is too long (64 characters is the max, 68 characters requested)`,
    );
  });
});

describe('getPodDNS (pkg/kubelet/network/dns)', () => {
  it('parses resolv.conf as the kubelet', () => {
    expect(parseResolvConf(host)).toEqual({
      servers: ['10.0.0.2', '10.0.0.3'],
      searches: ['corp.example', 'old.example'],
      options: ['ndots:1', 'timeout:2'],
    });
  });
  it("Default: the node's file, with the pod's dnsConfig appended and options merged by name", () => {
    const { config, events } = getPodDNS(
      pod({
        dnsPolicy: 'Default',
        dnsConfig: {
          nameservers: ['10.0.0.3', '10.0.0.9'],
          searches: ['x.example'],
          options: [{ name: 'ndots', value: '3' }, { name: 'edns0' }],
        },
      }),
      node(),
    );
    expect(config).toEqual({
      servers: ['10.0.0.2', '10.0.0.3', '10.0.0.9'],
      searches: ['corp.example', 'old.example', 'x.example'],
      options: ['ndots:3', 'timeout:2', 'edns0'],
    });
    expect(events).toEqual([]);
  });
  it('ClusterFirst without cluster DNS: Default, with a MissingClusterDNS event', () => {
    const { config, events } = getPodDNS(pod(), node());
    expect(config.servers).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(events.map((e) => e.reason)).toEqual(['MissingClusterDNS']);
    expect(events[0].message).toContain(
      'kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.',
    );
  });
  it('ClusterFirst with cluster DNS: its servers, the cluster search paths first, ndots:5', () => {
    const { config } = getPodDNS(pod(), node({ clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' }));
    expect(config).toEqual({
      servers: ['10.96.0.10'],
      searches: ['ns.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'old.example'],
      options: ['ndots:5'],
    });
  });
  it('ClusterFirst on the host network means Default; ClusterFirstWithHostNet does not', () => {
    const n = node({ clusterDNS: ['10.96.0.10'] });
    expect(getPodDNS(pod({ hostNetwork: true }), n).config.servers).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(getPodDNS(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), n).config.servers).toEqual(['10.96.0.10']);
  });
  it('None: exactly the dnsConfig, written as resolv.conf', () => {
    const { config } = getPodDNS(
      pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.b'], options: [{ name: 'ndots', value: '2' }] } }),
      node(),
    );
    expect(resolvConfContent(config)).toBe('nameserver 1.1.1.1\nsearch a.b\noptions ndots:2\n');
  });
  it('cuts to 3 nameservers and to the search limits, with DNSConfigForming events', () => {
    const searches = Array.from({ length: 40 }, (_, i) => `s${i}.example`);
    const { config, events } = getPodDNS(pod({ dnsConfig: { nameservers: ['1.1.1.1', '1.1.1.2'], searches } }), node());
    expect(config.servers).toEqual(['10.0.0.2', '10.0.0.3', '1.1.1.1']);
    expect(config.searches).toHaveLength(32);
    expect(events.filter((e) => e.reason === 'DNSConfigForming')).toHaveLength(2);
  });
  it('no --resolv-conf: nameserver 127.0.0.1 and search `.`', () => {
    expect(getPodDNS(pod({ dnsPolicy: 'Default' }), node({ noResolvConf: true, hostResolvConf: '' })).config).toEqual({
      servers: ['127.0.0.1'],
      searches: ['.'],
      options: [],
    });
  });
});

describe('the pod cgroup (ResourceConfigForPod)', () => {
  it("sums the containers' limits; Guaranteed pods go directly under kubepods", () => {
    const p = pod({
      containers: [
        { name: 'a', image: 'i', resources: { limits: { cpu: '200m', memory: '64Mi' } } },
        { name: 'b', image: 'i', resources: { limits: { cpu: '300m', memory: '64Mi' } } },
      ],
    });
    expect(resourceConfigForPod(p, 100)).toEqual({
      cpuShares: 512,
      cpuQuotaUs: 50000,
      cpuPeriodUs: 100000,
      memoryBytes: 128 * 1024 * 1024,
      pidsLimit: 100,
    });
    expect(podCgroupName(p, '/kubelet-ts')).toBe('/kubelet-ts/kubepods/podu-1');
  });
  it('Burstable: no memory limit unless every container has one; BestEffort: shares 2', () => {
    const b = pod({
      containers: [
        { name: 'a', image: 'i', resources: { limits: { memory: '64Mi' } } },
        { name: 'b', image: 'i' },
      ],
    });
    expect(resourceConfigForPod(b, -1)).toEqual({ cpuShares: 2 });
    expect(podCgroupName(b, '/kubelet-ts')).toBe('/kubelet-ts/kubepods/burstable/podu-1');
    expect(resourceConfigForPod(pod(), -1)).toEqual({ cpuShares: 2 });
    expect(podCgroupName(pod(), '/kubelet-ts')).toBe('/kubelet-ts/kubepods/besteffort/podu-1');
  });
  it("an init container larger than the app containers sets the pod's limit", () => {
    const p = pod({
      initContainers: [{ name: 'i', image: 'i', resources: { limits: { cpu: '1', memory: '1Gi' } } }],
      containers: [{ name: 'a', image: 'i', resources: { limits: { cpu: '100m', memory: '64Mi' } } }],
    });
    expect(resourceConfigForPod(p, -1)).toMatchObject({ cpuQuotaUs: 100000, memoryBytes: 1024 ** 3 });
  });
});

describe('removeOrphanPodCgroups (cleanupOrphanedPodCgroups)', () => {
  it('removes old pod cgroups without any container, in every hierarchy; keeps live and new ones', async () => {
    const { mkdtemp, mkdir, utimes, rm } = await import('node:fs/promises');
    const { existsSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = await import('node:path');
    const { removeOrphanPodCgroups } = await import('../../../src/workers/cm/pod-cgroup.js');
    const mount = await mkdtemp(path.join(tmpdir(), 'cgroup-'));
    const dir = (h: string, tier: string, uid: string) => path.join(mount, h, 'kubelet-ts', 'kubepods', tier, `pod${uid}`);
    for (const h of ['pids', 'memory'])
      for (const [tier, uid] of [
        ['besteffort', 'old'],
        ['', 'live'],
        ['burstable', 'new'],
      ])
        await mkdir(path.join(dir(h, tier, uid), 'child'), { recursive: true });
    const now = Date.now();
    const past = new Date(now - 120_000);
    for (const [tier, uid] of [
      ['besteffort', 'old'],
      ['', 'live'],
    ])
      await utimes(dir('pids', tier, uid), past, past);
    try {
      expect(await removeOrphanPodCgroups('/kubelet-ts', new Set(['live']), now, 60_000, mount)).toEqual(['old']);
      expect(existsSync(dir('pids', 'besteffort', 'old'))).toBe(false);
      expect(existsSync(dir('memory', 'besteffort', 'old'))).toBe(false);
      expect(existsSync(dir('pids', '', 'live'))).toBe(true);
      expect(existsSync(dir('pids', 'burstable', 'new'))).toBe(true);
    } finally {
      await rm(mount, { recursive: true, force: true });
    }
  });
});

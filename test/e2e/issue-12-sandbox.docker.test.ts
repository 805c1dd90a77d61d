// Issue 12 items 6 and 7 against the real agent and runtime (dockerd, or containerd: test/support/runtime.ts): the kubelet-managed /etc/hosts
// (hostAliases, hostname, FQDN), dnsPolicy None + dnsConfig as the container's resolv.conf,
// hostPID and hostIPC, oom_score_adj per QoS class (sandbox -998), the pod cgroup with its limits
// and --pod-max-pids (removed with the pod), and json-file log rotation with the logs still read.
// Three pods started together on one node; each container checks one thing and exits.
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { totalmem } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Event, Pod } from '../../src/shared/api.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kOomFloor, waitFor } from '../support/docker.js';
import { dockerLogConfig } from '../support/runtime-records.js';
import { podContainers, sandboxOomScoreAdj, testRuntime } from '../support/runtime.js';

const kImage = 'kubelet-ts/busybox:1.35';
const sh = (name: string, script: string, resources?: object) => ({
  name,
  image: kImage,
  command: ['sh', '-c', script],
  ...(resources ? { resources } : {}),
});

function pod(name: string, spec: object): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { test: 'issue-12-sandbox' } },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, ...spec },
  } as unknown as Pod;
}

async function post(node: TestNode, p: Pod): Promise<Pod> {
  const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(p) });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body as Pod;
}

async function finished(node: TestNode, name: string): Promise<Pod> {
  let last: Pod | undefined;
  return waitFor(
    async () => {
      const p = (last = (await (await node.api(`/pods/default/${name}`)).json()) as Pod);
      return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, description: `pod ${name} finished` },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; status: ${JSON.stringify(last?.status)}`);
  });
}

async function logs(node: TestNode, podName: string, container: string): Promise<string> {
  const res = await node.api(`/containerLogs/default/${podName}/${container}`);
  expect(res.status).toBe(200);
  return res.text();
}

describe.skipIf(!inject('dockerAvailable'))('issue 12 items 6 and 7: hosts, DNS, namespaces, QoS and node safety', () => {
  // One node for the file (the suite's time budget): started once, cleaned up after the last test.
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ podPidsLimit: 123, containerLogMaxSize: '256Ki', containerLogMaxFiles: 5 });
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  });

  it('runs the sandbox fields and the node safety settings as the kubelet does', async () => {
    const memoryCapacity = totalmem();
    const net = pod('net', {
      hostname: 'web',
      subdomain: 'sub',
      setHostnameAsFQDN: true,
      hostPID: true,
      hostIPC: true,
      priorityClassName: 'system-cluster-critical',
      hostAliases: [
        { ip: '10.1.2.3', hostnames: ['foo.remote', 'bar.remote'] },
        { ip: '127.0.0.1', hostnames: ['foo.local'] },
      ],
      dnsPolicy: 'None',
      dnsConfig: {
        nameservers: ['10.0.0.10', '10.0.0.11'],
        searches: ['ns1.svc.example', 'example'],
        options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }],
      },
      containers: [
        sh('hosts', 'cat /etc/hosts'),
        sh('resolv', 'cat /etc/resolv.conf'),
        sh('hostname', 'hostname'),
        sh('pid1', "tr '\\0' ' ' < /proc/1/cmdline"),
        sh('ipc', 'readlink /proc/self/ns/ipc'),
        sh('oom', 'cat /proc/self/oom_score_adj'),
      ],
    });
    const guaranteed = pod('guaranteed', {
      containers: [
        sh('oom', 'cat /proc/self/oom_score_adj; cat /proc/self/cgroup; cat /etc/resolv.conf', { limits: { cpu: '200m', memory: '64Mi' } }),
      ],
    });
    const burstable = pod('burstable', {
      containers: [
        sh('oom', 'cat /proc/self/oom_score_adj', { requests: { memory: '1Gi' } }),
        // About 600 KiB of output with 256Ki files: rotated at least once, well under 5 files.
        sh(
          'chatty',
          'echo first-line; i=0; while [ $i -lt 6000 ]; do echo "line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"; i=$((i+1)); done; echo last-line',
        ),
      ],
    });
    const [netPod, gPod, bPod] = await Promise.all([post(node, net), post(node, guaranteed), post(node, burstable)]);
    // The Priority admission: the class gives the priority.
    expect(netPod.spec?.priority).toBe(2000000000);
    expect(netPod.spec?.preemptionPolicy).toBe('PreemptLowerPriority');

    // The pod cgroup exists while the Guaranteed pod's container runs or after: check it before deletion.
    const [netDone, gDone, bDone] = await Promise.all([finished(node, 'net'), finished(node, 'guaranteed'), finished(node, 'burstable')]);
    expect(netDone.status?.phase).toBe('Succeeded');
    expect(gDone.status?.qosClass).toBe('Guaranteed');
    expect(bDone.status?.qosClass).toBe('Burstable');
    expect(netDone.status?.qosClass).toBe('BestEffort');

    // /etc/hosts: the kubelet's managed file, the FQDN and hostname on the pod IP (issue 13; the
    // sandbox is stopped once the pod Succeeded, so the status no longer shows it), the aliases.
    const hosts = await logs(node, 'net', 'hosts');
    expect(hosts).toContain('# Kubernetes-managed hosts file.');
    expect(hosts).toContain('127.0.0.1\tlocalhost');
    const podIpLine = /^(\d+\.\d+\.\d+\.\d+)\tweb\.sub\.default\.svc\.\tweb$/m.exec(hosts);
    expect(podIpLine?.[1]).toMatch(/^(?!127\.)/);
    expect(hosts).toContain('# Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote\n127.0.0.1\tfoo.local');
    // setHostnameAsFQDN: the hostname is the FQDN (no --cluster-domain: upstream's `svc.` ending).
    expect((await logs(node, 'net', 'hostname')).trim()).toBe('web.sub.default.svc.');
    // dnsPolicy None: exactly the dnsConfig. The agent writes the file on Docker; containerd writes
    // it from the CRI's DNSConfig, its search line first.
    const [nameservers, search, options] = [
      'nameserver 10.0.0.10\nnameserver 10.0.0.11\n',
      'search ns1.svc.example example\n',
      'options ndots:2 edns0\n',
    ];
    expect(await logs(node, 'net', 'resolv')).toBe(
      testRuntime() === 'docker' ? nameservers + search + options : search + nameservers + options,
    );
    // hostPID: PID 1 is the host's init, not the pause process or sh.
    expect((await logs(node, 'net', 'pid1')).trim()).toBe(readFileSync('/proc/1/cmdline', 'utf8').split('\0').join(' ').trim());
    // hostIPC: the host's IPC namespace.
    expect((await logs(node, 'net', 'ipc')).trim()).toBe(readlinkSync('/proc/self/ns/ipc'));
    // oom_score_adj per QoS class (policy.go): BestEffort 1000 (system-cluster-critical is not node-critical),
    // Guaranteed -997, Burstable 1000 - 1000*request/capacity.
    expect((await logs(node, 'net', 'oom')).trim()).toBe('1000');
    const gLog = await logs(node, 'guaranteed', 'oom');
    expect(gLog.split('\n')[0]).toBe(String(Math.max(-997, kOomFloor)));
    expect((await logs(node, 'burstable', 'oom')).trim()).toBe(String(1000 - Math.trunc((1000 * 1024 ** 3) / memoryCapacity)));
    // ClusterFirst with no --cluster-dns: the host's resolv.conf and a MissingClusterDNS event.
    expect(gLog).toContain(
      readFileSync('/etc/resolv.conf', 'utf8')
        .split('\n')
        .find((l) => l.startsWith('nameserver'))!,
    );
    const events = (await (await node.api('/events')).json()) as { items: Event[] };
    expect(events.items.some((e) => e.reason === 'MissingClusterDNS' && e.involvedObject?.name === 'guaranteed')).toBe(true);

    // The sandbox gets -998.
    expect(await sandboxOomScoreAdj(gPod.metadata!.uid!)).toBe(Math.max(-998, kOomFloor));
    // The log is served to its last line. On Docker every container has the json-file rotation
    // options and dockerd reads across its rotated files; on containerd the agent's log manager
    // rotates only running containers (as upstream's) and reads the current file only: its
    // rotation is proven by issue-40-logs.
    const chattyLog = await logs(node, 'burstable', 'chatty');
    expect(chattyLog.trimEnd().endsWith('last-line')).toBe(true);
    if (testRuntime() === 'docker') {
      const chatty = (await podContainers(bPod.metadata!.uid!)).find((c) => !c.sandbox && c.name === 'chatty')!;
      const chattyInfo = await dockerLogConfig(chatty.id);
      expect(chattyInfo.logConfig).toEqual({ Type: 'json-file', Config: { 'max-size': String(256 * 1024), 'max-file': '5' } });
      expect(existsSync(`${chattyInfo.logPath}.1`)).toBe(true); // really rotated
      expect(chattyLog.startsWith('first-line\n')).toBe(true);
      expect(chattyLog.split('\n').filter((l) => l.startsWith('line ')).length).toBe(6000);
    }

    // The pod cgroup: Guaranteed directly under kubepods, the summed limits, --pod-max-pids; the container inside it.
    const gCgroup = `kubelet-ts/kubepods/pod${gPod.metadata!.uid}`;
    expect(gLog).toContain(`/${gCgroup}/`);
    expect(readFileSync(`/sys/fs/cgroup/pids/${gCgroup}/pids.max`, 'utf8').trim()).toBe('123');
    expect(readFileSync(`/sys/fs/cgroup/memory/${gCgroup}/memory.limit_in_bytes`, 'utf8').trim()).toBe(String(64 * 1024 * 1024));
    expect(readFileSync(`/sys/fs/cgroup/cpu/${gCgroup}/cpu.cfs_quota_us`, 'utf8').trim()).toBe('20000');
    expect(existsSync(`/sys/fs/cgroup/pids/kubelet-ts/kubepods/burstable/pod${bPod.metadata!.uid}`)).toBe(true);
    expect(existsSync(`/sys/fs/cgroup/pids/kubelet-ts/kubepods/besteffort/pod${netPod.metadata!.uid}`)).toBe(true);

    // Deleted: the pod cgroups go with them.
    const cgroups = [
      gCgroup,
      `kubelet-ts/kubepods/burstable/pod${bPod.metadata!.uid}`,
      `kubelet-ts/kubepods/besteffort/pod${netPod.metadata!.uid}`,
    ];
    for (const name of ['guaranteed', 'burstable', 'net'])
      expect((await node.api(`/pods/default/${name}`, { method: 'DELETE' })).status).toBe(200);
    await waitFor(async () => cgroups.every((cg) => !existsSync(`/sys/fs/cgroup/pids/${cg}`)) || undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "the pods' cgroups gone",
    });
    for (const cg of cgroups) for (const h of ['memory', 'cpu']) expect(existsSync(`/sys/fs/cgroup/${h}/${cg}`)).toBe(false);
  }, 90_000);

  it('refuses what it cannot run, naming the field and the reason', async () => {
    const cases: Array<[object, string, string]> = [
      [{ priorityClassName: 'high' }, 'spec.priorityClassName', 'no PriorityClass with name high was found'],
      [{ priorityClassName: 'system-node-critical', priority: 5 }, 'spec.priority', 'priority admission controller computed 2000001000'],
      [{ runtimeClassName: 'gvisor' }, 'spec.runtimeClassName', 'RuntimeClass "gvisor" not found'],
      [{ os: { name: 'windows' } }, 'spec.os.name', 'PodOSNotSupported'],
      [{ dnsPolicy: 'None' }, 'spec.dnsConfig', 'must provide `dnsConfig` when `dnsPolicy` is None'],
      [
        { dnsConfig: { nameservers: ['1.1.1.1', '1.1.1.2', '1.1.1.3', '1.1.1.4'] } },
        'spec.dnsConfig.nameservers',
        'must not have more than 3 nameservers',
      ],
      [{ hostAliases: [{ ip: 'not-an-ip', hostnames: ['a'] }] }, 'spec.hostAliases[0].ip', 'must be a valid IP address'],
    ];
    for (const [extra, field, text] of cases) {
      const res = await node.api('/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod('refused', { ...extra, containers: [sh('a', 'true')] })),
      });
      const body = (await res.json()) as { message?: string; details?: { causes?: Array<{ field?: string }> } };
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(body.details?.causes?.map((c) => c.field)).toContain(field);
      expect(body.message).toContain(text);
    }
  });
});

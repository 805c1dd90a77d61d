// Tests of the cluster-mode client commands (src/cli/etcd-*.ts: kubectl apply/delete/get against etcd) on the real etcd single member.
import { describe, expect, it } from 'vitest';
import { etcdKeys } from '../../src/etcd/client.js';
import { etcdClientFlags } from '../../src/cli/etcd-client.js';
import { humanDuration as humanAge } from '../../src/shared/human-duration.js';
import { runEtcdApply } from '../../src/cli/etcd-apply.js';
import { runEtcdDeletePods } from '../../src/cli/etcd-delete.js';
import { runEtcdGetNodes, runEtcdGetPods } from '../../src/cli/etcd-get.js';
import type { CliIo } from '../../src/cli/io.js';
import { useEtcd } from '../support/etcd.js';

function io(): CliIo & { out: string; err: string } {
  const o = { out: '', err: '', stdout: (t: string) => void (o.out += t), stderr: (t: string) => void (o.err += t), exit: () => {} };
  return o;
}

const manifest = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: main, image: kubelet-ts/busybox:1.35, command: [sleep, "3600"]}]
`;

describe('etcd client commands (real etcd)', () => {
  const etcd = useEtcd();
  // One prefix for the whole suite (taken outside a test, so deleted after the suite): the tests
  // run in order on the same pod — apply creates it, get reads it, delete removes it.
  const prefix = etcd.prefix('cmd');
  const keys = etcdKeys(prefix);
  const flags = (node = '') => etcdClientFlags({ 'etcd-servers': etcd.endpoints.single, 'etcd-prefix': prefix, ...(node ? { node } : {}) });

  it('apply writes the pod under the node (created, then unchanged, then configured) and refuses invalid pods or a missing --node', async () => {
    let o = io();
    expect(await runEtcdApply(flags('n1'), [{ origin: 'web.yaml', text: manifest }], undefined, o)).toBe(0);
    expect(o.out).toBe('pod/web created\n');
    const stored = JSON.parse((await etcd.admin.get(keys.pod('n1', 'default', 'web')).string())!);
    expect(stored).toMatchObject({ kind: 'Pod', metadata: { name: 'web', namespace: 'default' } });
    o = io();
    await runEtcdApply(flags('n1'), [{ origin: 'web.yaml', text: manifest }], undefined, o);
    expect(o.out).toBe('pod/web unchanged\n');
    o = io();
    await runEtcdApply(flags('n1'), [{ origin: 'web.yaml', text: manifest.replace('"3600"', '"60"') }], undefined, o);
    expect(o.out).toBe('pod/web configured\n');
    await expect(runEtcdApply(flags(''), [{ origin: 'web.yaml', text: manifest }], undefined, io())).rejects.toThrow(/--node/);
    await expect(
      runEtcdApply(flags('n1'), [{ origin: 'bad.yaml', text: manifest.replace('image: kubelet-ts/busybox:1.35, ', '') }], undefined, io()),
    ).rejects.toThrow(/bad\.yaml.*image/);
  });

  it('get pods shows desired pods with their written-back status; get nodes lists registered nodes with their pod count', async () => {
    await etcd.admin
      .put(keys.podStatus('n1', 'default', 'web'))
      .value(
        JSON.stringify({
          phase: 'Running',
          startTime: new Date().toISOString(),
          containerStatuses: [{ name: 'main', ready: true, restartCount: 2, image: 'x', imageID: '', state: { running: {} } }],
        }),
      )
      .exec();
    await etcd.admin
      .put(keys.node('n1'))
      .value(
        JSON.stringify({
          kind: 'Node',
          metadata: { name: 'n1', creationTimestamp: new Date(Date.now() - 300_000).toISOString() },
          status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v0.1.0' } },
        }),
      )
      .exec();
    let o = io();
    await runEtcdGetPods(flags('n1'), { namespace: 'default', output: '' }, o);
    const lines = o.out.trim().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(lines[1]!.split(/\s+/).slice(0, 4)).toEqual(['web', '1/1', 'Running', '2']);
    o = io();
    await runEtcdGetPods(flags(''), { namespace: 'default', output: '' }, o);
    expect(o.out.trim().split('\n')[1]!.split(/\s+/).at(-1)).toBe('n1');
    o = io();
    await runEtcdGetNodes(flags(''), '', o);
    const nodeLines = o.out.trim().split('\n');
    expect(nodeLines[0]!.split(/\s+/)).toEqual(['NAME', 'STATUS', 'AGE', 'PODS', 'VERSION']);
    expect(nodeLines[1]!.split(/\s+/)).toEqual(['n1', 'Ready', '5m', '1', 'v0.1.0']);
  });

  it('delete removes the desired pod key and reports a missing one as NotFound', async () => {
    const o = io();
    expect(await runEtcdDeletePods(flags('n1'), { names: ['web', 'nope'], namespace: 'default', wait: false, timeoutMs: 0 }, o)).toBe(1);
    expect(o.out).toBe('pod "web" deleted\n');
    expect(o.err).toBe('Error from server (NotFound): pods "nope" not found\n');
    expect(await etcd.admin.get(keys.pod('n1', 'default', 'web')).string()).toBeNull();
  });

  it('the ages of etcd get are kubectl-style (the shared humanDuration)', () => {
    expect(humanAge(45_000)).toBe('45s');
    expect(humanAge(312_000)).toBe('5m12s');
    expect(humanAge(3 * 3600_000 + 4 * 60_000)).toBe('3h4m');
    expect(humanAge(53 * 3600_000)).toBe('2d5h');
  });
});

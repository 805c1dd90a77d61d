// Issue 12 items 2, 4, 5 (volumes) against the real agent and dockerd: a memory emptyDir is really
// a tmpfs of its sizeLimit and is unmounted when the pod is deleted; a downwardAPI labels file
// changes in a running container without a restart; subPath and subPathExpr mount inside the
// volume, and a subPath that is a symlink out of the volume is refused (CreateContainerConfigError,
// no container made); a disk emptyDir over its sizeLimit gets the pod Evicted.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { podContainers } from '../support/runtime.js';

const kImage = 'kubelet-ts/busybox:1.35';
// Generous: the machine is shared, and a loaded one starts containers slowly; the assertions are on behaviour.
const kWaitMs = 120_000;

async function getPod(node: TestNode, name: string): Promise<Pod | undefined> {
  const res = await node.api(`/pods/default/${name}`);
  return res.status === 200 ? ((await res.json()) as Pod) : undefined;
}
async function logs(node: TestNode, pod: string, container: string): Promise<string> {
  const res = await node.api(`/containerLogs/default/${pod}/${container}`);
  return res.status === 200 ? res.text() : '';
}
const hostMounts = () => readFile('/proc/self/mounts', 'utf8');

function volumesPod(labels: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'vols', namespace: 'default', labels },
    spec: {
      terminationGracePeriodSeconds: 1,
      volumes: [
        { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '8Mi' } },
        {
          name: 'podinfo',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'meta/name', fieldRef: { fieldPath: 'metadata.name' } },
            ],
          },
        },
        { name: 'shared', emptyDir: {} },
      ],
      initContainers: [
        {
          name: 'prep',
          image: kImage,
          volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
          command: ['sh', '-c', 'mkdir -p /shared/inner && echo inner-file > /shared/inner/f && ln -s /etc /shared/esc'],
        },
      ],
      containers: [
        {
          name: 'check',
          image: kImage,
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          volumeMounts: [
            { name: 'mem', mountPath: '/data' },
            { name: 'podinfo', mountPath: '/podinfo' },
            { name: 'shared', mountPath: '/sub', subPath: 'inner' },
            { name: 'shared', mountPath: '/expr', subPathExpr: '$(POD_NAME)/x' },
          ],
          command: [
            'sh',
            '-c',
            'grep " /data " /proc/mounts; cat /sub/f; echo expr > /expr/e; echo name=$(cat /podinfo/meta/name); touch /podinfo/x 2>/dev/null || echo podinfo-ro; while true; do echo "labels:$(cat /podinfo/labels | tr "\\n" ,)"; sleep 1; done',
          ],
        },
        {
          name: 'escape',
          image: kImage,
          command: ['sleep', '3600'],
          volumeMounts: [{ name: 'shared', mountPath: '/esc', subPath: 'esc' }],
        },
      ],
    },
  };
}

const fillPod: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'fill', namespace: 'default' },
  spec: {
    terminationGracePeriodSeconds: 1,
    restartPolicy: 'Never',
    volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Mi' } }],
    containers: [
      {
        name: 'main',
        image: kImage,
        volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
        command: ['sh', '-c', 'dd if=/dev/zero of=/scratch/big bs=1024 count=3072 && sleep 3600'],
      },
    ],
  },
};

// One node for the file; the eviction pod runs beside the others and is checked last.
describe.skipIf(!inject('dockerAvailable'))('issue 12: volumes', () => {
  let node: TestNode;
  beforeAll(async () => {
    node = await startTestNode({ podManifestPath: '', syncFrequencyMs: 2_000 });
    expect(
      (await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fillPod) })).status,
    ).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await node?.cleanup();
  }, 60_000);

  it('memory emptyDir is a tmpfs of its sizeLimit, unmounted after delete; downwardAPI labels update without a restart; subPath stays inside the volume', async () => {
    const created = await node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(volumesPod({ app: 'vols', tier: 'one' })),
    });
    expect(created.status).toBe(201);
    const pod = await waitFor(
      async () => {
        const p = await getPod(node, 'vols');
        const check = p?.status?.containerStatuses?.find((c) => c.name === 'check');
        const esc = p?.status?.containerStatuses?.find((c) => c.name === 'escape');
        return check?.state?.running && esc?.state?.waiting?.reason === 'CreateContainerConfigError' ? p : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 300, description: 'vols running, escape refused' },
    );
    const uid = pod.metadata!.uid!;

    // The symlink escape: refused by name, and no container was ever made for it.
    const esc = pod.status!.containerStatuses!.find((c) => c.name === 'escape')!;
    expect(esc.state!.waiting!.message).toMatch(/not within volume path/);
    expect((await podContainers(uid)).some((c) => c.name === 'escape')).toBe(false);

    const out = await waitFor(
      async () => {
        const text = await logs(node, 'vols', 'check');
        return text.includes('labels:') ? text : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 300, description: 'check logs' },
    );
    expect(out).toMatch(/tmpfs \/data tmpfs \S*size=8192k/);
    expect(out).toContain('inner-file');
    expect(out).toContain('name=vols');
    expect(out).toContain('podinfo-ro');
    expect(out).toContain('labels:app="vols",tier="one"');
    // subPathExpr: created as vols/x inside the shared emptyDir.
    expect(await readFile(`${node.rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/shared/vols/x/e`, 'utf8')).toBe('expr\n');
    const memDir = `${node.rootDir}/pods/${uid}/volumes/kubernetes.io~empty-dir/mem`;
    expect(await hostMounts()).toContain(` ${memDir} tmpfs `);

    // A PUT with new labels only: the labels file changes, the container is not restarted.
    const put = await node.api('/pods/default/vols', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(volumesPod({ app: 'vols', tier: 'two' })),
    });
    expect(put.status).toBe(200);
    await waitFor(async () => ((await logs(node, 'vols', 'check')).includes('labels:app="vols",tier="two"') ? true : undefined), {
      timeoutMs: kWaitMs,
      intervalMs: 300,
      description: 'labels file updated',
    });
    const after = await getPod(node, 'vols');
    expect(after!.status!.containerStatuses!.find((c) => c.name === 'check')!.restartCount).toBe(0);

    // Delete: the pod's directory goes, and nothing of it stays mounted on the host.
    expect((await node.api('/pods/default/vols?gracePeriodSeconds=0', { method: 'DELETE' })).status).toBe(200);
    await waitFor(async () => ((await getPod(node, 'vols')) ? undefined : true), {
      timeoutMs: kWaitMs,
      intervalMs: 300,
      description: 'vols gone',
    });
    await waitFor(async () => ((await hostMounts()).includes(`/pods/${uid}/`) ? undefined : true), {
      timeoutMs: 10_000,
      intervalMs: 200,
      description: 'pod mounts gone',
    });
  }, 240_000);

  it('configMap, secret and projected volumes: secret on a tmpfs, a changed ConfigMap reaches the running container without a restart; a missing one waits with FailedMount and starts once it appears', async () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'app-config', namespace: 'default' },
          data: { greeting: 'hello', extra: 'x' },
        },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'default' }, data: { password: b64('s3cret') } },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'cfgpod', namespace: 'default', labels: { app: 'cfg' } },
          spec: {
            terminationGracePeriodSeconds: 1,
            volumes: [
              { name: 'cfg', configMap: { name: 'app-config' } },
              { name: 'sec', secret: { secretName: 'creds', defaultMode: 0o400 } },
              {
                name: 'proj',
                projected: {
                  sources: [
                    { configMap: { name: 'app-config', items: [{ key: 'greeting', path: 'cm/greeting' }] } },
                    { secret: { name: 'creds', items: [{ key: 'password', path: 'sec/pw' }] } },
                    { downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
                  ],
                },
              },
            ],
            containers: [
              {
                name: 'watch',
                image: kImage,
                volumeMounts: [
                  { name: 'cfg', mountPath: '/cfg' },
                  { name: 'sec', mountPath: '/sec' },
                  { name: 'proj', mountPath: '/proj' },
                ],
                command: [
                  'sh',
                  '-c',
                  'grep " /sec " /proc/mounts; grep " /proj " /proc/mounts; echo pw=$(cat /sec/password) mode=$(stat -L -c %a /sec/password); echo proj=$(cat /proj/cm/greeting)/$(cat /proj/sec/pw)/$(cat /proj/labels); while true; do echo "cfg:$(cat /cfg/greeting)"; sleep 1; done',
                ],
              },
            ],
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'waits', namespace: 'default' },
          spec: {
            terminationGracePeriodSeconds: 1,
            volumes: [{ name: 'later', configMap: { name: 'later' } }],
            containers: [
              {
                name: 'main',
                image: kImage,
                volumeMounts: [{ name: 'later', mountPath: '/later' }],
                command: ['sh', '-c', 'echo k=$(cat /later/k); sleep 3600'],
              },
            ],
          },
        },
      ],
    };
    const created = await node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(list),
    });
    expect(created.status).toBe(201);
    const out = await waitFor(
      async () => {
        const text = await logs(node, 'cfgpod', 'watch');
        return text.includes('cfg:hello') ? text : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 300, description: 'cfgpod logs' },
    );
    expect(out).toMatch(/tmpfs \/sec tmpfs /);
    expect(out).toMatch(/tmpfs \/proj tmpfs /);
    expect(out).toContain('pw=s3cret mode=400');
    expect(out).toContain('proj=hello/s3cret/app="cfg"');
    const uid = (await getPod(node, 'cfgpod'))!.metadata!.uid!;
    // The secret's bytes never touch the disk: its directory on the host is a tmpfs mount point.
    expect(await hostMounts()).toContain(` ${node.rootDir}/pods/${uid}/volumes/kubernetes.io~secret/sec tmpfs `);

    // The missing ConfigMap: the pod waits (ContainerCreating) with the kubelet's FailedMount event.
    const waiting = await waitFor(
      async () => {
        const p = await getPod(node, 'waits');
        return p?.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ContainerCreating' ? p : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 300, description: 'waits waiting' },
    );
    expect(waiting.status!.phase).toBe('Pending');
    const events = (await (await node.api('/events')).json()) as {
      items: Array<{ reason?: string; message?: string; involvedObject?: { name?: string } }>;
    };
    expect(
      events.items.some(
        (e) =>
          e.reason === 'FailedMount' &&
          e.involvedObject?.name === 'waits' &&
          e.message === 'MountVolume.SetUp failed for volume "later" : configmap "later" not found',
      ),
    ).toBe(true);

    // The ConfigMap changes: the mounted file follows without a restart.
    const put = await node.api('/configmaps/default/app-config', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'app-config', namespace: 'default' },
        data: { greeting: 'bonjour' },
      }),
    });
    expect(put.status).toBe(200);
    await waitFor(async () => ((await logs(node, 'cfgpod', 'watch')).includes('cfg:bonjour') ? true : undefined), {
      timeoutMs: kWaitMs,
      intervalMs: 300,
      description: 'configmap file updated',
    });
    expect((await getPod(node, 'cfgpod'))!.status!.containerStatuses![0].restartCount).toBe(0);

    // The missing one appears: the waiting pod starts and reads it.
    const later = await node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'later', namespace: 'default' },
        data: { k: 'arrived' },
      }),
    });
    expect(later.status).toBe(201);
    await waitFor(async () => ((await logs(node, 'waits', 'main')).includes('k=arrived') ? true : undefined), {
      timeoutMs: kWaitMs,
      intervalMs: 300,
      description: 'waits started',
    });
  }, 240_000);
  it('a disk emptyDir over its sizeLimit: the eviction manager evicts the pod', async () => {
    const pod = await waitFor(
      async () => {
        const p = await getPod(node, 'fill');
        return p?.status?.phase === 'Failed' ? p : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 300, description: 'fill evicted' },
    );
    expect(pod.status!.reason).toBe('Evicted');
    expect(pod.status!.message).toBe('Usage of EmptyDir volume "scratch" exceeds the limit "1Mi". ');
  }, 150_000);
});

// End-to-end: pods pushed through the HTTP intake run in the real runtime (dockerd, or containerd
// through the CRI: test/support/runtime.ts); the agent is a real child process, killed with SIGKILL
// and restarted: the intake pods come back with their UIDs and their containers are adopted, not
// restarted. Also the read API (logs, events, node) against the runtime.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Pod, PodList } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { kNodeLabel } from '../support/agent.js';
import { podContainers, removeLabeled, testRuntime } from '../support/runtime.js';
import { releaseNodeNetwork } from '../support/network.js';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.js';
import { intakeFileNames } from '../../src/main/config/intake-pod-files.js';

const podYaml = (name: string, command: string, restartPolicy = 'Always') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  labels: {app: ${name}, suite: intake}
spec:
  restartPolicy: ${restartPolicy}
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", ${JSON.stringify(command)}]
`;

// The machine is shared by several engineers' Docker tests: waits are generous (they assert behaviour, not timing).
const kWaitMs = 150_000;
const kTestMs = 200_000;

describe.skipIf(!inject('dockerAvailable'))('intake pods in the container runtime (agent as a child process)', () => {
  const nodeName = `e2e-in-${randomBytes(3).toString('hex')}`;
  let base: string;
  let rootDir: string;
  let agent: AgentProcess;
  const args = () => [
    '--hostname-override',
    nodeName,
    '--root-dir',
    rootDir,
    '--relist-period',
    '500ms',
    '--workers',
    '1',
    '--sync-frequency',
    '10s',
  ];

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'kubelet-ts-intake-'));
    rootDir = join(base, 'root');
    agent = await startAgentProcess(args());
  }, kTestMs);
  afterAll(async () => {
    await agent?.stop('SIGKILL');
    await removeLabeled(kNodeLabel, nodeName);
    await releaseNodeNetwork(rootDir);
    await unmountUnder(base).catch(() => undefined); // the pods' tmpfs volumes (the service account token's)
    await rm(base, { recursive: true, force: true });
  }, kTestMs);

  const post = (yaml: string) => agent.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: yaml });
  const getPod = async (name: string): Promise<Pod | undefined> => {
    const res = await agent.api(`/pods/default/${name}`);
    return res.status === 200 ? ((await res.json()) as Pod) : undefined;
  };
  const waitRunning = (name: string, pred: (p: Pod) => boolean = () => true) =>
    waitFor(
      async () => {
        const p = await getPod(name);
        const ok = p?.status?.phase === 'Running' && (p.status.containerStatuses ?? []).every((c) => c.ready) && pred(p);
        return ok ? p : undefined;
      },
      { timeoutMs: kWaitMs, intervalMs: 250, description: `pod ${name} Running` },
    );
  const appContainers = async (uid: string) => (await podContainers(uid)).filter((c) => !c.sandbox);

  it(
    'runs a POSTed pod under its own name with source api, stored under --root-dir/intake',
    async () => {
      const res = await post(
        podYaml('web', 'i=0; while true; do i=$((i+1)); echo line $i; if [ $i -ge 5 ]; then exec sleep 3600; fi; done'),
      );
      expect(res.status).toBe(201);
      const created = (await res.json()) as Pod;
      expect(created.metadata?.name).toBe('web');
      expect(created.metadata?.annotations?.['kubernetes.io/config.source']).toBe('api');
      const pod = await waitRunning('web');
      expect(pod.metadata?.uid).toBe(created.metadata?.uid);
      expect(await readdir(join(rootDir, 'intake'))).toEqual(expect.arrayContaining(intakeFileNames(created.metadata!.uid!)));
      const list = (await (await agent.api('/pods?labelSelector=suite%20in%20(intake),app')).json()) as PodList;
      expect(list.items.map((p) => p.metadata?.name)).toEqual(['web']);
    },
    kTestMs,
  );

  it(
    'serves the log with tailLines, timestamps and limitBytes',
    async () => {
      const text = async (q: string) => (await agent.api(`/containerLogs/default/web/main${q}`)).text();
      await waitFor(async () => (await text('')).includes('line 5'), { timeoutMs: kWaitMs, intervalMs: 200 });
      expect(await text('')).toBe('line 1\nline 2\nline 3\nline 4\nline 5\n');
      expect(await text('?tailLines=2')).toBe('line 4\nline 5\n');
      expect(await text('?limitBytes=9')).toBe('line 1\nli');
      expect((await text('?tailLines=1&timestamps=true')).trim()).toMatch(/^\d{4}-\d\d-\d\dT\S+Z line 5$/);
      const missing = await agent.api('/containerLogs/default/web/nope');
      expect(missing.status).toBe(404);
      const previous = await agent.api('/containerLogs/default/web/main?previous=true');
      expect(previous.status).toBe(400);
    },
    kTestMs,
  );

  it(
    'follows a log until the container stops',
    async () => {
      expect((await post(podYaml('once', 'echo start; sleep 2; echo done', 'Never'))).status).toBe(201);
      await waitFor(
        async () => ((await getPod('once'))?.status?.containerStatuses ?? []).some((c) => c.state?.running || c.state?.terminated),
        { timeoutMs: kWaitMs, intervalMs: 100 },
      );
      const res = await agent.api('/containerLogs/default/once/main?follow=true');
      expect(res.status).toBe(200);
      // Resolves only when the server ends the stream, i.e. when the container has stopped.
      expect(await res.text()).toBe('start\ndone\n');
      const pod = await waitFor(
        async () => {
          const p = await getPod('once');
          return p?.status?.phase === 'Succeeded' ? p : undefined;
        },
        { timeoutMs: kWaitMs, intervalMs: 200 },
      );
      expect(pod.status?.containerStatuses?.[0].state?.terminated?.exitCode).toBe(0);
    },
    kTestMs,
  );

  it(
    'serves the previous attempt of a restarted container',
    async () => {
      expect((await post(podYaml('crash', 'echo attempt; sleep 1; exit 3'))).status).toBe(201);
      await waitFor(async () => ((await getPod('crash'))?.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, {
        timeoutMs: kWaitMs,
        intervalMs: 250,
      });
      const res = await agent.api('/containerLogs/default/crash/main?previous=true');
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('attempt\n');
    },
    kTestMs,
  );

  it(
    'answers GET /events with the pods events and GET /node with the runtime version',
    async () => {
      const events = (await (await agent.api('/events')).json()) as {
        kind: string;
        items: { reason?: string; involvedObject?: { name?: string } }[];
      };
      expect(events.kind).toBe('EventList');
      expect(events.items.some((e) => e.involvedObject?.name === 'web' && e.reason === 'Started')).toBe(true);
      const node = (await (await agent.api('/node')).json()) as {
        kind: string;
        metadata: { name: string };
        status: { nodeInfo: { containerRuntimeVersion: string }; conditions: { type: string; status: string }[] };
      };
      expect(node.kind).toBe('Node');
      expect(node.metadata.name).toBe(nodeName);
      expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(new RegExp(`^${testRuntime()}://v?\\d+\\.\\d+`));
      expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    },
    kTestMs,
  );

  it(
    'restores intake pods after kill -9 with the same UID and adopts their containers',
    async () => {
      const before = await waitRunning('web');
      const uid = before.metadata!.uid!;
      const idsBefore = (await appContainers(uid)).map((c) => c.id).sort();
      expect(idsBefore).toHaveLength(1);
      await agent.stop('SIGKILL');
      agent = await startAgentProcess(args());
      const after = await waitRunning('web');
      expect(after.metadata?.uid).toBe(uid);
      expect(after.status?.containerStatuses?.[0].restartCount).toBe(0);
      // Give the restarted agent a few syncs; the container must be the same one, still running.
      await waitFor(async () => ((await agent.api('/healthz')).status === 200 ? true : undefined), { timeoutMs: 10_000 });
      const containers = await appContainers(uid);
      expect(containers.map((c) => c.id).sort()).toEqual(idsBefore);
      expect(containers.every((c) => c.running)).toBe(true);
    },
    kTestMs,
  );

  it(
    'PUT restarts the changed container under the same UID',
    async () => {
      const pod = await waitRunning('web');
      const uid = pod.metadata!.uid!;
      const [oldId] = (await appContainers(uid)).map((c) => c.id);
      const res = await agent.api('/pods/default/web', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/yaml' },
        body: podYaml('web', 'echo replaced; exec sleep 3600'),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as Pod).metadata?.uid).toBe(uid);
      await waitFor(
        async () => {
          const running = (await appContainers(uid)).filter((c) => c.running);
          return running.length === 1 && running[0].id !== oldId;
        },
        { timeoutMs: kWaitMs, intervalMs: 250, description: 'replaced container running' },
      );
      await waitFor(async () => (await (await agent.api('/containerLogs/default/web/main')).text()) === 'replaced\n', {
        timeoutMs: kWaitMs,
        intervalMs: 250,
      });
    },
    kTestMs,
  );

  it('refuses a second pod with the same name (409) and deletes gracefully (200, then gone, file removed)', async () => {
    const dup = await post(podYaml('web', 'sleep 1'));
    expect(dup.status).toBe(409);
    const uid = (await getPod('web'))!.metadata!.uid!;
    const res = await agent.api('/pods/default/web?gracePeriodSeconds=0', { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Pod).metadata?.deletionTimestamp).toBeDefined();
    for (const f of intakeFileNames(uid)) expect(existsSync(join(rootDir, 'intake', f))).toBe(false);
    await waitFor(async () => (await getPod('web')) === undefined, { timeoutMs: kWaitMs, intervalMs: 250, description: 'web gone' });
    await waitFor(async () => (await podContainers(uid)).length === 0, {
      timeoutMs: kWaitMs,
      intervalMs: 250,
      description: 'containers removed',
    });
    expect((await agent.api('/pods/default/web', { method: 'DELETE' })).status).toBe(404);
  });
});

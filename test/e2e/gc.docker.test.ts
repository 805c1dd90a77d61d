// End-to-end container garbage collection against the real dockerd (kuberuntime_gc.go's role for kubelet-ts):
// the `gc` worker task removes a crash-looping pod's dead containers and never a container of another owner.
import { realClock } from '../../src/shared/clock.js';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PROTOCOL_VERSION, type WorkerResult } from '../../src/shared/thread-wire.js';
import type { GcResult } from '../../src/shared/sync-tasks.js';
import { createWorkerHandler } from '../../src/workers/sync.worker.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, PAUSE_IMAGE, docker, waitFor } from '../support/docker.js';
import { busyboxPod, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { itRuntime, podContainers, removeLabeled, startForeignPod, type ForeignPod } from '../support/runtime.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { runtimeEndpointOf } from '../../src/main/options/runtime-endpoint-options.js';
import { kOrphanPodCgroupMinAgeMs, removePodCgroup } from '../../src/workers/cm/pod-cgroup.js';

const kWaitMs = 90_000;
const kTestLabel = 'kubelet-ts.test';

describe.skipIf(!inject('dockerAvailable'))('container garbage collection in Docker', { timeout: 120_000 }, () => {
  let node: TestNode | undefined;
  let foreignId = '';
  const strays: ChildProcess[] = [];
  let foreignPod: ForeignPod | undefined;
  let orphanCgroup: { uids: string[]; root: string } | undefined;
  afterEach(async () => {
    for (const p of strays.splice(0)) {
      if (p.exitCode !== null || p.signalCode !== null) continue;
      const gone = once(p, 'exit');
      p.kill('SIGKILL');
      await gone;
    }
    await foreignPod?.remove();
    foreignPod = undefined;
    await node?.cleanup();
    // The cgroups made here have no container left for the node's cleanup to find them by; then
    // the test's own cgroup root, empty now.
    if (orphanCgroup) {
      for (const uid of orphanCgroup.uids) await removePodCgroup(uid, orphanCgroup.root);
      for (const h of await readdir('/sys/fs/cgroup').catch(() => [] as string[]))
        for (const d of ['kubepods/besteffort', 'kubepods/burstable', 'kubepods', '.'])
          await rmdir(join('/sys/fs/cgroup', h, orphanCgroup.root, d)).catch(() => undefined);
    }
    orphanCgroup = undefined;
    node = undefined;
    if (foreignId)
      await docker
        .getContainer(foreignId)
        .remove({ force: true })
        .catch(() => undefined);
    foreignId = '';
  });

  // The gc task is driven through a sync worker built here with Docker's bootstrap, and the foreign
  // container is Docker's: on containerd once the worker bootstrap names the CRI endpoint (#40).
  itRuntime({ containerd: "drives a sync worker with Docker's bootstrap (runtime: docker) and a foreign Docker container" })(
    'maximumDeadContainersPerContainer 0: a gc run removes every dead attempt of a crash-looping pod, which keeps restarting; a foreign dead container is untouched',
    async () => {
      node = await startTestNode({ maximumDeadContainersPerContainer: 0 });
      // A dead container of another owner: no kubelet labels at all (only the test's own label).
      const foreign = await docker.createContainer({
        Image: BUSYBOX_IMAGE,
        Cmd: ['true'],
        Labels: { [kTestLabel]: `gc-foreign-${node.nodeName}` },
      });
      foreignId = foreign.id;
      await foreign.start();
      await waitFor(async () => (await foreign.inspect()).State.Status === 'exited', {
        timeoutMs: kWaitMs,
        description: 'foreign container exits',
      });

      await node.writeManifest('crash.yaml', busyboxPod('crash', 'sleep 1; exit 3'));
      const crashing = await waitForPod(node, 'crash', (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1, kWaitMs);
      const uid = crashing.metadata!.uid!;
      const appContainers = async () => (await podContainers(uid)).filter((c) => !c.sandbox && c.name === 'main');
      // Wait for a dead attempt (the pod is in restart backoff after its crashes).
      const dead = await waitFor(
        async () => {
          const l = (await appContainers()).filter((c) => !c.running);
          return l.length > 0 ? l : undefined;
        },
        { timeoutMs: kWaitMs, description: 'a dead attempt' },
      );

      const handler = createWorkerHandler({
        protocol: PROTOCOL_VERSION,
        runtime: 'docker',
        dockerSocketPath: DOCKER_SOCKET,
        nodeName: node.nodeName,
        rootDir: node.rootDir,
        podInfraContainerImage: PAUSE_IMAGE,
        logLevel: 'silent',
      });
      const res = (await handler({
        kind: 'gc',
        protocol: PROTOCOL_VERSION,
        maximumDeadContainersPerContainer: 0,
        activePodUids: [uid],
      })) as WorkerResult<'gc'>;
      expect(res.ok).toBe(true);
      const value = (res as { value: GcResult }).value;
      expect(value.errors).toEqual([]);
      expect(value.removedContainers).toEqual(expect.arrayContaining(dead.map((c) => c.id)));
      expect(value.removedSandboxes).toEqual([]);

      // No dead app container of the pod is left (one may have died since the run: only those seen dead are checked gone).
      const after = await appContainers();
      for (const d of dead) expect(after.find((c) => c.id === d.id)).toBeUndefined();
      // The sandbox (the newest) is kept; the foreign container is untouched.
      expect((await podContainers(uid)).some((c) => c.sandbox)).toBe(true);
      expect((await foreign.inspect()).State.Status).toBe('exited');

      // The pod keeps going: the agent starts a new attempt after the backoff.
      const seen = new Set([...dead.map((c) => c.id), ...after.map((c) => c.id)]);
      await waitFor(async () => (await appContainers()).some((c) => !seen.has(c.id)), {
        timeoutMs: kWaitMs,
        description: 'a new attempt after gc',
      });
      const pod = await node.pod('crash');
      expect(pod?.status?.phase).toBe('Running');
    },
  );

  // kubelet_pods.go cleanupOrphanedPodCgroups: a pod cgroup whose pod is neither known nor in the
  // runtime is killed (Destroy) and removed by GC, on either runtime (the agent gives the pod
  // cgroup as cgroup_parent to containerd too). The gc task runs through a sync worker built with
  // the node's own bootstrap, its clock past the orphan's minimum age.
  it('a pod cgroup left by a pod removed while the agent was down: its stray process killed and the cgroup removed by gc; a known pod keeps its own', async () => {
    // A cgroup root of its own: the gc below, its clock moved on, must not take the cgroup of a pod
    // another test's agent is starting (made before its sandbox) under the shared one.
    const cgroupRoot = `/kubelet-ts-gc-${randomBytes(4).toString('hex')}`;
    orphanCgroup = { uids: [], root: cgroupRoot };
    node = await startTestNode({ cgroupRoot });
    await node.writeManifest('orphan.yaml', busyboxPod('orphan', 'sleep 3600'));
    await node.writeManifest('kept.yaml', busyboxPod('kept', 'sleep 3600'));
    const running = (p: { status?: { phase?: string } }) => p.status?.phase === 'Running';
    const orphanUid = (await waitForPod(node, 'orphan', running, kWaitMs)).metadata!.uid!;
    const keptUid = (await waitForPod(node, 'kept', running, kWaitMs)).metadata!.uid!;
    orphanCgroup.uids.push(orphanUid);
    const cgroup = (uid: string, h: string) => join('/sys/fs/cgroup', h, cgroupRoot, 'kubepods', 'besteffort', `pod${uid}`);
    /** A `sleep` of the test's own, moved into pod `uid`'s cgroup. */
    const spawnInto = (uid: string): ChildProcess => {
      const p = spawn('sleep', ['3600'], { stdio: 'ignore' });
      strays.push(p);
      for (const h of ['pids', 'memory', 'cpu']) writeFileSync(join(cgroup(uid, h), 'cgroup.procs'), String(p.pid));
      return p;
    };
    expect(existsSync(cgroup(orphanUid, 'pids'))).toBe(true);

    // The agent goes down; the pod is deleted meanwhile: its manifest and its containers go.
    await node.agent.stop();
    await rm(join(node.manifestDir, 'orphan.yaml'));
    await removeLabeled('io.kubernetes.pod.uid', orphanUid, node.runtime);
    expect(await podContainers(orphanUid)).toEqual([]);
    // A process left behind in the pod's cgroup (Destroy kills what is still in it).
    const stray = spawnInto(orphanUid);
    const exited = new Promise<NodeJS.Signals | null>((resolve) => stray.once('exit', (_code, signal) => resolve(signal)));
    expect(existsSync(cgroup(orphanUid, 'pids'))).toBe(true);
    // Another owner's pod, in the runtime but unknown to this agent, with a cgroup under the same
    // root (agents sharing a runtime share it): neither its cgroup nor its process is touched.
    const foreignUid = `foreign-${randomBytes(4).toString('hex')}`;
    foreignPod = await startForeignPod({ 'io.kubernetes.pod.uid': foreignUid }, node.runtime);
    orphanCgroup.uids.push(foreignUid);
    for (const h of ['pids', 'memory', 'cpu']) await mkdir(cgroup(foreignUid, h), { recursive: true });
    const foreignProcess = spawnInto(foreignUid);

    const handler = createWorkerHandler(
      {
        protocol: PROTOCOL_VERSION,
        ...runtimeEndpointOf(node.options),
        nodeName: node.nodeName,
        rootDir: node.rootDir,
        podInfraContainerImage: PAUSE_IMAGE,
        logLevel: 'silent',
        sandbox: { cgroupsPerQOS: true, cgroupRoot },
      },
      undefined,
      // Its wall clock 2 min ahead: the orphan is past kOrphanPodCgroupMinAgeMs (timers stay real).
      { clock: { ...realClock, now: () => realClock.now() + 2 * kOrphanPodCgroupMinAgeMs } },
    );
    const res = (await handler({
      kind: 'gc',
      protocol: PROTOCOL_VERSION,
      maximumDeadContainersPerContainer: 1,
      activePodUids: [keptUid],
    })) as WorkerResult<'gc'>;
    expect(res).toMatchObject({ ok: true });
    expect((res as { value: GcResult }).value.errors).toEqual([]);

    for (const h of ['pids', 'memory', 'cpu']) expect(existsSync(cgroup(orphanUid, h)), h).toBe(false);
    expect(await exited).toBe('SIGKILL');
    expect(existsSync(cgroup(foreignUid, 'pids'))).toBe(true);
    expect(readFileSync(join(cgroup(foreignUid, 'pids'), 'cgroup.procs'), 'utf8').trim()).toBe(String(foreignProcess.pid));
    expect(await foreignPod.running()).toBe(true);
    // The known pod (not in the runtime's reach of the agent, which is down) keeps its cgroup and runs.
    expect(existsSync(cgroup(keptUid, 'pids'))).toBe(true);
    expect((await podContainers(keptUid)).some((c) => !c.sandbox && c.running)).toBe(true);
  });
});

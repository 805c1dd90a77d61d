// End-to-end container garbage collection against the real dockerd (kuberuntime_gc.go's role for kubelet-ts):
// the `gc` worker task removes a crash-looping pod's dead containers and never a container of another owner.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PROTOCOL_VERSION, type GcResult, type WorkerResult } from '../../src/shared/messages.js';
import { createWorkerHandler } from '../../src/workers/sync.worker.js';
import { BUSYBOX_IMAGE, DOCKER_SOCKET, PAUSE_IMAGE, docker, waitFor } from '../support/docker.js';
import { busyboxPod, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { itRuntime, podContainers } from '../support/runtime.js';

const kWaitMs = 90_000;
const kTestLabel = 'kubelet-ts.test';

describe.skipIf(!inject('dockerAvailable'))('container garbage collection in Docker', { timeout: 120_000 }, () => {
  let node: TestNode | undefined;
  let foreignId = '';
  afterEach(async () => {
    await node?.cleanup();
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
});

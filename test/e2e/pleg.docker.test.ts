// The event-driven PLEG against the real dockerd: a container's death reaches the pod's status
// through Docker's events stream (the relist and the resync are set to 10 minutes, so nothing else
// can notice it), and a death while the stream is cut is caught when it reconnects.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { dockerProxy } from '../support/docker-proxy.js';
import { busyboxPod, isRunningAndReady, startTestNode, waitForPod, type TestNode } from '../support/agent.js';
import { itRuntime, killContainer, podContainers } from '../support/runtime.js';

async function appContainerId(uid: string): Promise<string> {
  const app = (await podContainers(uid)).find((c) => !c.sandbox && c.name === 'main' && c.running);
  if (!app) throw new Error(`no running app container for pod ${uid}`);
  return app.id;
}

/** These tests prove the events stream; containerd 1.6 has none (the PLEG relists there: lifecycle, probes). */
const itEvents = itRuntime({ containerd: 'containerd 1.6 has no GetContainerEvents, so its PLEG relists and has no events stream' });

const kLong = 600_000;

describe.skipIf(!inject('dockerAvailable'))('event-driven PLEG', () => {
  let node: TestNode | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await node?.cleanup();
    node = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  itEvents('a killed container is noticed through the events stream and restarted', async () => {
    node = await startTestNode({ relistPeriodMs: kLong, syncFrequencyMs: kLong });
    await node.writeManifest('a.yaml', busyboxPod('victim', 'exec sleep 3600'));
    const pod = await waitForPod(node, 'victim', isRunningAndReady);
    await killContainer(await appContainerId(pod.metadata!.uid!));
    const after = await waitForPod(node, 'victim', (p) => isRunningAndReady(p) && p.status!.containerStatuses![0].restartCount === 1);
    expect(after.status!.containerStatuses![0].lastState?.terminated?.exitCode).toBe(137);
    expect(node.agent.pleg.stats().streaming).toBe(true);
    expect(node.agent.pleg.stats().eventLagsMs.length).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${node.agent.port}/healthz?verbose`);
    expect(await health.text()).toContain('[+]pleg ok');
  });

  itEvents('a death is published from the die event itself, before the sync that restarts the container', async () => {
    node = await startTestNode({ relistPeriodMs: kLong, syncFrequencyMs: kLong });
    await node.writeManifest('a.yaml', busyboxPod('fast', 'exec sleep 3600'));
    const pod = await waitForPod(node, 'fast', isRunningAndReady);
    const uid = pod.metadata!.uid!;
    // The sync restarts the container before it publishes (the first restart has no backoff), so
    // only a status built from the event shows the terminated state of restart 0.
    const seen: string[] = [];
    const off = node.agent.statusManager.subscribe((change) => {
      const cs = change.uid === uid ? change.pod.status?.containerStatuses?.[0] : undefined;
      if (cs)
        seen.push(
          `${cs.restartCount}:${cs.state?.terminated ? `terminated/${cs.state.terminated.reason}/${cs.state.terminated.exitCode}` : Object.keys(cs.state ?? {})[0]}`,
        );
    });
    try {
      await killContainer(await appContainerId(uid));
      await waitForPod(node, 'fast', (p) => isRunningAndReady(p) && p.status!.containerStatuses![0].restartCount === 1);
    } finally {
      off();
    }
    expect(seen).toContain('0:terminated/Error/137');
    expect(seen.at(-1)).toBe('1:running');
  });

  itEvents('a death while the events stream is cut is caught once it reconnects', async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-proxy-'));
    const sock = join(dir, 'docker.sock');
    const proxy = await dockerProxy(sock);
    node = await startTestNode({ dockerEndpoint: `unix://${sock}`, relistPeriodMs: kLong, syncFrequencyMs: kLong });
    await node.writeManifest('a.yaml', busyboxPod('cut', 'exec sleep 3600', { restartPolicy: 'Never' }));
    const pod = await waitForPod(node, 'cut', isRunningAndReady);
    await expect.poll(() => node!.agent.pleg.stats().streaming, { timeout: 10_000 }).toBe(true);

    await proxy.cut();
    await expect.poll(() => node!.agent.pleg.stats().streaming, { timeout: 10_000 }).toBe(false);
    // Killed through the real socket: the agent's stream is down and cannot see it happen.
    await killContainer(await appContainerId(pod.metadata!.uid!));
    await proxy.open();

    const failed = await waitForPod(node, 'cut', (p) => p.status?.phase === 'Failed', 60_000);
    expect(failed.status!.containerStatuses![0].state?.terminated?.exitCode).toBe(137);
    expect(node.agent.pleg.stats().streaming).toBe(true);
  });
});

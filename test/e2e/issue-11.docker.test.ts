// Regression tests of issue 11 (break test findings), against the real agent and dockerd.
// Finding 1, crash: two POSTs of a 2 KB YAML body of 1,000 nested `[` killed the agent (the yaml
// parser overflowed the stack, then V8's regexp compiler ran out of memory).
// Finding 2, UID takeover: a POSTed pod with a static pod's metadata.uid got 201, took over the
// static pod's containers, and its DELETE removed them. Two pods may never share a UID.
import { describe, expect, inject, it } from 'vitest';
import type { Pod, Status } from '../../src/shared/api.js';
import { busyboxPod, containersOf, isRunningAndReady, waitForPod, useTestNodes } from '../support/agent.js';

describe.skipIf(!inject('dockerAvailable'))('issue 11: break-test findings', () => {
  const start = useTestNodes();

  it("finding 2: a POSTed pod with a static pod's UID is refused with 409 AlreadyExists, and nothing else changes", async () => {
    const node = await start();
    await node.writeManifest('held.yaml', busyboxPod('held', 'exec sleep 3600'));
    const staticPod = await waitForPod(node, 'held', isRunningAndReady);
    const uid = staticPod.metadata!.uid!;
    const before = (await containersOf(uid)).map((c) => c.Id).sort();

    const takeover: Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'thief', namespace: 'default', uid },
      spec: { containers: [{ name: 'main', image: staticPod.spec!.containers[0].image, command: ['sleep', '3600'] }] },
    };
    const res = await node.api('/pods', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(takeover),
    });
    expect(res.status).toBe(409);
    const status = (await res.json()) as Status;
    expect(status).toMatchObject({ kind: 'Status', reason: 'AlreadyExists', code: 409 });
    expect(status.message).toContain(uid);

    const pods = node.agent.listPods();
    expect(pods.find((p) => p.metadata?.uid === uid)?.metadata?.name).toBe(staticPod.metadata!.name);
    expect(pods.some((p) => p.metadata?.name === 'thief')).toBe(false);
    // A DELETE of the refused name finds nothing to delete; the static pod's containers are the same.
    expect((await node.api('/pods/default/thief', { method: 'DELETE' })).status).toBe(404);
    expect((await containersOf(uid)).map((c) => c.Id).sort()).toEqual(before);
    expect((await waitForPod(node, 'held', isRunningAndReady)).status!.containerStatuses![0].restartCount).toBe(0);
  });

  it.each([
    ['1,000 nested [ (YAML)', '['.repeat(1000), 'application/yaml'],
    ['JSON nested 100,000 deep', '['.repeat(100_000) + ']'.repeat(100_000), 'application/json'],
    ['an undefined alias', 'apiVersion: v1\nkind: Pod\nmetadata: {name: *nope}\n', 'application/yaml'],
    [
      'a billion-laughs alias bomb',
      'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
      'application/yaml',
    ],
  ])('finding 1: a body of %s answers 400 with a Status, twice, and the agent stays healthy', async (_what, body, contentType) => {
    const node = await start();
    for (let i = 0; i < 2; i++) {
      const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': contentType }, body });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    }
    expect((await node.api('/healthz')).status).toBe(200);
  });
});

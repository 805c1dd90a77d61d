// Regression tests of issue 38 finding 10 (the smaller items), against the real agent and dockerd.
import { describe, expect, inject, it } from 'vitest';
import type { Pod, Status } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { busyboxPod, useTestNodes } from '../support/agent.js';

const json = { 'Content-Type': 'application/json' };
const apiPod = (name: string, meta: Partial<NonNullable<Pod['metadata']>> = {}, image = 'kubelet-ts/busybox:1.35'): Pod => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', ...meta },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 10: smaller items', () => {
  const start = useTestNodes();

  it('metadata.uid a_b_c is refused by every source with an error naming metadata.uid', async () => {
    const node = await start();
    const intake = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('uid-intake', { uid: 'a_b_c' })) });
    expect(intake.status).toBe(422);
    expect(((await intake.json()) as Status).message).toContain('metadata.uid: Invalid value: "a_b_c"');
    const kube = await node.api('/api/v1/namespaces/default/pods', { method: 'POST', headers: json, body: JSON.stringify(apiPod('uid-api', { uid: 'a/b' })) });
    expect(kube.status).toBe(422);
    expect(((await kube.json()) as Status).message).toContain('metadata.uid');
    await node.writeManifest('uid-file.yaml', busyboxPod('uid-file', 'sleep 3600').replace('  name: uid-file\n', '  name: uid-file\n  uid: a_b_c\n'));
    await waitFor(() => node.warnings.some((w) => String(w.file ?? '').endsWith('uid-file.yaml') && JSON.stringify(w).includes('metadata.uid')) || undefined,
      { timeoutMs: 30_000, intervalMs: 100, description: 'a warning naming uid-file.yaml and metadata.uid' });
    expect(node.agent.listPods()).toEqual([]);
  });
});

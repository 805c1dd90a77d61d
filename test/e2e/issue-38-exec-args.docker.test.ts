// Regression tests of issue 38, finding 7 (arguments the kernel cannot take), against the real agent
// and dockerd: a pod whose one argument (or env string) is over MAX_ARG_STRLEN wedged `runc create`;
// it is now refused at validation with a 422 Status naming the field, and nothing is created.
import { describe, expect, inject, it } from 'vitest';
import type { Status } from '../../src/shared/api.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { docker } from '../support/docker.js';

const kImage = 'kubelet-ts/busybox:1.35';
/** Under the 1 MiB request-body limit, and over 128 KiB (MAX_ARG_STRLEN) by far. */
const kBig = 'a'.repeat(1_000_000);

async function post(node: TestNode, pod: unknown): Promise<{ status: number; body: Status }> {
  const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pod) });
  return { status: res.status, body: (await res.json()) as Status };
}

const pod = (name: string, container: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { test: 'issue-38-exec-args' } },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: kImage, ...container }] },
});

describe.skipIf(!inject('dockerAvailable'))('issue 38 finding 7: arguments over what execve takes', () => {
  const start = useTestNodes();

  it.each([
    ['a 1 MB argument', { command: ['sh', '-c', 'sleep 3600', kBig] }, 'spec.containers[0].command[3]'],
    ['a 1 MB args entry', { command: ['echo'], args: ['ok', kBig] }, 'spec.containers[0].args[1]'],
    [
      'a 200 KB env value',
      {
        command: ['sleep', '3600'],
        env: [
          { name: 'A', value: 'x' },
          { name: 'BIG', value: 'b'.repeat(200_000) },
        ],
      },
      'spec.containers[0].env[1]',
    ],
  ])('%s: 422 naming the field, no pod and no container; the agent stays healthy', async (_what, container, field) => {
    const node = await start();
    const res = await post(node, pod('big-arg', container));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    expect(res.body.details?.causes?.map((c) => c.field)).toEqual([field]);
    expect(res.body.message).toContain('131072');
    expect((await node.api('/pods/default/big-arg')).status).toBe(404);
    const containers = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${node.nodeName}`] } });
    expect(containers).toEqual([]);
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it('an argument of exactly 131071 bytes (131072 with its NUL) is accepted', async () => {
    const node = await start();
    const res = await post(node, pod('max-arg', { command: ['sh', '-c', 'sleep 3600', 'x'.repeat(131_071)] }));
    expect(res.status).toBe(201);
  });
});

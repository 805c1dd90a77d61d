// Regression tests of issue 11, finding 5 (values), against the real agent and dockerd: values
// outside what the apiserver's types hold or the container runtime takes are refused with a Status
// naming the field, a pod for another node is refused, and a probe timeout past Node's timer limit
// (2^31-1 ms) does not fire at once.
import { describe, expect, inject, it } from 'vitest';
import type { Pod, PodList, Status } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { useTestNodes, type TestNode } from '../support/agent.js';

const kImage = 'kubelet-ts/busybox:1.35';

/** A pod as JSON text: the spec is spliced in raw, so that `1e308` and `2^64` reach the server as written. */
function podJson(name: string, spec: string): string {
  return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}","labels":{"test":"issue-11-values"}},"spec":${spec}}`;
}
const main = (extra = '') => `{"name":"main","image":"${kImage}","command":["sleep","3600"]${extra}}`;

async function post(node: TestNode, body: string): Promise<{ status: number; body: Status }> {
  const res = await node.api('/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  return { status: res.status, body: (await res.json()) as Status };
}

describe.skipIf(!inject('dockerAvailable'))('issue 11 finding 5: value ranges', () => {
  const start = useTestNodes();

  it.each([
    [
      'terminationGracePeriodSeconds 1e308',
      `{"terminationGracePeriodSeconds":1e308,"containers":[${main()}]}`,
      'spec.terminationGracePeriodSeconds',
    ],
    [
      'terminationGracePeriodSeconds 2^64',
      `{"terminationGracePeriodSeconds":18446744073709551616,"containers":[${main()}]}`,
      'spec.terminationGracePeriodSeconds',
    ],
    [
      'memory limit 1e20',
      `{"containers":[${main(',"resources":{"limits":{"memory":"1e20"}}')}]}`,
      'spec.containers[0].resources.limits[memory]',
    ],
    [
      'memory limit 1e400',
      `{"containers":[${main(',"resources":{"limits":{"memory":"1e400"}}')}]}`,
      'spec.containers[0].resources.limits[memory]',
    ],
    ['cpu limit 1e12', `{"containers":[${main(',"resources":{"limits":{"cpu":"1e12"}}')}]}`, 'spec.containers[0].resources.limits[cpu]'],
    ['command [null]', `{"containers":[{"name":"main","image":"${kImage}","command":[null]}]}`, 'spec.containers[0].command[0]'],
    [
      'probe timeoutSeconds 2^31',
      `{"containers":[${main(',"livenessProbe":{"exec":{"command":["true"]},"timeoutSeconds":2147483648}')}]}`,
      'spec.containers[0].livenessProbe.timeoutSeconds',
    ],
    ['spec.nodeName other-node', `{"nodeName":"other-node","containers":[${main()}]}`, 'spec.nodeName'],
  ])('%s: 422 with a Status naming the field; nothing stored; the agent stays healthy', async (_what, spec, field) => {
    const node = await start();
    const name = 'bad-value';
    const res = await post(node, podJson(name, spec));
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422 });
    expect(res.body.details?.causes?.map((c) => c.field)).toContain(field);
    expect(res.body.message).toContain(field);
    expect((await node.api(`/pods/default/${name}`)).status).toBe(404);
    expect((await node.api('/healthz')).status).toBe(200);
  });

  it('label selectors: an int64 overflow in Gt/Lt is a 400 naming labelSelector; `a in ()` is valid as in labels.Parse', async () => {
    const node = await start();
    for (const selector of ['a>99999999999999999999', 'a<-9223372036854775809']) {
      const res = await node.api(`/pods?labelSelector=${encodeURIComponent(selector)}`);
      expect(res.status).toBe(400);
      const status = (await res.json()) as Status;
      expect(status).toMatchObject({ kind: 'Status', code: 400 });
      expect(status.message).toContain(
        "labelSelector: unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer",
      );
    }
    const res = await node.api(`/pods?labelSelector=${encodeURIComponent('a in ()')}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as PodList).kind).toBe('PodList');
  });

  it('a liveness probe with timeoutSeconds 2147484 (past 2^31-1 ms) and a healthy target runs period after period without a restart', async () => {
    const node = await start();
    // exec: the probe writes a line to the container's stdout; httpGet: busybox httpd -vv logs each
    // answered request (`response:200`). Three failures in a row restart a container: what every
    // probe did before the fix, its timer firing after 1 ms (failureThreshold 3 tolerates a probe
    // that comes before httpd listens).
    const probe = (handler: string) => `"livenessProbe":{${handler},"periodSeconds":1,"timeoutSeconds":2147484,"failureThreshold":3}`;
    const spec = `{"terminationGracePeriodSeconds":1,"containers":[
      {"name":"exec","image":"${kImage}","command":["sleep","3600"],${probe('"exec":{"command":["sh","-c","echo probed > /proc/1/fd/1"]}')}},
      {"name":"http","image":"${kImage}","command":["sh","-c","mkdir -p /www && echo ok > /www/index.html && exec httpd -f -vv -p 8080 -h /www"],${probe('"httpGet":{"path":"/","port":8080}')}}]}`;
    const created = await post(node, podJson('long-timeout', spec));
    expect(created.status).toBe(201);
    const restarts = async () => {
      const pod = (await (await node.api('/pods/default/long-timeout')).json()) as Pod;
      return (pod.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
    };
    const logLines = async (container: string, pattern: RegExp) => {
      const res = await node.api(`/containerLogs/default/long-timeout/${container}`);
      return res.status === 200 ? (await res.text()).split('\n').filter((l) => pattern.test(l)).length : 0;
    };
    // Wait until each probe has run several times, or a container was restarted (the bug).
    await waitFor(
      async () => (await restarts()) > 0 || ((await logLines('exec', /^probed$/)) >= 4 && (await logLines('http', /response:200$/)) >= 4),
      {
        timeoutMs: 180_000,
        intervalMs: 500,
        description: 'four liveness probes of each container, or a restart',
      },
    );
    const events = (await (await node.api('/events')).json()) as { items: { reason?: string; involvedObject?: { name?: string } }[] };
    expect(events.items.filter((e) => e.involvedObject?.name === 'long-timeout' && e.reason === 'Killing')).toEqual([]);
    expect(await restarts()).toBe(0);
  }, 240_000);
});

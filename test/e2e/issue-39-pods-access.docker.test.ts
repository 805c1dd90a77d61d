// End-to-end (issue 39, items 6 and 9): the pod's own doors on the Kubernetes API path, as clients
// other than kubectl open them. Port-forward over plain WebSocket (`v4.channel.k8s.io`, ports in
// `?ports=`), driven by the official Python client's `kubernetes.stream.portforward`, and exec with
// its `kubernetes.stream.stream` (also `v4.channel.k8s.io`).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';
import type { Pod } from '../../src/shared/api.js';

const kTestMs = 120_000;

describe.skipIf(!inject('dockerAvailable') || !kHavePythonClient)('pods/portforward over WebSocket and exec, from the Python client (issue 39 item 6)', () => {
  let node: TestNode;
  let dir: string;
  const python = usePythonClient();

  const createPod = async (name: string, command: string, hostNetwork = false) => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
      spec: { hostNetwork, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }] },
    };
    const res = await node.api('/api/v1/namespaces/default/pods', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pod) });
    expect(res.status, await res.clone().text()).toBe(201);
    return waitFor(async () => {
      const r = await node.api(`/api/v1/namespaces/default/pods/${name}`);
      const p = r.status === 200 ? ((await r.json()) as Pod) : undefined;
      return p && isRunningAndReady(p) ? p : undefined;
    }, { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` });
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-pyaccess-'));
    const tokens = join(dir, 'tokens.csv');
    await writeFile(tokens, 'view-token-0123456789abcdef0123456789,viewer,2,"kubelet-ts:read-only"\n');
    node = await startTestNode({ tlsPort: 0, tokenAuthFile: tokens });
    await createPod('web', 'mkdir -p /www && echo hello-from-web > /www/index.html && exec httpd -f -p 8080 -h /www');
  }, kTestMs);
  afterAll(async () => {
    await node?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('kubernetes.stream.portforward reaches the pod port over v4.channel.k8s.io', async () => {
    const run = await python(node, `
import kts
from kubernetes.stream import portforward
pf = portforward(kts.core().connect_get_namespaced_pod_portforward, 'web', 'default', ports='8080')
s = pf.socket(8080)
s.setblocking(True)
s.sendall(b'GET /index.html HTTP/1.0\\r\\nHost: web\\r\\n\\r\\n')
data = b''
while True:
    c = s.recv(4096)
    if not c:
        break
    data += c
s.close()
kts.emit('response', text=data.decode(), error=pf.error(8080))
pf.close()
`);
    const r = await run.until((e) => e.event === 'response', 'the HTTP answer through the forward', 60_000);
    expect(String(r.text)).toMatch(/^HTTP\/1\.[01] 200 OK/);
    expect(String(r.text)).toContain('hello-from-web');
    expect(r.error).toBeNull();
  }, kTestMs);

  it('a user without pods/portforward is refused (403) over the same protocol', async () => {
    const run = await python(node, `
import kts
from kubernetes.stream import portforward
from kubernetes.client.rest import ApiException
try:
    portforward(kts.core().connect_get_namespaced_pod_portforward, 'web', 'default', ports='8080')
    kts.emit('opened')
except ApiException as e:
    kts.emit('refused', status=e.status, body=str(e.body or e.reason))
except Exception as e:
    kts.emit('refused', status=None, body=str(e))
`, { token: 'view-token-0123456789abcdef0123456789' });
    const r = await run.until((e) => e.event === 'refused' || e.event === 'opened', 'the refusal', 30_000);
    expect(r.event).toBe('refused');
    expect(String(r.body)).toMatch(/403|[Ff]orbidden/);
  }, kTestMs);

  it('kubernetes.stream.stream runs a command (exec, v4.channel.k8s.io) and returns its output', async () => {
    const run = await python(node, `
import kts
from kubernetes.stream import stream
out = stream(kts.core().connect_get_namespaced_pod_exec, 'web', 'default', command=['sh', '-c', 'echo exec-out; cat /www/index.html'], stderr=True, stdin=False, stdout=True, tty=False)
kts.emit('exec', out=out)
`);
    const r = await run.until((e) => e.event === 'exec', 'the exec output', 60_000);
    expect(r.out).toBe('exec-out\nhello-from-web\n');
  }, kTestMs);
});

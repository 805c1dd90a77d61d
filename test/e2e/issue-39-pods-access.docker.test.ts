// End-to-end (issue 39, items 6 and 9): the pod's own doors on the Kubernetes API path, as clients
// other than kubectl open them. Port-forward over plain WebSocket (`v4.channel.k8s.io`, ports in
// `?ports=`), driven by the official Python client's `kubernetes.stream.portforward`, and exec with
// its `kubernetes.stream.stream` (also `v4.channel.k8s.io`); the pod proxy
// (`pods/{name[:port]}/proxy/{path}`) and `nodes/{name}/status` with the real kubectl.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, startTestNode, type TestNode } from '../support/agent.js';
import { freePort } from '../support/agent-process.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';
import { kHavePythonClient, usePythonClient } from '../support/python-client.js';
import type { Pod } from '../../src/shared/api.js';

const kTestMs = 120_000;

describe.skipIf(!inject('dockerAvailable') || !kHavePythonClient || !kHaveKubectl)(
  'pods/portforward over WebSocket and exec from the Python client, pods/proxy and nodes/status from kubectl (issue 39 items 6, 9)',
  () => {
    let node: TestNode;
    let dir: string;
    let hostPort: number;
    const python = usePythonClient();
    const { kubectl } = kubectlFor(
      () => node,
      () => dir,
    );
    const kViewer = 'view-token-0123456789abcdef0123456789';

    const createPod = async (name: string, command: string, hostNetwork = false) => {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: 'default' },
        spec: {
          hostNetwork,
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sh', '-c', command] }],
        },
      };
      const res = await node.api('/api/v1/namespaces/default/pods', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(pod),
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return waitFor(
        async () => {
          const r = await node.api(`/api/v1/namespaces/default/pods/${name}`);
          const p = r.status === 200 ? ((await r.json()) as Pod) : undefined;
          return p && isRunningAndReady(p) ? p : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: `pod ${name} running` },
      );
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-pyaccess-'));
      const tokens = join(dir, 'tokens.csv');
      await writeFile(tokens, 'view-token-0123456789abcdef0123456789,viewer,2,"kubelet-ts:read-only"\n');
      node = await startTestNode({ tlsPort: 0, tokenAuthFile: tokens });
      hostPort = await freePort();
      await Promise.all([
        createPod('web', 'mkdir -p /www && echo hello-from-web > /www/index.html && exec httpd -f -p 8080 -h /www'),
        createPod(
          'hweb',
          `mkdir -p /tmp/www && echo hello-from-host > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:${hostPort} -h /tmp/www`,
          true,
        ),
        // Accepts a connection and never answers.
        createPod('mute', 'sleep 3600 | nc -l -p 9090'),
      ]);
    }, kTestMs);
    afterAll(async () => {
      await node?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it(
      'kubernetes.stream.portforward reaches the pod port over v4.channel.k8s.io',
      async () => {
        const run = await python(node, 'portforward_get.py', { args: ['web', 'default', '8080', '/index.html'] });
        const r = await run.until((e) => e.event === 'response', 'the HTTP answer through the forward', 60_000);
        expect(String(r.text)).toMatch(/^HTTP\/1\.[01] 200 OK/);
        expect(String(r.text)).toContain('hello-from-web');
        expect(r.error).toBeNull();
      },
      kTestMs,
    );

    it(
      'a user without pods/portforward is refused (403) over the same protocol',
      async () => {
        const run = await python(
          node,
          `
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
`,
          { token: 'view-token-0123456789abcdef0123456789' },
        );
        const r = await run.until((e) => e.event === 'refused' || e.event === 'opened', 'the refusal', 30_000);
        expect(r.event).toBe('refused');
        expect(String(r.body)).toMatch(/403|[Ff]orbidden/);
      },
      kTestMs,
    );

    it(
      'kubernetes.stream.stream runs a command (exec, v4.channel.k8s.io) and returns its output',
      async () => {
        const run = await python(
          node,
          `
import kts
from kubernetes.stream import stream
out = stream(kts.core().connect_get_namespaced_pod_exec, 'web', 'default', command=['sh', '-c', 'echo exec-out; cat /www/index.html'], stderr=True, stdin=False, stdout=True, tty=False)
kts.emit('exec', out=out)
`,
        );
        const r = await run.until((e) => e.event === 'exec', 'the exec output', 60_000);
        expect(r.out).toBe('exec-out\nhello-from-web\n');
      },
      kTestMs,
    );

    it(
      "kubectl get --raw …/pods/NAME:PORT/proxy/PATH reaches a pod on the pod network; a hostNetwork pod at the node's loopback is 400",
      async () => {
        const web = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/index.html']);
        expect(web.stderr).toBe('');
        expect(web.stdout).toBe('hello-from-web\n');
        // A hostNetwork pod's IP is the node's (--node-ip, 127.0.0.1 here): loopback is never dialed,
        // as the apiserver's ResourceLocation refuses it (proxyutil.IsProxyableIP).
        const host = await kubectl(['get', '--raw', `/api/v1/namespaces/default/pods/hweb:${hostPort}/proxy/index.html`]);
        expect(host.code).not.toBe(0);
        expect(host.stdout).not.toContain('hello-from-host');
        const direct = await node.api(`/api/v1/namespaces/default/pods/hweb:${hostPort}/proxy/index.html`);
        expect(direct.status).toBe(400);
        expect(((await direct.json()) as { message: string }).message).toContain('address not allowed');
        // HEAD: the pod's headers, no body; a path the pod does not have: the pod's own 404.
        const head = await node.api('/api/v1/namespaces/default/pods/web:8080/proxy/index.html', { method: 'HEAD' });
        expect(head.status).toBe(200);
        expect(head.headers.get('content-length')).toBe('15');
        expect(await head.text()).toBe('');
        const missing = await node.api('/api/v1/namespaces/default/pods/web:8080/proxy/nothing-here');
        expect(missing.status).toBe(404);
        expect(await missing.text()).not.toContain('"kind":"Status"');
      },
      kTestMs,
    );

    it(
      'pods/proxy is authorized as pods/proxy: a user without it gets 403 naming it',
      async () => {
        const r = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/index.html'], { token: kViewer });
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(/Forbidden|forbidden/);
        const direct = await node.api('/api/v1/namespaces/default/pods/web:8080/proxy/index.html', {
          headers: { Authorization: `Bearer ${kViewer}` },
        });
        expect(direct.status).toBe(403);
        expect(((await direct.json()) as { message: string }).message).toContain('pods/proxy');
      },
      kTestMs,
    );

    it(
      'a refused or silent target gets 503 ServiceUnavailable; a bad name or https gets 400; an unknown pod 404',
      async () => {
        const refused = await node.api('/api/v1/namespaces/default/pods/web:8081/proxy/');
        expect(refused.status).toBe(503);
        expect(((await refused.json()) as { message: string }).message).toContain('error trying to reach service');
        const silent = await node.api('/api/v1/namespaces/default/pods/mute:9090/proxy/');
        expect(silent.status).toBe(503);
        expect(((await silent.json()) as { message: string }).message).toMatch(/no response from .* within/);
        expect((await node.api('/api/v1/namespaces/default/pods/https:web:8080/proxy/')).status).toBe(400);
        expect((await node.api('/api/v1/namespaces/default/pods/web:http/proxy/')).status).toBe(400);
        expect((await node.api('/api/v1/namespaces/default/pods/nope:8080/proxy/')).status).toBe(404);
      },
      kTestMs,
    );

    it(
      'kubectl get --raw /api/v1/nodes/NAME/status answers the Node; writes of it are refused by name (405)',
      async () => {
        const r = await kubectl(['get', '--raw', `/api/v1/nodes/${node.nodeName}/status`]);
        expect(r.stderr).toBe('');
        const n = JSON.parse(r.stdout) as { kind: string; metadata: { name: string }; status: { conditions: unknown[] } };
        expect(n.kind).toBe('Node');
        expect(n.metadata.name).toBe(node.nodeName);
        expect(n.status.conditions.length).toBeGreaterThan(0);
        const patch = await node.api(`/api/v1/nodes/${node.nodeName}/status`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/merge-patch+json' },
          body: '{}',
        });
        expect(patch.status).toBe(405);
        expect(((await patch.json()) as { message: string }).message).toContain('written by this node');
        expect((await node.api('/api/v1/nodes/other-node/status')).status).toBe(404);
      },
      kTestMs,
    );
  },
);

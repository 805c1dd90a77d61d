// End-to-end (issue 15): the REAL `kubectl port-forward` (v1.32: SPDY/3.1 tunnelled over a
// WebSocket, sub-protocol SPDY/3.1+portforward.k8s.io) against a test agent whose pods have no
// network at all (--network-plugin none): HTTP to a server bound to the pod's own 127.0.0.1,
// an echo with a half-close both ways, several connections at once, the kubelet's error text for
// a port nothing listens on, and a read-only identity refused; then `kubectl cordon`, `uncordon`
// and `drain` (cordon, then evict the pod) against the same node, last, as drain removes the pod.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kKubectl, kubectlFor, type KubectlRunning } from '../support/kubectl.js';

const kTestMs = 120_000;
const kViewerToken = 'view-token-0123456789abcdef0123456789';
if (!kHaveKubectl) console.warn(`issue-15-kubectl-node: skipped: ${kKubectl} is not installed`);

/** get: one HTTP GET on its own connection (no keep-alive), its status and body. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

/** echo: sends `data` on a new connection, half-closes, and resolves with all it read until the far end closed. */
function echo(port: number, data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true }, () => s.end(data));
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
  });
}

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)(
  'kubectl port-forward into a network-none pod, cordon and drain (issue 15)',
  () => {
    let node: TestNode;
    let dir: string;
    const running: KubectlRunning[] = [];
    const { kubectl, background } = kubectlFor(
      () => node,
      () => dir,
    );

    /** forward starts `kubectl port-forward pod/pf :P…` and resolves with the local port of each remote one. */
    const forward = async (remotes: number[], token?: string) => {
      const pf = background(['port-forward', 'pod/pf', ...remotes.map((p) => `:${p}`)], { token });
      running.push(pf);
      const local = new Map<number, number>();
      await waitFor(
        () => {
          for (const m of pf.out().matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)) local.set(Number(m[2]), Number(m[1]));
          return local.size === remotes.length;
        },
        { timeoutMs: 30_000, description: 'kubectl port-forward ready' },
      ).catch((err: Error) => {
        throw new Error(`${err.message}; kubectl stdout ${JSON.stringify(pf.out())}, stderr ${JSON.stringify(pf.err())}`);
      });
      return { pf, local };
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-kubectl-pf-'));
      const tokens = join(dir, 'tokens.csv');
      await writeFile(tokens, `${kViewerToken},viewer,2,"kubelet-ts:read-only"\n`);
      // --network-plugin none: the pod's sandbox has network `none`, so port-forward is its only way in.
      node = await startTestNode({ tokenAuthFile: tokens, tlsPort: 0, networkPlugin: 'none' });
      const file = join(dir, 'pf.yaml');
      await writeFile(
        file,
        `apiVersion: v1
kind: Pod
metadata: {name: pf, labels: {test: kubectl-pf-${process.pid}}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: web
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      command: [sh, -c, "mkdir -p /www && echo pf-body > /www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /www"]
      readinessProbe: {exec: {command: [wget, -q, -O, /dev/null, "http://127.0.0.1:8080/"]}, periodSeconds: 1}
    - name: echo
      image: ${BUSYBOX_IMAGE}
      imagePullPolicy: Never
      command: [nc, -ll, -p, "9090", -e, cat]
      readinessProbe: {tcpSocket: {port: 9090}, periodSeconds: 1}
`,
      );
      const created = await kubectl(['create', '-f', file]);
      expect(created.stdout).toBe('pod/pf created\n');
      const ready = await kubectl(['wait', '--for=condition=Ready', 'pod/pf', '--timeout=90s']);
      expect(ready.stdout).toBe('pod/pf condition met\n');
    }, kTestMs);
    afterAll(async () => {
      for (const pf of running) await pf.stop();
      await node?.cleanup();
      if (dir) await rm(dir, { recursive: true, force: true });
    }, kTestMs);

    it(
      "forwards HTTP to a server on the pod's own localhost and echoes bytes through a half-close, many connections at once",
      async () => {
        const { pf, local } = await forward([8080, 9090]);
        for (let i = 0; i < 3; i++) expect(await get(local.get(8080)!, '/')).toEqual({ status: 200, body: 'pf-body\n' });
        const many = await Promise.all(Array.from({ length: 6 }, () => get(local.get(8080)!, '/index.html')));
        expect(many.every((r) => r.status === 200 && r.body === 'pf-body\n')).toBe(true);
        // The client's FIN reaches `cat` as EOF; it exits, and its end comes back as the stream's end.
        // 4 MiB: past SPDY's 64 KiB stream window, which kubectl never replenishes, and past the 1 MiB at
        // which an upload once broke the agent's TLS (both in spdy-tunnel.ts).
        const payloads = Array.from({ length: 4 }, (_, i) => randomBytes(i === 0 ? 4 << 20 : 1000 + i));
        const echoed = await Promise.all(payloads.map((p) => echo(local.get(9090)!, p)));
        echoed.forEach((e, i) => expect(e.equals(payloads[i])).toBe(true));
        expect(pf.err()).toBe('');
        expect(pf.out()).toContain(`Handling connection for ${local.get(8080)}\n`); // kubectl names the local port
      },
      kTestMs,
    );

    it(
      "a port nothing listens on: kubectl prints the kubelet's error and the local connection is closed",
      async () => {
        const { pf, local } = await forward([7070]);
        const s = net.connect({ host: '127.0.0.1', port: local.get(7070)! });
        s.on('error', () => {});
        await new Promise<void>((resolve) => s.on('close', () => resolve()));
        await waitFor(() => pf.err().includes('error forwarding port 7070 to pod'), {
          timeoutMs: 30_000,
          description: "the error on kubectl's stderr",
        }).catch(() => {});
        expect(pf.err()).toMatch(
          /an error occurred forwarding \d+ -> 7070: error forwarding port 7070 to pod [0-9a-f]{64}, uid [0-9a-f-]+: .*connection refused/,
        );
      },
      kTestMs,
    );

    it(
      'a read-only identity may not port-forward',
      async () => {
        const r = await kubectl(['port-forward', 'pod/pf', ':8080'], { token: kViewerToken });
        expect(r.code).toBe(1);
        expect(r.stdout).not.toContain('Forwarding from');
        expect(r.stderr).toMatch(/forbidden|403/i);
      },
      kTestMs,
    );

    it('cordon and uncordon change spec.unschedulable; drain cordons and evicts the pod', async () => {
      const name = node.nodeName;
      expect(await kubectl(['cordon', name])).toMatchObject({ code: 0, stdout: `node/${name} cordoned\n` });
      expect((await kubectl(['get', 'nodes'])).stdout).toMatch(new RegExp(`^${name}\\s+Ready,SchedulingDisabled\\s`, 'm'));
      expect((await kubectl(['get', 'node', name, '-o', 'jsonpath={.spec.taints[0].key}'])).stdout).toBe(
        'node.kubernetes.io/unschedulable',
      );
      // The pod keeps running: a cordon only keeps a scheduler away, and the kubelet admits bound pods.
      expect((await kubectl(['get', 'pod', 'pf', '-o', 'jsonpath={.status.phase}'])).stdout).toBe('Running');
      expect(await kubectl(['uncordon', name])).toMatchObject({ code: 0, stdout: `node/${name} uncordoned\n` });
      expect((await kubectl(['get', 'nodes'])).stdout).toMatch(new RegExp(`^${name}\\s+Ready\\s`, 'm'));
      const viewer = await kubectl(['cordon', name], { token: kViewerToken });
      // kubectl cordon prints the refusal but exits 0 (it reports per node); the node stays schedulable.
      expect(viewer.stderr).toContain(
        `unable to cordon node "${name}": nodes "${name}" is forbidden: User "viewer" cannot patch resource "nodes" in API group "" at the cluster scope`,
      );
      expect((await kubectl(['get', 'node', name, '-o', 'jsonpath={.spec.unschedulable}'])).stdout).toBe('');

      for (const pf of running.splice(0)) await pf.stop(); // drain waits for the pod; forwards would hold it
      const drain = await kubectl(['drain', name, '--force', '--timeout=90s']);
      expect(drain.stderr).toBe('Warning: deleting Pods that declare no controller: default/pf\n'); // --force's warning, as with an apiserver
      expect(drain.stdout).toContain(`node/${name} cordoned`);
      expect(drain.stdout).toContain('evicting pod default/pf');
      expect(drain.stdout).toContain(`node/${name} drained`);
      expect(drain.code).toBe(0);
      expect((await kubectl(['get', 'pod', 'pf'])).stderr).toContain('pods "pf" not found');
      expect((await kubectl(['get', 'node', name, '-o', 'jsonpath={.spec.unschedulable}'])).stdout).toBe('true');
    }, 180_000);
  },
);

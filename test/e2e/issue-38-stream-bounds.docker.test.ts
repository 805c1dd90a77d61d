// End-to-end (issue 38, finding F6): the streaming pool has a bound per user. Before, a user bound
// to `edit` in team-a alone could hold every exec stream of the node (256 idle `cat`s) and the
// admin's exec then got 429 for up to the 4 h idle timeout. Now, against a real agent with real
// Docker and the real kubectl, that user's stream past --max-streams-per-user is answered 429
// TooManyRequests with Retry-After naming the user's bound, while the admin (system:masters, not
// bounded per user) still execs into the same pod, over the WebSocket and with kubectl.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { createNamespacedSleeper, kHaveKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 150_000;
const kBob = 'bob-token-0123456789abcdef01234567890';
const kPerUser = 3;

const kPolicy = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: bob-edit, namespace: team-a}
subjects: [{kind: User, name: bob, apiGroup: rbac.authorization.k8s.io}]
roleRef: {kind: ClusterRole, name: edit, apiGroup: rbac.authorization.k8s.io}
`;

/** Upgrade: an exec WebSocket held open (101), or the refusal's status, Retry-After and body. */
type Upgrade = { code: 101; ws: WebSocket } | { code: number; retryAfter: string | undefined; body: string };

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('stream bounds per user (issue 38, F6)', () => {
  const start = useTestNodes();
  let node: TestNode;
  let dir: string | undefined;
  const open: WebSocket[] = [];
  const { kubectl } = kubectlFor(
    () => node,
    () => dir!,
  );

  afterEach(async () => {
    for (const ws of open.splice(0)) ws.terminate();
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  /** execCat opens the API's exec of an idle `cat` (stdin open) into team-a/web with `token`. */
  const execCat = (token: string) =>
    new Promise<Upgrade>((resolve, reject) => {
      const path = '/api/v1/namespaces/team-a/pods/web/exec?container=main&command=cat&stdin=true&stdout=true';
      const ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}${path}`, ['v5.channel.k8s.io'], {
        headers: { Authorization: `Bearer ${token}` },
      });
      open.push(ws);
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }));
      });
      ws.on('open', () => resolve({ code: 101, ws }));
      ws.on('error', (err) => {
        if (!String(err).includes('Unexpected server response')) reject(err);
      });
    });

  it(
    "refuses an edit user's stream past --max-streams-per-user with 429, while the admin still execs",
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-streams-'));
      await writeFile(join(dir, 'tokens.csv'), `${kBob},bob,12\n`);
      await writeFile(join(dir, 'policy.yaml'), kPolicy);
      node = await start({
        tokenAuthFile: join(dir, 'tokens.csv'),
        authorizationPolicyFile: join(dir, 'policy.yaml'),
        tlsPort: 0,
        networkPlugin: 'none',
        maxStreamsPerUser: kPerUser,
      });
      await createNamespacedSleeper(kubectl, dir, 'team-a', 'web', BUSYBOX_IMAGE);

      for (let i = 0; i < kPerUser; i++) expect((await execCat(kBob)).code).toBe(101);
      const over = await execCat(kBob);
      expect(over).toMatchObject({ code: 429, retryAfter: '1' });
      expect(JSON.parse((over as { body: string }).body)).toMatchObject({
        kind: 'Status',
        code: 429,
        reason: 'TooManyRequests',
        message: `too many streams: user "bob" has ${kPerUser} open, the most allowed (--max-streams-per-user=${kPerUser}); close one and try again`,
      });

      // The admin is not bounded per user: a WebSocket exec into the same pod, and kubectl's.
      expect((await execCat(node.adminToken())).code).toBe(101);
      expect(await kubectl(['exec', '-n', 'team-a', 'web', '--', 'echo', 'admin-ok'])).toMatchObject({ code: 0, stdout: 'admin-ok\n' });
      // Bob gets back in once one of his streams ends.
      const first = open[0];
      await new Promise<void>((resolve) => {
        first.once('close', () => resolve());
        first.close();
      });
      await waitFor(
        async () => {
          const again = await execCat(kBob);
          return again.code === 101;
        },
        { timeoutMs: 10_000, description: "bob's stream admitted again after one closed" },
      );
    },
    kTestMs,
  );
});

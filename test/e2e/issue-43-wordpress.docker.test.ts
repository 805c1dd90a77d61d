// End-to-end (issue 43, Done-when): the Kubernetes documentation's WordPress-and-MySQL example
// (kubernetes/website content/en/examples/application/wordpress/mysql-deployment.yaml and
// wordpress-deployment.yaml, with the tutorial's kustomization and its Secret generator) on a lone
// node, with the REAL kubectl over TLS and the real Docker. kubelet-ts runs Pods, claims and Secrets,
// not Deployments or Services: test/fixtures/wordpress/ holds the example's own claims, and each
// Deployment's pod template as a Pod named as the Deployment (Services left out), with the images
// replaced by the local busybox running a shell that stands in for the server (see the fixtures).
// `kubectl apply -k` makes the Secret (name with kustomize's hash), both claims (Bound) and both
// pods (Running, reading the password from the Secret); the servers initialize their data under the
// example's mount paths; both pods are deleted and applied again, and find their data kept.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { waitFor } from '../support/docker.js';
import { startTestNode, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kKubectl, kubectlFor } from '../support/kubectl.js';

const kTestMs = 240_000;
const kExample = fileURLToPath(new URL('../fixtures/wordpress', import.meta.url));
/** The password the tutorial's kustomization generates the `mysql-pass` Secret with. */
const kPassword = 'YOUR_PASSWORD';
const kClaims = ['mysql-pv-claim', 'wp-pv-claim'];
if (!kHaveKubectl) console.warn(`issue-43-wordpress: skipped: ${kKubectl} is not installed`);

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)(
  "the documentation's wordpress-mysql example on a lone node with the real kubectl (issue 43)",
  () => {
    let node: TestNode;
    let dir: string;
    const { kubectl } = kubectlFor(
      () => node,
      () => dir,
    );
    const ok = async (args: string[]) => {
      const r = await kubectl(args);
      expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
      expect(r.code).toBe(0);
      return r.stdout;
    };
    const jsonpath = async (args: string[], path: string) => (await kubectl([...args, '-o', `jsonpath=${path}`])).stdout;
    const logs = async (pod: string) => (await kubectl(['logs', pod])).stdout;
    const cat = async (pod: string, file: string) => ok(['exec', pod, '--', 'cat', file]);
    /** claimDirs: the local-path directories of the example's claims under the node's root dir. */
    const claimDirs = async () =>
      (await readdir(join(node.rootDir, 'local-path')).catch(() => [] as string[]))
        .filter((d) => kClaims.some((c) => d.endsWith(`_default_${c}`)))
        .sort();
    /** bothRunning: both pods Running with their servers up (their logs say so). */
    const bothRunning = async () => {
      for (const pod of ['wordpress-mysql', 'wordpress']) {
        await waitFor(async () => (await jsonpath(['get', 'pod', pod], '{.status.phase}')) === 'Running', {
          timeoutMs: 90_000,
          description: `${pod} Running`,
        });
      }
      await waitFor(async () => (await logs('wordpress-mysql')).includes('ready for connections\n'), {
        timeoutMs: 30_000,
        description: 'mysql ready',
      });
      await waitFor(async () => (await logs('wordpress')).includes('serving\n'), { timeoutMs: 30_000, description: 'wordpress serving' });
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-wordpress-'));
      node = await startTestNode({ tlsPort: 0 });
    }, kTestMs);
    afterAll(async () => {
      try {
        if (node) {
          // The example's objects deleted: the pods first, then the claims, whose directories go with them.
          await kubectl(['delete', '-k', kExample, '--ignore-not-found', '--wait=true']);
          await waitFor(async () => (await claimDirs()).length === 0, {
            timeoutMs: 60_000,
            description: "the claims' directories removed",
          });
        }
      } finally {
        await node?.cleanup();
        if (dir) await rm(dir, { recursive: true, force: true });
      }
    }, kTestMs);

    it(
      "apply -k runs both PVC-backed pods with the Secret's password; their data outlives a delete and re-create of both pods",
      async () => {
        const applied = await ok(['apply', '-k', kExample]);
        expect(applied).toMatch(/^secret\/mysql-pass-[a-z0-9]{10} created$/m);
        for (const c of kClaims) expect(applied).toContain(`persistentvolumeclaim/${c} created\n`);
        for (const p of ['wordpress-mysql', 'wordpress']) expect(applied).toContain(`pod/${p} created\n`);

        // Both claims Bound to a node-local directory (storage class local-path, the example's 20Gi).
        const table = await ok(['get', 'pvc']);
        for (const c of kClaims) expect(table).toMatch(new RegExp(`\\n${c}\\s+Bound\\s+20Gi\\s+RWO\\s+local-path\\s`));
        await bothRunning();

        // The servers initialized their data under the example's mount paths, with the Secret's password.
        expect(await logs('wordpress-mysql')).toContain('Initializing database wordpress\n');
        expect(await logs('wordpress')).toContain('WordPress not found in /var/www/html - copying now...\n');
        const database = await cat('wordpress-mysql', '/var/lib/mysql/ibdata1');
        expect(database).toMatch(new RegExp(`^root:${kPassword} wordpress:${kPassword} [0-9a-f-]{36}\\n$`));
        const site = await cat('wordpress', '/var/www/html/index.php');
        expect(site).toMatch(/^<\?php \/\* [0-9a-f-]{36} \*\/\n$/);
        expect(await cat('wordpress', '/var/www/html/wp-config.php')).toBe(
          `define('DB_HOST', 'wordpress-mysql'); define('DB_USER', 'wordpress'); define('DB_PASSWORD', '${kPassword}');\n`,
        );
        const dirs = await claimDirs();
        expect(dirs).toHaveLength(2);
        const uids = [
          await jsonpath(['get', 'pod', 'wordpress-mysql'], '{.metadata.uid}'),
          await jsonpath(['get', 'pod', 'wordpress'], '{.metadata.uid}'),
        ];

        // Both pods deleted (as the Deployments' Recreate strategy would) and the example applied again.
        expect(await ok(['delete', 'pod', 'wordpress-mysql', 'wordpress'])).toBe(
          'pod "wordpress-mysql" deleted\npod "wordpress" deleted\n',
        );
        expect((await kubectl(['get', 'pod', 'wordpress-mysql', 'wordpress', '-o', 'name', '--ignore-not-found'])).stdout).toBe('');
        const again = await ok(['apply', '-k', kExample]);
        // The Secret reads `configured`, not `unchanged`: the agent never answers a Secret's data (docs/contracts.md),
        // so kubectl's three-way diff always sends it again; the value is the same (checked below).
        expect(again).toMatch(/^secret\/mysql-pass-[a-z0-9]{10} configured$/m);
        for (const c of kClaims) expect(again).toContain(`persistentvolumeclaim/${c} unchanged\n`);
        for (const p of ['wordpress-mysql', 'wordpress']) expect(again).toContain(`pod/${p} created\n`);
        await bothRunning();
        const newUids = [
          await jsonpath(['get', 'pod', 'wordpress-mysql'], '{.metadata.uid}'),
          await jsonpath(['get', 'pod', 'wordpress'], '{.metadata.uid}'),
        ];
        expect(newUids.filter((u) => u !== '' && !uids.includes(u))).toHaveLength(2);

        // The new pods found the data the first ones wrote: nothing initialized again.
        expect(await logs('wordpress-mysql')).toContain('Database files found: skipping initialization\n');
        expect(await logs('wordpress')).toContain('WordPress found in /var/www/html: keeping it\n');
        expect(await cat('wordpress-mysql', '/var/lib/mysql/ibdata1')).toBe(database);
        expect(await cat('wordpress', '/var/www/html/index.php')).toBe(site);
        expect(await claimDirs()).toEqual(dirs);
        expect(await ok(['exec', 'wordpress-mysql', '--', 'sh', '-c', 'echo "$MYSQL_ROOT_PASSWORD"'])).toBe(`${kPassword}\n`);
        expect(await ok(['exec', 'wordpress', '--', 'sh', '-c', 'echo "$WORDPRESS_DB_PASSWORD"'])).toBe(`${kPassword}\n`);
        for (const c of kClaims) expect(await jsonpath(['get', 'pvc', c], '{.status.phase}')).toBe('Bound');
      },
      kTestMs,
    );
  },
);

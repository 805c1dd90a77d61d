// `kubelet-ts kubeconfig`: the kubeconfig it prints (its use by the real kubectl is in test/e2e/issue-15-kubectl.docker.test.ts).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildKubeconfig } from '../../src/cli/kubeconfig.js';
import { runCli } from '../../src/main/cli.js';

describe('buildKubeconfig', () => {
  it('names cluster, user and context after the node and embeds the CA', () => {
    const kc = buildKubeconfig({ server: 'https://127.0.0.1:10443', token: 't0k', nodeName: 'n1', caPem: 'PEM', insecure: false });
    expect(kc).toMatchObject({
      kind: 'Config',
      'current-context': 'n1',
      clusters: [
        { name: 'n1', cluster: { server: 'https://127.0.0.1:10443', 'certificate-authority-data': Buffer.from('PEM').toString('base64') } },
      ],
      users: [{ name: 'n1-admin', user: { token: 't0k' } }],
      contexts: [{ name: 'n1', context: { cluster: 'n1', user: 'n1-admin', namespace: 'default' } }],
    });
    expect(buildKubeconfig({ server: 's', token: '', nodeName: 'n', insecure: true }).clusters).toEqual([
      { name: 'n', cluster: { server: 's', 'insecure-skip-tls-verify': true } },
    ]);
  });
});

describe('kubelet-ts kubeconfig --insecure-skip-tls-verify (issue #38: no credential for an unauthenticated server)', () => {
  it("leaves the admin token found on disk out, with a warning; an explicit --token stays the user's choice", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kts-kubeconfig-'));
    try {
      await writeFile(join(dir, 'admin.token'), `${'a'.repeat(43)}\n`, { mode: 0o600 });
      const run = async (...extra: string[]) => {
        const out = { stdout: '', stderr: '' };
        await runCli(
          ['kubeconfig', '--server', 'https://127.0.0.1:1', '--root-dir', dir, '--insecure-skip-tls-verify', '--node-name', 'n', ...extra],
          {},
          { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t), exit: () => {} },
        );
        return out;
      };
      const found = await run();
      expect(found.stdout).toContain('insecure-skip-tls-verify: true');
      expect(found.stdout).not.toContain('a'.repeat(43));
      expect(found.stderr).toContain('is left out');
      expect((await run('--token', 'explicit-token')).stdout).toContain('explicit-token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

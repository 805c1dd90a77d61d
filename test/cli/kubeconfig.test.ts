// `kubelet-ts kubeconfig`: the kubeconfig it prints (its use by the real kubectl is in test/e2e/issue-15-kubectl.docker.test.ts).
import { describe, expect, it } from 'vitest';
import { buildKubeconfig } from '../../src/cli/kubeconfig.js';

describe('buildKubeconfig', () => {
  it('names cluster, user and context after the node and embeds the CA', () => {
    const kc = buildKubeconfig({ server: 'https://127.0.0.1:10443', token: 't0k', nodeName: 'n1', caPem: 'PEM', insecure: false });
    expect(kc).toMatchObject({
      kind: 'Config', 'current-context': 'n1',
      clusters: [{ name: 'n1', cluster: { server: 'https://127.0.0.1:10443', 'certificate-authority-data': Buffer.from('PEM').toString('base64') } }],
      users: [{ name: 'n1-admin', user: { token: 't0k' } }],
      contexts: [{ name: 'n1', context: { cluster: 'n1', user: 'n1-admin', namespace: 'default' } }],
    });
    expect(buildKubeconfig({ server: 's', token: '', nodeName: 'n', insecure: true }).clusters).toEqual([{ name: 'n', cluster: { server: 's', 'insecure-skip-tls-verify': true } }]);
  });
});

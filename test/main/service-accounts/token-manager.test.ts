// The node's token manager (#43 item 1): cached tokens refreshed at 80 % of their life (the
// kubelet's token_manager.go requiresRefresh), the signing key kept 0600 under the root dir, and
// what a pod's sync gets (tokens of its serviceAccountToken sources, kube-root-ca.crt, the API endpoint).
import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { realClock } from '../../../src/shared/clock.js';
import { admitServiceAccount } from '../../../src/shared/service-account-admission.js';
import { checkToken, kServiceAccountIssuer } from '../../../src/server/auth/service-account-tokens.js';
import {
  ensureServiceAccountKey,
  kServiceAccountKeyFile,
  newTokenManager,
  requiresRefresh,
} from '../../../src/main/service-accounts/token-manager.js';
import { newNodeServiceAccounts } from '../../../src/main/service-accounts/node-service-accounts.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kts-sa-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const req = { namespace: 'default', serviceAccount: { name: 'default', uid: 'u' }, pod: { name: 'p', uid: 'pu' }, expirationSeconds: 1000 };

describe('token manager', () => {
  it('requiresRefresh: from 80 % of the life on, or past 24 h', () => {
    expect(requiresRefresh(0, 1000_000, 799_999)).toBe(false);
    expect(requiresRefresh(0, 1000_000, 800_000)).toBe(true);
    expect(requiresRefresh(0, 10 * 86_400_000, 86_400_001)).toBe(true);
  });

  it("hands out the same token until 80 % of its life, then a new one; drops a pod's tokens on request", async () => {
    const { privateKey } = await ensureServiceAccountKey(dir);
    let now = Date.parse('2026-12-07T12:00:00Z');
    const m = newTokenManager(privateKey, { ...realClock, now: () => now });
    const first = m.getToken(req);
    now += 799_000;
    expect(m.getToken(req)).toBe(first);
    now += 1_000;
    const second = m.getToken(req);
    expect(second).not.toBe(first);
    expect(m.getToken({ ...req, audiences: ['x'] })).not.toBe(second);
    expect(m.size).toBe(2);
    m.deletePodTokens('pu');
    expect(m.size).toBe(0);
  });

  it('two starts on a fresh root dir at the same moment end with one key, the one on disk (break-46)', async () => {
    const [a, b, c] = await Promise.all([ensureServiceAccountKey(dir), ensureServiceAccountKey(dir), ensureServiceAccountKey(dir)]);
    const pem = (k: typeof a) => k.publicKey.export({ type: 'spki', format: 'pem' });
    expect(pem(b)).toBe(pem(a));
    expect(pem(c)).toBe(pem(a));
    expect(pem(await ensureServiceAccountKey(dir))).toBe(pem(a));
    expect((await readdir(join(dir, 'pki'))).sort()).toEqual(['service-account.key']);
  });

  it('keeps the signing key 0600 under the root dir across restarts, and refuses one others may read', async () => {
    const a = await ensureServiceAccountKey(dir);
    expect(a.path).toBe(join(dir, kServiceAccountKeyFile));
    expect((await stat(a.path)).mode & 0o777).toBe(0o600);
    const b = await ensureServiceAccountKey(dir);
    expect(b.publicKey.export({ type: 'spki', format: 'pem' })).toBe(a.publicKey.export({ type: 'spki', format: 'pem' }));
    await chmod(a.path, 0o644);
    await expect(ensureServiceAccountKey(dir)).rejects.toThrow(
      /service-account.key: the service account signing key must not be readable by group or others/,
    );
  });

  it("a pod's sync gets a new token once 80 % of the last one's life has passed (3607 s: after 2885.6 s); the old one works until it expires", async () => {
    let now = Date.parse('2026-12-07T12:00:00Z');
    const sa = await newNodeServiceAccounts({
      rootDir: dir,
      logger: pino({ level: 'silent' }),
      pod: () => ({ uid: 'pu', serviceAccountName: 'default' }),
      clock: { ...realClock, now: () => now },
    });
    const pod = admitServiceAccount(
      { metadata: { name: 'p', namespace: 'default', uid: 'pu' }, spec: { containers: [{ name: 'c', image: 'i' }] } } as Pod,
      { volumeName: 'kube-api-access-abcde' },
    );
    const tokenAt = () => sa.configObjectsFor(pod, undefined)!.serviceAccountTokens!['kube-api-access-abcde/0'];
    const first = tokenAt();
    now += 2_885_000;
    expect(tokenAt()).toBe(first);
    now += 1_000;
    const second = tokenAt();
    expect(second).not.toBe(first);
    expect(sa.authenticator.authenticateToken(first)).toBeDefined();
    now += 3607_000 - 2_886_000;
    expect(sa.authenticator.authenticateToken(first)).toBeUndefined();
    expect(sa.authenticator.authenticateToken(second)).toBeDefined();
  });

  it("gives an admitted pod's sync its token, kube-root-ca.crt and, for a hostNetwork pod, the API endpoint; the token checks against the live pod", async () => {
    const pods = new Map<string, { uid: string; serviceAccountName: string }>([
      ['default/p', { uid: 'pu', serviceAccountName: 'default' }],
    ]);
    const sa = await newNodeServiceAccounts({ rootDir: dir, logger: pino({ level: 'silent' }), pod: (ns, n) => pods.get(`${ns}/${n}`) });
    sa.setApi({ caPem: 'CA-PEM', address: '127.0.0.1', tlsPort: () => 10250, gateway: '10.222.0.1', onPodNetwork: true });
    const pod = admitServiceAccount(
      {
        metadata: { name: 'p', namespace: 'default', uid: 'pu' },
        spec: { hostNetwork: true, containers: [{ name: 'c', image: 'i' }] },
      } as Pod,
      { volumeName: 'kube-api-access-abcde' },
    );
    const objects = sa.configObjectsFor(pod, undefined)!;
    expect(objects.configMaps['kube-root-ca.crt']?.data).toEqual({ 'ca.crt': 'CA-PEM' });
    expect(objects.kubernetesService).toEqual({ host: '127.0.0.1', port: 10250 });
    const token = objects.serviceAccountTokens!['kube-api-access-abcde/0'];
    expect(sa.authenticator.authenticateToken(token)?.name).toBe('system:serviceaccount:default:default');
    pods.delete('default/p');
    expect(sa.authenticator.authenticateToken(token)).toBeUndefined();
    // A pod on the pod network gets no endpoint while the API listens on loopback only.
    const bridged = admitServiceAccount({
      metadata: { name: 'q', namespace: 'default', uid: 'qu' },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    } as Pod);
    expect(sa.configObjectsFor(bridged, undefined)?.kubernetesService).toBeUndefined();
    expect(
      checkToken(token, (await ensureServiceAccountKey(dir)).publicKey, [kServiceAccountIssuer], {
        pod: () => ({ uid: 'pu', serviceAccountName: 'default' }),
        serviceAccountUid: () => sa.serviceAccountUid('default', 'default'),
      }),
    ).toMatchObject({ ok: true });
  });
});

// admitApiPods (src/server/routes/intake.ts): the agent-port refusal for every identity, then Pod
// Security Admission with the namespace's labels, its Warning headers and its audit line (issue #38 findings 2, 8).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import type { AgentHost, CreatedNamespace } from '../../src/server/host/agent-host.js';
import { kAdminUser } from '../../src/server/auth/auth.js';
import type { RouteServerInfo } from '../../src/server/routes/router.js';
import { admitApiPods, warningHeader } from '../../src/server/routes/intake.js';
import type { Logger } from '../../src/shared/logging.js';

const alice = { name: 'alice', uid: 'a', groups: ['developers'] };
const pod = (name: string, namespace: string, container: Record<string, unknown> = {}): Pod =>
  ({ metadata: { name, namespace }, spec: { containers: [{ name: 'c', image: 'i', ...container }] } }) as Pod;
const hostWith = (namespaces: CreatedNamespace[]) => ({ createdNamespaces: () => namespaces }) as unknown as AgentHost;
const logged: Array<[Record<string, unknown>, string]> = [];
const server: RouteServerInfo = {
  listen: { address: '127.0.0.1', ports: [12080] },
  logger: { info: (o: Record<string, unknown>, m: string) => logged.push([o, m]) } as unknown as Logger,
};
const body = (r: { body: string | Buffer }) =>
  JSON.parse(String(r.body)) as { code: number; reason: string; message: string; details?: { causes?: Array<{ field: string }> } };

describe('admitApiPods', () => {
  it("refuses, for the admin too, a hostPort on the agent's port: 422 naming the field, before Pod Security Admission", () => {
    for (const user of [kAdminUser, alice, undefined]) {
      const r = admitApiPods({ host: hostWith([]), user, server }, [
        pod('ok', 'default'),
        pod('squat', 'default', { ports: [{ containerPort: 80, hostPort: 12080 }] }),
      ]);
      expect(r.refused?.status).toBe(422);
      expect(body(r.refused!)).toMatchObject({
        reason: 'Invalid',
        details: { causes: [{ field: 'spec.containers[0].ports[0].hostPort' }] },
      });
      expect(body(r.refused!).message).toMatch(
        /^Pod "squat" is invalid: spec\.containers\[0\]\.ports\[0\]\.hostPort: Invalid value: 12080: /,
      );
    }
  });
  it("enforces baseline by default on a user outside system:masters, with the apiserver's 403; the admin and a server without auth pass", () => {
    const p = pod('hp', 'default', { ports: [{ containerPort: 80, hostPort: 8080 }] });
    const r = admitApiPods({ host: hostWith([]), user: alice, server }, [p]);
    expect(r.refused?.status).toBe(403);
    expect(body(r.refused!)).toMatchObject({
      reason: 'Forbidden',
      message: 'pods "hp" is forbidden: violates PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 8080)',
      details: { name: 'hp', kind: 'pods' },
    });
    expect(admitApiPods({ host: hostWith([]), user: kAdminUser, server }, [p])).toEqual({ headers: {} });
    expect(admitApiPods({ host: hostWith([]), user: undefined, server }, [p])).toEqual({ headers: {} });
  });
  it("reads the namespace's labels: warn gives a Warning header, audit a log line", () => {
    logged.length = 0;
    const ns = {
      name: 'team-a',
      uid: 'u',
      creationTimestamp: 't',
      labels: {
        'pod-security.kubernetes.io/enforce': 'privileged',
        'pod-security.kubernetes.io/warn': 'baseline',
        'pod-security.kubernetes.io/audit': 'restricted',
      },
    };
    const r = admitApiPods({ host: hostWith([ns]), user: alice, server }, [
      pod('hp', 'team-a', { ports: [{ containerPort: 80, hostPort: 8080 }] }),
    ]);
    expect(r.refused).toBeUndefined();
    expect(r.headers).toEqual({
      Warning: '299 - "would violate PodSecurity \\"baseline:latest\\": hostPort (container \\"c\\" uses hostPort 8080)"',
    });
    expect(logged).toHaveLength(1);
    expect(logged[0][1]).toBe('PodSecurity audit');
    expect(logged[0][0]).toMatchObject({ user: 'alice', namespace: 'team-a', pod: 'hp' });
    expect(String(logged[0][0]['pod-security.kubernetes.io/audit-violations'])).toMatch(
      /^would violate PodSecurity "restricted:latest": hostPort \(container "c" uses hostPort 8080\), allowPrivilegeEscalation != false/,
    );
  });
  it('an update that changes only labels is not evaluated again', () => {
    const old = pod('hp', 'default', { ports: [{ containerPort: 80, hostPort: 8080 }] });
    const relabelled = { ...old, metadata: { ...old.metadata, labels: { x: 'y' } } };
    expect(admitApiPods({ host: hostWith([]), user: alice, server }, [relabelled], [old]).refused).toBeUndefined();
    expect(admitApiPods({ host: hostWith([]), user: alice, server }, [relabelled], [undefined]).refused?.status).toBe(403);
  });
});

describe('warningHeader', () => {
  it('writes each text as the apiserver does, quotes and backslashes escaped, comma-joined', () => {
    expect(warningHeader(['a "b" \\ c', 'd'])).toBe('299 - "a \\"b\\" \\\\ c", 299 - "d"');
    expect(warningHeader(['x\r\ny\u0000'])).toBe('299 - "x  y "');
  });
});

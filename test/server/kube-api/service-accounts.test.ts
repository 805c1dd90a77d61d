// The ServiceAccounts the node's API shows (#43 item 1): `default` in every namespace, and every account a pod names.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { serviceAccountUid } from '../../../src/shared/service-account-admission.js';
import type { AgentHost } from '../../../src/server/host/agent-host.js';
import { serviceAccountObjects } from '../../../src/server/kube-api/service-accounts.js';
import { kServiceAccountPrinter, toTable } from '../../../src/server/kube-api/table.js';

const pod = (namespace: string, name: string, sa?: string): Pod => ({
  metadata: { name, namespace },
  spec: { containers: [], ...(sa ? { serviceAccountName: sa } : {}) },
});

describe('serviceaccounts', () => {
  it('lists default in every namespace shown and the accounts pods name, with the UIDs tokens carry, and prints NAME SECRETS AGE', () => {
    const host = {
      listPods: () => [pod('team', 'web', 'robot'), pod('default', 'a')],
      createdNamespaces: () => [{ name: 'empty', uid: 'u', creationTimestamp: '2026-12-07T10:00:00Z' }],
    } as unknown as AgentHost;
    const sas = serviceAccountObjects(host);
    const keys = sas.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
    expect(keys).toEqual(expect.arrayContaining(['default/default', 'empty/default', 'kube-system/default', 'team/default', 'team/robot']));
    expect(keys).toEqual([...keys].sort());
    const robot = sas.find((s) => s.metadata.name === 'robot')!;
    expect(robot).toMatchObject({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { namespace: 'team', uid: serviceAccountUid('team', 'robot') },
    });
    expect(sas.find((s) => s.metadata.namespace === 'empty')?.metadata.creationTimestamp).toBe('2026-12-07T10:00:00Z');
    const table = toTable(kServiceAccountPrinter, [robot], { include: 'None', nowMs: Date.now() });
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Secrets', 'Age']);
    expect(table.rows[0].cells.slice(0, 2)).toEqual(['robot', 0]);
  });
});

// Who may ask for privileged pod fields through POST/PUT /pods (issue #12 part A, item 2).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { kAdminUser } from '../../src/server/auth.js';
import { forbidPrivilegedFields } from '../../src/server/routes/intake.js';

const pod = (spec: Record<string, unknown>): Pod => ({ metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'i' }], ...spec } } as Pod);
const alice = { name: 'alice', uid: 'a', groups: ['developers'] };

describe('forbidPrivilegedFields', () => {
  it('answers 403 naming every privileged field for a user outside system:masters', () => {
    const reply = forbidPrivilegedFields([pod({}), pod({ hostIPC: true, containers: [{ name: 'c', image: 'i', securityContext: { privileged: true } }] })], alice);
    expect(reply?.status).toBe(403);
    const status = JSON.parse(String(reply!.body)) as { reason: string; message: string; details: { causes: Array<{ field: string }> } };
    expect(status.reason).toBe('Forbidden');
    expect(status.message).toBe('pods "p" is forbidden: spec.hostIPC, spec.containers[0].securityContext.privileged: only a user in group "system:masters" may ask for this (user "alice" is not in it)');
    expect(status.details.causes.map((c) => c.field)).toEqual(['spec.hostIPC', 'spec.containers[0].securityContext.privileged']);
  });
  it('lets system:masters, a server without auth, and ordinary pods through', () => {
    const priv = pod({ hostNetwork: true });
    expect(forbidPrivilegedFields([priv], kAdminUser)).toBeUndefined();
    expect(forbidPrivilegedFields([priv], undefined)).toBeUndefined();
    expect(forbidPrivilegedFields([pod({ containers: [{ name: 'c', image: 'i', securityContext: { runAsUser: 1, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } } }] })], alice)).toBeUndefined();
  });
});

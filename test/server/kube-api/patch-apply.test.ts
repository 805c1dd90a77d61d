import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { Pod } from '../../../src/shared/api.js';
import { AgentError } from '../../../src/shared/errors.js';
import { patchPod } from '../../../src/server/kube-api/patch.js';

const APPLY = 'application/apply-patch+yaml';

function live(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u-1', labels: { other: 'o' } },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36' }], restartPolicy: 'Always' },
    status: { phase: 'Running' },
  };
}

function config(extra: { labels?: Record<string, string>; containers?: unknown[]; spec?: Record<string, unknown> } = {}): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', labels: extra.labels ?? { app: 'web' } },
    spec: { containers: extra.containers ?? [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '1'] }], ...extra.spec },
  });
}

const apply = (cur: Pod, body: string, manager = 'kubectl', force = false): Pod =>
  patchPod(cur, APPLY, body, { fieldManager: manager, force });

function thrown(f: () => unknown): AgentError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected a throw');
}

describe('patchPod: server-side apply (application/apply-patch+yaml)', () => {
  it('merges the applied configuration over the live pod and records one Apply entry for the manager', () => {
    const out = apply(live(), config());
    expect(out.metadata?.labels).toEqual({ other: 'o', app: 'web' });
    expect(out.spec?.containers).toEqual([{ name: 'main', image: 'busybox:1.36', command: ['sleep', '1'] }]);
    expect(out.spec?.restartPolicy).toBe('Always');
    expect(out.status).toEqual({ phase: 'Running' });
    const [entry, ...rest] = out.metadata?.managedFields ?? [];
    expect(rest).toEqual([]);
    expect(entry).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1' });
    expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(entry.fieldsV1).toEqual({
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:command': {}, 'f:image': {}, 'f:name': {} } } },
    });
  });

  it('removes what the same manager applied before and no longer applies; keeps what nobody else set', () => {
    const first = apply(
      live(),
      config({
        labels: { app: 'web', gone: 'g' },
        containers: [
          { name: 'main', image: 'i', command: ['a'] },
          { name: 'side', image: 'i' },
        ],
      }),
    );
    const second = apply(first, config({ labels: { app: 'web' }, containers: [{ name: 'main', image: 'i' }] }));
    expect(second.metadata?.labels).toEqual({ other: 'o', app: 'web' });
    expect(second.spec?.containers).toEqual([{ name: 'main', image: 'i' }]);
    expect(second.metadata?.managedFields).toHaveLength(1);
  });

  it('keeps a field it stops applying while another manager also owns it', () => {
    const first = apply(live(), config({ labels: { app: 'web', shared: 's' } }));
    const other = apply(first, config({ labels: { shared: 's' } }), 'helm');
    const out = apply(other, config({ labels: { app: 'web' } }));
    expect(out.metadata?.labels).toEqual({ other: 'o', app: 'web', shared: 's' });
    expect(out.metadata?.managedFields?.map((m) => m.manager)).toEqual(['helm', 'kubectl']);
  });

  it('two managers applying the same value co-own it without a conflict', () => {
    const a = apply(live(), config());
    const b = apply(a, config(), 'helm');
    expect(b.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([
      ['helm', 'Apply'],
      ['kubectl', 'Apply'],
    ]);
  });

  it('a different value for a field another manager applied is a conflict naming every field; force takes them', () => {
    const a = apply(live(), config({ labels: { app: 'web' } }));
    const body = config({ labels: { app: 'mine' }, containers: [{ name: 'main', image: 'busybox:1.37', command: ['sleep', '1'] }] });
    const err = thrown(() => apply(a, body, 'helm'));
    expect(err.code).toBe('ERR_CONFLICT');
    expect(err.message).toBe(
      'Apply failed with 2 conflicts: conflict with "kubectl" using v1: .metadata.labels.app\n' +
        'conflict with "kubectl" using v1: .spec.containers[name="main"].image',
    );
    const forced = apply(a, body, 'helm', true);
    expect(forced.metadata?.labels?.app).toBe('mine');
    const kubectl = forced.metadata?.managedFields?.find((m) => m.manager === 'kubectl');
    expect(JSON.stringify(kubectl?.fieldsV1)).not.toContain('f:image');
    expect(JSON.stringify(kubectl?.fieldsV1)).toContain('f:command');
  });

  it('a non-apply patch with a fieldManager takes the fields it changes from the appliers', () => {
    const a = apply(live(), config());
    const patched = patchPod(a, 'application/strategic-merge-patch+json', '{"spec":{"containers":[{"name":"main","image":"x"}]}}', {
      fieldManager: 'kubectl-edit',
    });
    expect(patched.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([
      ['kubectl', 'Apply'],
      ['kubectl-edit', 'Update'],
    ]);
    const err = thrown(() => apply(patched, config()));
    expect(err.message).toContain('conflict with "kubectl-edit" using v1: .spec.containers[name="main"].image');
  });

  it('the first apply onto a pod created without managedFields never conflicts (a simplification: no before-first-apply manager)', () => {
    const out = apply(live(), config({ containers: [{ name: 'main', image: 'other' }] }));
    expect(out.spec?.containers?.[0].image).toBe('other');
  });

  it.each([
    ['fieldManager: Required value', { fieldManager: undefined }, config(), 'ERR_INVALID_ARGUMENT'],
    [
      'apiVersion: Invalid value: "apps/v1"',
      { fieldManager: 'm' },
      config().replace('apiVersion: v1', 'apiVersion: apps/v1'),
      'ERR_INVALID_MANIFEST',
    ],
    ['kind: Invalid value', { fieldManager: 'm' }, config().replace('kind: Pod', 'kind: Deployment'), 'ERR_INVALID_MANIFEST'],
    [
      'metadata.name: Invalid value: "other": field is immutable',
      { fieldManager: 'm' },
      config().replace('name: web', 'name: other'),
      'ERR_INVALID_MANIFEST',
    ],
    [
      'managedFields must be nil',
      { fieldManager: 'm' },
      config().replace('  name: web\n', '  name: web\n  managedFields: []\n'),
      'ERR_INVALID_ARGUMENT',
    ],
    ['must be a YAML or JSON object', { fieldManager: 'm' }, '- a\n- b\n', 'ERR_INVALID_ARGUMENT'],
    ['at most 128', { fieldManager: 'x'.repeat(129) }, config(), 'ERR_INVALID_ARGUMENT'],
  ])('refuses with "%s"', (words, query, body, code) => {
    const err = thrown(() => patchPod(live(), APPLY, body, query));
    expect(err.code).toBe(code);
    expect(err.message).toContain(words);
  });

  it('accepts the JSON form kubectl --server-side sends, and the YAML form', () => {
    const json = JSON.stringify(YAML.parse(config()));
    expect(apply(live(), json)).toEqual({ ...apply(live(), config()), metadata: expect.anything() });
  });

  it('ignores status in the applied configuration (it belongs to the status subresource)', () => {
    const body = `${config()}status:\n  phase: Failed\n`;
    expect(apply(live(), body).status).toEqual({ phase: 'Running' });
  });
});

// Unit tests of the PersistentVolumeClaim checks (shared/pvc.ts through normalizeConfigObject), as
// pkg/apis/core/validation ValidatePersistentVolumeClaim / ValidatePersistentVolumeClaimUpdate.
import { describe, expect, it } from 'vitest';
import { normalizeConfigObject, validateConfigObjectUpdate, type ConfigObject } from '../../src/shared/config-objects.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { claimDir, type PersistentVolumeClaim } from '../../src/shared/pvc.js';

const base = () => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } as Record<string, unknown>,
});
const errorsOf = (raw: unknown) => (normalizeConfigObject(raw).errors ?? []).map(formatFieldError);

describe('PersistentVolumeClaim validation (ValidatePersistentVolumeClaim)', () => {
  it('binds a valid claim: Bound, capacity the request, the default class, the pvc-protection finalizer', () => {
    const r = normalizeConfigObject(base());
    expect(r.errors).toBeUndefined();
    const c = r.object as PersistentVolumeClaim;
    expect(c.metadata?.namespace).toBe('default');
    expect(c.metadata?.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    expect(c.spec).toMatchObject({ storageClassName: 'local-path', volumeMode: 'Filesystem' });
    expect(c.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '1Gi' } });
    // An explicit empty class stays empty (no class, as upstream's nil vs "").
    expect(
      (normalizeConfigObject({ ...base(), spec: { ...base().spec, storageClassName: '' } }).object as PersistentVolumeClaim).spec
        ?.storageClassName,
    ).toBe('');
  });

  it.each<[string, (c: ReturnType<typeof base>) => void, string[]]>([
    [
      'no accessModes',
      (c) => {
        delete c.spec.accessModes;
      },
      ['spec.accessModes: Required value: at least 1 access mode is required'],
    ],
    [
      'an unknown access mode',
      (c) => {
        c.spec.accessModes = ['ReadWriteSome'];
      },
      [
        'spec.accessModes[0]: Unsupported value: "ReadWriteSome": supported values: "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"',
      ],
    ],
    [
      'ReadWriteOncePod with another mode',
      (c) => {
        c.spec.accessModes = ['ReadWriteOncePod', 'ReadWriteOnce'];
      },
      ['spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes'],
    ],
    [
      'no storage request',
      (c) => {
        c.spec.resources = {};
      },
      ['spec.resources[storage]: Required value'],
    ],
    [
      'a zero storage request',
      (c) => {
        c.spec.resources = { requests: { storage: '0' } };
      },
      ['spec.resources[storage]: Invalid value: "0": must be greater than zero'],
    ],
    [
      'another storage class',
      (c) => {
        c.spec.storageClassName = 'fast';
      },
      ['spec.storageClassName: Unsupported value: "fast": supported values: "local-path", ""'],
    ],
    [
      'Block volumeMode',
      (c) => {
        c.spec.volumeMode = 'Block';
      },
      ['spec.volumeMode: Not supported: a local-path claim is a directory: only Filesystem'],
    ],
    [
      'a selector',
      (c) => {
        c.spec.selector = { matchLabels: { a: 'b' } };
      },
      [
        'spec.selector: Not supported: a claim is bound to a new local-path directory of this node; no existing volume or data source is served',
      ],
    ],
    [
      'an unknown spec field',
      (c) => {
        c.spec.bogus = 1;
      },
      ['spec.bogus: Not supported'],
    ],
    [
      'a bad name',
      (c) => {
        c.metadata.name = 'Bad_Name';
      },
      ['metadata.name: Invalid value: "Bad_Name"'],
    ],
    [
      'no spec',
      (c) => {
        delete (c as { spec?: unknown }).spec;
      },
      ['spec.accessModes: Required value: at least 1 access mode is required', 'spec.resources[storage]: Required value'],
    ],
  ])('refuses %s, naming the field', (_name, mutate, expected) => {
    const c = base();
    mutate(c);
    const errs = errorsOf(c);
    for (const e of expected)
      expect(
        errs.some((m) => m.startsWith(e)),
        `${errs.join('\n')} lacks ${e}`,
      ).toBe(true);
  });

  it('on update: the spec is immutable but for a larger storage request (ValidatePersistentVolumeClaimUpdate)', () => {
    const prev = normalizeConfigObject(base()).object as ConfigObject;
    const grow = normalizeConfigObject({ ...base(), spec: { ...base().spec, resources: { requests: { storage: '2Gi' } } } })
      .object as ConfigObject;
    const shrink = normalizeConfigObject({ ...base(), spec: { ...base().spec, resources: { requests: { storage: '512Mi' } } } })
      .object as ConfigObject;
    const modes = normalizeConfigObject({ ...base(), spec: { ...base().spec, accessModes: ['ReadWriteMany'] } }).object as ConfigObject;
    expect(validateConfigObjectUpdate(grow, prev)).toEqual([]);
    expect(validateConfigObjectUpdate(shrink, prev).map(formatFieldError)).toEqual([
      expect.stringContaining('spec.resources.requests[storage]: Forbidden: field can not be less than status.capacity'),
    ]);
    expect(validateConfigObjectUpdate(modes, prev).map(formatFieldError)).toEqual([
      expect.stringContaining('spec: Forbidden: spec is immutable after creation except resources.requests'),
    ]);
  });

  it('claimDir: {rootDir}/local-path/pvc-{uid}_{namespace}_{name}; refuses a claim without a usable uid', () => {
    const c = normalizeConfigObject(base()).object as PersistentVolumeClaim;
    const uid = '0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
    expect(claimDir('/var/lib/k/', { ...c, metadata: { ...c.metadata, uid } })).toBe(`/var/lib/k/local-path/pvc-${uid}_default_data`);
    expect(() => claimDir('/r', c)).toThrow(/no usable uid/);
    expect(() => claimDir('/r', { ...c, metadata: { ...c.metadata, uid: '../../etc' } })).toThrow(/no usable uid/);
  });
});

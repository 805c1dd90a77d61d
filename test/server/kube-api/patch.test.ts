import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { AgentError, statusReasonOf } from '../../../src/shared/errors.js';
import { patchPod } from '../../../src/server/kube-api/patch.js';

const SMP = 'application/strategic-merge-patch+json';
const MERGE = 'application/merge-patch+json';
const JSONP = 'application/json-patch+json';

function pod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u-1', labels: { app: 'web', keep: 'y' }, finalizers: ['a', 'b'] },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'busybox:1.36',
          command: ['sleep', '3600'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', value: '2' },
          ],
          ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
        { name: 'side', image: 'busybox:1.36', command: ['sleep', '1000'] },
      ],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
      imagePullSecrets: [{ name: 's1' }],
      tolerations: [
        { key: 'k1', operator: 'Exists' },
        { key: 'k2', operator: 'Exists' },
      ],
    },
  };
}

/** Deep-frozen, so that a test fails if patchPod mutates its input. */
function frozen<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) frozen(x);
    Object.freeze(v);
  }
  return v;
}

function thrown(f: () => unknown): AgentError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    return err as AgentError;
  }
  throw new Error('expected patchPod to throw');
}

const smp = (patch: unknown, cur: Pod = pod()): Pod => patchPod(frozen(cur), SMP, JSON.stringify(patch), {});
const containers = (p: Pod) => p.spec?.containers ?? [];

describe('patchPod: content types and bad bodies', () => {
  it('answers an unknown Content-Type with a 415 UnsupportedMediaType error listing the four types', () => {
    const err = thrown(() => patchPod(pod(), 'application/json', '{}', {}));
    expect(err.code).toBe('ERR_INVALID_ARGUMENT');
    expect(statusReasonOf(err)).toBe('UnsupportedMediaType');
    expect(err.message).toContain('application/strategic-merge-patch+json');
    expect(err.message).toContain('application/apply-patch+yaml');
  });

  it('ignores Content-Type parameters and case', () => {
    const out = patchPod(pod(), 'Application/Merge-Patch+JSON; charset=utf-8', '{"metadata":{"labels":{"x":"1"}}}', {});
    expect(out.metadata?.labels).toEqual({ app: 'web', keep: 'y', x: '1' });
  });

  it.each([
    [SMP, '{"spec": ', 'does not parse as JSON'],
    [MERGE, '[1]', 'must be a JSON object'],
    [SMP, '"x"', 'must be a JSON object'],
    [JSONP, '{}', 'must be a JSON list of operations'],
    [JSONP, '[{"op":"frobnicate","path":"/x"}]', '"op" must be one of'],
    [JSONP, '[{"op":"add","path":"spec"}]', 'JSON pointer'],
    [JSONP, '[{"op":"add","path":"/metadata/labels/z"}]', '"value" is required'],
    [JSONP, '[{"op":"remove","path":"/spec/nothing"}]', 'op 0 (remove /spec/nothing): MissingError'],
    [JSONP, '[{"op":"test","path":"/metadata/name","value":"other"}]', 'TestError'],
    [JSONP, '[{"op":"add","path":"/__proto__/polluted","value":1}]', 'not allowed'],
    [MERGE, '{"__proto__":{"polluted":1}}', '"__proto__" is not allowed'],
    ['application/apply-patch+yaml', 'a: [1', 'does not parse as YAML'],
    ['application/apply-patch+yaml', 'a: 1\n---\nb: 2\n', 'exactly one YAML document'],
    [SMP, '['.repeat(500), 'nests deeper than'],
    ['application/apply-patch+yaml', '&a [*a, *a]', 'anchor "a" value contains itself'],
    [
      'application/apply-patch+yaml',
      `a: &a [x,x,x,x,x,x,x,x,x,x]\n${['b', 'c', 'd', 'e', 'f'].map((n, i) => `${n}: &${n} [${Array(10).fill(`*${'abcde'[i]}`).join(',')}]`).join('\n')}\n`,
      'Excessive alias count',
    ],
  ])('%s %j → ERR_INVALID_ARGUMENT (%s)', (type, body, words) => {
    const err = thrown(() => patchPod(pod(), type, body, { fieldManager: 'm' }));
    expect(err.code).toBe('ERR_INVALID_ARGUMENT');
    expect(err.message).toContain(words);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    [MERGE, { metadata: { name: 'other' } }, 'metadata.name'],
    [MERGE, { metadata: { namespace: 'kube-system' } }, 'metadata.namespace'],
    [SMP, { metadata: { uid: 'u-2' } }, 'metadata.uid'],
    [MERGE, { kind: 'Node' }, 'kind'],
    [MERGE, { metadata: null }, 'metadata'],
  ])('refuses a %s patch that changes the identity (%j) with a 422 Invalid naming %s', (type, patch, field) => {
    const err = thrown(() => patchPod(pod(), type, JSON.stringify(patch), {}));
    expect(err.code).toBe('ERR_INVALID_MANIFEST');
    expect(statusReasonOf(err)).toBe('Invalid');
    expect((err as unknown as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toContain(field);
  });

  it('refuses a JSON patch that renames the pod', () => {
    const err = thrown(() => patchPod(pod(), JSONP, '[{"op":"replace","path":"/metadata/name","value":"x"}]', {}));
    expect(err.code).toBe('ERR_INVALID_MANIFEST');
    expect(err.message).toContain('metadata.name: Invalid value: "x": field is immutable');
  });
});

describe('patchPod: JSON patch (RFC 6902) and merge patch (RFC 7386)', () => {
  it('applies add, replace, remove, copy, move and test in order', () => {
    const ops = [
      { op: 'test', path: '/spec/containers/0/name', value: 'main' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'busybox:1.37' },
      { op: 'add', path: '/metadata/labels/new', value: 'n' },
      { op: 'remove', path: '/metadata/labels/keep' },
      { op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/copied' },
      { op: 'move', from: '/spec/containers/1', path: '/spec/containers/0' },
    ];
    const out = patchPod(frozen(pod()), JSONP, JSON.stringify(ops), {});
    expect(out.metadata?.labels).toEqual({ app: 'web', new: 'n', copied: 'web' });
    expect(containers(out).map((c) => [c.name, c.image])).toEqual([
      ['side', 'busybox:1.36'],
      ['main', 'busybox:1.37'],
    ]);
  });

  it('a merge patch deletes with null and replaces lists whole', () => {
    const out = patchPod(
      frozen(pod()),
      MERGE,
      JSON.stringify({ metadata: { labels: { keep: null, x: '1' } }, spec: { tolerations: [{ key: 'only', operator: 'Exists' }] } }),
      {},
    );
    expect(out.metadata?.labels).toEqual({ app: 'web', x: '1' });
    expect(out.spec?.tolerations).toEqual([{ key: 'only', operator: 'Exists' }]);
    expect(containers(out)).toHaveLength(2);
  });

  it('a merge patch of the containers list replaces it (RFC 7386 knows no merge keys)', () => {
    const out = patchPod(pod(), MERGE, JSON.stringify({ spec: { containers: [{ name: 'main', image: 'x' }] } }), {});
    expect(containers(out)).toEqual([{ name: 'main', image: 'x' }]);
  });
});

describe('patchPod: strategic merge patch with the Pod patch strategies', () => {
  it('merges containers by name: one image changes, the other container is kept', () => {
    const out = smp({ spec: { containers: [{ name: 'main', image: 'busybox:1.37' }] } });
    expect(containers(out).map((c) => [c.name, c.image, c.command])).toEqual([
      ['main', 'busybox:1.37', ['sleep', '3600']],
      ['side', 'busybox:1.36', ['sleep', '1000']],
    ]);
  });

  it('adds a container that is not there and deletes one with $patch: delete', () => {
    const out = smp({
      spec: {
        containers: [
          { name: 'third', image: 'nginx' },
          { name: 'side', $patch: 'delete' },
        ],
      },
    });
    expect(containers(out).map((c) => c.name)).toEqual(['main', 'third']);
  });

  it('merges env by name, ports by containerPort, volumeMounts by mountPath', () => {
    const out = smp({
      spec: {
        containers: [
          {
            name: 'main',
            env: [
              { name: 'B', value: 'two' },
              { name: 'C', value: '3' },
              { name: 'A', $patch: 'delete' },
            ],
            ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 8080 }],
            volumeMounts: [{ mountPath: '/data', readOnly: true }],
          },
        ],
      },
    });
    const main = containers(out)[0];
    expect(main.env).toEqual([
      { name: 'B', value: 'two' },
      { name: 'C', value: '3' },
    ]);
    expect(main.ports).toEqual([{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }, { containerPort: 8080 }]);
    expect(main.volumeMounts).toEqual([{ name: 'data', mountPath: '/data', readOnly: true }]);
  });

  it('merges volumes and imagePullSecrets by name; honours $retainKeys in a volume', () => {
    const out = smp({
      spec: {
        volumes: [
          { name: 'data', $retainKeys: ['name', 'hostPath'], hostPath: { path: '/tmp/x' } },
          { name: 'new', emptyDir: {} },
        ],
        imagePullSecrets: [{ name: 's2' }],
      },
    });
    expect(out.spec?.volumes).toEqual([
      { name: 'data', hostPath: { path: '/tmp/x' } },
      { name: 'cfg', configMap: { name: 'c' } },
      { name: 'new', emptyDir: {} },
    ]);
    expect(out.spec?.imagePullSecrets).toEqual([{ name: 's1' }, { name: 's2' }]);
  });

  it('replaces tolerations and command (lists without a strategy) whole', () => {
    const out = smp({ spec: { tolerations: [{ key: 'k3', operator: 'Exists' }], containers: [{ name: 'main', command: ['true'] }] } });
    expect(out.spec?.tolerations).toEqual([{ key: 'k3', operator: 'Exists' }]);
    expect(containers(out)[0].command).toEqual(['true']);
  });

  it('$patch: replace on a list item replaces the whole list; on a map replaces the map', () => {
    const a = smp({ spec: { containers: [{ $patch: 'replace' }, { name: 'solo', image: 'x' }] } });
    expect(containers(a)).toEqual([{ name: 'solo', image: 'x' }]);
    const item = smp({ spec: { containers: [{ name: 'main', $patch: 'replace', image: 'only' }] } });
    expect(containers(item)).toEqual([{ name: 'main', image: 'only' }, containers(pod())[1]]);
    const b = smp({ metadata: { labels: { $patch: 'replace', only: 'me' } } });
    expect(b.metadata?.labels).toEqual({ only: 'me' });
  });

  it('$patch: delete on a map removes the field', () => {
    const out = smp({
      spec: { containers: [{ name: 'main', env: [{ name: 'A', $patch: 'delete' }] }] },
      metadata: { labels: { $patch: 'delete' } },
    });
    expect(out.metadata?.labels).toBeUndefined();
    expect(containers(out)[0].env).toEqual([{ name: 'B', value: '2' }]);
  });

  it('$setElementOrder orders the merged list; $deleteFromPrimitiveList removes scalars; finalizers merge by union', () => {
    const out = smp({
      metadata: { finalizers: ['b', 'c'], '$deleteFromPrimitiveList/finalizers': ['a'] },
      spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'main' }], containers: [{ name: 'main', image: 'i' }] },
    });
    expect(out.metadata?.finalizers).toEqual(['b', 'c']);
    expect(containers(out).map((c) => c.name)).toEqual(['side', 'main']);
  });

  it.each([
    [{ spec: { $patch: 'explode' } }, 'spec: unknown patch type "explode"'],
    [{ spec: { containers: [{ image: 'x' }] } }, 'spec.containers[0]: the item does not contain the merge key "name"'],
    [{ spec: { containers: ['main'] } }, 'must be an object'],
    [{ spec: { $retainKeys: 'name' } }, '$retainKeys must be a list'],
    [{ spec: { '$setElementOrder/containers': {} } }, 'must be a list'],
    [{ spec: { $frob: 1 } }, 'unknown strategic merge patch directive "$frob"'],
  ])('%j → ERR_INVALID_ARGUMENT naming the field', (patch, words) => {
    const err = thrown(() => smp(patch));
    expect(err.code).toBe('ERR_INVALID_ARGUMENT');
    expect(err.message).toContain(words);
  });
});

describe('patchPod: the patch bodies kubectl v1.32 sends (test/fixtures/kubectl-patch)', () => {
  const fixture = (name: string) =>
    JSON.parse(readFileSync(new URL(`../../fixtures/kubectl-patch/${name}.json`, import.meta.url), 'utf8')) as {
      contentType: string;
      query: Record<string, string>;
      body: string;
    };
  const apply = (cur: Pod, name: string): Pod => {
    const f = fixture(name);
    return patchPod(frozen(cur), f.contentType, f.body, { fieldManager: f.query.fieldManager, force: f.query.force === 'true' });
  };
  /** The pod as `kubectl apply` created it from the first version of pod.yaml (command sleep 3600). */
  const created = (): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'uid-1',
      labels: { app: 'web' },
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
    },
    spec: {
      containers: [
        { name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'], env: [{ name: 'A', value: '1' }] },
        { name: 'side', image: 'busybox:1.36', command: ['sleep', '1000'] },
      ],
    },
  });

  it('kubectl apply with a changed command: only that container changes, the other is kept', () => {
    const out = apply(created(), 'apply-changed-command');
    expect(containers(out)).toEqual([
      { name: 'main', image: 'busybox:1.36', command: ['sleep', '7200'], env: [{ name: 'A', value: '1' }] },
      { name: 'side', image: 'busybox:1.36', command: ['sleep', '1000'] },
    ]);
    expect(out.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration']).toContain('"7200"');
    expect(out.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([['kubectl-client-side-apply', 'Update']]);
  });

  it('kubectl apply that drops a label, an env var and a container and adds a port', () => {
    const out = apply(apply(created(), 'apply-changed-command'), 'apply-removed-items');
    expect(out.metadata?.labels).toEqual({ tier: 'x' });
    expect(containers(out)).toEqual([
      {
        name: 'main',
        image: 'busybox:1.36',
        command: ['sleep', '7200'],
        env: [{ name: 'B', value: '2' }],
        ports: [{ containerPort: 8080 }],
      },
    ]);
  });

  it('kubectl edit: both containers edited, the patch carries only the changed fields', () => {
    const out = apply(created(), 'edit');
    expect(containers(out).map((c) => [c.name, c.image, c.command])).toEqual([
      ['main', 'busybox:1.37', ['sleep', '3600']],
      ['side', 'busybox:1.37', ['sleep', '2000']],
    ]);
    expect(containers(out)[0].env).toEqual([{ name: 'A', value: '1' }]);
    expect(out.metadata?.managedFields?.map((m) => [m.manager, m.operation])).toEqual([['kubectl-edit', 'Update']]);
  });

  it('kubectl patch --type strategic, merge and json', () => {
    const a = apply(created(), 'patch-strategic');
    expect(containers(a).map((c) => c.image)).toEqual(['busybox:1.37', 'busybox:1.36']);
    const b = apply(a, 'patch-merge');
    expect(b.metadata?.labels).toEqual({ app: 'web', m: '1' });
    const c = apply(b, 'patch-json');
    expect(c.metadata?.labels).toEqual({ app: 'web', m: '1', j: '2' });
    expect(c.metadata?.managedFields?.map((m) => m.manager)).toEqual(['kubectl-patch']);
  });

  it('kubectl apply --server-side conflicts with the image kubectl-patch set, and --force-conflicts takes it', () => {
    const patched = apply(created(), 'patch-strategic');
    const err = thrown(() => apply(patched, 'apply-server-side'));
    expect(err.code).toBe('ERR_CONFLICT');
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .spec.containers[name="main"].image');
    const out = apply(patched, 'apply-server-side-force');
    expect(containers(out).map((c) => [c.name, c.image, c.command])).toEqual([
      ['main', 'busybox:1.36', ['sleep', '7200']],
      ['side', 'busybox:1.36', ['sleep', '1000']],
    ]);
    const managers = out.metadata?.managedFields ?? [];
    // kubectl-patch owned only that image: forced away, it owns nothing and its entry goes.
    expect(managers.map((m) => [m.manager, m.operation])).toEqual([['kubectl', 'Apply']]);
    expect(JSON.stringify(managers[0].fieldsV1)).toContain('"k:{\\"name\\":\\"main\\"}":{".":{},"f:command":{}');
  });
});

// Fuzz of patchPod (src/server/kube-api/patch.ts): random pods, random patch bodies of the four
// types (structured ones built from the Pod's own field names and the strategic merge directives,
// raw text, hostile keys) and random query parameters. The property, as the apiserver promises for
// PATCH: the answer is a Pod keeping its identity, or an AgentError with a client-error code;
// nothing else is thrown, and the stored Pod is never modified.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Pod } from '../../src/shared/api.js';
import { AgentError } from '../../src/shared/errors.js';
import { kPatchContentTypes, patchPod } from '../../src/server/kube-api/patch.js';
import { anyJson, jsonText, paths, podArbitrary, validPod, yamlText } from './arbitraries.js';
import { fuzzParams } from './fuzz-config.js';

const kKeys = [
  'metadata',
  'labels',
  'annotations',
  'finalizers',
  'name',
  'namespace',
  'uid',
  'spec',
  'containers',
  'initContainers',
  'env',
  'ports',
  'containerPort',
  'volumeMounts',
  'mountPath',
  'volumes',
  'tolerations',
  'image',
  'command',
  'status',
  '$patch',
  '$retainKeys',
  '$setElementOrder/containers',
  '$setElementOrder/env',
  '$deleteFromPrimitiveList/finalizers',
  '$frob',
  '__proto__',
  'constructor',
  'managedFields',
  'apiVersion',
  'kind',
];
const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...kKeys) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) });
const directiveValue = fc.constantFrom('replace', 'delete', 'merge', 'other');

/** A patch-shaped JSON value: objects keyed by Pod field names and directives, lists of such objects. */
const { patchValue } = fc.letrec<{ patchValue: unknown; patchObject: unknown }>((tie) => ({
  patchValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    anyJson,
    directiveValue,
    tie('patchObject'),
    fc.array(tie('patchObject'), { maxLength: 3 }),
  ),
  patchObject: fc.dictionary(key, tie('patchValue'), { maxKeys: 4 }),
}));

const pointerOf = (p: (string | number)[]) => `/${p.map(String).join('/')}`;
const jsonPatch = (pod: Pod) =>
  fc.array(
    fc.record(
      {
        op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus'),
        path: fc.oneof(
          fc.constantFrom(...paths(pod).map(pointerOf), '', '/-', '/spec/containers/-', '/__proto__/x'),
          fc.string({ maxLength: 8 }),
        ),
        from: fc.constantFrom(...paths(pod).map(pointerOf), '/nope'),
        value: patchValue,
      },
      { requiredKeys: ['op', 'path'] },
    ),
    { maxLength: 4 },
  );

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...kPatchContentTypes) },
  { weight: 1, arbitrary: fc.constantFrom('application/json', '', 'text/plain', 'application/merge-patch+json; charset=utf-8') },
);

const kCodes = new Set(['ERR_INVALID_ARGUMENT', 'ERR_INVALID_MANIFEST', 'ERR_CONFLICT']);

function check(current: Pod, type: string, body: string, query: { fieldManager?: string; force?: boolean }): void {
  const before = JSON.stringify(current);
  let out: Pod;
  try {
    out = patchPod(current, type, body, query);
  } catch (err) {
    expect(err).toBeInstanceOf(AgentError);
    expect(kCodes.has((err as AgentError).code), (err as Error).message).toBe(true);
    expect(JSON.stringify(current)).toBe(before);
    return;
  }
  expect(JSON.stringify(current)).toBe(before);
  expect(typeof out).toBe('object');
  expect(out.metadata?.name).toBe(current.metadata?.name);
  expect(out.metadata?.namespace).toBe(current.metadata?.namespace);
  expect(JSON.parse(JSON.stringify(out))).toEqual(out);
  expect(({} as Record<string, unknown>).x).toBeUndefined();
}

describe('patchPod fuzz', () => {
  const query = fc.record({
    fieldManager: fc.option(fc.constantFrom('kubectl', 'helm', '', 'x'.repeat(200)), { nil: undefined }),
    force: fc.option(fc.boolean(), { nil: undefined }),
  });

  it('structured patches of every type: a Pod with its identity, or a client error', () => {
    fc.assert(
      fc.property(fc.oneof(podArbitrary('fuzz'), fc.constant(validPod())), contentType, patchValue, query, (pod, type, patch, q) => {
        const body =
          type === 'application/apply-patch+yaml'
            ? stringify({
                apiVersion: 'v1',
                kind: 'Pod',
                metadata: { name: pod.metadata?.name },
                ...(typeof patch === 'object' && patch !== null && !Array.isArray(patch) ? patch : { spec: patch }),
              })
            : JSON.stringify(patch);
        check(pod, type, body, q);
      }),
      fuzzParams(400),
    );
  });

  it("JSON patches made of the pod's own paths", () => {
    fc.assert(
      fc.property(
        fc.constant(validPod()).chain((pod) => fc.tuple(fc.constant(pod), jsonPatch(pod))),
        query,
        ([pod, ops], q) => {
          check(pod, 'application/json-patch+json', JSON.stringify(ops), q);
        },
      ),
      fuzzParams(300),
    );
  });

  it('raw and hostile text as the body of every type', () => {
    const text = fc.oneof(
      jsonText,
      yamlText,
      fc.string({ maxLength: 40 }),
      fc.constantFrom('[', '{"a":', '{'.repeat(5000), '- '.repeat(3000), '*a', '&a [*a, *a]', 'null', '""', '[]', '{}'),
    );
    fc.assert(
      fc.property(fc.constant(validPod()), contentType, text, query, (pod, type, body, q) => check(pod, type, body, q)),
      fuzzParams(300),
    );
  });

  it('applies from many managers in a row keep one managedFields entry per manager', () => {
    const step = fc.record({
      manager: fc.constantFrom('a', 'b', 'c'),
      image: fc.constantFrom('i1', 'i2'),
      label: fc.constantFrom('x', 'y'),
      force: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 6 }), (steps) => {
        let pod = validPod();
        for (const s of steps) {
          const body = stringify({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: pod.metadata?.name, labels: { [s.label]: s.manager } },
            spec: { containers: [{ name: pod.spec?.containers[0].name, image: s.image }] },
          });
          try {
            pod = patchPod(pod, 'application/apply-patch+yaml', body, { fieldManager: s.manager, force: s.force });
          } catch (err) {
            expect((err as AgentError).code).toBe('ERR_CONFLICT');
            expect(s.force).toBe(false);
          }
          const managers = (pod.metadata?.managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
          expect(new Set(managers).size).toBe(managers.length);
        }
      }),
      fuzzParams(200),
    );
  });
});

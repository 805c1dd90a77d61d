// The pure fuzz properties of the manifest decoder, defaulting, validation and label selectors,
// shared by test/fuzz/decoder-validation.test.ts (bounded) and bench/fuzz.ts (for N minutes). In
// the spirit of apimachinery's round-trip fuzz tests (k8s.io/apimachinery/pkg/api/apitesting/roundtrip):
// random and mutated pods and hostile text. Assertions are node:assert, so the bench can run them.
import { deepStrictEqual, ok } from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { kKubernetesYaml } from '../../src/shared/yaml-options.js';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { isInvalidInput } from '../../src/shared/errors.js';
import { loadPods } from '../../src/shared/manifest.js';
import { validatePodForNode } from '../../src/shared/validation.js';
import { matchesLabelSelector, parseLabelSelector } from '../../src/server/http/label-selector.js';
import { invalidUtf8, jsonText, labelSelector, labels, mutatedPod, podArbitrary, validishPodArbitrary, yamlText } from './arbitraries.js';

/**
 * decode: loadPods' pods, or `'invalid'` when it threw the documented InvalidManifestError.
 * @throws whatever else loadPods threw (which is what the properties look for).
 */
export function decode(text: string, format: 'yaml' | 'json'): Pod[] | 'invalid' {
  try {
    return loadPods(text, 'fuzz', format);
  } catch (err) {
    if (isInvalidInput(err) && (err as Error).name === 'InvalidManifestError') return 'invalid';
    throw err;
  }
}

/** A JSON value as JSON sees it (drops undefined, folds -0): what a round trip through text can keep. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

/** DecoderProperty: a named property and the number of runs the bounded test gives it. */
export interface DecoderProperty {
  name: string;
  property: fc.IPropertyWithHooks<unknown[]>;
  numRuns: number;
}

/** decoderProperties: the pure properties, each with its bounded run count. */
export function decoderProperties(): DecoderProperty[] {
  return [
    {
      name: 'the decoder only ever throws InvalidManifestError, for any YAML text',
      numRuns: 200,
      property: fc.property(yamlText, (text) => {
        decode(text, 'yaml');
      }),
    },
    {
      name: 'the decoder only ever throws InvalidManifestError, for any JSON text, read as JSON and as YAML',
      numRuns: 200,
      property: fc.property(jsonText, (text) => {
        decode(text, 'json');
        decode(text, 'yaml');
      }),
    },
    {
      name: 'the decoder only ever throws InvalidManifestError, for text with invalid UTF-8 bytes',
      numRuns: 60,
      property: fc.property(invalidUtf8, (bytes) => {
        const text = bytes.toString('utf8');
        decode(text, 'json');
        decode(text, 'yaml');
      }),
    },
    {
      name: 'defaulting and validation never throw and return well-formed field errors, for random and mutated pods',
      numRuns: 300,
      property: fc.property(fc.oneof(podArbitrary(), mutatedPod()), (pod) => {
        const errors = validatePodForNode(applyPodDefaults(pod as Pod));
        ok(Array.isArray(errors));
        for (const e of errors) ok(typeof e.field === 'string' && typeof e.type === 'string', JSON.stringify(e));
      }),
    },
    {
      name: 'a pod the validator accepts round-trips through JSON and YAML text: same pod, still valid, defaults idempotent',
      numRuns: 120,
      property: fc.property(
        fc.oneof({ weight: 3, arbitrary: validishPodArbitrary() }, { weight: 1, arbitrary: mutatedPod() }),
        (mutated) => {
          // apiVersion and kind are the decoder's to check (the validator sees decoded Pods only).
          fc.pre(mutated !== null && typeof mutated === 'object' && !Array.isArray(mutated));
          const raw = { ...(mutated as object), apiVersion: 'v1', kind: 'Pod' };
          const defaulted = applyPodDefaults(raw as Pod);
          fc.pre(validatePodForNode(defaulted).length === 0);
          deepStrictEqual(asJson(applyPodDefaults(defaulted)), asJson(defaulted), 'defaulting twice changed the pod');
          for (const [text, format] of [
            [JSON.stringify(raw), 'json'],
            [stringify(raw, kKubernetesYaml), 'yaml'],
          ] as const) {
            const pods = decode(text, format);
            ok(pods !== 'invalid', `${format} text of an accepted pod was refused:\n${text}`);
            deepStrictEqual(pods.map(asJson), [asJson(defaulted)], `${format} text decoded to another pod`);
          }
        },
      ),
    },
    {
      name: 'a label selector either parses or is an invalid-input error, and a parsed one matches without throwing',
      numRuns: 500,
      property: fc.property(labelSelector, labels, (text, podLabels) => {
        let selector;
        try {
          selector = parseLabelSelector(text);
        } catch (err) {
          ok(isInvalidInput(err), `parseLabelSelector(${JSON.stringify(text)}) threw ${String(err)}`);
          return;
        }
        ok(typeof matchesLabelSelector(selector, podLabels) === 'boolean');
      }),
    },
  ];
}

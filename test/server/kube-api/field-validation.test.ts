import { describe, expect, it } from 'vitest';
import { strictDecodingMessage, unknownFields } from '../../../src/server/kube-api/field-validation.js';

describe('unknownFields (fieldValidation=Strict)', () => {
  it('finds nothing in a pod of known fields, maps and open fields included', () => {
    expect(
      unknownFields(
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: 'a',
            labels: { anything: 'goes' },
            annotations: { 'x/y': 'z' },
            managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }],
          },
          spec: {
            containers: [
              {
                name: 'c',
                image: 'i',
                ports: [{ containerPort: 80 }],
                resources: { limits: { cpu: '1' } },
                livenessProbe: { httpGet: { port: 'http' } },
              },
            ],
            volumes: [{ name: 'v', configMap: { name: 'c', items: [{ key: 'k', path: 'p' }] } }],
          },
          status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
        },
        'Pod',
      ),
    ).toEqual([]);
  });

  it('names every unknown field with its path, as the strict decoder does', () => {
    const fields = unknownFields(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        bogus: 1,
        metadata: { name: 'a', labelz: {} },
        spec: {
          containers: [
            { name: 'c', image: 'i' },
            { name: 'd', imagee: 'i', env: [{ name: 'E', valu: '1' }] },
          ],
        },
      },
      'Pod',
    );
    expect(fields).toEqual(['bogus', 'metadata.labelz', 'spec.containers[1].env[0].valu', 'spec.containers[1].imagee']);
    expect(strictDecodingMessage(fields.slice(0, 2))).toBe('strict decoding error: unknown field "bogus", unknown field "metadata.labelz"');
  });

  it('knows the other served kinds and refuses a kind it has no schema for', () => {
    expect(unknownFields({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' }, dataa: {} }, 'ConfigMap')).toEqual(['dataa']);
    expect(unknownFields({ metadata: { name: 'n' }, spec: { podCIDR: 'x', podCIDRR: 'y' } }, 'Node')).toEqual(['spec.podCIDRR']);
    expect(() => unknownFields({}, 'Deployment')).toThrow('no core/v1 schema for kind "Deployment"');
  });

  it('stops at 100 fields and walks a wide object without recursion', () => {
    const labelsLike = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, 1]));
    expect(unknownFields({ spec: labelsLike }, 'Pod')).toHaveLength(100);
    expect(unknownFields('not an object', 'Pod')).toEqual([]);
  });
});

import { statSync } from 'node:fs';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { AgentError, statusReasonOf } from '../../../src/shared/errors.js';
import { openApi } from '../../../src/server/kube-api/openapi.js';

type Json = Record<string, any>;

const kKubectlV2Accept = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

function json(path: string, accept = 'application/json'): Json {
  const answer = openApi(path, accept);
  expect(answer?.contentType).toBe('application/json');
  return JSON.parse(String(answer?.body)) as Json;
}

/** Every `$ref` in a document. */
function refs(doc: unknown): string[] {
  const out: string[] = [];
  JSON.stringify(doc, (key, v: unknown) => {
    if (key === '$ref' && typeof v === 'string') out.push(v);
    return v;
  });
  return out;
}

describe('openApi', () => {
  it('answers undefined for any other path', () => {
    for (const p of ['/openapi', '/openapi/v3/apis/apps/v1', '/openapi/v4', '/api/v1', '', '/openapi/v2x'])
      expect(openApi(p, 'application/json')).toBeUndefined();
  });

  it('/openapi/v3 is the index kubectl reads: api/v1 → a serverRelativeURL carrying the hash of the document', () => {
    const index = json('/openapi/v3', 'application/json, */*');
    expect(Object.keys(index.paths)).toEqual(['api/v1']);
    const url = index.paths['api/v1'].serverRelativeURL as string;
    expect(url).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
    // The URL the index gives (with its query) serves the document.
    expect(json(url).openapi).toBe('3.0.0');
  });

  it('/openapi/v3/api/v1 has the core/v1 and meta/v1 schemas; every reference resolves', () => {
    const doc = json('/openapi/v3/api/v1');
    const schemas = doc.components.schemas as Json;
    expect(schemas['io.k8s.api.core.v1.Pod']['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Pod', version: 'v1' }]);
    expect(schemas['io.k8s.api.core.v1.PodSpec'].required).toEqual(['containers']);
    expect(schemas['io.k8s.api.core.v1.PodSpec'].properties.containers).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' },
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });
    expect(schemas['io.k8s.api.core.v1.Container'].properties.ports['x-kubernetes-patch-merge-key']).toBe('containerPort');
    expect(schemas['io.k8s.api.core.v1.PodSpec'].properties.volumes['x-kubernetes-patch-strategy']).toBe('merge,retainKeys');
    expect(schemas['io.k8s.api.core.v1.Container'].properties.command.description).toMatch(/^Entrypoint array/);
    expect(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).toMatchObject({ type: 'string', format: 'date-time' });
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(300);
    for (const r of all) {
      expect(r.startsWith('#/components/schemas/'), r).toBe(true);
      expect(schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
    }
    // Trimmed to what the one-node API serves: no apps/v1, no batch.
    expect(Object.keys(schemas).every((k) => k.startsWith('io.k8s.api.core.v1.') || k.startsWith('io.k8s.apimachinery.'))).toBe(true);
    expect(schemas['io.k8s.api.core.v1.PersistentVolume']).toBeUndefined();
  });

  it('the pod PATCH operation lists fieldValidation (so kubectl validates on the server) and the four patch types', () => {
    const doc = json('/openapi/v3/api/v1');
    const patch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch as Json;
    expect(patch['x-kubernetes-action']).toBe('patch');
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: '', kind: 'Pod', version: 'v1' });
    expect((patch.parameters as Json[]).map((p) => p.name)).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(Object.keys(patch.requestBody.content)).toEqual([
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
    expect(doc.paths['/api/v1/pods'].get['x-kubernetes-action']).toBe('list');
    expect(doc.paths['/api/v1/nodes/{name}'].get['x-kubernetes-group-version-kind'].kind).toBe('Node');
  });

  it('/openapi/v2 is Swagger 2.0 JSON with definitions and #/definitions/ references only', () => {
    const doc = json('/openapi/v2');
    expect(doc.swagger).toBe('2.0');
    const defs = doc.definitions as Json;
    expect(defs['io.k8s.api.core.v1.Pod'].properties.spec).toMatchObject({ $ref: '#/definitions/io.k8s.api.core.v1.PodSpec' });
    expect(JSON.stringify(doc)).not.toContain('allOf');
    for (const r of refs(doc)) expect(defs[r.replace('#/definitions/', '')], r).toBeDefined();
    const patch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch as Json;
    expect(patch.parameters[0]).toMatchObject({
      in: 'body',
      name: 'body',
      schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
    });
    expect(patch.consumes).toContain('application/strategic-merge-patch+json');
  });

  it('answers the protobuf Accept kubectl sends for /openapi/v2 with an openapi.v2.Document of the definitions', () => {
    const answer = openApi('/openapi/v2', kKubectlV2Accept);
    expect(answer?.contentType).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // The subset of gnostic's OpenAPIv2.proto we write, to decode it with protobufjs.
    const root = protobuf.Root.fromJSON({
      nested: {
        Document: {
          fields: { swagger: { type: 'string', id: 1 }, info: { type: 'Info', id: 2 }, definitions: { type: 'Definitions', id: 9 } },
        },
        Info: { fields: { title: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
        Definitions: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
        NamedSchema: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Schema', id: 2 } } },
        NamedAny: { fields: { name: { type: 'string', id: 1 }, value: { type: 'Any', id: 2 } } },
        Any: { fields: { yaml: { type: 'string', id: 2 } } },
        Schema: {
          fields: {
            ref: { type: 'string', id: 1 },
            description: { type: 'string', id: 4 },
            required: { rule: 'repeated', type: 'string', id: 19 },
            type: { type: 'TypeItem', id: 22 },
            items: { type: 'ItemsItem', id: 23 },
            properties: { type: 'Properties', id: 25 },
            vendorExtension: { rule: 'repeated', type: 'NamedAny', id: 31 },
          },
        },
        TypeItem: { fields: { value: { rule: 'repeated', type: 'string', id: 1 } } },
        ItemsItem: { fields: { schema: { rule: 'repeated', type: 'Schema', id: 1 } } },
        Properties: { fields: { additionalProperties: { rule: 'repeated', type: 'NamedSchema', id: 1 } } },
      },
    });
    const doc = root
      .lookupType('Document')
      .decode(answer?.body as Buffer)
      .toJSON() as Json;
    expect(doc.swagger).toBe('2.0');
    const defs = doc.definitions.additionalProperties as Json[];
    expect(defs.length).toBe(Object.keys(json('/openapi/v2').definitions).length);
    const pod = defs.find((d) => d.name === 'io.k8s.api.core.v1.Pod')?.value as Json;
    expect(pod.type.value).toEqual(['object']);
    expect(pod.vendorExtension).toEqual([
      { name: 'x-kubernetes-group-version-kind', value: { yaml: '[{"group":"","kind":"Pod","version":"v1"}]' } },
    ]);
    const spec = (pod.properties.additionalProperties as Json[]).find((p) => p.name === 'spec')?.value as Json;
    expect(spec.ref).toBe('#/definitions/io.k8s.api.core.v1.PodSpec');
    const podSpec = defs.find((d) => d.name === 'io.k8s.api.core.v1.PodSpec')?.value as Json;
    expect(podSpec.required).toEqual(['containers']);
    const containers = (podSpec.properties.additionalProperties as Json[]).find((p) => p.name === 'containers')?.value as Json;
    expect(containers.items.schema[0].ref).toBe('#/definitions/io.k8s.api.core.v1.Container');
  });

  it('answers an Accept that allows no JSON (but the v2 protobuf) with a 406 NotAcceptable error', () => {
    let err: unknown;
    try {
      openApi('/openapi/v3/api/v1', 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AgentError);
    expect(statusReasonOf(err)).toBe('NotAcceptable');
    expect(() => openApi('/openapi/v3', 'application/json;q=0')).toThrow(AgentError);
    expect(openApi('/openapi/v3', '')?.contentType).toBe('application/json');
    expect(openApi('/openapi/v2', 'application/json, */*')?.contentType).toBe('application/json');
  });

  it('the committed schema data stays small (the trimmed core/v1 + meta/v1: under 300 KB)', () => {
    const size = statSync(new URL('../../../src/server/kube-api/openapi/core-v1.json', import.meta.url)).size;
    expect(size).toBeLessThan(300 * 1024);
  });
});

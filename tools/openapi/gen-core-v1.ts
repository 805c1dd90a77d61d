/**
 * tools/openapi/gen-core-v1.ts — writes src/server/kube-api/openapi/core-v1.json, the OpenAPI v3
 * `components.schemas` of core/v1 (the kinds the one-node API serves and everything they
 * reference) plus meta/v1, for `/openapi/v2` and `/openapi/v3/api/v1` (src/server/kube-api/openapi.ts).
 *
 * Source: the `kubernetes-types` package (a dev dependency, pinned in package.json), whose
 * declarations are generated from the Kubernetes OpenAPI document of its version and carry every
 * field's description, type and required-ness. No npm package here ships a current swagger.json
 * itself (kubernetes-client@9 ships 1.10–1.13 only), so this script reads the declarations with the
 * TypeScript compiler API and writes them back as schemas in the apiserver's v3 shape (`allOf:
 * [{$ref}]` beside a description, `x-kubernetes-group-version-kind` on kinds). The patch
 * extensions (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`,
 * `x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) come from our own kPodPatchMeta (the
 * core/v1 struct tags). Run: `npx tsx tools/openapi/gen-core-v1.ts`; commit the output.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { kPodPatchMeta, type PatchMeta } from '../../src/server/kube-api/patch/pod-strategies.js';

type Schema = Record<string, unknown>;

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const typesDir = dirname(require.resolve('kubernetes-types/package.json'));
const typesVersion = (JSON.parse(readFileSync(join(typesDir, 'package.json'), 'utf8')) as { version: string }).version;

/** The declaration files read, and the OpenAPI name prefix of their types. */
const kFiles: Array<[string, string]> = [
  ['core/v1.d.ts', 'io.k8s.api.core.v1'],
  ['meta/v1.d.ts', 'io.k8s.apimachinery.pkg.apis.meta.v1'],
  ['api/resource.d.ts', 'io.k8s.apimachinery.pkg.api.resource'],
  ['runtime.d.ts', 'io.k8s.apimachinery.pkg.runtime'],
];
const kIntOrString = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** The kinds served (issue 15): the schemas kept are these, all of meta/v1, and what they reference. */
const kRoots = ['Pod', 'PodList', 'Node', 'NodeList', 'Namespace', 'NamespaceList', 'Event', 'EventList',
  'ConfigMap', 'ConfigMapList', 'Secret', 'SecretList', 'PersistentVolumeClaim', 'PersistentVolumeClaimList', 'Binding'].map((k) => `io.k8s.api.core.v1.${k}`);

const schemas: Record<string, Schema> = {};
const nameOf = new Map<string, string>(); // short type name → full OpenAPI name (per file, core wins)

function docOf(node: ts.Node): string | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = docs.map((d) => (typeof d.comment === 'string' ? d.comment : ts.getTextOfJSDocComment(d.comment) ?? '')).join('\n').trim();
  return text === '' ? undefined : text;
}

function refTo(full: string): Schema {
  return { $ref: `#/components/schemas/${full}` };
}

function typeSchema(t: ts.TypeNode, local: Map<string, string>): Schema {
  if (ts.isArrayTypeNode(t)) return { type: 'array', items: typeSchema(t.elementType, local) };
  if (ts.isTypeLiteralNode(t)) {
    const index = t.members.find(ts.isIndexSignatureDeclaration);
    if (index?.type) return { type: 'object', additionalProperties: typeSchema(index.type, local) };
    return { type: 'object' };
  }
  if (ts.isUnionTypeNode(t)) {
    const kinds = t.types.map((u) => u.kind);
    if (kinds.includes(ts.SyntaxKind.NumberKeyword) && kinds.includes(ts.SyntaxKind.StringKeyword)) return refTo(kIntOrString);
    if (t.types.every((u) => ts.isLiteralTypeNode(u) && ts.isStringLiteral(u.literal))) return { type: 'string' };
    return typeSchema(t.types[0], local);
  }
  if (ts.isLiteralTypeNode(t)) return { type: ts.isStringLiteral(t.literal) ? 'string' : 'integer' };
  if (ts.isTypeReferenceNode(t)) {
    const name = t.typeName.getText();
    if (name === 'Array' && t.typeArguments?.length === 1) return { type: 'array', items: typeSchema(t.typeArguments[0], local) };
    const full = local.get(name);
    if (full === undefined) throw new Error(`unknown type ${name}`);
    return refTo(full);
  }
  switch (t.kind) {
    case ts.SyntaxKind.StringKeyword: return { type: 'string' };
    case ts.SyntaxKind.NumberKeyword: return { type: 'integer' };
    case ts.SyntaxKind.BooleanKeyword: return { type: 'boolean' };
    default: return { type: 'object' };
  }
}

for (const [file, prefix] of kFiles) {
  const path = join(typesDir, file);
  const sf = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const local = new Map<string, string>();
  // Imports name types of the other files: resolve them by the prefix of the file they come from.
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st) && st.importClause?.namedBindings && ts.isNamedImports(st.importClause.namedBindings)) {
      const from = (st.moduleSpecifier as ts.StringLiteral).text.replace(/^\.\.\//, '').replace(/^\.\//, '');
      const other = kFiles.find(([f]) => f.replace(/\.d\.ts$/, '') === from || f === `${from}.d.ts`);
      if (other === undefined) throw new Error(`import from ${from} in ${file}`);
      for (const el of st.importClause.namedBindings.elements) local.set(el.name.text, `${other[1]}.${el.name.text}`);
    }
    if ((ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st))) local.set(st.name.text, `${prefix}.${st.name.text}`);
  }
  for (const st of sf.statements) {
    if (ts.isTypeAliasDeclaration(st)) {
      const full = `${prefix}.${st.name.text}`;
      const s: Schema = { description: docOf(st), type: 'string' };
      if (st.name.text === 'Time' || st.name.text === 'MicroTime') s.format = 'date-time';
      schemas[full] = s;
      nameOf.set(st.name.text, full);
    }
    if (!ts.isInterfaceDeclaration(st)) continue;
    const full = `${prefix}.${st.name.text}`;
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    let apiVersion: string | undefined;
    let kind: string | undefined;
    for (const m of st.members) {
      if (!ts.isPropertySignature(m) || m.type === undefined) continue;
      const name = m.name.getText().replace(/^"|"$/g, '');
      const inner = typeSchema(m.type, local);
      const description = docOf(m);
      const prop: Schema = inner.$ref !== undefined ? { allOf: [inner] } : { ...inner };
      if (description !== undefined) prop.description = description;
      properties[name] = prop;
      if (m.questionToken === undefined) required.push(name);
      if (ts.isLiteralTypeNode(m.type) && ts.isStringLiteral(m.type.literal)) {
        if (name === 'apiVersion') apiVersion = m.type.literal.text;
        if (name === 'kind') kind = m.type.literal.text;
      }
    }
    const s: Schema = { description: docOf(st), properties, type: 'object' };
    if (st.name.text === 'FieldsV1' || st.name.text === 'RawExtension') delete s.properties;
    if (required.length > 0) s.required = required;
    if (apiVersion !== undefined && kind !== undefined) {
      const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
      s['x-kubernetes-group-version-kind'] = [{ group, kind, version }];
    }
    schemas[full] = s;
  }
}
schemas[kIntOrString] = {
  description: 'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.',
  format: 'int-or-string',
  type: 'string',
  'x-kubernetes-int-or-string': true,
};

/** Follow kPodPatchMeta from Pod down, putting the patch extensions on the lists it names. */
function annotate(full: string, meta: PatchMeta | undefined, seen = new Set<string>()): void {
  const s = schemas[full];
  if (s === undefined || meta?.fields === undefined || seen.has(full)) return;
  seen.add(full);
  const props = s.properties as Record<string, Schema>;
  for (const [field, m] of Object.entries(meta.fields)) {
    const p = props[field];
    if (p === undefined) continue;
    if (m.mergeKey !== undefined) {
      p['x-kubernetes-patch-merge-key'] = m.mergeKey;
      p['x-kubernetes-patch-strategy'] = m.retainKeys === true ? 'merge,retainKeys' : 'merge';
      p['x-kubernetes-list-type'] = 'map';
      p['x-kubernetes-list-map-keys'] = [m.mergeKey];
    } else if (m.primitiveMerge === true) {
      p['x-kubernetes-patch-strategy'] = 'merge';
      p['x-kubernetes-list-type'] = 'set';
    }
    const target = ((p.items as Schema | undefined)?.$ref ?? (p.allOf as Schema[] | undefined)?.[0]?.$ref) as string | undefined;
    if (target !== undefined) annotate(target.replace('#/components/schemas/', ''), m.items ?? m, seen);
  }
}
annotate('io.k8s.api.core.v1.Pod', kPodPatchMeta);

// Trim: the served kinds, all of meta/v1, and their references.
const keep = new Set<string>();
const queue = [...kRoots, ...Object.keys(schemas).filter((k) => k.startsWith('io.k8s.apimachinery.pkg.apis.meta.v1.'))];
while (queue.length > 0) {
  const k = queue.pop() as string;
  if (keep.has(k)) continue;
  if (schemas[k] === undefined) throw new Error(`missing schema ${k}`);
  keep.add(k);
  JSON.stringify(schemas[k], (key, v: unknown) => {
    if (key === '$ref' && typeof v === 'string') queue.push(v.replace('#/components/schemas/', ''));
    return v;
  });
}
const out: Record<string, Schema> = {};
for (const k of [...keep].sort()) out[k] = JSON.parse(JSON.stringify(schemas[k])) as Schema;
const doc = { source: `kubernetes-types@${typesVersion} (tools/openapi/gen-core-v1.ts)`, schemas: out };
const target = join(root, 'src', 'server', 'kube-api', 'openapi', 'core-v1.json');
writeFileSync(target, `${JSON.stringify(doc)}\n`);
console.log(`wrote ${target}: ${keep.size} schemas, ${JSON.stringify(doc).length} bytes`);

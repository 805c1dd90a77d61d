// Test helpers for the example manifests of issue #12 (examples/k8s-docs: the Kubernetes
// documentation's Pod examples; examples/kubeadm: kubeadm's static pods): reading them as a user's
// `kubectl apply -f FILE -n NS` would, for the unit test that keeps them valid and the e2e test that
// runs them. The role of the e2e framework's manifest fixtures (test/e2e/testing-manifests upstream).
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { kKubernetesYaml } from '../../src/shared/yaml-options.js';

/** The repository's examples/ directory. */
export const kExamplesDir = join(import.meta.dirname, '../../examples');
/** examples/k8s-docs: the documentation's examples, paths as under kubernetes/website content/en/examples. */
export const kDocsExamplesDir = join(kExamplesDir, 'k8s-docs');
/** examples/kubeadm: kubeadm's four static pods. */
export const kKubeadmExamplesDir = join(kExamplesDir, 'kubeadm');

/**
 * Examples the agent refuses on purpose, each with the only field it may refuse (the README says
 * why): supplementalGroupsPolicy Strict cannot be run by Docker, which always adds the groups the
 * image's /etc/group gives the user.
 */
export const kRefusedExamples: Record<string, string> = {
  'pods/security/security-context-6.yaml': 'spec.securityContext.supplementalGroupsPolicy',
};

/** One YAML document of an example file, as plain data (a Pod, ConfigMap or Secret). */
export type ExampleObject = Record<string, unknown> & { kind?: string; metadata?: { name?: string; namespace?: string } };

/** ExampleFile: one example file, read. */
export interface ExampleFile {
  /** The path under its examples directory, e.g. `pods/inject/secret-pod.yaml`. */
  path: string;
  /** Every document in order (the Pods and the ConfigMaps/Secrets added beside them). */
  documents: ExampleObject[];
  /** Each document's own text (for decoding it with the agent's own parser). */
  texts: string[];
  /** The files its header comment names on `# needs:` lines (paths under the same examples dir). */
  needs: string[];
}

/** listYamlFiles: every `.yaml` file under `dir`, as paths relative to `dir`, sorted. */
export function listYamlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.yaml')) out.push(relative(dir, join(d, e.name)));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * readExample reads `path` under `dir`: its documents (parsed as the agent's manifest parser does:
 * YAML 1.1 as Kubernetes reads it (kKubernetesYaml), duplicate keys allowed) and its `# needs: a.yaml b.yaml` header lines, resolved
 * against the file's own directory. Throws on a YAML syntax error.
 */
export function readExample(dir: string, path: string): ExampleFile {
  const text = readFileSync(join(dir, path), 'utf8');
  const docs = parseAllDocuments(text, { ...kKubernetesYaml, uniqueKeys: false });
  if (!Array.isArray(docs)) throw new Error(`${path}: not a YAML stream`);
  const documents: ExampleObject[] = [];
  const texts: string[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors[0].message}`);
    const value = doc.toJS() as ExampleObject | null;
    if (value === null) continue;
    documents.push(value);
    texts.push(doc.toString());
  }
  const needs = [...text.matchAll(/^# needs: (.+)$/gm)]
    .flatMap((m) => m[1].split(/\s+/).filter((w) => w.endsWith('.yaml')))
    .map((n) => relative(dir, join(dir, dirname(path), n)));
  return { path, documents, texts, needs };
}

/** isPodDocument: whether a document is a Pod (kind Pod; a document without a kind counts as one). */
export function isPodDocument(d: ExampleObject): boolean {
  return d.kind === 'Pod' || d.kind === undefined;
}

/**
 * exampleNamespace: the namespace the e2e test applies a documentation example into when its
 * documents name none — one per file (`kubectl apply -n NS -f FILE`), since several examples share
 * a pod name (`dapi-test-pod`, `nginx`, `volume-test`, `security-context-demo`, ...).
 */
export function exampleNamespace(path: string): string {
  const base = path
    .replace(/\.yaml$/, '')
    .split('/')
    .at(-1)!
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-');
  return `ex-${base}`.slice(0, 63).replace(/-+$/, '');
}

/**
 * applyBody: the multi-document YAML body a user's `kubectl apply -n NS -f needs... -f file` sends
 * for one documentation example: the documents of its `needs` files, then its own, each without a
 * namespace given `namespace` (a document naming its own namespace keeps it).
 */
export function applyBody(file: ExampleFile, namespace: string): string {
  const needs = file.needs.map((n) => readExample(kDocsExamplesDir, n).documents).flat();
  return [...needs, ...file.documents]
    .map((d) => {
      const metadata = { ...(d.metadata ?? {}) };
      metadata.namespace ??= namespace;
      return stringify({ ...d, metadata });
    })
    .join('---\n');
}

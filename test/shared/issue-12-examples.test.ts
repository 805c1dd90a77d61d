// Issue #12, "Done when" point 2, without Docker: every example manifest under examples/k8s-docs
// (the Kubernetes documentation's Pod examples) and examples/kubeadm (kubeadm's static pods) decodes
// with the agent's own manifest parser and passes validation after the defaults
// (applyPodDefaults + validatePodForNode, as src/shared/pods-body.ts does for POST /pods), so the
// examples cannot rot. KUBELET_TS_EXAMPLES_REPORT=1 prints every refusal, file by file, instead of
// stopping at the first failing file.
import { describe, expect, it } from 'vitest';
import type { FieldError } from '../../src/shared/errors.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { parseManifestEntries } from '../../src/shared/manifest.js';
import { validatePodForNode } from '../../src/shared/validation.js';
import { isPodDocument, kDocsExamplesDir, kKubeadmExamplesDir, listYamlFiles, readExample, type ExampleObject } from '../support/examples.js';

/** podErrors: what the agent refuses in one Pod document's text (parse errors included). */
function podErrors(text: string, origin: string): string[] {
  try {
    return parseManifestEntries(text, origin).flatMap(({ pod }) => validatePodForNode(applyPodDefaults(pod))).map((e: FieldError) => formatFieldError(e));
  } catch (err) {
    const errors = (err as { errors?: FieldError[] }).errors;
    return errors ? errors.map((e) => formatFieldError(e)) : [String(err)];
  }
}

/** objectErrors: the shape a ConfigMap or Secret document must have (name; data/stringData maps of strings). */
function objectErrors(d: ExampleObject): string[] {
  const out: string[] = [];
  if (d.apiVersion !== 'v1') out.push(`apiVersion: must be v1, not ${JSON.stringify(d.apiVersion)}`);
  if (d.kind !== 'ConfigMap' && d.kind !== 'Secret') return [...out, `kind: ${JSON.stringify(d.kind)} is neither Pod, ConfigMap nor Secret`];
  if (typeof d.metadata?.name !== 'string' || !d.metadata.name) out.push('metadata.name: Required value');
  for (const field of ['data', 'stringData']) {
    const m = d[field];
    if (m === undefined) continue;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) out.push(`${field}: must be a map`);
    else for (const [k, v] of Object.entries(m)) if (typeof v !== 'string') out.push(`${field}[${k}]: must be a string`);
  }
  return out;
}

/** exampleErrors: every refusal in one example file, each prefixed by its document's index. */
function exampleErrors(dir: string, path: string): string[] {
  const file = readExample(dir, path);
  return file.documents.flatMap((d, i) => {
    const errs = isPodDocument(d) ? podErrors(file.texts[i], `${path}[${i}]`) : objectErrors(d);
    return errs.map((e) => `[${i}] ${e}`);
  });
}

const docs = listYamlFiles(kDocsExamplesDir);
const kubeadm = listYamlFiles(kKubeadmExamplesDir);

describe('issue 12: the example manifests are accepted as they are', () => {
  it('the example directories hold the files the e2e test runs', () => {
    expect(kubeadm).toEqual(['etcd.yaml', 'kube-apiserver.yaml', 'kube-controller-manager.yaml', 'kube-scheduler.yaml']);
    expect(docs.length).toBeGreaterThanOrEqual(40);
  });

  it('every `# needs:` file of a documentation example exists', () => {
    for (const path of docs) for (const n of readExample(kDocsExamplesDir, path).needs) expect(docs, `${path} needs ${n}`).toContain(n);
  });

  if (process.env.KUBELET_TS_EXAMPLES_REPORT) {
    it('report: every refusal, file by file', () => {
      const lines: string[] = [];
      for (const [dir, files, label] of [[kDocsExamplesDir, docs, 'k8s-docs'], [kKubeadmExamplesDir, kubeadm, 'kubeadm']] as const) {
        for (const path of files) {
          const errs = exampleErrors(dir, path);
          lines.push(`${errs.length === 0 ? 'ok  ' : 'FAIL'} ${label}/${path}`, ...errs.map((e) => `       ${e}`));
        }
      }
      process.stdout.write(`${lines.join('\n')}\n`);
    });
  }

  it.each(docs)('examples/k8s-docs/%s parses and validates', (path) => {
    expect(exampleErrors(kDocsExamplesDir, path)).toEqual([]);
  });

  it.each(kubeadm)('examples/kubeadm/%s parses and validates', (path) => {
    expect(exampleErrors(kKubeadmExamplesDir, path)).toEqual([]);
  });
});

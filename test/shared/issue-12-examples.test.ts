// Issue #12, "Done when" point 2, without Docker: every example manifest under examples/k8s-docs
// (the Kubernetes documentation's Pod examples) and examples/kubeadm (kubeadm's static pods) decodes
// with the agent's own manifest parser and passes validation after the defaults
// (decodePodsBody, what POST /pods does: defaults, then validatePodForNode), so the
// examples cannot rot. KUBELET_TS_EXAMPLES_REPORT=1 prints every refusal, file by file, instead of
// stopping at the first failing file.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatFieldError } from '../../src/shared/errors.js';
import { decodePodsBody } from '../../src/shared/pods-body.js';
import { kDocsExamplesDir, kKubeadmExamplesDir, kRefusedExamples, listYamlFiles, readExample } from '../support/examples.js';

/**
 * exampleErrors: every refusal of one example file, as `POST /pods` decodes a body
 * (decodePodsBody: the agent's own parser, ConfigMaps and Secrets beside the pods, the defaults,
 * validatePodForNode) — for a documentation example, its `# needs:` files first in the same body,
 * as `kubectl apply -f needs... -f file` sends them.
 */
function exampleErrors(dir: string, path: string): string[] {
  const file = readExample(dir, path);
  const text = [...file.needs, path].map((p) => readFileSync(join(dir, p), 'utf8')).join('\n---\n');
  const decoded = decodePodsBody({ text, format: 'yaml' });
  if (decoded.ok) return [];
  return decoded.kind === 'invalid' ? decoded.errors.map((e) => formatFieldError(e)) : [decoded.message];
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
      for (const [dir, files, label] of [
        [kDocsExamplesDir, docs, 'k8s-docs'],
        [kKubeadmExamplesDir, kubeadm, 'kubeadm'],
      ] as const) {
        for (const path of files) {
          const errs = exampleErrors(dir, path);
          lines.push(`${errs.length === 0 ? 'ok  ' : 'FAIL'} ${label}/${path}`, ...errs.map((e) => `       ${e}`));
        }
      }
      process.stdout.write(`${lines.join('\n')}\n`);
    });
  }

  it.each(docs.filter((p) => !(p in kRefusedExamples)))('examples/k8s-docs/%s parses and validates', (path) => {
    expect(exampleErrors(kDocsExamplesDir, path)).toEqual([]);
  });

  it.each(Object.entries(kRefusedExamples))('examples/k8s-docs/%s is refused for %s alone, with the reason', (path, field) => {
    const errors = exampleErrors(kDocsExamplesDir, path);
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}: Not supported: \\S`));
  });

  it.each(kubeadm)('examples/kubeadm/%s parses and validates', (path) => {
    expect(exampleErrors(kKubeadmExamplesDir, path)).toEqual([]);
  });
});

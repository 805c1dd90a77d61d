// The nesting guard that runs before the YAML and JSON parsers (src/shared/manifest-depth.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kMaxManifestDepth, manifestDepth } from '../../src/shared/manifest-depth.js';

const pod = `apiVersion: v1
kind: Pod
metadata:
  name: web   # a comment with [[[[ brackets
  labels: {app: web}
spec:
  containers:
    - name: main
      image: busybox
      command: ["sh", "-c", "echo '[[[[' {{{{"]
      args:
        - |
          if [ -f /x ]; then echo [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[; fi
            {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{
        - "it's [ fine"
`;

describe('manifestDepth', () => {
  it('measures a real Pod shallowly: brackets in comments, quotes and block scalars are text', () => {
    const depth = manifestDepth(pod);
    expect(depth).toBeGreaterThanOrEqual(4);
    expect(depth).toBeLessThan(10);
  });

  it.each([
    ['flow sequences', '['.repeat(1000), 'yaml'],
    ['flow mappings', 'a: ' + '{b: '.repeat(500), 'yaml'],
    ['JSON arrays', '['.repeat(100_000) + ']'.repeat(100_000), 'json'],
    ['block sequences on one line', '- '.repeat(300) + 'x', 'yaml'],
    ['indented block levels', Array.from({ length: 300 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' x', 'yaml'],
  ] as const)('finds %s nested past the limit', (_what, text, format) => {
    expect(manifestDepth(text, format)).toBeGreaterThan(kMaxManifestDepth);
  });

  it('stays at the depth of the structure, not the length of the text (a long flat list)', () => {
    const flat = 'items:\n' + Array.from({ length: 5000 }, (_, i) => `  - {name: p${i}, value: [1, 2, [3]]}`).join('\n');
    expect(manifestDepth(flat)).toBeLessThanOrEqual(8); // a sequence entry counts as its line's level and its own: never under the real depth
    expect(manifestDepth(JSON.stringify({ items: Array.from({ length: 5000 }, () => ({ a: [1, { b: 2 }] })) }), 'json')).toBe(5);
  });

  it('passes every example manifest of the repository', () => {
    const dir = join(import.meta.dirname, '../../examples');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /\.(ya?ml|json)$/.test(f));
    expect(files.length).toBeGreaterThan(40); // examples/, k8s-docs/ and kubeadm/
    for (const f of files)
      expect(manifestDepth(readFileSync(join(dir, f), 'utf8'), f.endsWith('.json') ? 'json' : 'yaml'), f).toBeLessThan(20);
  });
});

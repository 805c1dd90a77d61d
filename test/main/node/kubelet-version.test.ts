// Issue 39 item 10: the Node's kubeletVersion (and /version's gitVersion) is the Kubernetes version
// implemented, with kubelet-ts's own version as the semver pre-release: `v1.32.0-kubelet-ts.N`.
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { kubeletVersion } from '../../../src/main/node/node-status.js';

it('reports v1.32.0-kubelet-ts.<package version>, a semantic version tools parse as Kubernetes 1.32', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  expect(kubeletVersion()).toBe(`v1.32.0-kubelet-ts.${pkg.version}`);
  // semver 2.0.0's grammar (as client-go's version.ParseSemantic): numeric identifiers without leading zeros.
  expect(kubeletVersion()).toMatch(
    /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)-((?:0|[1-9]\d*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*))*)$/,
  );
});

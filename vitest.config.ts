// Test runner configuration; the role of Kubernetes' hack/make-rules/test.sh settings (what runs, how long, how it reports).
import { defineConfig } from 'vitest/config';
import CountsReporter from './test/support/reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // 2 cores and one shared dockerd: run test files one at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Probes dockerd and the local images once; provides `dockerAvailable` (see global-setup.ts).
    globalSetup: ['./test/support/global-setup.ts'],
    // Ours last: its `N passed, N failed[, N skipped]` is the final line CI reads.
    reporters: ['default', new CountsReporter()],
  },
});

// Pre-flight check of the container runtime before any suite runs; the role of the kubelet node e2e suite's runtime checks (test/e2e_node, SynchronizedBeforeSuite).
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { dockerProblem } from './docker.js';
import { containerdEndpoint } from './runtime.js';

/**
 * setup is vitest's globalSetup (runs once, in the main vitest process, before any test file).
 * It checks that dockerd answers on /var/run/docker.sock and that kubelet-ts/pause:1.0 and
 * kubelet-ts/busybox:1.35 exist, and provides `dockerAvailable: boolean` to the tests
 * (`inject('dockerAvailable')`). Without Docker a plain `npx vitest run` still runs the unit tests
 * (one notice on stderr); with KUBELET_TS_REQUIRE_DOCKER=1 (set by tools/test, so by CI) it throws
 * instead, failing the run: CI must never skip Docker-backed suites silently.
 * For a project on containerd (vitest.config.ts's `containerd` project, KUBELET_TS_TEST_RUNTIME=containerd)
 * it also requires the endpoint of tools/lib/containerd.sh to be a socket, and throws otherwise:
 * a suite asked to run on containerd never skips.
 * It returns no teardown, so nothing is printed after the reporters' final line.
 */
export default async function setup(project: TestProject): Promise<void> {
  const problem = await dockerProblem();
  if (problem !== undefined) {
    if (process.env.KUBELET_TS_REQUIRE_DOCKER === '1') {
      throw new Error(
        `Docker is required (KUBELET_TS_REQUIRE_DOCKER=1) but not usable: ${problem}. ` +
          'tools/test installs and starts dockerd and builds the local images; run it, or unset KUBELET_TS_REQUIRE_DOCKER to skip Docker-backed suites.',
      );
    }
    process.stderr.write(`[global-setup] Docker not available (${problem}); Docker-backed suites will be skipped.\n`);
  }
  project.provide('dockerAvailable', problem === undefined);
  if ((project.config.env?.KUBELET_TS_TEST_RUNTIME || process.env.KUBELET_TS_TEST_RUNTIME) === 'containerd') {
    const socket = containerdEndpoint().replace(/^unix:\/\//, '');
    if (!existsSync(socket))
      throw new Error(`the ${project.name} project runs on containerd but ${socket} does not exist: run tools/lib/containerd.sh up`);
  }
}

// The runtime selection of test/support/runtime.ts: the variable, the agent's arguments, the marker
// for what a runtime cannot do, and the neutral look at containers on the real Docker and containerd.
import { describe, expect, inject, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kContainerdSuites } from '../../vitest.config.js';
import { kRepoRoot } from './agent-process.js';
import type { TestModule } from 'vitest/node';
import { BUSYBOX_IMAGE, docker, waitFor } from './docker.js';
import { removeImage } from './runtime-records.js';
import { criEndpointOrSkip, useCriRun } from './cri.js';
import { runtimeLines } from './reporter.js';
import {
  itRuntime,
  labeledContainers,
  lackReason,
  removeLabeled,
  runtimeAgentArgs,
  startForeignPod,
  testRuntime,
  withTestRuntime,
} from './runtime.js';

describe('test runtime selection', () => {
  it('is Docker unless KUBELET_TS_TEST_RUNTIME names containerd, and refuses anything else naming the variable', () => {
    expect(testRuntime({})).toBe('docker');
    expect(testRuntime({ KUBELET_TS_TEST_RUNTIME: '' })).toBe('docker');
    expect(testRuntime({ KUBELET_TS_TEST_RUNTIME: 'containerd' })).toBe('containerd');
    expect(() => testRuntime({ KUBELET_TS_TEST_RUNTIME: 'cri-o' })).toThrow(
      /KUBELET_TS_TEST_RUNTIME="cri-o": must be one of docker, containerd/,
    );
  });

  it('gives an agent on containerd the CRI endpoint, and one on Docker nothing', () => {
    expect(runtimeAgentArgs({})).toEqual([]);
    expect(runtimeAgentArgs({ KUBELET_TS_TEST_RUNTIME: 'containerd', KUBELET_TS_CRI_ENDPOINT: 'unix:///x/containerd.sock' })).toEqual([
      '--container-runtime-endpoint',
      'unix:///x/containerd.sock',
    ]);
  });

  it('puts an agent child process on containerd unless its arguments chose a runtime', () => {
    const cri = { KUBELET_TS_TEST_RUNTIME: 'containerd', KUBELET_TS_CRI_ENDPOINT: 'unix:///x/containerd.sock' };
    expect(withTestRuntime(['--root-dir', '/r'], cri)).toEqual([
      '--root-dir',
      '/r',
      '--container-runtime-endpoint',
      'unix:///x/containerd.sock',
    ]);
    expect(withTestRuntime(['--runtime', 'fake'], cri)).toEqual(['--runtime', 'fake']);
    expect(withTestRuntime(['--docker-endpoint=unix:///p.sock'], cri)).toEqual(['--docker-endpoint=unix:///p.sock']);
    expect(withTestRuntime(['--root-dir', '/r'], {})).toEqual(['--root-dir', '/r']);
  });

  it('says why the runtime in use lacks a thing, and nothing for the other', () => {
    const lacks = { containerd: 'hostUsers: false needs containerd 2' };
    expect(lackReason(lacks, { KUBELET_TS_TEST_RUNTIME: 'containerd' })).toBe('hostUsers: false needs containerd 2');
    expect(lackReason(lacks, {})).toBeUndefined();
  });

  // The marker skips, on the runtime it names, a body that would fail.
  itRuntime({ [testRuntime()]: 'this runtime is marked as lacking it, by this test' })('is skipped where marked', () => {
    throw new Error('itRuntime ran a test on a runtime marked as lacking it');
  });

  it('the containerd project lists files that exist, each reaching containers only through runtime.ts', () => {
    // gc's one test is marked Docker-only (itRuntime): it drives a worker with Docker's bootstrap.
    const dockerOnly = new Set(['test/e2e/gc.docker.test.ts']);
    for (const file of kContainerdSuites.filter((f) => !dockerOnly.has(f))) {
      const text = readFileSync(join(kRepoRoot, file), 'utf8');
      // Docker's own API only inside a Docker-only branch: the same body must run on containerd.
      expect(text, file).not.toMatch(/execInPod\(|docker\.getContainer\(|docker\.listContainers\(/);
    }
    expect(kContainerdSuites.length).toBeGreaterThan(0);
  });

  it('prints one tally per runtime when the files ran on two, none when on one', () => {
    const mod = (passed: number, failed: number, runtime: string) =>
      ({
        runtime,
        errors: () => [],
        children: {
          allSuites: () => [],
          allTests: () =>
            [...Array(passed).fill('passed'), ...Array(failed).fill('failed')].map((state) => ({ result: () => ({ state }) })),
        },
      }) as unknown as TestModule;
    const of = (m: TestModule) => (m as unknown as { runtime: string }).runtime;
    expect(runtimeLines([mod(2, 1, 'containerd'), mod(3, 0, 'docker'), mod(1, 0, 'docker')], of)).toEqual([
      'docker: 4 passed, 0 failed',
      'containerd: 2 passed, 1 failed',
    ]);
    expect(runtimeLines([mod(3, 0, 'docker')], of)).toEqual([]);
  });
});

describe.skipIf(!inject('dockerAvailable'))('neutral container look on Docker', () => {
  it('lists the labelled containers and removes them, never another', async () => {
    const value = `rt-${randomBytes(4).toString('hex')}`;
    const mine = await docker.createContainer({
      Image: BUSYBOX_IMAGE,
      Cmd: ['sleep', '60'],
      Labels: { 'kubelet-ts.test-run': value, 'io.kubernetes.pod.uid': 'u-docker', 'io.kubernetes.container.name': 'main' },
    });
    const other = await docker.createContainer({
      Image: BUSYBOX_IMAGE,
      Cmd: ['true'],
      Labels: { 'kubelet-ts.test-run': `${value}-other` },
    });
    try {
      await mine.start();
      const found = await labeledContainers('kubelet-ts.test-run', value, 'docker');
      expect(found).toEqual([expect.objectContaining({ id: mine.id, name: 'main', sandbox: false, running: true })]);
      expect(await removeLabeled('kubelet-ts.test-run', value, 'docker')).toEqual(['u-docker']);
      expect(await labeledContainers('kubelet-ts.test-run', value, 'docker')).toEqual([]);
      expect((await other.inspect()).Id).toBe(other.id);
    } finally {
      await mine.remove({ force: true }).catch(() => undefined);
      await other.remove({ force: true }).catch(() => undefined);
    }
  });
});

const endpoint = criEndpointOrSkip();
describe.skipIf(endpoint === null)('neutral container look on containerd (CRI)', () => {
  const run = useCriRun(endpoint);
  it('lists a labelled sandbox and its container, and removes them', async () => {
    const logs = await run.logDirectory();
    const config = run.sandboxConfig('neutral', logs, { labels: { 'io.kubernetes.pod.uid': 'u-cri' } });
    const key = 'kubelet-ts.test-run';
    try {
      const sandbox = await run.runtime.runPodSandbox(config);
      const id = await run.runtime.createContainer(
        sandbox,
        {
          metadata: { name: 'main', attempt: 0 },
          image: { image: BUSYBOX_IMAGE },
          command: ['sleep', '60'],
          log_path: 'main/0.log',
          labels: { ...run.label, 'io.kubernetes.pod.uid': 'u-cri' },
        },
        config,
      );
      await run.runtime.startContainer(id);
      const found = await labeledContainers(key, run.label[key], 'containerd');
      expect(found).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: sandbox, name: 'POD', sandbox: true, running: true }),
          expect.objectContaining({ id, name: 'main', sandbox: false, running: true }),
        ]),
      );
      expect(await removeLabeled(key, run.label[key], 'containerd')).toEqual(['u-cri']);
      expect(await labeledContainers(key, run.label[key], 'containerd')).toEqual([]);
    } finally {
      await run.cleanup();
    }
  });

  it("starts a foreign pod behind the agents' backs and removes it", async () => {
    const pod = await startForeignPod({ 'kubelet-ts.node-name': 'no-such-node' }, 'containerd');
    try {
      expect(await pod.running()).toBe(true);
      expect(await labeledContainers('kubelet-ts.node-name', 'no-such-node', 'containerd')).toHaveLength(2);
    } finally {
      await pod.remove();
    }
    expect(await labeledContainers('kubelet-ts.node-name', 'no-such-node', 'containerd')).toEqual([]);
  });

  it('removes one name of an image and leaves its other names: the local busybox stays', async () => {
    const name = `127.0.0.1:5055/kubelet-ts/neutral-${randomBytes(4).toString('hex')}:1`;
    const ctr = ['--address', endpoint!.replace(/^unix:\/\//, ''), '--namespace', 'k8s.io', 'images'];
    await promisify(execFile)('ctr', [...ctr, 'tag', `docker.io/${BUSYBOX_IMAGE}`, name]);
    const present = async (image: string) => (await run.images.imageStatus({ image })).image !== null;
    await waitFor(() => present(name) || undefined, { timeoutMs: 10_000, description: `${name} seen by the CRI` });
    await removeImage(name, 'containerd');
    await waitFor(async () => !(await present(name)) || undefined, { timeoutMs: 10_000, description: `${name} gone` });
    expect(await present(BUSYBOX_IMAGE)).toBe(true);
  });
});

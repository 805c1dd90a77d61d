// The in-process harness (agent.ts) must leave nothing on the host, also when a node's start or
// stop fails: a leaked pod bridge (kts-…) holds its 10.222.N.0/24 and every later agent picks the
// next range; a leaked temp dir holds the agent's state. ~20 such bridges were left after full runs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, inject, it } from 'vitest';
import { containersOf, isRunningAndReady, startTestNode, waitForPod, type TestNode } from './agent.js';
import { defaultNetworkOf, linkExists } from './network.js';
import { kRepoRoot } from './agent-process.js';

describe.skipIf(!inject('dockerAvailable'))('startTestNode leaves nothing behind', () => {
  it("a start that fails removes the node's temp dir and reports the start's error", { timeout: 120_000 }, async () => {
    // startTestNode makes its temp dir under os.tmpdir(), which follows TMPDIR at call time: a dir of this test's own.
    const saved = process.env.TMPDIR;
    const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-harness-'));
    process.env.TMPDIR = dir;
    try {
      await expect(startTestNode({ podCIDR: '127.0.0.0/24' })).rejects.toThrow(/--pod-cidr 127\.0\.0\.0\/24 collides/);
      expect(await readdir(dir)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it(
    'a cleanup whose agent stop throws still removes the containers, the pod bridge and the temp dir, then reports the error',
    { timeout: 240_000 },
    async () => {
      const node: TestNode = await startTestNode();
      const stop = node.agent.stop.bind(node.agent);
      try {
        await node.writeManifest(
          'web.yaml',
          `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: kubelet-ts/busybox:1.35, command: [sleep, "3600"]}]
`,
        );
        const pod = await waitForPod(node, 'web', isRunningAndReady);
        const net = (await defaultNetworkOf(node.rootDir))!;
        expect(await linkExists(net.bridge)).toBe(true);
        node.agent.stop = async () => {
          await stop();
          throw new Error('stop failed on purpose');
        };
        await expect(node.cleanup()).rejects.toThrow('stop failed on purpose');
        expect(await containersOf(pod.metadata!.uid!)).toEqual([]);
        expect(await linkExists(net.bridge)).toBe(false);
        expect(await readdir(join(node.rootDir, '..')).catch((e: NodeJS.ErrnoException) => e.code)).toBe('ENOENT');
      } finally {
        node.agent.stop = stop;
        await node.cleanup(); // idempotent: the real stop, then whatever the first one left
      }
    },
  );

  it('a node started in a test body whose test times out is cleaned up when the file ends', { timeout: 300_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-harness-'));
    const out = join(dir, 'root-dir');
    let rootDir = '';
    try {
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [join(kRepoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', 'test/support/fixtures/vitest.leftover.config.ts'],
          { cwd: kRepoRoot, stdio: 'ignore', env: { ...process.env, KTS_LEFTOVER_OUT: out } },
        );
        child.on('error', reject);
        child.on('exit', (c) => resolve(c));
      });
      expect(code).toBe(1); // the fixture's test timed out
      rootDir = (await readFile(out, 'utf8')).trim();
      expect(rootDir).toMatch(/kubelet-ts-e2e-/);
      expect(existsSync(join(rootDir, '..'))).toBe(false);
    } finally {
      if (rootDir) await rm(join(rootDir, '..'), { recursive: true, force: true }); // what the fixture's node left, when it did
      await rm(dir, { recursive: true, force: true });
    }
  });
});

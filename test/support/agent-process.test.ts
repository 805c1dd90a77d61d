// Issue #38 finding 11: an agent started through the agent-process harness must not outlive the
// test process that started it (two timed-out fault tests left two agents running for 20 minutes
// after vitest exited). A child node process plays the test process: it starts an agent through
// the harness and exits before the agent is up; the agent must be gone.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { kRepoRoot } from './agent-process.js';
import { waitFor } from './docker.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it('an agent process the harness started is killed when the test process exits', { timeout: 120_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-harness-'));
  let agentPid: number | undefined;
  try {
    const script = [
      "import { startAgentProcess } from './test/support/agent-process.ts';",
      `startAgentProcess(['--root-dir', ${JSON.stringify(join(dir, 'root'))}, '--runtime', 'fake'], undefined, {`,
      '  onSpawn: (c) => { console.log(`agent ${c.pid}`); setTimeout(() => process.exit(0), 300); },',
      '}).catch(() => {});',
    ].join('\n');
    const testProcess = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: kRepoRoot,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    testProcess.stdout.on('data', (d) => (out += d));
    await new Promise((resolve) => testProcess.once('exit', resolve));
    agentPid = Number(/agent (\d+)/.exec(out)?.[1]);
    expect(agentPid).toBeGreaterThan(0);
    await waitFor(() => !alive(agentPid!), {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: `agent ${agentPid} gone after its test process exited`,
    });
  } finally {
    if (agentPid && alive(agentPid)) process.kill(agentPid, 'SIGKILL'); // the agent this test started, by its PID
    await rm(dir, { recursive: true, force: true });
  }
});

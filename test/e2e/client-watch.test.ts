// End-to-end: `kubelet-ts get pods -w` as a real child process against a real agent (fake runtime,
// so no Docker): after its one list it follows the agent's WebSocket watch, not GET /pods polls.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unmountUnder } from '../../src/workers/volumes/mount.js';
import { resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { newAgent, type Agent } from '../../src/main/agent.js';
import { waitFor } from '../support/docker.js';
import { kRepoRoot } from '../support/agent-process.js';
import { adminAuthorization } from '../support/agent.js';

const kWaitMs = 60_000;

describe('get pods -w against an agent', () => {
  let agent: Agent;
  let dir: string;
  let server: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-client-watch-'));
    const options = resolveAgentOptions({
      nodeName: 'client-watch',
      rootDir: dir,
      port: 0,
      runtime: 'fake',
      workers: 1,
      logLevel: 'error',
    });
    agent = newAgent(options, { logger: pino({ level: 'silent' }) });
    await agent.start();
    server = `http://127.0.0.1:${agent.port}`;
  });
  afterAll(async () => {
    await agent?.stop();
    await unmountUnder(dir).catch(() => undefined); // the API pods' tmpfs volumes (service account tokens)
    await rm(dir, { recursive: true, force: true });
  });

  const create = async (name: string) => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'watched' } },
      spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35' }] },
    });
    const res = await fetch(`${server}/pods`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...adminAuthorization(dir) },
      body,
    });
    expect(res.status).toBe(201);
  };
  /** GET requests the agent answered on /pods… (kubelet_http_requests_total{method="GET",path="pods"}). */
  const podGets = async () => {
    const text = await (await fetch(`${server}/metrics`, { headers: adminAuthorization(dir) })).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('kubelet_http_requests_total{') && l.includes('method="GET"') && l.includes('path="pods"'));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('prints a row for a pod created after it started, having listed only once (the watch, not polling)', async () => {
    await create('early');
    const before = await podGets();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/main/index.ts',
        'get',
        'pods',
        '-w',
        '-l',
        'app=watched',
        '--server',
        `unix://${join(dir, 'kubelet-ts.sock')}`,
        '--root-dir',
        dir,
      ],
      { cwd: kRepoRoot },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /\nearly\s/.test(out), {
        timeoutMs: kWaitMs,
        intervalMs: 100,
        description: `initial row (stdout ${JSON.stringify(out)}, stderr ${JSON.stringify(err)})`,
      });
      await create('late');
      await waitFor(() => /\nlate\s+1\/1\s+Running/.test(out), {
        timeoutMs: kWaitMs,
        intervalMs: 100,
        description: `rows of late (stdout ${JSON.stringify(out)})`,
      });
      // Polling would have needed a second GET /pods to see `late` at all.
      expect(await podGets()).toBe(before + 1);
      expect(
        (await fetch(`${server}/pods/default/late?gracePeriodSeconds=0`, { method: 'DELETE', headers: adminAuthorization(dir) })).status,
      ).toBe(200);
      await waitFor(() => /\nlate\s+\S+\s+Terminating/.test(out), {
        timeoutMs: kWaitMs,
        intervalMs: 100,
        description: 'Terminating row of late',
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out.split('\n')[0]).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
    expect(err).toBe('');
  });
});

// bench watchers: the agent's RSS and /healthz latency with W watchers that never read (issue #38,
// finding 6). One agent process (fake runtime) with P pods; W WebSocket watches of one user (the
// admin token) opened on raw sockets that read their 101 and then nothing; C pods created and
// deleted meanwhile, so that changes pile up for the non-readers. A figure, not a test.
//
//   npm run bench -- watchers [--pods 300] [--watchers 600] [--churn 100] [--pod-kb 10] [--src DIR] [--agent-args='--max-watches 1000']
//
// --src runs the same scenario against another checkout (e.g. `git archive` of the commit before a
// change, with node_modules linked in). Prints one table row and writes bench/results/watchers-*.json.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../test/support/agent-process.js';
import { positiveInt, summary, table, writeResult } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '300' },
    watchers: { type: 'string', default: '600' },
    churn: { type: 'string', default: '100' },
    /** Size of each pod's annotation, KB: what makes the pod set's copy large. */
    'pod-kb': { type: 'string', default: '10' },
    src: { type: 'string', default: resolve(import.meta.dirname, '..') },
    /** More agent flags, space-separated (e.g. `--max-watches-per-user 1000 --max-watches 1000`). */
    'agent-args': { type: 'string', default: '' },
  },
});
const pods = positiveInt('pods', args.pods);
const watchers = positiveInt('watchers', args.watchers);
const churn = positiveInt('churn', args.churn);
const podKb = positiveInt('pod-kb', args['pod-kb']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const root = await mkdtemp(join(tmpdir(), 'kts-bench-watchers-'));
const port = await freePort();
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    'src/main/index.ts',
    '--port',
    String(port),
    '--runtime',
    'fake',
    '--root-dir',
    join(root, 'root'),
    '--cni-conf-dir',
    join(root, 'cni'),
    '--hostname-override',
    'bench-watchers',
    '--max-pods',
    '100000',
    '--v',
    '0',
    ...args['agent-args'].split(' ').filter((a) => a !== ''),
  ],
  { cwd: args.src, stdio: ['ignore', 'pipe', 'pipe'] },
);
let stderr = '';
/** Watchers the agent closed as too slow (its warn line). */
let closedSlow = 0;
child.stdout!.on('data', (d) => (closedSlow += String(d).split('Closing a watch client that does not read').length - 1));
child.stderr!.on('data', (d) => (stderr = (stderr + String(d)).slice(-4000)));
const base = `http://127.0.0.1:${port}`;
const sockets: Socket[] = [];
try {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`agent exited: ${stderr}`);
    if (
      await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('agent did not start');
    await sleep(250);
  }
  const token = (await readFile(join(root, 'root', 'admin.token'), 'utf8')).trim();
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };
  const note = 'n'.repeat(podKb * 1000);
  const pod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, annotations: { note } },
    spec: { containers: [{ name: 'main', image: 'kubelet-ts/busybox:1.35', command: ['sleep', '3600'] }] },
  });
  for (let i = 0; i < pods; i += 50) {
    const items = Array.from({ length: Math.min(50, pods - i) }, (_, j) => pod(`p-${i + j}`));
    const res = await fetch(`${base}/pods`, { method: 'POST', headers, body: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    if (res.status !== 201) throw new Error(`POST /pods: ${res.status} ${await res.text()}`);
  }
  await sleep(5000);
  const rssMiB = async () => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
  const healthz = async () => {
    const ms: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await fetch(`${base}/healthz`);
      ms.push(performance.now() - t);
    }
    return summary(ms);
  };
  const before = { rssMiB: await rssMiB(), healthz: await healthz() };

  // W watches that read their answer's first bytes and nothing more.
  const answers = await Promise.all(
    Array.from(
      { length: watchers },
      () =>
        new Promise<string>((resolveAnswer) => {
          const s = connect(port, '127.0.0.1');
          sockets.push(s);
          s.on('error', () => resolveAnswer('error'));
          s.write(
            `GET /watch/pods HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${token}\r\n\r\n`,
          );
          s.once('data', (d) => {
            s.pause();
            resolveAnswer(/^HTTP\/1\.1 (\d+)/.exec(String(d))?.[1] ?? '?');
          });
        }),
    ),
  );
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a] = (counts[a] ?? 0) + 1;
  await sleep(3000);
  const opened = { rssMiB: await rssMiB(), healthz: await healthz() };

  // Churn: C pods created and deleted while nobody reads.
  for (let i = 0; i < churn; i++) {
    await fetch(`${base}/pods`, { method: 'POST', headers, body: JSON.stringify(pod(`c-${i}`)) });
  }
  await sleep(5000);
  for (let i = 0; i < churn; i++) await fetch(`${base}/pods/default/c-${i}?gracePeriodSeconds=0`, { method: 'DELETE', headers });
  await sleep(5000);
  const churned = { rssMiB: await rssMiB(), healthz: await healthz() };

  const row = (what: string, m: typeof before) => [what, m.rssMiB.toFixed(0), m.healthz.p50.toFixed(1), m.healthz.max.toFixed(1)];
  console.log(
    `src ${args.src} ${args['agent-args']}; ${pods} pods of ${podKb} KB; ${watchers} watchers of one user: answers ${JSON.stringify(counts)}; the agent closed ${closedSlow} as too slow`,
  );
  console.log(
    table([
      ['phase', 'RSS MiB', 'healthz p50 ms', 'healthz max ms'],
      row('pods only', before),
      row(`+${watchers} non-reading watchers`, opened),
      row(`+${churn} pods created and deleted`, churned),
    ]),
  );
  writeResult('watchers', {
    src: args.src,
    agentArgs: args['agent-args'],
    podKb,
    pods,
    watchers,
    churn,
    answers: counts,
    closedSlow,
    before,
    opened,
    churned,
  });
} finally {
  for (const s of sockets) s.destroy();
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  await rm(root, { recursive: true, force: true });
}

// A local non-root user holding a TCP port (issue #38 finding 1): a process run as the second local
// user `kts-tester` that listens on a loopback port, records every byte each connection sends and
// answers 401, as a port squatter waiting for the client's token would.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';

/** kTestUser: the second local user (tools/lib/test-user.sh). */
export const kTestUser = 'kts-tester';

/** testUserIds: uid and gid of {@link kTestUser}. @throws Error when the user does not exist (tools/lib/test-user.sh makes it). */
export function testUserIds(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', kTestUser], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', kTestUser], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

// Runs as kts-tester: each connection's bytes (base64) go to stdout as one line when it closes or has sent a request head.
const kSquatterScript = `
const net = require('node:net');
const port = Number(process.argv[1]);
const server = net.createServer((c) => {
  let data = Buffer.alloc(0);
  let answered = false;
  const report = () => process.stdout.write(JSON.stringify({ bytes: data.toString('base64') }) + '\\n');
  c.on('data', (d) => {
    data = Buffer.concat([data, d]);
    if (!answered && data.includes('\\r\\n\\r\\n')) {
      answered = true;
      report();
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      c.end('HTTP/1.1 401 Unauthorized\\r\\nContent-Type: application/json\\r\\nConnection: close\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n' + body);
    }
  });
  c.on('close', () => { if (!answered) report(); });
  c.on('error', () => {});
});
server.on('error', (err) => { process.stderr.write(String(err.code || err.message) + '\\n'); process.exit(3); });
server.listen({ host: '127.0.0.1', port, exclusive: true }, () => process.stdout.write('listening\\n'));
`;

/** PortSquatter: the squatting process and what reached it. */
export interface PortSquatter {
  readonly port: number;
  readonly uid: number;
  /** Every connection's bytes so far, decoded as latin1 (one string per connection). */
  received(): string[];
  /** stop kills the process (SIGKILL) and waits for it. Idempotent. */
  stop(): Promise<void>;
}

/**
 * startPortSquatter spawns the squatter as {@link kTestUser} on `127.0.0.1:port` and resolves once it
 * listens. @throws Error when the port is taken (the message names it) or the user is missing.
 */
export async function startPortSquatter(port: number): Promise<PortSquatter> {
  const { uid, gid } = testUserIds();
  const child: ChildProcess = spawn(process.execPath, ['-e', kSquatterScript, String(port)], {
    uid,
    gid,
    cwd: '/',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {},
  });
  const seen: string[] = [];
  let out = '';
  let err = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      let nl: number;
      while ((nl = out.indexOf('\n')) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line === 'listening') resolve();
        else if (line !== '') seen.push(Buffer.from((JSON.parse(line) as { bytes: string }).bytes, 'base64').toString('latin1'));
      }
    });
    child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.once('exit', (code) =>
      reject(new Error(`the squatter (uid ${uid}) could not listen on 127.0.0.1:${port}: exit ${code} ${err.trim()}`)),
    );
  });
  return {
    port,
    uid,
    received: () => [...seen],
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

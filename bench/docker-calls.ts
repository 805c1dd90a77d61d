// A counting proxy to dockerd for benches: the agent under test talks to Docker through a unix
// socket of ours, and every Engine API request that passes is counted by its route (`POST
// /containers/create`, `GET /containers/{id}/json`, …), so a bench can say how many Docker calls a
// pod start makes and which ones. Requests are forwarded unchanged (bodies and streamed answers
// piped both ways; upgraded/hijacked connections relayed raw). Not used by src/; one test counts a pod
// removal's calls through it in-process (test/workers/kuberuntime/kill-pod-engine-calls.docker.test.ts).
// KUBELET_TS_BENCH_DOCKER_TRACE=1 prints every request line to stderr (to see which step makes it).
// It also keeps, per pod UID, when each of that pod's container calls began and ended (podCalls):
// the Docker part of a pod's startup, which a bench subtracts to find the agent's own part.
//
// The proxy runs in a child process of its own (spawnDockerCallCounter), so that relaying the
// agent's Docker traffic costs the bench process — where the in-process agent's main thread runs —
// nothing; it answers `counts` / `reset` lines on its stdin with one JSON line on its stdout.
import { spawn } from 'node:child_process';
import { request, createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** DockerCallCounter: the proxy's socket, its counts, and how to stop it. */
export interface DockerCallCounter {
  /** The unix socket path to hand the agent as `unix://<path>`. */
  readonly socketPath: string;
  /** Calls counted since the last reset (or the start), by route. */
  counts(): Map<string, number>;
  /** Since the last reset: per pod UID, its container calls' [began, ended] (see {@link PodCallSpans}). */
  podCalls(): PodCallSpans;
  /** The sum of {@link counts}. */
  total(): number;
  /** Forgets the counts (starts a new window). */
  reset(): void;
  /** Stops listening and drops every connection. */
  close(): Promise<void>;
}

/**
 * dockerRoute names a request by its route: the API version prefix and the query dropped, a
 * container, exec, image, network or volume reference replaced by `{id}` (images: `{name}`).
 * Pure. E.g. `POST /v1.43/containers/abc…/start?x=1` → `POST /containers/{id}/start`.
 */
export function dockerRoute(method: string, url: string): string {
  let path = url.split('?')[0]!.replace(/^\/v\d+\.\d+/, '');
  path = path.replace(/^\/(containers|exec|networks|volumes)\/(?!create$|json$|prune$)[^/]+/, '/$1/{id}');
  // An image reference may hold slashes (`kubelet-ts/busybox:1.35`): the name is all up to the action.
  const image = /^\/images\/(.+?)(\/(?:json|history|push|tag|get))?$/.exec(path);
  if (image && !['create', 'json', 'prune', 'load', 'search', 'get'].includes(image[1]!)) path = `/images/{name}${image[2] ?? ''}`;
  return `${method} ${path}`;
}

/**
 * PodCallSpans: per pod UID, the [began, ended] of each call on one of the pod's containers (its
 * create, start, inspect, …), epoch milliseconds with a fraction (performance.timeOrigin +
 * performance.now(), comparable across processes), in the order they ended. A container is the
 * pod's when its name is the kubelet's `k8s_<container>_<pod>_<namespace>_<uid>_<attempt>`: from
 * the create's `?name=`, and for later calls by ID from the create's answer.
 */
export type PodCallSpans = Record<string, [number, number][]>;

/** podUidOfName: the pod UID in a kubelet container name (`k8s_…_<uid>_<attempt>`), else undefined. Pure. */
export function podUidOfName(name: string): string | undefined {
  const parts = name.replace(/^\//, '').split('_');
  return parts[0] === 'k8s' && parts.length >= 6 ? parts[parts.length - 2] : undefined;
}

/**
 * outsideSpansMs: how much of the window [from, to] no span covers, milliseconds: the window's
 * length minus the length of the union of the spans clipped to it. Spans may overlap (a sandbox's
 * start and its container's create run together). Pure.
 */
export function outsideSpansMs(from: number, to: number, spans: readonly (readonly [number, number])[]): number {
  const clipped = spans
    .map(([a, b]) => [Math.max(a, from), Math.min(b, to)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let end = from;
  for (const [a, b] of clipped) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return Math.max(0, to - from - covered);
}

/**
 * startDockerCallCounter listens on `socketPath` (removed first if it exists) and forwards to the
 * engine at `upstreamSocket`. Resolves once listening.
 */
export async function startDockerCallCounter(socketPath: string, upstreamSocket = '/var/run/docker.sock'): Promise<DockerCallCounter> {
  let counts = new Map<string, number>();
  let podCalls: PodCallSpans = {};
  /** Container ID → pod UID, from the answers to kubelet-named creates (kept across resets). */
  const podOfContainer = new Map<string, string>();
  const open = new Set<Socket>();
  const trace = process.env.KUBELET_TS_BENCH_DOCKER_TRACE === '1';
  const count = (req: IncomingMessage) => {
    const route = dockerRoute(req.method ?? 'GET', req.url ?? '/');
    if (trace) process.stderr.write(`docker: ${req.method} ${req.url}\n`);
    counts.set(route, (counts.get(route) ?? 0) + 1);
  };
  const epochMs = () => performance.timeOrigin + performance.now();
  /** The pod a request is about: a create's `?name=`, else the container ID in its path; and whether it is a create. */
  const podOf = (url: string): { uid?: string; create: boolean } => {
    const [path, query] = url.split('?');
    if (/^(\/v[\d.]+)?\/containers\/create$/.test(path!))
      return { uid: podUidOfName(new URLSearchParams(query).get('name') ?? ''), create: true };
    const id = /^(?:\/v[\d.]+)?\/containers\/([^/]+)/.exec(path!)?.[1];
    return { uid: id === undefined ? undefined : podOfContainer.get(id), create: false };
  };
  const server: Server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    count(req);
    const began = epochMs();
    const pod = podOf(req.url ?? '/');
    const up = request({ socketPath: upstreamSocket, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (pod.uid !== undefined) {
        const uid = pod.uid;
        const body: Buffer[] = [];
        if (pod.create) upRes.on('data', (c: Buffer) => body.push(c));
        upRes.on('end', () => {
          (podCalls[uid] ??= []).push([began, epochMs()]);
          if (!pod.create) return;
          try {
            const id = (JSON.parse(Buffer.concat(body).toString('utf8')) as { Id?: string }).Id;
            if (id) podOfContainer.set(id, uid).set(id.slice(0, 12), uid);
          } catch {
            /* an error answer: no container */
          }
        });
      }
      upRes.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  // Hijacked streams (attach, exec start, Connection: Upgrade): relay the raw bytes both ways.
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    count(req);
    const upstream = connect(upstreamSocket, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  server.on('connection', (s: Socket) => {
    open.add(s);
    s.on('close', () => open.delete(s));
  });
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    counts: () => new Map(counts),
    podCalls: () => podCalls,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset() {
      counts = new Map();
      podCalls = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** DockerCallCounts: what the child proxy answers: calls by route since the last reset. */
export type DockerCallCounts = Record<string, number>;

/** RemoteDockerCallCounter: the proxy in its child process. */
export interface RemoteDockerCallCounter {
  readonly socketPath: string;
  /** The calls since the last reset, by route, and their sum. */
  counts(): Promise<{ byRoute: DockerCallCounts; total: number }>;
  /** The pods' container calls since the last reset (see {@link PodCallSpans}). */
  podCalls(): Promise<PodCallSpans>;
  reset(): Promise<void>;
  /** Stops the child (SIGTERM to its PID) and waits for its exit. */
  close(): Promise<void>;
}

/**
 * spawnDockerCallCounter starts the counting proxy in a child process (`tsx bench/docker-calls.ts
 * SOCKET UPSTREAM`) listening on `socketPath` and forwarding to the engine at `upstreamSocket`;
 * resolves once it listens.
 * @throws Error when the child exits before it says it listens.
 */
export async function spawnDockerCallCounter(
  socketPath: string,
  upstreamSocket = '/var/run/docker.sock',
): Promise<RemoteDockerCallCounter> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), socketPath, upstreamSocket], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const waiting: { resolve: (line: string) => void; reject: (err: Error) => void }[] = [];
  lines.on('line', (line) => waiting.shift()?.resolve(line));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`docker call counter exited (${code})`));
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      if (child.exitCode !== null) return reject(new Error(`docker call counter exited (${child.exitCode})`));
      waiting.push({ resolve, reject });
    });
  const ask = async (cmd: string) => {
    const answer = next();
    child.stdin!.write(`${cmd}\n`);
    return answer;
  };
  await next(); // "listening"
  return {
    socketPath,
    async counts() {
      const byRoute = JSON.parse(await ask('counts')) as DockerCallCounts;
      return { byRoute, total: Object.values(byRoute).reduce((a, b) => a + b, 0) };
    },
    async podCalls() {
      return JSON.parse(await ask('pod-calls')) as PodCallSpans;
    },
    async reset() {
      await ask('reset');
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// As a child process: `tsx bench/docker-calls.ts SOCKET [UPSTREAM]`.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const counter = await startDockerCallCounter(process.argv[2]!, process.argv[3]);
  process.stdout.write('listening\n');
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'reset') counter.reset();
    const answer = line === 'counts' ? Object.fromEntries(counter.counts()) : line === 'pod-calls' ? counter.podCalls() : 'ok';
    process.stdout.write(`${typeof answer === 'string' ? answer : JSON.stringify(answer)}\n`);
  });
  const stop = () => void counter.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
}

/**
 * Counterpart of k8s.io/cli-runtime (genericclioptions: --server, --token, --namespace) and of
 * kubectl's REST client: what every client command (`get`, `apply`, `delete`, `logs`, `describe`)
 * shares. The commands talk to the agent's HTTP API (docs/contracts.md "HTTP API"); apply, delete
 * and get also have an etcd branch (`--etcd-servers`, etcd-client.ts).
 *
 * A credential only goes to a server the client has authenticated (issue #38 finding 1): the
 * agent's unix socket `<root-dir>/kubelet-ts.sock` when its owner and mode prove it is the agent's
 * (local-socket.ts; the default with no `--server`), or an https server whose certificate chains to
 * the agent's CA (`<root-dir>/pki/kubelet-ts.crt`) or `--certificate-authority`, as kubectl checks
 * the kubeconfig's CA. Never over plain http: any local user may hold a loopback TCP port.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import type { Status } from '../shared/api.js';
import { AgentError, type AgentErrorCode } from '../shared/errors.js';
import { humanDuration } from '../shared/human-duration.js';
import { isLoopbackHost } from '../shared/loopback.js';
import type { CliIo } from './io.js';
import { checkLocalSocket } from './local-socket.js';
import { sendRequest, type Connection } from './transport.js';

/** kDefaultServer: the agent's API address (`--address`/`--port` defaults), used without a token when its socket is not there. */
export const kDefaultServer = 'http://127.0.0.1:10250';

/** kLocalSocketName: the agent's unix socket under its `--root-dir` (src/server/unix-socket.ts kUnixSocketName). */
export const kLocalSocketName = 'kubelet-ts.sock';

/** kCaFile: the agent's self-signed serving certificate under its `--root-dir`, its own CA (src/main/host/serving-cert.ts). */
export const kCaFile = 'pki/kubelet-ts.crt';

/** ClientRun: a parsed client command, run by runCli; resolves with the process exit code. */
export type ClientRun = (io: CliIo) => Promise<number>;

/** SelectClient: how a command module hands its parsed command to the CLI. */
export type SelectClient = (s: { command: 'client'; run: ClientRun }) => void;

/** kDefaultRootDir: the agent's default `--root-dir`, where it writes `admin.token`. */
export const kDefaultRootDir = '/var/lib/kubelet-ts';

/** ClientFlags: the connection flags every client command takes (Connection: where it connects). */
export interface ClientFlags extends Connection {
  /** The bearer token sent: `--token`, else the agent's admin token (see {@link findAdminToken}); '' for none. */
  token: string;
  /** Why no token is sent although the admin token was found (plain http, an untrusted socket): for the 401 message. */
  withheld?: string;
  /** Why the agent's socket was not used when no `--server` was given (for the "cannot reach" message). */
  noSocket?: string;
  /** The admin token file the token was read from, when it was not given (for the 401 message). */
  tokenFile?: string;
  /** `--root-dir`: the agent's root dir, where the admin token is looked for. */
  rootDir: string;
}

/**
 * addClientFlags adds `--server`, `--token` and `--root-dir` (env KUBELET_TS_SERVER,
 * KUBELET_TS_TOKEN and KUBELET_TS_ROOT_DIR as defaults).
 */
export function addClientFlags<T>(y: Argv<T>): Argv<T> {
  return y
    .option('server', {
      type: 'string',
      describe: 'Address of the kubelet-ts API: https://… (a token is sent only over TLS), http://… (no token), unix://<socket>',
      default: process.env.KUBELET_TS_SERVER ?? '',
      requiresArg: true,
      group: 'Connection:',
      defaultDescription: `$KUBELET_TS_SERVER, else the agent's socket <root-dir>/${kLocalSocketName}, else ${kDefaultServer} without a token`,
    })
    .option('certificate-authority', {
      type: 'string',
      describe: `PEM file of the CA the https server's certificate must chain to (default: <root-dir>/${kCaFile})`,
      default: process.env.KUBELET_TS_CERTIFICATE_AUTHORITY ?? '',
      requiresArg: true,
      group: 'Connection:',
    })
    .option('token', {
      type: 'string',
      describe:
        "Bearer token for the API, sent only to the agent's socket or over https (default: the agent's <root-dir>/admin.token when readable)",
      default: process.env.KUBELET_TS_TOKEN ?? '',
      requiresArg: true,
      group: 'Connection:',
      defaultDescription: '$KUBELET_TS_TOKEN, else the admin token',
    })
    .option('root-dir', {
      type: 'string',
      describe: "The agent's --root-dir, where its admin.token is read from",
      default: process.env.KUBELET_TS_ROOT_DIR ?? kDefaultRootDir,
      requiresArg: true,
      group: 'Connection:',
      defaultDescription: `$KUBELET_TS_ROOT_DIR or ${kDefaultRootDir}`,
    }) as Argv<T>;
}

/**
 * findAdminToken reads the agent's admin token from `<rootDir>/admin.token` for a client that was
 * given no token, as kubectl run on a control-plane node finds /etc/kubernetes/admin.conf when
 * pointed at it: only when `server` is the agent's socket (`unix://…`) or a loopback URL (the file belongs to the agent on this
 * machine; a token is never sent to another host because a local file had one) and the file is
 * readable by this user (root, as the agent runs). Synchronous (once per command).
 * @returns the token and its file, or undefined (not loopback, no file, not readable, empty).
 */
export function findAdminToken(server: string, rootDir: string): { token: string; file: string } | undefined {
  let host: string;
  try {
    host = new URL(server).hostname;
  } catch {
    return undefined;
  }
  if (!server.startsWith('unix://') && !isLoopbackHost(host)) return undefined;
  const file = join(rootDir, 'admin.token');
  try {
    const token = readFileSync(file, 'utf8').trim();
    return token === '' || /\s/.test(token) ? undefined : { token, file };
  } catch {
    return undefined; // missing or not readable by this user: no token
  }
}

/**
 * clientFlags reads the connection flags from parsed argv (the last value when given twice) and
 * decides where a credential may go. With no `--server`: the agent's socket when checkLocalSocket
 * trusts it, with `--token` or the admin token ({@link findAdminToken}); else {@link kDefaultServer}
 * with no token. `--server unix://P`: that socket, which must be trusted. `--server https://…`: the
 * token, the server verified against `--certificate-authority` or `<root-dir>/pki/kubelet-ts.crt`
 * (the system's CAs when neither can be read). `--server http://…`: never a token.
 * @throws ClientError when `--token` is given with an http:// server, when a given unix socket is
 *   not trusted, or when `--certificate-authority` cannot be read.
 */
export function clientFlags(argv: Record<string, unknown>): ClientFlags {
  const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
  const given = String(last(argv.server) ?? '').replace(/\/+$/, '');
  const rootDir = String(last(argv['root-dir']) ?? kDefaultRootDir);
  const givenToken = String(last(argv.token) ?? '');
  const adminFile = join(rootDir, 'admin.token');
  const socketPath =
    given === '' ? join(rootDir, kLocalSocketName) : given.startsWith('unix://') ? given.slice('unix://'.length) : undefined;
  if (socketPath !== undefined) {
    const check = checkLocalSocket(socketPath, adminFile);
    if (check.kind === 'trusted') return withToken({ server: `unix://${socketPath}`, socketPath, rootDir }, givenToken);
    const why =
      check.kind === 'missing'
        ? `${socketPath} does not exist (is the agent running with --root-dir ${rootDir}?)`
        : `the socket is not trusted: ${check.reason}`;
    if (given !== '') throw new ClientError(`refusing to use --server ${given}: ${why}`);
    if (givenToken !== '')
      throw new ClientError(
        `refusing to send --token to ${kDefaultServer} over plain http: ${why}; pass --server https://… (the agent's --tls-port)`,
      );
    const flags: ClientFlags = { server: kDefaultServer, token: '', rootDir, noSocket: why };
    if (findAdminToken(kDefaultServer, rootDir))
      flags.withheld = `the admin token of ${adminFile} is only sent to the agent's socket, and ${why}`;
    return flags;
  }
  if (/^https:\/\//i.test(given)) return withToken({ server: given, rootDir, ...caOf(argv, rootDir) }, givenToken);
  if (givenToken !== '')
    throw new ClientError(
      `refusing to send --token over plain http to ${given}: anyone on the path, or any local user holding the port, would receive it; use https:// (the agent's --tls-port), or omit --server to use the agent's socket ${join(rootDir, kLocalSocketName)}`,
    );
  const flags: ClientFlags = { server: given, token: '', rootDir };
  if (findAdminToken(given, rootDir))
    flags.withheld = `the admin token of ${adminFile} is never sent over plain http (any local user may hold a loopback port); omit --server to use the agent's socket ${join(rootDir, kLocalSocketName)}, or use https://`;
  return flags;
}

/** withToken: `conn` with `--token`, else the admin token of its root dir (findAdminToken). */
function withToken(conn: Connection & { rootDir: string }, givenToken: string): ClientFlags {
  if (givenToken !== '') return { ...conn, token: givenToken };
  const found = findAdminToken(conn.server, conn.rootDir);
  return found ? { ...conn, token: found.token, tokenFile: found.file } : { ...conn, token: '' };
}

/**
 * caOf: the CA an https server is verified against: `--certificate-authority` (must be readable),
 * else the agent's own `<rootDir>/pki/kubelet-ts.crt` when readable, else none (the system's CAs).
 * @throws ClientError naming `--certificate-authority` when it cannot be read.
 */
function caOf(argv: Record<string, unknown>, rootDir: string): { ca?: string } {
  const given = String(
    (Array.isArray(argv['certificate-authority']) ? argv['certificate-authority'].at(-1) : argv['certificate-authority']) ?? '',
  );
  if (given !== '') {
    try {
      return { ca: readFileSync(given, 'utf8') };
    } catch (err) {
      throw new ClientError(`--certificate-authority ${given}: ${(err as Error).message}`);
    }
  }
  try {
    return { ca: readFileSync(join(rootDir, kCaFile), 'utf8') };
  } catch {
    return {};
  }
}

/**
 * unauthorizedMessage: what the client prints for a 401, saying which token was refused or how
 * to get one (kubectl's "You must be logged in to the server (Unauthorized)").
 */
export function unauthorizedMessage(flags: ClientFlags): string {
  const base = 'You must be logged in to the server (Unauthorized)';
  if (flags.withheld) return `${base}: ${flags.withheld}`;
  if (flags.tokenFile) return `${base}: the admin token of ${flags.tokenFile} was refused; pass --token`;
  if (flags.token) return `${base}: the token was refused; check --token`;
  return `${base}: pass --token, or run as root (who can read ${join(flags.rootDir, 'admin.token')}; see --root-dir)`;
}

/**
 * codeForHttpStatus: the AgentErrorCode of a failed API call's HTTP status, as apimachinery's
 * errors.FromObject classifies a Status: 400 → ERR_INVALID_ARGUMENT, 422 → ERR_INVALID_MANIFEST,
 * 401 and 403 → ERR_FORBIDDEN, 404 → ERR_NOT_FOUND, 409 → ERR_CONFLICT, 502/503/504 →
 * ERR_UNAVAILABLE, another status → ERR_RUNTIME; no status (a bad argument) → ERR_INVALID_ARGUMENT.
 */
export function codeForHttpStatus(status?: number): AgentErrorCode {
  if (status === undefined) return 'ERR_INVALID_ARGUMENT';
  const byStatus: Record<number, AgentErrorCode> = {
    400: 'ERR_INVALID_ARGUMENT',
    401: 'ERR_FORBIDDEN',
    403: 'ERR_FORBIDDEN',
    404: 'ERR_NOT_FOUND',
    409: 'ERR_CONFLICT',
    422: 'ERR_INVALID_MANIFEST',
    502: 'ERR_UNAVAILABLE',
    503: 'ERR_UNAVAILABLE',
    504: 'ERR_UNAVAILABLE',
  };
  return byStatus[status] ?? 'ERR_RUNTIME';
}

/**
 * ClientError: a failed API call or a bad argument, printed as `error: <message>` (kubectl's
 * form, e.g. `error: pods "web" not found`) with exit code 1. An AgentError: its code comes from
 * the HTTP status ({@link codeForHttpStatus}) unless given, so `isNotFound(err)` and friends
 * classify it; `ERR_UNAVAILABLE` (the API cannot be reached) is retriable.
 */
export class ClientError extends AgentError {
  /** The HTTP status of the failed call, if the server answered. */
  readonly status?: number;
  constructor(message: string, status?: number, code: AgentErrorCode = codeForHttpStatus(status)) {
    super(code, message, { retriable: code === 'ERR_UNAVAILABLE' });
    this.name = 'ClientError';
    if (status !== undefined) this.status = status;
  }
}

/** The names kubectl accepts for pods. */
export const kPodAliases: readonly string[] = ['pods', 'pod', 'po'];

/**
 * requirePods checks a command's `<resource>` argument names pods, as kubectl does.
 * @throws ClientError `the server doesn't have a resource type "x"` otherwise.
 */
export function requirePods(resource: string): void {
  if (!kPodAliases.includes(resource)) throw new ClientError(`the server doesn't have a resource type "${resource}"`);
}

/** ApiResponse: a response whose status was checked. */
export interface ApiResponse {
  status: number;
  res: Response;
}

/**
 * apiRequest calls the agent: `path` (with query) on `flags.server`, with the bearer token.
 * @throws ClientError with the Status message for a non-2xx answer (`pods "web" not found`), or
 *   `cannot reach the kubelet-ts API at <server>: <why>` when the connection fails.
 */
export async function apiRequest(
  flags: ClientFlags,
  method: string,
  path: string,
  body?: { contentType: string; data: string },
): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (flags.token) headers.Authorization = `Bearer ${flags.token}`;
  if (body) headers['Content-Type'] = body.contentType;
  let res: Response;
  try {
    res = await sendRequest(flags, method, path, headers, body?.data);
  } catch (err) {
    const cause = (err as Error).message;
    throw new ClientError(
      `cannot reach the kubelet-ts API at ${flags.server}: ${cause}${flags.noSocket ? ` (tried it because ${flags.noSocket})` : ''}`,
      undefined,
      'ERR_UNAVAILABLE',
    );
  }
  if (res.ok) return res;
  const text = await res.text();
  let message = text.trim() || `${res.status} ${res.statusText}`;
  let code: AgentErrorCode | undefined;
  try {
    const status = JSON.parse(text) as Status;
    // 409 is Conflict or AlreadyExists: the Status reason tells them apart.
    if (status.kind === 'Status' && status.reason === 'AlreadyExists') code = 'ERR_ALREADY_EXISTS';
    if (status.kind === 'Status' && status.message) {
      message = status.message;
      const causes = status.details?.causes ?? [];
      if (status.reason === 'Invalid' && causes.length > 1)
        message = `${status.message.split(':')[0]}:\n${causes.map((c) => `* ${c.message}`).join('\n')}`;
    }
  } catch {
    // not a Status: keep the text
  }
  if (res.status === 401) message = unauthorizedMessage(flags);
  throw new ClientError(message, res.status, code);
}

/** apiJson: apiRequest, then the JSON body. */
export async function apiJson<T>(
  flags: ClientFlags,
  method: string,
  path: string,
  body?: { contentType: string; data: string },
): Promise<T> {
  const res = await apiRequest(flags, method, path, body);
  return (await res.json()) as T;
}

/**
 * runClient wraps a command body: a ClientError (or any error) prints `error: <message>` to stderr
 * and gives exit code 1; otherwise the body's code.
 */
export function runClient(body: (io: CliIo) => Promise<number>): ClientRun {
  return async (io) => {
    try {
      return await body(io);
    } catch (err) {
      io.stderr(`error: ${(err as Error).message}\n`);
      return 1;
    }
  };
}

/**
 * clientHandler: a yargs command handler that selects `body` as the client command to run, with
 * the parsed flags (`a`) and its I/O; errors print as runClient prints them (exit status 1).
 */
export function clientHandler(
  select: SelectClient,
  body: (a: Record<string, unknown>, io: CliIo) => Promise<number>,
): (argv: unknown) => void {
  return (argv) => select({ command: 'client', run: runClient((io) => body(argv as Record<string, unknown>, io)) });
}

/** kNamespaceOption: the `-n/--namespace` flag of the client commands (default `default`). */
export const kNamespaceOption = { alias: 'n', type: 'string', default: 'default', requiresArg: true, describe: 'Namespace' } as const;

/**
 * formatAge renders `ms` milliseconds like kubectl's duration.HumanDuration (`45s`, `5m12s`, `3h`,
 * `2d5h`, `12d`, `3y`; negative → `0s`, NaN → `<unknown>`): the shared humanDuration.
 */
export const formatAge: (ms: number) => string = humanDuration;

/** formatTable aligns columns as kubectl's printers do (tabwriter: columns padded by 3 spaces). */
export function formatTable(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 3)))
          .join('')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

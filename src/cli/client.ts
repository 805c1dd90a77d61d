/**
 * Counterpart of k8s.io/cli-runtime (genericclioptions: --server, --token, --namespace) and of
 * kubectl's REST client: what every client command (`get`, `apply`, `delete`, `logs`, `describe`)
 * shares. The commands talk to the agent's HTTP API (docs/contracts.md "HTTP API"); apply, delete
 * and get also have an etcd branch (`--etcd-servers`, etcd-client.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import type { Status } from '../shared/api.js';
import { AgentError, type AgentErrorCode } from '../shared/errors.js';
import { humanDuration } from '../shared/human-duration.js';
import { isLoopbackHost } from '../shared/loopback.js';
import type { CliIo } from './io.js';

/** kDefaultServer: the agent's API address (`--address`/`--port` defaults). */
export const kDefaultServer = 'http://127.0.0.1:10250';

/** ClientRun: a parsed client command, run by runCli; resolves with the process exit code. */
export type ClientRun = (io: CliIo) => Promise<number>;

/** SelectClient: how a command module hands its parsed command to the CLI. */
export type SelectClient = (s: { command: 'client'; run: ClientRun }) => void;

/** kDefaultRootDir: the agent's default `--root-dir`, where it writes `admin.token`. */
export const kDefaultRootDir = '/var/lib/kubelet-ts';

/** ClientFlags: the connection flags every client command takes. */
export interface ClientFlags {
  /** `--server`: the agent's base URL. */
  server: string;
  /** The bearer token sent: `--token`, else the agent's admin token (see {@link findAdminToken}); '' for none. */
  token: string;
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
    .option('server', { type: 'string', describe: 'Address of the kubelet-ts API', default: process.env.KUBELET_TS_SERVER ?? kDefaultServer, requiresArg: true, group: 'Connection:' })
    .option('token', { type: 'string', describe: 'Bearer token for the API (default: the agent\'s <root-dir>/admin.token when --server is a loopback address and the file is readable)', default: process.env.KUBELET_TS_TOKEN ?? '', requiresArg: true, group: 'Connection:', defaultDescription: '$KUBELET_TS_TOKEN, else the admin token' })
    .option('root-dir', { type: 'string', describe: 'The agent\'s --root-dir, where its admin.token is read from', default: process.env.KUBELET_TS_ROOT_DIR ?? kDefaultRootDir, requiresArg: true, group: 'Connection:', defaultDescription: `$KUBELET_TS_ROOT_DIR or ${kDefaultRootDir}` }) as Argv<T>;
}

/**
 * findAdminToken reads the agent's admin token from `<rootDir>/admin.token` for a client that was
 * given no token, as kubectl run on a control-plane node finds /etc/kubernetes/admin.conf when
 * pointed at it: only when `server` is a loopback URL (the file belongs to the agent on this
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
  if (!isLoopbackHost(host)) return undefined;
  const file = join(rootDir, 'admin.token');
  try {
    const token = readFileSync(file, 'utf8').trim();
    return token === '' || /\s/.test(token) ? undefined : { token, file };
  } catch {
    return undefined; // missing or not readable by this user: no token
  }
}

/**
 * clientFlags reads the connection flags from parsed argv (the last value when given twice). With
 * no `--token` (nor KUBELET_TS_TOKEN) the admin token is looked up ({@link findAdminToken}).
 */
export function clientFlags(argv: Record<string, unknown>): ClientFlags {
  const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
  const server = String(last(argv.server) ?? kDefaultServer).replace(/\/+$/, '');
  const rootDir = String(last(argv['root-dir']) ?? kDefaultRootDir);
  const token = String(last(argv.token) ?? '');
  if (token !== '') return { server, token, rootDir };
  const found = findAdminToken(server, rootDir);
  return found ? { server, token: found.token, tokenFile: found.file, rootDir } : { server, token: '', rootDir };
}

/**
 * unauthorizedMessage: what the client prints for a 401, saying which token was refused or how
 * to get one (kubectl's "You must be logged in to the server (Unauthorized)").
 */
export function unauthorizedMessage(flags: ClientFlags): string {
  const base = 'You must be logged in to the server (Unauthorized)';
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
    400: 'ERR_INVALID_ARGUMENT', 401: 'ERR_FORBIDDEN', 403: 'ERR_FORBIDDEN', 404: 'ERR_NOT_FOUND', 409: 'ERR_CONFLICT',
    422: 'ERR_INVALID_MANIFEST', 502: 'ERR_UNAVAILABLE', 503: 'ERR_UNAVAILABLE', 504: 'ERR_UNAVAILABLE',
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
export async function apiRequest(flags: ClientFlags, method: string, path: string, body?: { contentType: string; data: string }): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (flags.token) headers.Authorization = `Bearer ${flags.token}`;
  if (body) headers['Content-Type'] = body.contentType;
  let res: Response;
  try {
    res = await fetch(`${flags.server}${path}`, { method, headers, body: body?.data });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
    throw new ClientError(`cannot reach the kubelet-ts API at ${flags.server}: ${cause}`, undefined, 'ERR_UNAVAILABLE');
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
      if (status.reason === 'Invalid' && causes.length > 1) message = `${status.message.split(':')[0]}:\n${causes.map((c) => `* ${c.message}`).join('\n')}`;
    }
  } catch {
    // not a Status: keep the text
  }
  if (res.status === 401) message = unauthorizedMessage(flags);
  throw new ClientError(message, res.status, code);
}

/** apiJson: apiRequest, then the JSON body. */
export async function apiJson<T>(flags: ClientFlags, method: string, path: string, body?: { contentType: string; data: string }): Promise<T> {
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
export function clientHandler(select: SelectClient, body: (a: Record<string, unknown>, io: CliIo) => Promise<number>): (argv: unknown) => void {
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
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 3))).join('').trimEnd()).join('\n') + '\n';
}

// Counterpart of kubectl's connection flags (genericclioptions) for cluster mode: the client commands' `--etcd-*` flags and their etcd connection.
/**
 * Shared by `kubelet-ts apply|delete|get … --etcd-servers …`: with `--etcd-servers` the client
 * commands read and write etcd directly (docs/contracts.md "etcd keys") instead of one agent's HTTP API.
 */
import type { Argv } from 'yargs';
import { AgentError, type AgentErrorCode } from '../shared/errors.js';
import { etcdKeys, newEtcdClient, type Etcd3, type EtcdKeys } from '../etcd/client.js';

/** EtcdClientFlags: the parsed `--etcd-*` and `--node` flags. */
export interface EtcdClientFlags {
  /** `--etcd-servers` (comma-separated, repeatable); empty = not in etcd mode. */
  servers: string[];
  /** `--etcd-prefix` (default /registry), without a trailing slash. */
  prefix: string;
  /** `--node`: the node whose pods are meant ('' = every node, where allowed). */
  node: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  username?: string;
  password?: string;
}

/** addEtcdClientFlags adds `--etcd-servers`, `--etcd-prefix`, `--node` and the TLS/auth flags (group "etcd:"). */
export function addEtcdClientFlags<T>(y: Argv<T>): Argv<T> {
  const g = { group: 'etcd (cluster mode):', type: 'string' as const, requiresArg: true };
  return y
    .option('etcd-servers', { ...g, describe: 'etcd URLs (comma-separated): talk to etcd instead of an agent' })
    .option('etcd-prefix', { ...g, describe: 'Key prefix in etcd', defaultDescription: '/registry' })
    .option('node', { ...g, describe: 'Node name (the pods of which node)' })
    .option('etcd-cafile', { ...g, describe: 'PEM CA bundle for https etcd URLs' })
    .option('etcd-certfile', { ...g, describe: 'PEM client certificate' })
    .option('etcd-keyfile', { ...g, describe: 'PEM client key' })
    .option('etcd-username', { ...g, describe: 'etcd user name' })
    .option('etcd-password', { ...g, describe: 'etcd password' }) as Argv<T>;
}

/** etcdClientFlags reads the flags from parsed argv (the last value of a repeated scalar flag wins). */
export function etcdClientFlags(argv: Record<string, unknown>): EtcdClientFlags {
  const last = (v: unknown) => (Array.isArray(v) ? v[v.length - 1] : v);
  const opt = (k: string) => {
    const v = last(argv[k]);
    return v === undefined || v === '' ? undefined : String(v);
  };
  const raw = argv['etcd-servers'];
  const servers =
    raw === undefined
      ? []
      : (Array.isArray(raw) ? raw : [raw])
          .map(String)
          .flatMap((s) => s.split(','))
          .map((s) => s.trim())
          .filter(Boolean);
  return {
    servers,
    prefix: (opt('etcd-prefix') ?? '/registry').replace(/\/+$/, ''),
    node: opt('node') ?? '',
    caFile: opt('etcd-cafile'),
    certFile: opt('etcd-certfile'),
    keyFile: opt('etcd-keyfile'),
    username: opt('etcd-username'),
    password: opt('etcd-password'),
  };
}

/** isEtcdMode: the command line asked for etcd (`--etcd-servers` given). */
export function isEtcdMode(argv: Record<string, unknown>): boolean {
  return etcdClientFlags(argv).servers.length > 0;
}

/** withEtcd opens a client for `flags`, runs `fn` and always closes it; calls get a 5 s deadline. */
export async function withEtcd<T>(flags: EtcdClientFlags, fn: (client: Etcd3, keys: EtcdKeys) => Promise<T>): Promise<T> {
  const client = newEtcdClient({
    servers: flags.servers,
    caFile: flags.caFile,
    certFile: flags.certFile,
    keyFile: flags.keyFile,
    username: flags.username,
    password: flags.password,
  });
  try {
    return await fn(client, etcdKeys(flags.prefix));
  } finally {
    client.close();
  }
}

/**
 * EtcdCommandError: a bad argument or failed etcd call of a client command (printed as
 * `error: <message>`, exit 1). An AgentError with code `ERR_INVALID_ARGUMENT` unless given.
 */
export class EtcdCommandError extends AgentError {
  constructor(message: string, code: AgentErrorCode = 'ERR_INVALID_ARGUMENT') {
    super(code, message);
    this.name = 'EtcdCommandError';
  }
}

/** formatRows: left-aligned columns separated by three spaces, as kubectl's tabwriter; one line per row. */
export function formatRows(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 3)))
          .join('')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

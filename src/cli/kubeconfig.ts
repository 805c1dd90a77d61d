/**
 * Counterpart of `kubeadm kubeconfig user` / the admin.conf kubeadm writes: `kubelet-ts kubeconfig`
 * prints a kubeconfig (clientcmd v1 Config) with which the real kubectl drives this node — a
 * cluster with the node's HTTPS server (`--tls-port`: kubectl sends a bearer token only over TLS)
 * and its certificate as `certificate-authority-data` (the agent's self-signed serving certificate
 * under `<root-dir>/pki`, or `--certificate-authority`), a user with the token (`--token`, else the
 * admin token of `<root-dir>/admin.token`), and a context named after the node (GET /api/v1/nodes,
 * else `--node-name`, else this host's name).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { stringify as toYaml } from 'yaml';
import { clientFlags, clientHandler, ClientError, kDefaultRootDir, type SelectClient } from './client.js';

/** kDefaultTlsServer: the URL the kubeconfig points at by default (an agent started with `--tls-port 10443`). */
export const kDefaultTlsServer = 'https://127.0.0.1:10443';

/** KubeconfigInput: what goes into the kubeconfig. */
export interface KubeconfigInput {
  server: string;
  token: string;
  nodeName: string;
  /** PEM of the CA to trust, or undefined with `insecure`. */
  caPem?: string;
  insecure: boolean;
}

/**
 * buildKubeconfig: the kubeconfig (clientcmd v1 Config) for `input`, as a plain object: cluster,
 * user and context all named after the node, the context current. Pure.
 */
export function buildKubeconfig(input: KubeconfigInput): Record<string, unknown> {
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caPem) cluster['certificate-authority-data'] = Buffer.from(input.caPem, 'utf8').toString('base64');
  else if (input.insecure) cluster['insecure-skip-tls-verify'] = true;
  const name = input.nodeName;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    clusters: [{ name, cluster }],
    users: [{ name: `${name}-admin`, user: input.token ? { token: input.token } : {} }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
    'current-context': name,
  };
}

/** fetchNodeName asks `server` for its Node (GET /api/v1/nodes) over TLS with `caPem` (the token is not sent to a server left unverified by `insecure`); undefined when it cannot. */
function fetchNodeName(server: string, token: string, caPem: string | undefined, insecure: boolean): Promise<string | undefined> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL('/api/v1/nodes', server);
    } catch {
      resolve(undefined);
      return;
    }
    if (url.protocol !== 'https:') {
      resolve(undefined);
      return;
    }
    const req = request(
      url,
      {
        method: 'GET',
        timeout: 3_000,
        ...(caPem ? { ca: caPem } : {}),
        rejectUnauthorized: !insecure,
        headers: token && !insecure ? { Authorization: `Bearer ${token}` } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const list = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items?: { metadata?: { name?: string } }[] };
            resolve(list.items?.[0]?.metadata?.name);
          } catch {
            resolve(undefined);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** kubeconfigCommand: `kubelet-ts kubeconfig [--server URL] [--token T] [--root-dir D] [--certificate-authority F] [--insecure-skip-tls-verify] [--node-name N]`. */
export function kubeconfigCommand(select: SelectClient): CommandModule {
  return {
    command: 'kubeconfig',
    describe: "Print a kubeconfig with which kubectl drives this node (needs the agent's --tls-port)",
    builder: (y: Argv) =>
      y
        .option('server', {
          type: 'string',
          default: process.env.KUBELET_TS_KUBE_SERVER ?? kDefaultTlsServer,
          requiresArg: true,
          describe: "The agent's HTTPS URL (--tls-port)",
          defaultDescription: `$KUBELET_TS_KUBE_SERVER or ${kDefaultTlsServer}`,
        })
        .option('token', {
          type: 'string',
          default: process.env.KUBELET_TS_TOKEN ?? '',
          requiresArg: true,
          describe: 'Bearer token to put in the kubeconfig (default: the admin token of <root-dir>/admin.token)',
        })
        .option('root-dir', {
          type: 'string',
          default: process.env.KUBELET_TS_ROOT_DIR ?? kDefaultRootDir,
          requiresArg: true,
          describe: "The agent's --root-dir (admin.token, pki/kubelet-ts.crt)",
        })
        .option('certificate-authority', {
          type: 'string',
          default: '',
          requiresArg: true,
          describe: "PEM file of the CA of the agent's certificate (default: <root-dir>/pki/kubelet-ts.crt, the self-signed one)",
        })
        .option('insecure-skip-tls-verify', {
          type: 'boolean',
          default: false,
          describe: "Do not check the server's certificate (when no CA file can be read)",
        })
        .option('node-name', {
          type: 'string',
          default: '',
          requiresArg: true,
          describe: "Name of the context (default: the node's name as the server reports it)",
        }),
    handler: clientHandler(select, async (a, io) => {
      const flags = clientFlags(a);
      if (!/^https:\/\//i.test(flags.server))
        throw new ClientError(
          `--server must be an https:// URL (the agent's --tls-port): kubectl sends a token only over TLS, got ${JSON.stringify(flags.server)}`,
        );
      const insecure = Boolean(a['insecure-skip-tls-verify']);
      const caFile = String(a['certificate-authority'] || join(flags.rootDir, 'pki', 'kubelet-ts.crt'));
      let caPem: string | undefined;
      try {
        caPem = readFileSync(caFile, 'utf8');
      } catch (err) {
        if (!insecure)
          throw new ClientError(
            `cannot read the CA certificate ${caFile} (${(err as Error).message}): pass --certificate-authority, or --insecure-skip-tls-verify`,
          );
      }
      if (!caPem && flags.tokenFile) {
        // The admin token found on disk never goes into a kubeconfig that skips verifying the server (issue #38): kubectl would hand it to whoever answers.
        io.stderr(
          `warning: the admin token of ${flags.tokenFile} is left out: with --insecure-skip-tls-verify kubectl could not authenticate the server it sends it to; pass --certificate-authority, or --token explicitly\n`,
        );
        flags.token = '';
      } else if (!flags.token)
        io.stderr(
          `warning: no token found (pass --token, or run as a user who can read ${join(flags.rootDir, 'admin.token')}): the kubeconfig carries no credentials (the agent answers 401 unless --anonymous-auth=true)\n`,
        );
      const nodeName = String(
        a['node-name'] || (await fetchNodeName(flags.server, flags.token, caPem, insecure)) || hostname().toLowerCase(),
      );
      io.stdout(toYaml(buildKubeconfig({ server: flags.server, token: flags.token, nodeName, caPem, insecure })));
      return 0;
    }),
  };
}

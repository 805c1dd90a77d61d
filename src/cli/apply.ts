/**
 * Counterpart of `kubectl apply -f` (k8s.io/kubectl/pkg/cmd/apply): creates the pods of a file,
 * a directory or stdin through POST /pods, replaces changed ones through PUT, and reports each as
 * `pod/<name> created|configured|unchanged`.
 */
import { addEtcdClientFlags, etcdClientFlags, isEtcdMode } from './etcd-client.js';
import { runEtcdApply } from './etcd-apply.js';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import type { Pod } from '../shared/api.js';
import { applyPodDefaults } from '../shared/defaults.js';
import { admitServiceAccountReplace } from '../shared/service-account-admission.js';
import { InvalidManifestError, formatFieldError } from '../shared/errors.js';
import { stableHash } from '../shared/hash.js';
import { parseManifests } from '../shared/manifest.js';
import type { CliIo } from './io.js';
import { pod as decodePod } from './decode.js';
import { addClientFlags, apiJson, ClientError, clientFlags, clientHandler, type ClientFlags, type SelectClient } from './client.js';

/** kManifestExtensions: the files of a directory that `apply -f DIR` reads (as kubectl: .json, .yaml, .yml). */
export const kManifestExtensions = ['.json', '.yaml', '.yml'];

/**
 * readManifestSources reads `-f` values: `-` is stdin, a directory gives its manifest files
 * (non-recursive, sorted, names starting with `.` skipped), anything else is a file.
 * @throws ClientError `the path "<p>" does not exist` or naming the file that cannot be read.
 */
export async function readManifestSources(paths: string[], stdin: () => Promise<string>): Promise<{ origin: string; text: string }[]> {
  const out: { origin: string; text: string }[] = [];
  for (const p of paths) {
    if (p === '-') {
      out.push({ origin: 'STDIN', text: await stdin() });
      continue;
    }
    let st;
    try {
      st = await stat(p);
    } catch {
      throw new ClientError(`the path "${p}" does not exist`);
    }
    const files = st.isDirectory()
      ? (await readdir(p))
          .filter((f) => !f.startsWith('.') && kManifestExtensions.some((e) => f.endsWith(e)))
          .sort()
          .map((f) => join(p, f))
      : [p];
    for (const f of files) {
      try {
        out.push({ origin: f, text: await readFile(f, 'utf8') });
      } catch (err) {
        throw new ClientError(`cannot read ${f}: ${(err as Error).message}`);
      }
    }
  }
  return out;
}

/**
 * sameDesiredState: true when `local` (as read) would not change `remote` (as stored): the
 * defaulted spec, admitted as the server's ServiceAccount admission admits a replace of `remote`
 * (serviceAccountName, the token volume and mounts: admitServiceAccountReplace), and the labels. A
 * spec.nodeName the server filled in (the pod is bound to the node) does not count as a difference
 * when the manifest names no node.
 */
export function sameDesiredState(local: Pod, remote: Pod): boolean {
  const l = admitServiceAccountReplace(applyPodDefaults(local), remote);
  // The stored side through the same admission too (a no-op on what the node stored).
  const remoteSpec = { ...admitServiceAccountReplace(structuredClone(remote), remote).spec };
  if (!l.spec?.nodeName) delete remoteSpec.nodeName;
  const pick = (spec: Pod['spec'], p: Pod) => ({ spec, labels: p.metadata?.labels ?? {} });
  return stableHash(pick(l.spec, l)) === stableHash(pick(remoteSpec as Pod['spec'], remote));
}

/** readStdin reads all of stdin as UTF-8 (`-f -`). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * parseManifestSource decodes one `-f` source into its raw pods (parseManifests), for apply and
 * delete -f. Pure.
 * @throws ClientError `error parsing <origin>: <field errors>` for a source that does not decode.
 */
export function parseManifestSource(s: { origin: string; text: string }): Pod[] {
  try {
    return parseManifests(s.text, s.origin);
  } catch (err) {
    if (err instanceof InvalidManifestError)
      throw new ClientError(`error parsing ${s.origin}: ${err.errors.map(formatFieldError).join('; ')}`);
    throw err;
  }
}

/**
 * runApply applies every pod of the sources: POST when the pod does not exist, PUT when it
 * differs, nothing when it is the same; prints `pod/<name> created|configured|unchanged` per pod.
 * A parse error of any file stops before anything is sent. Resolves with the exit code (1 when
 * any pod failed; the others are still applied, as kubectl does).
 */
export async function runApply(
  flags: ClientFlags,
  sources: { origin: string; text: string }[],
  namespace: string | undefined,
  io: CliIo,
): Promise<number> {
  const pods: Pod[] = [];
  for (const s of sources) pods.push(...parseManifestSource(s));
  if (pods.length === 0) throw new ClientError('no objects passed to apply');
  let failed = 0;
  for (const pod of pods) {
    const meta = (pod.metadata ??= {});
    if (namespace !== undefined) {
      if (meta.namespace && meta.namespace !== namespace) {
        io.stderr(
          `error: the namespace from the provided object "${meta.namespace}" does not match the namespace "${namespace}". You must pass '--namespace=${meta.namespace}' to perform this operation.\n`,
        );
        failed++;
        continue;
      }
      meta.namespace = namespace;
    }
    const ns = meta.namespace ?? 'default';
    const name = meta.name ?? '';
    try {
      let existing: Pod | undefined;
      try {
        const at = `/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
        existing = decodePod(await apiJson<unknown>(flags, 'GET', at), `GET ${at}`);
      } catch (err) {
        // 404: a new pod; 400: a name the server refuses in a path (POST reports it as 422 Invalid).
        if (!(err instanceof ClientError) || (err.status !== 404 && err.status !== 400)) throw err;
      }
      const body = { contentType: 'application/json', data: JSON.stringify(pod) };
      if (!existing) {
        // The answer must be the created Pod: a program on the port answering `{}` created nothing (decode.ts).
        decodePod(await apiJson<unknown>(flags, 'POST', '/pods', body), 'POST /pods');
        io.stdout(`pod/${name} created\n`);
      } else if (sameDesiredState(pod, existing)) {
        io.stdout(`pod/${name} unchanged\n`);
      } else {
        const at = `/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
        decodePod(await apiJson<unknown>(flags, 'PUT', at, body), `PUT ${at}`);
        io.stdout(`pod/${name} configured\n`);
      }
    } catch (err) {
      failed++;
      io.stderr(`error: ${(err as Error).message}\n`);
    }
  }
  return failed > 0 ? 1 : 0;
}

/** applyCommand: the yargs module of `kubelet-ts apply -f FILE|DIR|-`. */
export function applyCommand(select: SelectClient): CommandModule {
  return {
    command: 'apply',
    describe: 'Create or update pods from manifest files, a directory or stdin (kubectl apply -f)',
    builder: (y: Argv) =>
      addEtcdClientFlags(addClientFlags(y))
        .option('filename', {
          alias: 'f',
          type: 'string',
          array: true,
          demandOption: 'apply needs -f FILE|DIR|-',
          describe: 'Manifest file, directory of manifests, or - for stdin (repeatable)',
        })
        .option('namespace', { alias: 'n', type: 'string', requiresArg: true, describe: 'Namespace for pods that name none' }),
    handler: clientHandler(select, async (a, io) => {
      const sources = await readManifestSources((a.filename as string[]).map(String), readStdin);
      const ns = a.namespace === undefined ? undefined : String(a.namespace);
      if (isEtcdMode(a)) return runEtcdApply(etcdClientFlags(a), sources, ns, io);
      return runApply(clientFlags(a), sources, ns, io);
    }),
  };
}

/**
 * joinStdinFlag rewrites `-f -` / `--filename -` as `-f=-` / `--filename=-`: yargs-parser reads a
 * lone `-` as a positional, not as the flag's value (kubectl's `apply -f -` means stdin). Pure.
 */
export function joinStdinFlag(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if ((args[i] === '-f' || args[i] === '--filename') && args[i + 1] === '-') {
      out.push(`${args[i]}=-`);
      i++;
    } else {
      out.push(args[i]);
    }
  }
  return out;
}

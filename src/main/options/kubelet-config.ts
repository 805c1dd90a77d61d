// Counterpart of pkg/kubelet/kubeletconfig/configfiles (the --config file loader) for kubelet.config.k8s.io/v1beta1.
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { kKubernetesYaml } from '../../shared/yaml-options.js';
import { InvalidArgumentError } from '../../shared/errors.js';
import { parseDuration } from '../../shared/duration.js';
import { kAgentOptionDescriptors, type AgentOptionDescriptor } from './agent-option-descriptors.js';
import { checkAgentOption, type AgentOptions } from './agent-options.js';

/** kKubeletConfigApiVersion: the only `apiVersion` accepted in a `--config` file. */
export const kKubeletConfigApiVersion = 'kubelet.config.k8s.io/v1beta1';
/** kKubeletConfigKind: the only `kind` accepted in a `--config` file. */
export const kKubeletConfigKind = 'KubeletConfiguration';

type FieldMapper = (value: unknown, label: string, configDir: string) => Partial<AgentOptions>;

/** fieldMapper: how one KubeletConfiguration field is read into its option, from the option's descriptor. */
function fieldMapper<K extends keyof AgentOptions>(key: K, parse: 'duration' | 'path' | undefined): FieldMapper {
  if (parse === 'duration') {
    return (value, label) => {
      if (typeof value !== 'string' && typeof value !== 'number') {
        throw new InvalidArgumentError(`${label} must be a duration such as "20s", got ${JSON.stringify(value)}`);
      }
      return { [key]: checkAgentOption(key, parseDuration(value, label), label) };
    };
  }
  if (parse === 'path') {
    // As configfiles.resolveRelativePaths: a relative path is relative to the config file. Resolve
    // against the config file's directory before the option check (which resolves against the cwd).
    return (value, label, configDir) => {
      const raw = typeof value === 'string' && value !== '' && !isAbsolute(value) ? resolve(configDir, value) : value;
      return { [key]: checkAgentOption(key, raw, label) };
    };
  }
  return (value, label) => ({ [key]: checkAgentOption(key, value, label) });
}

/**
 * kConfigFields: the KubeletConfiguration (v1beta1) fields kubelet-ts understands, and how each
 * maps onto AgentOptions, generated from the descriptors' `config` (agent-option-descriptors.ts).
 * `podInfraContainerImage` is a flag only upstream; we accept it here too.
 */
const kConfigFields: Record<string, FieldMapper> = Object.fromEntries(
  (Object.entries(kAgentOptionDescriptors) as [keyof AgentOptions, AgentOptionDescriptor<unknown>][])
    .filter(([, d]) => d.config !== undefined)
    .map(([key, d]) => [d.config!.field, fieldMapper(key, d.config!.parse)]),
);

/**
 * loadKubeletConfig reads a `--config` file: one YAML (or JSON) document with
 * `apiVersion: kubelet.config.k8s.io/v1beta1` and `kind: KubeletConfiguration`, decoded strictly
 * as the kubelet's configfiles loader does (an unknown or duplicate field is an error). Durations
 * are Go strings (`20s`, `1m30s`). A relative `staticPodPath` is resolved against the file's directory.
 * Runs on the main thread at start-up; reads the file once.
 * @param path the file to read.
 * @returns only the options the file sets (flags given on the command line override them).
 * @throws InvalidArgumentError naming the file (and the field, for a bad or unknown field), for an
 *   unreadable or empty file, invalid YAML, or a wrong apiVersion/kind.
 */
export async function loadKubeletConfig(path: string): Promise<Partial<AgentOptions>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`${path}: cannot read kubelet config file: ${(err as Error).message}`);
  }
  if (text.trim() === '') throw new InvalidArgumentError(`${path}: kubelet config file is empty`);
  const doc = parseDocument(text, { ...kKubernetesYaml, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    throw new InvalidArgumentError(`${path}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  const data: unknown = doc.toJS();
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new InvalidArgumentError(`${path}: a kubelet config file must be a YAML mapping (a ${kKubeletConfigKind} object)`);
  }
  const obj = data as Record<string, unknown>;
  if (obj.apiVersion !== kKubeletConfigApiVersion || obj.kind !== kKubeletConfigKind) {
    throw new InvalidArgumentError(
      `${path}: expected apiVersion ${JSON.stringify(kKubeletConfigApiVersion)} and kind ${JSON.stringify(kKubeletConfigKind)}, ` +
        `got apiVersion ${JSON.stringify(obj.apiVersion ?? '')} and kind ${JSON.stringify(obj.kind ?? '')}`,
    );
  }
  const configDir = dirname(resolve(path));
  const out: Partial<AgentOptions> = {};
  for (const [field, value] of Object.entries(obj)) {
    if (field === 'apiVersion' || field === 'kind') continue;
    const mapper = kConfigFields[field];
    if (mapper === undefined) {
      throw new InvalidArgumentError(
        `${path}: unknown field ${JSON.stringify(field)} (kubelet-ts understands ${Object.keys(kConfigFields).join(', ')})`,
      );
    }
    if (value === null) continue; // `field:` with no value means "unset", as in the Go decoder.
    Object.assign(out, mapper(value, `${path}: ${field}`, configDir));
  }
  return out;
}

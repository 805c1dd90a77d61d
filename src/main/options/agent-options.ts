// Counterpart of cmd/kubelet/app/options (KubeletFlags + KubeletConfiguration defaults and ValidateKubeletConfiguration).
/**
 * The agent's resolved options, generated from the one descriptor table
 * (agent-option-descriptors.ts), as piscina derives its resolved options from `kDefaultOptions`.
 */
import { join } from 'node:path';
import { InvalidArgumentError } from '../../shared/errors.js';
import { verbosityToLevel } from '../../shared/logging.js';
import { kAgentOptionDescriptors, type AgentOptionDescriptor } from './agent-option-descriptors.js';
import { evictionThresholds } from '../eviction/thresholds.js';
import { resolveRuntimeChoice } from './runtime-endpoint-options.js';

type Descriptors = typeof kAgentOptionDescriptors;

/**
 * AgentOptions: the resolved settings of one kubelet-ts agent, every field present and checked.
 * Built by {@link resolveAgentOptions} from defaults ← `--config` file ← command-line flags.
 * Durations are in milliseconds (`…Ms`); the flags and the config file take Go duration strings.
 * Each field's type, flag, config field, default and check come from its descriptor in
 * {@link kAgentOptionDescriptors} (whose TSDoc documents the field).
 */
export type AgentOptions = { -readonly [K in keyof Descriptors]: Descriptors[K] extends AgentOptionDescriptor<infer T> ? T : never };

/** kAgentOptionKeys: every AgentOptions field, in descriptor (`--help`) order. */
export const kAgentOptionKeys = Object.freeze(Object.keys(kAgentOptionDescriptors) as (keyof AgentOptions)[]);

function descriptorOf<K extends keyof AgentOptions>(key: K): AgentOptionDescriptor<AgentOptions[K]> {
  return kAgentOptionDescriptors[key] as unknown as AgentOptionDescriptor<AgentOptions[K]>;
}

/** kDefaultAgentOptions: every default, as `--help` shows them. `nodeName` is this host's name. */
export const kDefaultAgentOptions: Readonly<AgentOptions> = Object.freeze(
  Object.fromEntries(kAgentOptionKeys.map((k) => [k, descriptorOf(k).default])) as unknown as AgentOptions,
);

/**
 * kOptionFlags: the command-line flag of each option (`--port`), used to name it in errors.
 * Derived options name the flag they come from.
 */
export const kOptionFlags: Readonly<Record<keyof AgentOptions, string>> = Object.freeze(
  Object.fromEntries(kAgentOptionKeys.map((k) => [k, `--${descriptorOf(k).flag}`])) as Record<keyof AgentOptions, string>,
);

/**
 * checkAgentOption validates and normalises one option value with its descriptor's check; used by
 * {@link resolveAgentOptions} and by the KubeletConfiguration loader (which passes `label` = `<file>: <field>`).
 * @param label names the setting in the error, e.g. `--port` or `/etc/k.yaml: port`.
 * @returns the normalised value (e.g. nodeName lowercased, etcdPrefix without trailing slash).
 * @throws InvalidArgumentError `<label> <rule>, got <value>`.
 */
export function checkAgentOption<K extends keyof AgentOptions>(key: K, value: unknown, label: string = kOptionFlags[key]): AgentOptions[K] {
  return descriptorOf(key).check(label, value);
}

/**
 * resolveAgentOptions fills defaults ({@link kDefaultAgentOptions}) into `partial` and validates
 * every field, as the kubelet's ValidateKubeletConfiguration does. Derived fields:
 * `dockerSocketPath` comes from `dockerEndpoint` (a `dockerSocketPath` given alone sets the endpoint),
 * `runtime` from `--runtime` and the endpoint flags (runtime-endpoint-options.ts resolveRuntimeChoice),
 * `logLevel` from `v` unless given, and `cniCacheDir` is `<rootDir>/cni/cache` unless given. Pure; called on the main thread by the CLI and by tests.
 * @throws InvalidArgumentError naming the flag, e.g. `--port must be an integer in 1..65535 …, got "x"`,
 *   or `unknown option "…"` for a key that AgentOptions does not have.
 */
export function resolveAgentOptions(partial: Partial<AgentOptions> = {}): AgentOptions {
  for (const key of Object.keys(partial)) {
    if (!(key in kDefaultAgentOptions)) throw new InvalidArgumentError(`unknown option ${JSON.stringify(key)}`);
  }
  const given = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined)) as Partial<AgentOptions>;
  const merged: Record<string, unknown> = { ...kDefaultAgentOptions, ...given };
  if (given.dockerEndpoint === undefined && given.dockerSocketPath !== undefined) {
    merged.dockerEndpoint = `unix://${checkAgentOption('dockerSocketPath', given.dockerSocketPath)}`;
  }
  const out = {} as Record<keyof AgentOptions, unknown>;
  for (const key of kAgentOptionKeys) {
    if (kAgentOptionDescriptors[key].parse === 'derived') continue; // dockerSocketPath and logLevel, below
    out[key] = checkAgentOption(key, merged[key]);
  }
  out.dockerSocketPath = (out.dockerEndpoint as string).slice('unix://'.length);
  out.runtime = resolveRuntimeChoice(out as unknown as AgentOptions, given.runtime !== undefined);
  if (given.cniCacheDir === undefined) out.cniCacheDir = join(out.rootDir as string, 'cni', 'cache');
  // As the kubelet's validation: imageGCLowThresholdPercent must not exceed imageGCHighThresholdPercent.
  if ((out.imageGcLowThresholdPercent as number) > (out.imageGcHighThresholdPercent as number)) {
    throw new InvalidArgumentError(
      `--image-gc-low-threshold (${out.imageGcLowThresholdPercent}) must not exceed --image-gc-high-threshold (${out.imageGcHighThresholdPercent})`,
    );
  }
  // As ParseThresholdConfig: every soft eviction threshold needs its grace period.
  evictionThresholds(out as unknown as AgentOptions);
  out.logLevel = given.logLevel !== undefined ? checkAgentOption('logLevel', given.logLevel) : verbosityToLevel(out.v as number);
  return out as unknown as AgentOptions;
}

// Counterpart of pkg/kubelet/apis/config/validation (ValidateKubeletConfiguration): the value checks of one option.
/**
 * The checks an option descriptor's `check` is built from. Each takes the label that names the
 * setting in errors (`--port`, or `<file>: port` from the config loader) and the raw value, and
 * returns the value (normalised where said) or throws InvalidArgumentError
 * `<label> <rule>, got <value>` in the style of piscina's and undici's option errors.
 */
import { isIP } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { InvalidArgumentError } from '../../shared/errors.js';
import { parseCriEndpoint } from '../../shared/runtime-endpoint.js';

/** OptionCheck: validates and normalises one option value; `label` names the setting in the error. */
export type OptionCheck<T> = (label: string, value: unknown) => T;

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(typeof value === 'object' ? JSON.stringify(value) : value);
}

/**
 * failOption throws InvalidArgumentError `<label> <rule>, got <value>` (strings JSON-quoted,
 * objects as JSON).
 */
export function failOption(label: string, rule: string, value: unknown): never {
  throw new InvalidArgumentError(`${label} ${rule}, got ${show(value)}`);
}

/**
 * integerIn: an integer in min..max. The rule reads `must be an integer >= min` when max is
 * Number.MAX_SAFE_INTEGER, else `must be an integer in min..max`, unless `rule` is given.
 */
export function integerIn(min: number, max: number, rule?: string): OptionCheck<number> {
  return (label, value) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      failOption(
        label,
        rule ?? (max === Number.MAX_SAFE_INTEGER ? `must be an integer >= ${min}` : `must be an integer in ${min}..${max}`),
        value,
      );
    }
    return value;
  };
}

/** positiveMs: a positive, finite duration in milliseconds (already parsed from Go syntax). */
export const positiveMs: OptionCheck<number> = (label, value) => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) failOption(label, 'must be a positive duration', value);
  return value;
};

/** positiveNumber: a positive, finite number (not necessarily an integer). */
export const positiveNumber: OptionCheck<number> = (label, value) => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) failOption(label, 'must be a positive number', value);
  return value;
};

/** str: a string; `allowEmpty` false also refuses an empty or blank one. */
export function str(allowEmpty: boolean): OptionCheck<string> {
  return (label, value) => {
    if (typeof value !== 'string') failOption(label, 'must be a string', value);
    if (!allowEmpty && value.trim() === '') failOption(label, 'must not be empty', value);
    return value;
  };
}

/** nonEmptyWhere: a non-empty string that passes `ok`; otherwise `<label> <rule>, got <value>`. */
export function nonEmptyWhere(ok: (s: string) => boolean, rule: string): OptionCheck<string> {
  return (label, value) => {
    const s = str(false)(label, value);
    if (!ok(s)) failOption(label, rule, value);
    return s;
  };
}

/** optionalPath: a string; `''` stays `''` (unset), anything else is resolved against the working directory. */
export const optionalPath: OptionCheck<string> = (label, value) => {
  const s = str(true)(label, value);
  return s === '' ? '' : resolvePath(s);
};

/** ipAddress: an IPv4 or IPv6 address. */
export const ipAddress: OptionCheck<string> = (label, value) => {
  if (typeof value !== 'string' || isIP(value) === 0) failOption(label, 'must be an IP address', value);
  return value;
};

/** httpUrl: an absolute `http:` or `https:` URL (kept as given). */
export const httpUrl: OptionCheck<string> = (label, value) => {
  if (typeof value !== 'string') failOption(label, 'must be an http(s) URL', value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    failOption(label, 'must be an http(s) URL', value);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') failOption(label, 'must be an http(s) URL', value);
  return value;
};

/** oneOf: one of `values`; the rule lists them (`must be one of docker, remote, fake`). */
export function oneOf<T extends string>(values: readonly T[]): OptionCheck<T> {
  return (label, value) => {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value))
      failOption(label, `must be one of ${values.join(', ')}`, value);
    return value as T;
  };
}

/**
 * criEndpoint: `''` (unset) or a CRI endpoint `unix:///absolute/path` (shared/runtime-endpoint.ts
 * parseCriEndpoint, as the kubelet's util_unix.go parseEndpoint; `tcp://`, `npipe://` and a bare
 * path are refused with the label and the value).
 */
export const criEndpoint: OptionCheck<string> = (label, value) => {
  const s = str(true)(label, value);
  if (s !== '') parseCriEndpoint(s, label);
  return s;
};

/** boolean: true or false (a config file's `"yes"` is refused). */
export const boolean: OptionCheck<boolean> = (label, value) => {
  if (typeof value !== 'boolean') failOption(label, 'must be true or false', value);
  return value;
};

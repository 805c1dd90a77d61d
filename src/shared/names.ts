// Counterpart of k8s.io/apimachinery/pkg/util/validation (validation.go): name and value checks.
/**
 * The `is*` predicates answer yes/no; the matching `*Errors` functions return the messages
 * Kubernetes' `IsDNS1123Label` & co. return (an empty list means valid), so validation.ts can
 * report exactly what the apiserver would say. Pure functions, safe in any thread.
 */

/** Maximum length of a DNS-1123 label (RFC 1123 §2.1): 63 characters. */
export const kDNS1123LabelMaxLength = 63;
/** Maximum length of a DNS-1123 subdomain: 253 characters. */
export const kDNS1123SubdomainMaxLength = 253;
/** Maximum length of the name part of a qualified name: 63 characters. */
export const kQualifiedNameMaxLength = 63;
/** Maximum length of a label value: 63 characters. */
export const kLabelValueMaxLength = 63;
/** Maximum length of an IANA_SVC_NAME (a named port): 15 characters. */
export const kPortNameMaxLength = 15;

const kDNS1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const kDNS1123SubdomainFmt = `${kDNS1123LabelFmt}(\\.${kDNS1123LabelFmt})*`;
const kQualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const kLabelValueFmt = `(${kQualifiedNameFmt})?`;
const kEnvVarNameFmt = '[-._a-zA-Z][-._a-zA-Z0-9]*';
const kHTTPHeaderNameFmt = '[-A-Za-z0-9]+';

const kDNS1123LabelRe = new RegExp(`^${kDNS1123LabelFmt}$`);
const kDNS1123SubdomainRe = new RegExp(`^${kDNS1123SubdomainFmt}$`);
const kQualifiedNameRe = new RegExp(`^${kQualifiedNameFmt}$`);
const kLabelValueRe = new RegExp(`^${kLabelValueFmt}$`);
const kEnvVarNameRe = new RegExp(`^${kEnvVarNameFmt}$`);
const kHTTPHeaderNameRe = new RegExp(`^${kHTTPHeaderNameFmt}$`);

/** maxLenError: `must be no more than N characters` (validation.MaxLenError). */
export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

/** inclusiveRangeError: `must be between LO and HI, inclusive` (validation.InclusiveRangeError). */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** regexError renders a message with examples and the regex, as validation.RegexError does. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** dns1123LabelErrors: why `value` is not a DNS-1123 label (IsDNS1123Label); [] when it is. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > kDNS1123LabelMaxLength) errs.push(maxLenError(kDNS1123LabelMaxLength));
  if (!kDNS1123LabelRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        kDNS1123LabelFmt,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

/** dns1123SubdomainErrors: why `value` is not a DNS-1123 subdomain (IsDNS1123Subdomain); [] when it is. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > kDNS1123SubdomainMaxLength) errs.push(maxLenError(kDNS1123SubdomainMaxLength));
  if (!kDNS1123SubdomainRe.test(value)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        kDNS1123SubdomainFmt,
        'example.com',
      ),
    );
  }
  return errs;
}

const kQualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/**
 * qualifiedNameErrors: why `value` is not a qualified name (IsQualifiedName): an optional
 * DNS-1123 subdomain prefix and `/`, then a name of at most 63 characters. [] when valid.
 */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const [prefix] = parts;
    name = parts[1];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const m of dns1123SubdomainErrors(prefix)) errs.push(`prefix part ${m}`);
  } else {
    return [
      `a qualified name ${regexError(kQualifiedNameErrMsg, kQualifiedNameFmt, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > kQualifiedNameMaxLength) errs.push(`name part ${maxLenError(kQualifiedNameMaxLength)}`);
  if (!kQualifiedNameRe.test(name))
    errs.push(`name part ${regexError(kQualifiedNameErrMsg, kQualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** labelValueErrors: why `value` is not a label value (IsValidLabelValue); [] when valid. The empty string is valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > kLabelValueMaxLength) errs.push(maxLenError(kLabelValueMaxLength));
  if (!kLabelValueRe.test(value)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        kLabelValueFmt,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** portNameErrors: why `value` is not an IANA_SVC_NAME (IsValidPortName); [] when valid. */
export function portNameErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > kPortNameMaxLength) errs.push(maxLenError(kPortNameMaxLength));
  if (!/^[-a-z0-9]+$/.test(value)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(value)) errs.push('must contain at least one letter (a-z)');
  if (value.includes('--')) errs.push('must not contain consecutive hyphens (--)');
  if (value.startsWith('-') || value.endsWith('-')) errs.push('must not begin or end with a hyphen (-)');
  return errs;
}

/** envVarNameErrors: why `value` is not an environment variable name (IsEnvVarName); [] when valid. */
export function envVarNameErrors(value: string): string[] {
  const errs: string[] = [];
  if (!kEnvVarNameRe.test(value)) {
    errs.push(
      regexError(
        "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit",
        kEnvVarNameFmt,
        'my.env-name',
        'MY_ENV.NAME',
        'MyEnvName1',
      ),
    );
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** httpHeaderNameErrors: why `value` is not an HTTP header name (IsHTTPHeaderName); [] when valid. */
export function httpHeaderNameErrors(value: string): string[] {
  if (kHTTPHeaderNameRe.test(value)) return [];
  return [regexError("a valid HTTP header must consist of alphanumeric characters or '-'", kHTTPHeaderNameFmt, 'X-Header-Name')];
}

/** isDNS1123Label: lower-case alphanumerics and `-`, starting and ending alphanumeric, ≤ 63 characters. */
export function isDNS1123Label(value: string): boolean {
  return dns1123LabelErrors(value).length === 0;
}

/** isDNS1123Subdomain: dot-separated DNS-1123 labels, ≤ 253 characters in all. */
export function isDNS1123Subdomain(value: string): boolean {
  return dns1123SubdomainErrors(value).length === 0;
}

/** isQualifiedName: `[prefix/]name` as label and annotation keys (e.g. `app`, `example.com/tier`). */
export function isQualifiedName(value: string): boolean {
  return qualifiedNameErrors(value).length === 0;
}

/** isValidLabelValue: empty, or ≤ 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric. */
export function isValidLabelValue(value: string): boolean {
  return labelValueErrors(value).length === 0;
}

/** isValidPortName: an IANA_SVC_NAME (≤ 15 lower-case alphanumerics and `-`, at least one letter). */
export function isValidPortName(value: string): boolean {
  return portNameErrors(value).length === 0;
}

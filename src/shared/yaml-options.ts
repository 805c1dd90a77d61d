// Counterpart of sigs.k8s.io/yaml (YAMLToJSON over its fork of go-yaml v2): how Kubernetes reads YAML.
/**
 * The options every YAML reader of kubelet-ts gives the `yaml` package (manifests, request
 * bodies, apply patches, `kubelet-ts apply -f`, the kubelet config file), so that a plain scalar
 * means what it means to kubectl and the apiserver. Those read YAML 1.1 (go-yaml v2's resolve.go),
 * where the `yaml` package's default is 1.2. Differences, checked against kubectl 1.32 on this
 * machine (a value in a string field such as `metadata.name` is refused when it resolves to a
 * bool or number):
 * - `yes`/`no`/`on`/`off`/`y`/`n` (any case the 1.1 spec lists) are booleans; `010` is octal 8;
 *   `1_000` is 1000; `0b101` is 5 — the yaml package's 1.1 schema.
 * - `0o17` and `0X1F`, `0B101` are integers (go-yaml hands the scalar to Go's strconv.ParseInt with
 *   base 0, which takes these prefixes): {@link kGoPrefixedInt}, not a string as pure 1.1 says.
 * - `1:20` (a 1.1 sexagesimal) and `2001-12-14` (a timestamp) stay the strings written: go-yaml v2
 *   has no base-60 numbers and hands timestamps to an untyped target as strings.
 * A quoted scalar is always a string. Pure data; safe in any thread.
 */
import type { ParseOptions, DocumentOptions, SchemaOptions, ScalarTag } from 'yaml';

const kPrefixed = /^([-+]?)0(?:[oO](_*[0-7][0-7_]*)|[bB](_*[01][01_]*)|[xX](_*[0-9a-fA-F][0-9a-fA-F_]*))$/;

/**
 * kGoPrefixedInt: `0o17`, `0O17`, `0B101`, `0X1F` (and their signed forms, `_` ignored) are integers,
 * as strconv.ParseInt(s, 0, 64) reads them inside go-yaml v2. The lower-case `0b`/`0x` forms are
 * the 1.1 schema's own; this tag takes them too so that one rule decides.
 */
export const kGoPrefixedInt: ScalarTag = {
  identify: () => false,
  default: true,
  tag: 'tag:yaml.org,2002:int',
  test: kPrefixed,
  resolve: (s) => {
    const m = kPrefixed.exec(s)!;
    const [digits, base] = m[2] !== undefined ? [m[2], 8] : m[3] !== undefined ? [m[3], 2] : [m[4]!, 16];
    return (m[1] === '-' ? -1 : 1) * parseInt(digits.replace(/_/g, ''), base);
  },
};

/** The 1.1 schema's tags go-yaml v2 does not have (base-60 numbers, timestamps as values). */
const kDropped = (tag: ScalarTag | { tag: string; format?: string }): boolean =>
  tag.tag === 'tag:yaml.org,2002:timestamp' || tag.format === 'TIME';

/**
 * kKubernetesYaml: parse options for `parseAllDocuments` / `parseDocument` that read YAML as
 * Kubernetes does (see the file comment). Combine with the caller's own options
 * (`{ ...kKubernetesYaml, uniqueKeys: false }`).
 */
export const kKubernetesYaml: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  customTags: (tags) => [kGoPrefixedInt, ...tags.filter((t) => !kDropped(t as ScalarTag))],
};

// Counterpart of pkg/util/parsers ParseImageName over github.com/distribution/reference
// ParseNormalizedNamed (normalize.go, regexp.go, reference.go): whether an image reference parses.
/**
 * imageReferenceError: why `image` is no valid image reference, in the words the kubelet's
 * image manager uses (`couldn't parse image name "<image>": invalid reference format…`), or
 * undefined when it parses. The grammar (the Docker reference grammar):
 *
 * - `[domain/]path[:tag][@digest]`; `domain` is a host name (letters, digits, `-` inside its
 *   components, `.` between them) or `[ipv6]`, with an optional `:port`; it is only a domain when
 *   it holds a `.` or a `:` or is `localhost` (else it is the first path component);
 * - each path component is lower-case letters and digits, with `.`, `_`, `__` or one or more `-`
 *   between them; the whole name (domain and path) is at most 255 characters;
 * - a tag is a word character then up to 127 of word characters, `.` and `-`;
 * - a digest is `algorithm:hex` with at least 32 hex digits;
 * - a bare 64-hex-digit name is refused (it would read as an image ID).
 * Pure; no I/O.
 */
const kAlnum = '[a-z0-9]+';
const kSeparator = '(?:[._]|__|[-]+)';
const kPathComponent = `${kAlnum}(?:${kSeparator}${kAlnum})*`;
const kDomainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const kDomain = `(?:${kDomainComponent}(?:\\.${kDomainComponent})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const kTag = '[\\w][\\w.-]{0,127}';
const kDigest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const kName = `(?:${kDomain}/)?${kPathComponent}(?:/${kPathComponent})*`;
const kReference = new RegExp(`^(${kName})(?::${kTag})?(?:@${kDigest})?$`);
const kIdentifier = /^[a-f0-9]{64}$/;
const kMaxNameLength = 255;

export function imageReferenceError(image: string): string | undefined {
  const fail = (why: string) => `couldn't parse image name ${JSON.stringify(image)}: ${why}`;
  if (kIdentifier.test(image)) return fail(`invalid repository name (${image}), cannot specify 64-byte hexadecimal strings`);
  // The path after the domain must be lower case (ParseNormalizedNamed checks it before the grammar).
  const slash = image.indexOf('/');
  const first = slash === -1 ? '' : image.slice(0, slash);
  const hasDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost');
  const rest = hasDomain ? image.slice(slash + 1) : image;
  const remote = rest.split('@')[0].replace(/:[^/]*$/, '');
  if (remote.toLowerCase() !== remote) {
    return fail(
      `invalid reference format: repository name (${hasDomain ? remote : remote.includes('/') ? remote : `library/${remote}`}) must be lowercase`,
    );
  }
  const m = kReference.exec(image);
  if (!m) return fail('invalid reference format');
  if (m[1].length > kMaxNameLength) return fail(`repository name must not be more than ${kMaxNameLength} characters`);
  return undefined;
}

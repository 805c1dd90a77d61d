/**
 * Counterpart of k8s.io/apiserver/pkg/authentication/token/tokenfile (the static token file,
 * `--token-auth-file`) and of the kubelet server's authn/authz filter (pkg/kubelet/server/auth.go),
 * reduced to one rule: the group {@link kReadOnlyGroup} may only read.
 */
import { readFile } from 'node:fs/promises';
import type { Status } from '../shared/api.js';
import { InvalidArgumentError } from '../shared/errors.js';
import { statusError } from './status.js';

/**
 * kReadOnlyGroup: members of this group may only GET (and HEAD); POST, PUT, PATCH and DELETE
 * answer 403 Forbidden. Any other authenticated user may do everything.
 */
export const kReadOnlyGroup = 'kubelet-ts:read-only';

/** TokenUser: who a bearer token stands for (user.DefaultInfo). */
export interface TokenUser {
  name: string;
  uid: string;
  groups: string[];
}

/** TokenAuthenticator: tokens → users, from a static token file. */
export interface TokenAuthenticator {
  /** The file the tokens came from (for logs). */
  readonly origin: string;
  /** How many tokens are known. */
  readonly size: number;
  /** authenticateToken: the user of `token`, or undefined. Pure lookup. */
  authenticateToken(token: string): TokenUser | undefined;
}

/**
 * parseCsv reads RFC 4180 CSV as Go's encoding/csv does with `FieldsPerRecord = -1` and
 * `TrimLeadingSpace = true`: fields separated by `,`, a field may be double-quoted (`""` inside
 * quotes is one `"`, and quoted fields may hold commas and newlines), blank lines are skipped,
 * CRLF and LF both end a record. No csv package is installed; this careful minimal parser stands
 * in for one (csv-parse would be the package to add).
 * @returns the records with their 1-based line numbers.
 * @throws InvalidArgumentError `<origin>: line N: …` for an unterminated quoted field or a bare `"` in an unquoted field.
 */
export function parseCsv(text: string, origin: string): { line: number; fields: string[] }[] {
  const records: { line: number; fields: string[] }[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    // Skip blank lines.
    if (text[i] === '\n') { i++; line++; continue; }
    if (text[i] === '\r' && text[i + 1] === '\n') { i += 2; line++; continue; }
    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      while (i < n && (text[i] === ' ' || text[i] === '\t')) i++; // TrimLeadingSpace
      let field = '';
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new InvalidArgumentError(`${origin}: line ${startLine}: extraneous or missing " in quoted-field`);
          const c = text[i];
          if (c === '"') {
            if (text[i + 1] === '"') { field += '"'; i += 2; continue; }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          throw new InvalidArgumentError(`${origin}: line ${line}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (i < n && text[i] !== ',' && text[i] !== '\n' && !(text[i] === '\r' && text[i + 1] === '\n')) {
          if (text[i] === '"') throw new InvalidArgumentError(`${origin}: line ${line}: bare " in non-quoted-field`);
          field += text[i++];
        }
        if (text[i] === '\r' && text[i + 1] !== '\n') field += text[i++];
      }
      fields.push(field);
      if (i < n && text[i] === ',') { i++; continue; }
      if (i < n && text[i] === '\r') i++;
      if (i < n && text[i] === '\n') { i++; line++; }
      break;
    }
    records.push({ line: startLine, fields });
  }
  return records;
}

/**
 * parseTokenFile reads a static token file: one record per line, `token,user,uid[,"group1,group2"]`,
 * as the apiserver's tokenfile.NewCSV. A record with an empty token is skipped (with a warning); a
 * duplicate token replaces the earlier one (with a warning). Pure.
 * @param warn receives the warnings (e.g. `duplicate token has been found in token file 'f', record number '3'`).
 * @throws InvalidArgumentError `token file '<origin>' must have at least 3 columns (token, user name, user uid), found N`,
 *   or a CSV syntax error naming the file and line.
 */
export function parseTokenFile(text: string, origin: string, warn: (message: string) => void = () => {}): TokenAuthenticator {
  const tokens = new Map<string, TokenUser>();
  let recordNum = 0;
  for (const { fields } of parseCsv(text, `token file '${origin}'`)) {
    if (fields.length < 3) {
      throw new InvalidArgumentError(`token file '${origin}' must have at least 3 columns (token, user name, user uid), found ${fields.length}`);
    }
    recordNum++;
    const [token, name, uid] = fields;
    if (token === '') {
      warn(`empty token has been found in token file '${origin}', record number '${recordNum}'`);
      continue;
    }
    if (tokens.has(token)) warn(`duplicate token has been found in token file '${origin}', record number '${recordNum}'`);
    const groups = fields.length >= 4 && fields[3] !== '' ? fields[3].split(',') : [];
    tokens.set(token, { name, uid, groups });
  }
  return {
    origin,
    size: tokens.size,
    authenticateToken: (token) => tokens.get(token),
  };
}

/**
 * loadTokenFile reads and parses `--token-auth-file`.
 * @throws InvalidArgumentError naming `--token-auth-file` and the path when it cannot be read, or as parseTokenFile.
 */
export async function loadTokenFile(path: string, warn?: (message: string) => void): Promise<TokenAuthenticator> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`--token-auth-file: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseTokenFile(text, path, warn);
}

/** AccessDecision: the request may go on as `user` (undefined when auth is off), or gets `status`. */
export type AccessDecision =
  | { ok: true; user?: TokenUser }
  | { ok: false; status: Status; /** why, for the log line (never the token) */ reason: string };

/** Paths served without authentication (the kubelet's /healthz is probed by anyone). */
const kUnauthenticatedPaths = new Set(['/healthz', '/healthz/']);

const kReadMethods = new Set(['get', 'head']);

/**
 * checkAccess authenticates (`Authorization: Bearer <token>`) and authorizes one request.
 * With `auth` undefined every request is allowed. `/healthz` never needs a token. A missing or
 * unknown token → 401 `Unauthorized`; a member of {@link kReadOnlyGroup} using a method other
 * than GET/HEAD → 403 `Forbidden`. Pure; the WebSocket upgrade of the watch uses it too.
 * @param method lowercased HTTP method.
 * @param path the request path (without query).
 * @param authorization the `Authorization` header value ('' if none).
 */
export function checkAccess(auth: TokenAuthenticator | undefined, method: string, path: string, authorization: string): AccessDecision {
  if (auth === undefined || kUnauthenticatedPaths.has(path)) return { ok: true };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!m) {
    return { ok: false, reason: authorization === '' ? 'no bearer token' : 'malformed Authorization header', status: statusError(401, 'Unauthorized', 'Unauthorized') };
  }
  const user = auth.authenticateToken(m[1]);
  if (!user) return { ok: false, reason: 'invalid bearer token', status: statusError(401, 'Unauthorized', 'Unauthorized') };
  if (!kReadMethods.has(method) && user.groups.includes(kReadOnlyGroup)) {
    return {
      ok: false,
      reason: `user in group ${kReadOnlyGroup} may only read`,
      status: statusError(403, 'Forbidden', `forbidden: User "${user.name}" cannot ${method} path ${JSON.stringify(path)}: group "${kReadOnlyGroup}" may only get`),
    };
  }
  return { ok: true, user };
}

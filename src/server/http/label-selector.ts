// Counterpart of k8s.io/apimachinery/pkg/labels (selector.go: Lexer, Parser, Requirement.Matches).
import { InvalidArgumentError } from '../../shared/errors.js';
import { labelValueErrors, qualifiedNameErrors } from '../../shared/names.js';

/**
 * LabelRequirement: one term of a label selector, as labels.Requirement.
 * - `=` (also written `==`) and `!=` compare one value; `key!=value` also matches objects without the label.
 * - `in` / `notin` test membership in a set; `notin` also matches objects without the label.
 * - `exists` (`key`) and `!` (`!key`) test presence.
 * - `gt` / `lt` (`key>1`, `key<5`) compare the label, read as an int64, with an int64 (exactly, as bigints).
 */
export type LabelRequirement =
  | { key: string; operator: '=' | '!='; value: string }
  | { key: string; operator: 'in' | 'notin'; values: string[] }
  | { key: string; operator: 'gt' | 'lt'; value: string }
  | { key: string; operator: 'exists' | '!' };

/** A parsed selector: every requirement must match (AND). An empty selector matches everything. */
export type LabelSelector = LabelRequirement[];

type Tok = 'id' | 'eos' | 'error' | '!' | '!=' | '(' | ')' | ',' | '=' | '==' | '>' | '<' | 'in' | 'notin';

interface Scanned {
  tok: Tok;
  lit: string;
}

const kSpecial = new Set(['=', '!', '(', ')', ',', '>', '<']);
const kSymbolTokens: Record<string, Tok> = { '!': '!', '!=': '!=', '(': '(', ')': ')', ',': ',', '=': '=', '==': '==', '>': '>', '<': '<' };
const kWhitespace = new Set([' ', '\t', '\r', '\n']);

/** lex splits the input as labels.Lexer does: special symbols (longest match), identifiers, keywords `in`/`notin`. */
function lex(input: string): Scanned[] {
  const out: Scanned[] = [];
  let i = 0;
  for (;;) {
    while (i < input.length && kWhitespace.has(input[i])) i++;
    if (i >= input.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    if (kSpecial.has(input[i])) {
      let buffer = '';
      let last: Scanned | undefined;
      while (i < input.length && kSpecial.has(input[i])) {
        buffer += input[i];
        const tok = kSymbolTokens[buffer];
        if (tok) {
          last = { tok, lit: buffer };
          i++;
        } else if (last) {
          break;
        } else {
          i++;
        }
      }
      if (!last) {
        out.push({ tok: 'error', lit: `error expected: keyword found '${buffer}'` });
        return out;
      }
      out.push(last);
      continue;
    }
    let id = '';
    while (i < input.length && !kSpecial.has(input[i]) && !kWhitespace.has(input[i])) id += input[i++];
    out.push({ tok: id === 'in' ? 'in' : id === 'notin' ? 'notin' : 'id', lit: id });
  }
}

/** The parser over the scanned items; `values` context reads the keywords in/notin as identifiers. */
class Parser {
  #pos = 0;
  constructor(private readonly items: Scanned[]) {}

  #at(i: number, values: boolean): Scanned {
    const s = this.items[Math.min(i, this.items.length - 1)];
    return values && (s.tok === 'in' || s.tok === 'notin') ? { tok: 'id', lit: s.lit } : s;
  }
  lookahead(values = true): Scanned {
    return this.#at(this.#pos, values);
  }
  consume(values = true): Scanned {
    return this.#at(this.#pos++, values);
  }

  parse(): LabelSelector {
    const reqs: LabelSelector = [];
    for (;;) {
      const { tok, lit } = this.lookahead();
      if (tok === 'eos') return reqs;
      if (tok !== 'id' && tok !== '!') throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
      let r: LabelRequirement;
      try {
        r = this.parseRequirement();
      } catch (err) {
        throw new Error(`unable to parse requirement: ${(err as Error).message}`);
      }
      reqs.push(r);
      const next = this.consume();
      if (next.tok === 'eos') return reqs;
      if (next.tok !== ',') throw new Error(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead();
      if (after.tok !== 'id' && after.tok !== '!') throw new Error(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  parseRequirement(): LabelRequirement {
    let { tok, lit } = this.consume();
    let notExists = false;
    if (tok === '!') {
      notExists = true;
      ({ tok, lit } = this.consume());
    }
    if (tok !== 'id') throw new Error(`found '${lit}', expected: identifier`);
    const key = checkKey(lit);
    const next = this.lookahead().tok;
    if (notExists) {
      if (next === 'eos' || next === ',') return { key, operator: '!' };
    } else if (next === 'eos' || next === ',') {
      return { key, operator: 'exists' };
    }
    const op = this.consume(false);
    switch (op.tok) {
      case 'in':
      case 'notin':
        return { key, operator: op.tok, values: this.parseValues().map((v) => checkValue(key, v)) };
      case '=':
      case '==':
      case '!=': {
        const value = checkValue(key, this.parseExactValue());
        return { key, operator: op.tok === '!=' ? '!=' : '=', value };
      }
      case '>':
      case '<': {
        const value = this.parseExactValue();
        if (parseInt64(value) === null) throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
        return { key, operator: op.tok === '>' ? 'gt' : 'lt', value };
      }
      default:
        throw new Error(`found '${op.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  parseValues(): string[] {
    const open = this.consume();
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead();
    if (tok === ')') {
      this.consume();
      return [''];
    }
    if (tok !== 'id' && tok !== ',') throw new Error(`found '${lit}', expected: ',', ')' or identifier`);
    const set = this.parseIdentifiersList();
    const close = this.consume();
    if (close.tok !== ')') throw new Error(`found '${close.lit}', expected: ')'`);
    return set;
  }

  parseIdentifiersList(): string[] {
    const set = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume();
      if (tok === 'id') {
        set.add(lit);
        const next = this.lookahead();
        if (next.tok === ',') continue;
        if (next.tok === ')') return [...set].sort();
        throw new Error(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        // "(,", ",)" and ",," each stand for an empty value.
        if (set.size === 0) set.add('');
        const next = this.lookahead();
        if (next.tok === ')') {
          set.add('');
          return [...set].sort();
        }
        if (next.tok === ',') {
          this.consume();
          set.add('');
        }
      } else {
        throw new Error(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  parseExactValue(): string {
    const { tok } = this.lookahead();
    if (tok === 'eos' || tok === ',') return '';
    const v = this.consume();
    if (v.tok === 'id') return v.lit;
    throw new Error(`found '${v.lit}', expected: identifier`);
  }
}

const kMinInt64 = -(2n ** 63n);
const kMaxInt64 = 2n ** 63n - 1n;

/**
 * parseInt64: `s` as strconv.ParseInt(s, 10, 64) reads it (an optional sign, decimal digits, in
 * the int64 range), exactly, as a bigint; null otherwise. A plain number would round
 * `9007199254740993` and accept `1e400`-sized digit strings as Infinity.
 */
function parseInt64(s: string): bigint | null {
  if (!/^[+-]?\d+$/.test(s)) return null;
  const n = BigInt(s);
  return n < kMinInt64 || n > kMaxInt64 ? null : n;
}

function checkKey(key: string): string {
  const errs = qualifiedNameErrors(key);
  if (errs.length > 0) throw new Error(`invalid label key "${key}": ${errs.join('; ')}`);
  return key;
}

function checkValue(key: string, value: string): string {
  const errs = labelValueErrors(value);
  if (errs.length > 0) throw new Error(`invalid label value: "${value}": at key: "${key}": ${errs.join('; ')}`);
  return value;
}

/**
 * parseLabelSelector parses `?labelSelector=` exactly as labels.Parse does (equality- and
 * set-based): comma-separated requirements `key=value`, `key==value`, `key!=value`,
 * `key in (v1,v2)`, `key notin (v1,v2)`, `key`, `!key`, `key>N`, `key<N`. Whitespace between
 * tokens is ignored; keys must be qualified names and values label values. Pure.
 * @throws InvalidArgumentError `labelSelector: <the parser's message>`, e.g.
 *   `labelSelector: unable to parse requirement: found '', expected: in, notin, =, ==, !=, gt, lt`
 *   or `labelSelector: found ',', expected: identifier after ','`.
 */
export function parseLabelSelector(input: string): LabelSelector {
  try {
    // The lexer stops at a bad symbol; the parser reports it where it meets it.
    return new Parser(lex(input)).parse();
  } catch (err) {
    throw new InvalidArgumentError(`labelSelector: ${(err as Error).message}`);
  }
}

/** matchesLabelSelector: true when `labels` satisfy every requirement of `selector` (Requirement.Matches). Pure. */
export function matchesLabelSelector(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const req of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, req.key);
    const value = has ? labels[req.key] : undefined;
    switch (req.operator) {
      case '=':
        if (!has || value !== req.value) return false;
        break;
      case '!=':
        if (has && value === req.value) return false;
        break;
      case 'in':
        if (!has || !req.values.includes(value!)) return false;
        break;
      case 'notin':
        if (has && req.values.includes(value!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        // A label that is not an int64 never matches (Requirement.Matches' ParseInt failure).
        const n = has ? parseInt64(value!) : null;
        const bound = parseInt64(req.value);
        if (n === null || bound === null) return false;
        if (req.operator === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

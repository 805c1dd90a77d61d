/**
 * Counterpart of Kubernetes' third_party/forked/golang/expansion: `$(VAR)` references in a
 * container's command, args and env values.
 *
 * Semantics (same as the kubelet's):
 * - `$(NAME)` is replaced by the mapped value; an unknown NAME is left as written (`$(NAME)`);
 * - `$$` is an escaped `$`: `$$(NAME)` yields the literal `$(NAME)`;
 * - a `$` followed by anything else, a trailing `$`, and a `$(` without a closing `)` are kept.
 *
 * Pure; safe in any thread.
 */

/** A lookup for `$(NAME)`: the value, or undefined when NAME is not defined. */
export type ExpansionLookup = (name: string) => string | undefined;

/**
 * expand returns `input` with every `$(NAME)` reference replaced by `lookup(NAME)` (unknown names
 * stay as `$(NAME)`) and every `$$` turned into `$`. Never throws.
 */
export function expand(input: string, lookup: ExpansionLookup): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i += 1;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      // `$$` → `$`; the second `$` is consumed and never starts a reference.
      out += '$';
      i += 2;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        // Unterminated reference: keep `$(` and go on after it.
        out += '$(';
        i += 2;
      } else {
        const name = input.slice(i + 2, close);
        const value = lookup(name);
        out += value === undefined ? `$(${name})` : value;
        i = close + 1;
      }
    } else {
      out += '$' + next;
      i += 2;
    }
  }
  return out;
}

/**
 * mappingFor builds an ExpansionLookup over several maps, searched in order (the first one
 * that defines NAME wins), as expansion.MappingFuncFor.
 */
export function mappingFor(...maps: Array<Record<string, string> | Map<string, string>>): ExpansionLookup {
  return (name) => {
    for (const m of maps) {
      const v = m instanceof Map ? m.get(name) : Object.prototype.hasOwnProperty.call(m, name) ? m[name] : undefined;
      if (v !== undefined) return v;
    }
    return undefined;
  };
}

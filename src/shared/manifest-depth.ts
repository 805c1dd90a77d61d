/**
 * Counterpart of the apiserver's limit on nesting in request bodies (k8s.io/apimachinery's JSON and
 * YAML decoders refuse objects nested more than 10,000 deep; sigs.k8s.io/yaml likewise): a linear
 * scan that measures how deeply a manifest's text nests before any parser sees it. The parsers
 * recurse: the yaml package overflows the stack at about 800 levels of `[` and, after that, V8's
 * regexp compiler ran out of memory and killed the process (issue 11, finding 1), and JSON.parse
 * overflows at about 10,000. A Pod nests about 10 levels deep; kMaxManifestDepth leaves room for
 * any real manifest and none for an attack. Pure; safe in any thread.
 */

/** kMaxManifestDepth: the deepest nesting a manifest may have (flow brackets plus block levels). */
export const kMaxManifestDepth = 100;

/**
 * manifestDepth returns how deeply `text` nests, scanning it once: JSON and YAML flow collections
 * (`[`, `{`) outside quoted strings (and, in YAML, comments), plus, for YAML, block levels (each deeper
 * indentation, and each `- ` that opens a sequence entry on a line). Block scalars (`|`, `>`) are
 * skipped: their content is text, not structure. The scan stops as soon as `limit` is passed and
 * returns what it reached (so its cost is bounded by the text, never by the depth).
 */
export function manifestDepth(text: string, format: 'yaml' | 'json' = 'yaml', limit = kMaxManifestDepth): number {
  const yaml = format === 'yaml';
  let max = 0;
  let flow = 0;
  /** Indentations of the open block levels, innermost last. */
  const indents: number[] = [];
  /** While inside a block scalar: the indentation its content must exceed; else -1. */
  let scalarIndent = -1;
  let i = 0;
  const n = text.length;
  while (i < n && max <= limit) {
    // One line: [i, end).
    let end = text.indexOf('\n', i);
    if (end < 0) end = n;
    let col = i;
    while (col < end && text[col] === ' ') col++;
    const indent = col - i;
    const blank = col === end || text[col] === '\r' || (yaml && text[col] === '#');
    if (scalarIndent >= 0) {
      if (blank || indent > scalarIndent) {
        i = end + 1;
        continue;
      }
      scalarIndent = -1;
    }
    if (yaml && !blank && flow === 0) {
      while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
      indents.push(indent);
      // `- - x`: every sequence indicator opens one more level on the same line.
      while (text.startsWith('- ', col) || (text[col] === '-' && col + 1 === end)) {
        indents.push(indent + (col - i) + 1);
        col += 2;
        while (col < end && text[col] === ' ') col++;
      }
    }
    // The rest of the line: flow brackets outside quotes and comments; a block scalar header.
    let quote = '';
    for (let c = col; c < end; c++) {
      const ch = text[c];
      if (quote) {
        if (ch === '\\' && quote === '"') c++;
        else if (ch === quote) quote = '';
        continue;
      }
      if (ch === '"' || (yaml && ch === "'" && !/\w/.test(text[c - 1] ?? ''))) quote = ch;
      else if (yaml && ch === '#' && (c === col || text[c - 1] === ' ' || text[c - 1] === '\t')) break;
      else if (ch === '[' || ch === '{') {
        flow++;
        if (indents.length + flow > max) max = indents.length + flow;
      } else if ((ch === ']' || ch === '}') && flow > 0) flow--;
      else if (yaml && (ch === '|' || ch === '>') && flow === 0 && (c === col || text[c - 1] === ' ')) {
        // A block scalar header (`key: |`, `- >-`, `|2`): the next lines deeper than this one are text.
        const rest = text
          .slice(c + 1, end)
          .replace(/#.*$/, '')
          .trim();
        if (/^[-+0-9]*$/.test(rest)) {
          scalarIndent = indent;
          break;
        }
      }
    }
    if (indents.length + flow > max) max = indents.length + flow;
    i = end + 1;
  }
  return max;
}

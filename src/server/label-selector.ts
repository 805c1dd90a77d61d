// Counterpart of k8s.io/apimachinery/pkg/labels (selector.go Parse), equality-based subset for now.
import { InvalidArgumentError } from '../shared/errors.js';

/**
 * LabelRequirement: one term of a label selector.
 * `=` (also written `==`) and `!=` compare a value; `exists` (`key`) and `!` (`!key`) test presence.
 * As in labels.Requirement, `key!=value` also matches objects without the label.
 */
export type LabelRequirement =
  | { key: string; operator: '=' | '!='; value: string }
  | { key: string; operator: 'exists' | '!' };

/** A parsed selector: every requirement must match (AND). An empty selector matches everything. */
export type LabelSelector = LabelRequirement[];

// Qualified name (validation.IsQualifiedName): an optional DNS-subdomain prefix and "/", then a name.
const kName = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const kPrefix = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkKey(key: string, term: string): string {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : '';
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const ok = name.length > 0 && name.length <= 63 && kName.test(name) && (slash < 0 || (prefix.length <= 253 && kPrefix.test(prefix)));
  if (!ok) throw new InvalidArgumentError(`labelSelector: invalid label key ${JSON.stringify(key)} in ${JSON.stringify(term)}`);
  return key;
}

function checkValue(value: string, term: string): string {
  if (value !== '' && (value.length > 63 || !kName.test(value))) {
    throw new InvalidArgumentError(`labelSelector: invalid label value ${JSON.stringify(value)} in ${JSON.stringify(term)}`);
  }
  return value;
}

/**
 * parseLabelSelector parses the equality-based form of `?labelSelector=`: comma-separated terms
 * `key=value`, `key==value`, `key!=value`, `key`, `!key` (whitespace around terms is ignored).
 * Set-based terms (`in`, `notin`) are not supported yet.
 * @throws InvalidArgumentError naming `labelSelector` and the bad term.
 */
export function parseLabelSelector(input: string): LabelSelector {
  const selector: LabelSelector = [];
  if (input.trim() === '') return selector;
  if (/[()]/.test(input)) {
    throw new InvalidArgumentError(`labelSelector: set-based requirements (in, notin) are not supported yet: ${JSON.stringify(input)}`);
  }
  for (const raw of input.split(',')) {
    const term = raw.trim();
    if (term === '') throw new InvalidArgumentError(`labelSelector: empty requirement in ${JSON.stringify(input)}`);
    const m = /^([^!=\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (m) {
      const operator = m[2] === '!=' ? '!=' : '=';
      selector.push({ key: checkKey(m[1], term), operator, value: checkValue(m[3], term) });
    } else if (term.startsWith('!')) {
      selector.push({ key: checkKey(term.slice(1).trim(), term), operator: '!' });
    } else {
      selector.push({ key: checkKey(term, term), operator: 'exists' });
    }
  }
  return selector;
}

/** matchesLabelSelector: true when `labels` satisfy every requirement of `selector`. Pure. */
export function matchesLabelSelector(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const req of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, req.key);
    switch (req.operator) {
      case '=':
        if (!has || labels[req.key] !== req.value) return false;
        break;
      case '!=':
        if (has && labels[req.key] === req.value) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
    }
  }
  return true;
}

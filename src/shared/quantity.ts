/**
 * Counterpart of k8s.io/apimachinery/pkg/api/resource (quantity.go): parses resource quantities
 * such as `500m`, `0.5`, `128Mi`, `1G`, `1e3`. No maintained npm package parses Kubernetes'
 * quantity grammar, so this small one is ours.
 */
import { InvalidArgumentError } from './errors.js';

const kBinary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const kDecimal: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const kQuantityRe = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

/** isQuantity: true if `s` is a valid quantity string (or a finite number). */
export function isQuantity(s: unknown): boolean {
  if (typeof s === 'number') return Number.isFinite(s);
  return typeof s === 'string' && kQuantityRe.test(s.trim());
}

/**
 * parseQuantity returns the quantity's value as a plain number in base units
 * (cores for cpu: `500m` → 0.5; bytes for memory: `128Mi` → 134217728).
 * @throws InvalidArgumentError naming `field` when `s` is not a quantity.
 */
export function parseQuantity(s: string | number, field = 'quantity'): number {
  if (typeof s === 'number') {
    if (!Number.isFinite(s)) throw new InvalidArgumentError(`${field}: Invalid value: ${s}: must be a finite number`);
    return s;
  }
  const m = kQuantityRe.exec(String(s).trim());
  if (!m) throw new InvalidArgumentError(`${field}: Invalid value: ${JSON.stringify(s)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
  const base = Number(m[1]);
  if (m[3] !== undefined) return base * 10 ** Number(m[3]);
  const suffix = m[2] ?? '';
  return base * (kBinary[suffix] ?? kDecimal[suffix]);
}

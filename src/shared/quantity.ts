/**
 * Counterpart of k8s.io/apimachinery/pkg/api/resource (quantity.go): parses resource quantities
 * such as `500m`, `0.5`, `128Mi`, `1G`, `1e3`. No maintained npm package parses Kubernetes'
 * quantity grammar, so this small one is ours.
 */
import { InvalidArgumentError } from './errors.js';

const kBinary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const kDecimal: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const kQuantityRe = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

const kFormatDetail = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/**
 * quantityError: why `s` is not a quantity kubelet-ts can hold, or null when it is one. The
 * grammar is resource.Quantity's (`quantities must match the regular expression …`). Upstream
 * holds any magnitude in an inf.Dec; we hold a JavaScript number, so a value beyond
 * Number.MAX_VALUE (`1e400`, which would read as Infinity and so as "no limit") is refused:
 * `value too large: must be at most 1.7976931348623157e+308`. Pure.
 */
export function quantityError(s: unknown): string | null {
  if (typeof s === 'number') return Number.isFinite(s) ? null : 'must be a finite number';
  if (typeof s !== 'string') return kFormatDetail;
  const m = kQuantityRe.exec(s.trim());
  if (!m) return kFormatDetail;
  return Number.isFinite(valueOf(m)) ? null : `value too large: must be at most ${Number.MAX_VALUE}`;
}

/** isQuantity: true if `s` is a valid quantity string (or a finite number) whose value is a finite number. */
export function isQuantity(s: unknown): boolean {
  return quantityError(s) === null;
}

function valueOf(m: RegExpExecArray): number {
  const base = Number(m[1]);
  if (m[3] !== undefined) return base * 10 ** Number(m[3]);
  const suffix = m[2] ?? '';
  return base * (kBinary[suffix] ?? kDecimal[suffix]);
}

/**
 * parseQuantity returns the quantity's value as a plain number in base units
 * (cores for cpu: `500m` → 0.5; bytes for memory: `128Mi` → 134217728). Always finite.
 * @throws InvalidArgumentError naming `field` when `s` is not a quantity or is too large
 *   (see {@link quantityError}): `field: Invalid value: "1e400": value too large: …`.
 */
export function parseQuantity(s: string | number, field = 'quantity'): number {
  const why = quantityError(s);
  if (why !== null) throw new InvalidArgumentError(`${field}: Invalid value: ${typeof s === 'number' ? s : JSON.stringify(s)}: ${why}`);
  if (typeof s === 'number') return s;
  return valueOf(kQuantityRe.exec(s.trim())!);
}

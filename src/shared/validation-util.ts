// Counterpart of k8s.io/apimachinery/pkg/util/validation/field (path.go, errors.go): field paths and error lists.
/**
 * Helpers shared by validation.ts and the validation-*.ts files. Input is untyped JSON (what a
 * manifest decoded to), so every read checks the JSON type first and reports a wrong one as an
 * `Invalid value` instead of trusting the `kubernetes-types` declarations.
 */
import type { FieldError } from './errors.js';

/**
 * IntType: the Go type of an integer API field. `int32` is exact (Go's json decoding refuses a
 * number outside [-2^31, 2^31-1]); `int64` is bounded by the integers a JSON number decoded to
 * a JavaScript number holds exactly (±(2^53-1)), since a larger one has already lost digits.
 */
export type IntType = 'int32' | 'int64';

/** kIntRange: the inclusive bounds of each {@link IntType}. */
export const kIntRange: Readonly<Record<IntType, { min: number; max: number }>> = {
  int32: { min: -(2 ** 31), max: 2 ** 31 - 1 },
  int64: { min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER },
};

/** A decoded JSON object. */
export type Obj = Record<string, unknown>;

/** isObj: a plain JSON object (not null, not an array). */
export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** isStringMap: a plain object whose every value is a string (labels, annotations). */
export function isStringMap(v: unknown): v is Record<string, string> {
  return isObj(v) && Object.values(v).every((x) => typeof x === 'string');
}

/** child: `path.name` (just `name` at the root). */
export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/** index: `path[i]`. */
export function index(path: string, i: number | string): string {
  return `${path}[${i}]`;
}

/**
 * isZeroValue: absent, null, false, '', [] or {} — what Go's `omitempty` drops. An unsupported
 * field holding only a zero value asks for nothing, so it is tolerated.
 */
export function isZeroValue(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) return Object.keys(v).length === 0;
  return false;
}

/** ErrorList accumulates FieldErrors with field.ErrorType words (field.Required, field.Invalid, ...). */
export class ErrorList {
  readonly errors: FieldError[] = [];

  /** `Required value`. */
  required(field: string, detail?: string): void {
    this.errors.push(detail ? { field, type: 'Required value', detail } : { field, type: 'Required value' });
  }
  /** `Invalid value: <value>: <detail>`. */
  invalid(field: string, value: unknown, detail?: string): void {
    this.errors.push(detail ? { field, type: 'Invalid value', value, detail } : { field, type: 'Invalid value', value });
  }
  /** `Duplicate value: <value>`. */
  duplicate(field: string, value: unknown): void {
    this.errors.push({ field, type: 'Duplicate value', value });
  }
  /** `Unsupported value: <value>: supported values: "a", "b"` (field.NotSupported). */
  unsupported(field: string, value: unknown, supported: readonly string[]): void {
    this.errors.push({
      field,
      type: 'Unsupported value',
      value,
      detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
    });
  }
  /** `Forbidden: <detail>`. */
  forbidden(field: string, detail: string): void {
    this.errors.push({ field, type: 'Forbidden', detail });
  }
  /** `Not found: <value>`. */
  notFound(field: string, value: unknown): void {
    this.errors.push({ field, type: 'Not found', value });
  }
  /** `Too long: <detail>`. */
  tooLong(field: string, detail: string): void {
    this.errors.push({ field, type: 'Too long', detail });
  }
  /** `Not supported`: a field kubelet-ts does not implement (ours; Kubernetes would accept it). */
  notSupported(field: string, detail?: string): void {
    this.errors.push(detail ? { field, type: 'Not supported', detail } : { field, type: 'Not supported' });
  }

  /** The value as a string, or undefined when absent; reports a non-string. */
  str(field: string, v: unknown): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    this.invalid(field, v, 'must be a string');
    return undefined;
  }
  /**
   * The value as an integer of Go type `type` (default int64), or undefined when absent; reports
   * a non-integer (`must be an integer`) and one outside the type's range (as the apiserver's
   * decoder refuses `1e308` or `2^64` for an int64 field): `must be an integer between -2147483648
   * and 2147483647, inclusive (int32)`.
   */
  int(field: string, v: unknown, type: IntType = 'int64'): number | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.invalid(field, v, 'must be an integer');
      return undefined;
    }
    const { min, max } = kIntRange[type];
    if (v < min || v > max) {
      this.invalid(field, v, `must be an integer between ${min} and ${max}, inclusive (${type})`);
      return undefined;
    }
    return v;
  }
  /** The value as a boolean, or undefined when absent; reports a non-boolean. */
  bool(field: string, v: unknown): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    this.invalid(field, v, 'must be a boolean');
    return undefined;
  }
  /** The value as an object, or undefined when absent; reports a non-object. */
  obj(field: string, v: unknown): Obj | undefined {
    if (v === undefined || v === null) return undefined;
    if (isObj(v)) return v;
    this.invalid(field, v, 'must be an object');
    return undefined;
  }
  /** The value as an array, or undefined when absent; reports a non-array. */
  list(field: string, v: unknown): unknown[] | undefined {
    if (v === undefined || v === null) return undefined;
    if (Array.isArray(v)) return v;
    this.invalid(field, v, 'must be a list');
    return undefined;
  }
  /**
   * The value as a list of strings (e.g. `command`), or undefined when absent; reports each
   * element that is not a string, null included (`command: [null]` would reach Docker as a null
   * argument): `spec.containers[0].command[0]: Invalid value: null: must be a string`.
   */
  strList(field: string, v: unknown): string[] | undefined {
    const l = this.list(field, v);
    if (!l) return undefined;
    l.forEach((s, i) => {
      if (typeof s !== 'string') this.invalid(index(field, i), s, 'must be a string');
    });
    return l.filter((s): s is string => typeof s === 'string');
  }
  /** A map of strings to strings (labels, annotations), or undefined; reports each non-string value. */
  strMap(field: string, v: unknown): Record<string, string> | undefined {
    const o = this.obj(field, v);
    if (!o) return undefined;
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(o)) {
      if (typeof val === 'string') out[k] = val;
      else this.invalid(index(field, k), val, 'must be a string');
    }
    return out;
  }

  /**
   * checkFields reports every key of `o` outside `allowed` (and `ignored`) as `Not supported`,
   * unless it holds only a zero value (see {@link isZeroValue}).
   */
  checkFields(path: string, o: Obj, allowed: readonly string[], ignored: readonly string[] = []): void {
    for (const [k, v] of Object.entries(o)) {
      if (allowed.includes(k) || ignored.includes(k) || isZeroValue(v)) continue;
      this.notSupported(child(path, k));
    }
  }

  /** nonNegative: an integer of Go type `type`, `must be greater than or equal to 0` (ValidateNonnegativeField). */
  nonNegative(field: string, v: unknown, type: IntType = 'int64'): void {
    const n = this.int(field, v, type);
    if (n !== undefined && n < 0) this.invalid(field, n, 'must be greater than or equal to 0');
  }
  /** atLeast: an integer of Go type `type`, `must be greater than or equal to <min>`. */
  atLeast(field: string, v: unknown, min: number, type: IntType = 'int64'): void {
    const n = this.int(field, v, type);
    if (n !== undefined && n < min) this.invalid(field, n, `must be greater than or equal to ${min}`);
  }
}

/** enumField: a required string field that must be one of `allowed` (`Required value`, else `Unsupported value`). */
export function enumField(el: ErrorList, path: string, v: unknown, allowed: readonly string[]): void {
  const s = el.str(path, v);
  if (!s) {
    if (v === undefined || v === null || v === '') el.required(path);
  } else if (!allowed.includes(s)) el.unsupported(path, s, allowed);
}

/** isAbsolutePath: a POSIX absolute path. */
export function isAbsolutePath(p: string): boolean {
  return p.startsWith('/');
}

/** hasBacksteps: the path has a `..` element (validatePathNoBacksteps). */
export function hasBacksteps(p: string): boolean {
  return p.split('/').includes('..');
}

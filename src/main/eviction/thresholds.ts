/**
 * Counterpart of pkg/kubelet/eviction/api (Signal, Threshold, ThresholdValue) and of the parsing
 * half of pkg/kubelet/eviction/helpers.go (ParseThresholdConfig, parseThresholdStatement,
 * parsePercentage, parseGracePeriods): the eviction thresholds of `--eviction-hard`,
 * `--eviction-soft` and `--eviction-soft-grace-period`, the manager's thresholds from the resolved
 * options (evictionThresholds), and the option checks of those flags (the agent's descriptor table
 * spreads kEvictionOptionDescriptors of options/eviction-options.ts, which uses these; eviction/
 * never imports options/). Also the resource.Quantity text of a byte count (`100Mi`), as eviction
 * messages print quantities. Pure.
 */
import { InvalidArgumentError } from '../../shared/errors.js';
import { parseDuration } from '../../shared/duration.js';
import { parseQuantity, quantityError } from '../../shared/quantity.js';

/**
 * EvictionSignal: the signals kubelet-ts observes (evictionapi.Signal*): node memory available
 * (capacity − working set), nodefs (statfs of --root-dir) and imagefs (statfs of the runtime's image
 * root) bytes and inodes free. The kubelet's `pid.available`, `allocatableMemory.available` and
 * `containerfs.*` are not offered (no observation for them here): naming one is an error.
 */
export type EvictionSignal = 'memory.available' | 'nodefs.available' | 'nodefs.inodesFree' | 'imagefs.available' | 'imagefs.inodesFree';

/** kEvictionSignals: every supported signal, memory first (byEvictionPriority ranks memory before the rest). */
export const kEvictionSignals: readonly EvictionSignal[] = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
];

/** EvictionResource: the resource a signal starves (signalToResource), as eviction messages name it. */
export type EvictionResource = 'memory' | 'ephemeral-storage' | 'inodes';

/** kSignalToResource: signalToResource. */
export const kSignalToResource: Readonly<Record<EvictionSignal, EvictionResource>> = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
};

/** kSignalToNodeCondition: signalToNodeCondition (memory → MemoryPressure, the filesystems → DiskPressure). */
export const kSignalToNodeCondition: Readonly<Record<EvictionSignal, 'MemoryPressure' | 'DiskPressure'>> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
};

/**
 * ThresholdValue: exactly one of `quantity` (bytes, or inodes for `*.inodesFree`) or `percentage`
 * (a fraction of the signal's capacity in (0, 1), e.g. 0.1 for `10%`). `text` is the value as given.
 */
export interface ThresholdValue {
  quantity?: number;
  percentage?: number;
  text: string;
}

/**
 * Threshold (evictionapi.Threshold): the signal is met when its available amount is below the
 * value (the only operator, `LessThan`). `gracePeriodMs` is 0 for a hard threshold, else the soft
 * threshold's grace period in milliseconds.
 */
export interface Threshold {
  signal: EvictionSignal;
  value: ThresholdValue;
  gracePeriodMs: number;
  /** true for an `--eviction-soft` threshold. */
  soft: boolean;
}

/**
 * kDefaultEvictionHard: the kubelet's default `evictionHard` on Linux (memory.available<100Mi,
 * nodefs.available<10%, imagefs.available<15%). Its inodesFree default (nodefs.inodesFree<5%) is
 * not one of the three the issue names; kubelet-ts leaves it out of the default.
 */
export const kDefaultEvictionHard: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'imagefs.available': '15%',
});

function isSignal(s: string): s is EvictionSignal {
  return (kEvictionSignals as readonly string[]).includes(s);
}

function unsupported(label: string, signal: string): never {
  throw new InvalidArgumentError(`${label}: unsupported eviction signal ${JSON.stringify(signal)} (one of ${kEvictionSignals.join(', ')})`);
}

/**
 * parseThresholdValue: one statement's value, as parseThresholdStatement: `N%` is a percentage in
 * [0, 100] (`0%` and `100%` mean "no threshold": null), anything else a positive quantity.
 * @throws InvalidArgumentError `<label> <signal>: …` naming the flag and signal.
 */
export function parseThresholdValue(label: string, signal: EvictionSignal, text: string): ThresholdValue | null {
  const v = text.trim();
  if (v.endsWith('%')) {
    if (v === '0%' || v === '100%') return null;
    const n = Number(v.slice(0, -1));
    if (v.slice(0, -1).trim() === '' || !Number.isFinite(n))
      throw new InvalidArgumentError(`${label} ${signal}: invalid percentage ${JSON.stringify(text)}`);
    if (n < 0)
      throw new InvalidArgumentError(`${label} ${signal}: eviction percentage threshold must be >= 0%, got ${JSON.stringify(text)}`);
    if (n > 100)
      throw new InvalidArgumentError(`${label} ${signal}: eviction percentage threshold must be <= 100%, got ${JSON.stringify(text)}`);
    if (n === 0) return null;
    return { percentage: n / 100, text: v };
  }
  const why = quantityError(v);
  if (why !== null) throw new InvalidArgumentError(`${label} ${signal}: invalid quantity ${JSON.stringify(text)}: ${why}`);
  const q = parseQuantity(v);
  if (!(q > 0)) throw new InvalidArgumentError(`${label} ${signal}: eviction threshold must be positive, got ${JSON.stringify(text)}`);
  return { quantity: q, text: v };
}

/**
 * mapStatements: the flag's value as a signal → text map. Accepts a map (the config file's
 * `evictionHard: {memory.available: 100Mi}`) or a list of `signal<value` items (`sep` `<`; the
 * flag's mapStringString form, comma-separated and repeatable; `=` for grace periods).
 * @throws InvalidArgumentError naming `label` for a malformed item or an unsupported signal.
 */
function mapStatements(label: string, value: unknown, sep: '<' | '='): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== 'string')
        throw new InvalidArgumentError(
          `${label} must be ${sep === '<' ? 'signal<value' : 'signal=duration'} items, got ${JSON.stringify(item)}`,
        );
      const s = item.trim();
      if (s === '') continue;
      const at = s.indexOf(sep);
      if (at <= 0)
        throw new InvalidArgumentError(
          `${label} must be ${sep === '<' ? 'signal<value items (e.g. memory.available<100Mi)' : 'signal=duration items (e.g. memory.available=1m30s)'}, got ${JSON.stringify(item)}`,
        );
      out[s.slice(0, at).trim()] = s.slice(at + 1).trim();
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string' && typeof v !== 'number')
        throw new InvalidArgumentError(`${label} ${k} must be a string, got ${JSON.stringify(v)}`);
      out[k] = String(v);
    }
  } else {
    throw new InvalidArgumentError(`${label} must be a map of eviction signals, got ${JSON.stringify(value)}`);
  }
  for (const k of Object.keys(out)) if (!isSignal(k)) unsupported(label, k);
  return out;
}

/**
 * checkThresholdMap: the check of `--eviction-hard` / `--eviction-soft` (and evictionHard /
 * evictionSoft of the config file): every signal supported, every value a positive quantity or a
 * percentage in [0, 100]. Returns the normalised signal → value-text map.
 * @throws InvalidArgumentError naming `label`, e.g. `--eviction-hard memory.available: invalid quantity "x": …`.
 */
export function checkThresholdMap(label: string, value: unknown): Record<string, string> {
  const m = mapStatements(label, value, '<');
  for (const [k, v] of Object.entries(m)) parseThresholdValue(label, k as EvictionSignal, v);
  return m;
}

/**
 * checkGracePeriodMap: the check of `--eviction-soft-grace-period` (evictionSoftGracePeriod):
 * signal → Go duration (`1m30s`, >= 0). Returns signal → milliseconds.
 * @throws InvalidArgumentError naming `label` and the signal.
 */
export function checkGracePeriodMap(label: string, value: unknown): Record<string, number> {
  // A map of numbers (already ms) comes back in when resolveAgentOptions re-checks a resolved value.
  const m =
    typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'number')
      ? Object.fromEntries(Object.entries(value as Record<string, number>).map(([k, v]) => [k, `${v}ms`]))
      : mapStatements(label, value, '=');
  for (const k of Object.keys(m)) if (!isSignal(k)) unsupported(label, k);
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) {
    const ms = parseDuration(v, `${label} ${k}`);
    if (!(ms >= 0))
      throw new InvalidArgumentError(`${label} ${k}: invalid eviction grace period ${JSON.stringify(v)}, must be a positive value`);
    out[k] = ms;
  }
  return out;
}

/**
 * parseThresholdConfig, as ParseThresholdConfig: the hard thresholds (grace period 0), then the
 * soft ones, each with its grace period from `softGracePeriodsMs` (milliseconds by signal).
 * Inputs are the checked maps of the flags. Percentages of 0% / 100% give no threshold.
 * @throws InvalidArgumentError `--eviction-soft-grace-period: grace period must be specified for the soft eviction threshold <signal>`.
 */
export function parseThresholdConfig(
  hard: Record<string, string>,
  soft: Record<string, string>,
  softGracePeriodsMs: Record<string, number>,
): Threshold[] {
  const out: Threshold[] = [];
  for (const [signal, text] of Object.entries(hard)) {
    if (!isSignal(signal)) unsupported('--eviction-hard', signal);
    const value = parseThresholdValue('--eviction-hard', signal, text);
    if (value) out.push({ signal, value, gracePeriodMs: 0, soft: false });
  }
  for (const [signal, text] of Object.entries(soft)) {
    if (!isSignal(signal)) unsupported('--eviction-soft', signal);
    const value = parseThresholdValue('--eviction-soft', signal, text);
    const grace = softGracePeriodsMs[signal];
    if (grace === undefined)
      throw new InvalidArgumentError(
        `--eviction-soft-grace-period: grace period must be specified for the soft eviction threshold ${signal}`,
      );
    if (value) out.push({ signal, value, gracePeriodMs: grace, soft: true });
  }
  return out;
}

/**
 * evictionThresholds: the manager's thresholds from resolved options (hard, then soft with their grace periods).
 * @throws InvalidArgumentError for a soft threshold without a grace period (names --eviction-soft-grace-period).
 */
export function evictionThresholds(o: {
  evictionHard: Record<string, string>;
  evictionSoft: Record<string, string>;
  evictionSoftGracePeriodMs: Record<string, number>;
}): Threshold[] {
  return parseThresholdConfig(o.evictionHard, o.evictionSoft, o.evictionSoftGracePeriodMs);
}

/**
 * thresholdQuantity, as evictionapi.GetThresholdQuantity: the threshold's amount for a signal of
 * `capacity` (bytes or inodes): the quantity, or ⌊capacity × percentage⌋.
 */
export function thresholdQuantity(value: ThresholdValue, capacity: number): number {
  if (value.quantity !== undefined) return value.quantity;
  return Math.trunc(capacity * (value.percentage ?? 0));
}

const kBinarySuffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const kDecimalSuffixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];

/**
 * formatQuantity: an integer amount as resource.Quantity's canonical String() prints it.
 * `binary` (BinarySI: bytes): the largest power of 1024 that divides it (`104857600` → `100Mi`,
 * `1536` → `1536`), with amounts of |n| < 1024 printed in decimal SI as Quantity does (`1000` →
 * `1k`); decimal (DecimalSI: inode counts): the largest power of 1000 (`5000` → `5k`). Fractions
 * are truncated. Pure.
 */
export function formatQuantity(n: number, binary = true): string {
  let v = Math.trunc(n);
  if (v === 0 || !Number.isFinite(v)) return '0';
  const useBinary = binary && Math.abs(v) >= 1024;
  const base = useBinary ? 1024 : 1000;
  const suffixes = useBinary ? kBinarySuffixes : kDecimalSuffixes;
  let i = 0;
  while (i < suffixes.length - 1 && v % base === 0) {
    v /= base;
    i++;
  }
  return `${v}${suffixes[i]}`;
}

/** HardEvictionReservation: what the hard thresholds reserve from a resource of `capacity` bytes, in bytes. */
export interface HardEvictionReservation {
  memoryBytes: (capacity: number) => number;
  nodefsBytes: (capacity: number) => number;
}

/**
 * hardEvictionReservation, as GetNodeAllocatableReservation's eviction part
 * (pkg/kubelet/cm/node_container_manager_linux.go): what the hard `memory.available` and
 * `nodefs.available` thresholds reserve from allocatable, in bytes of a resource of `capacity`
 * bytes (a percentage of it, or the quantity); 0 without that threshold. `evictionHard` is the
 * checked map of the flag.
 * @throws InvalidArgumentError for a map that does not parse (checkThresholdMap's errors).
 */
export function hardEvictionReservation(evictionHard: Record<string, string>): HardEvictionReservation {
  const t = parseThresholdConfig(evictionHard, {}, {});
  const of = (signal: string) => (capacity: number) => {
    const found = t.find((x) => x.signal === signal);
    return found ? thresholdQuantity(found.value, capacity) : 0;
  };
  return { memoryBytes: of('memory.available'), nodefsBytes: of('nodefs.available') };
}

/** kDefaultHardEvictionReservation: hardEvictionReservation of kDefaultEvictionHard (memory 100Mi, nodefs 10%). */
export const kDefaultHardEvictionReservation: HardEvictionReservation = hardEvictionReservation(kDefaultEvictionHard);

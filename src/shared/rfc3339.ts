/**
 * rfc3339Seconds: an epoch-milliseconds time as Kubernetes writes a `metav1.Time` (RFC 3339 in UTC,
 * whole seconds: `2026-12-07T20:11:48Z`; apimachinery pkg/apis/meta/v1/time.go MarshalJSON, which
 * formats with time.RFC3339 and drops the fraction). The milliseconds are truncated, as
 * toISOString's `.sssZ` dropped. Each second is formatted once and kept in a small table indexed
 * by the second (16 slots): a pod start asks for several different seconds in turn — the status's
 * startTime (when the pod was accepted), its conditions' transition time (now), a container's
 * startedAt (the worker's clock), an event's timestamp (now) — and a one-entry cache formatted
 * again at each change of second, i.e. nearly every call in a burst (issue #42 item 1). A hit
 * costs one division, one index and one compare. Pure (the table does not change any answer);
 * never throws for a finite `ms` within Date's range (±8.64e15); throws RangeError for NaN, as
 * toISOString.
 */
export function rfc3339Seconds(ms: number): string {
  const second = Math.floor(ms / 1000);
  // `&` wraps any finite integer (negative or above 2^31) into 0..15: a slot index, nothing more.
  const slot = second & kSlotMask;
  if (seconds[slot] !== second) {
    texts[slot] = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    seconds[slot] = second;
  }
  return texts[slot]!;
}

/** kSlotMask: the table holds 16 seconds (a power of two: the slot is the second's low bits). */
const kSlotMask = 15;
/** The second each slot holds (NaN: none: NaN equals nothing, so an empty slot always misses). */
const seconds = new Float64Array(kSlotMask + 1).fill(Number.NaN);
const texts: string[] = new Array<string>(kSlotMask + 1).fill('');

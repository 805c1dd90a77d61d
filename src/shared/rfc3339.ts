/**
 * rfc3339Seconds: an epoch-milliseconds time as Kubernetes writes a `metav1.Time` (RFC 3339 in UTC,
 * whole seconds: `2026-12-07T20:11:48Z`; apimachinery pkg/apis/meta/v1/time.go MarshalJSON, which
 * formats with time.RFC3339 and drops the fraction). The milliseconds are truncated, as
 * toISOString's `.sssZ` dropped. The last second formatted is kept: a status generation's
 * conditions, its startTime and a burst's events all fall in the same few seconds, and each
 * toISOString and regular-expression replace was paid again for each (issue #42 item 1). Pure
 * (the one-entry cache does not change any answer); never throws for a finite `ms` within
 * Date's range (±8.64e15).
 */
export function rfc3339Seconds(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    lastSecond = second;
  }
  return lastText;
}

let lastSecond = Number.NaN;
let lastText = '';

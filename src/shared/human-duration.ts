/**
 * Counterpart of k8s.io/apimachinery/pkg/util/duration (HumanDuration) and of the apiserver
 * printers' translateTimestampSince: the AGE and LAST SEEN cells of the API's Tables and of the
 * client's tables (the one implementation: src/cli and src/server/kube-api both use it). Pure.
 */

/**
 * humanDuration renders `ms` milliseconds as HumanDuration does: `45s`, `5m12s`, `3h`, `2d5h`,
 * `12d`, `3y`; below zero → `0s` (a clock a little ahead), NaN → `<unknown>`.
 */
export function humanDuration(ms: number): string {
  if (Number.isNaN(ms)) return '<unknown>';
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (days < 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (years < 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** since: translateTimestampSince — `<unknown>` for an absent or unparsable RFC 3339 time, else humanDuration(now - t). */
export function since(timestamp: string | undefined, nowMs: number): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(nowMs - t);
}

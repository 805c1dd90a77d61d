/**
 * pino factory and the fixed field names of our logs (STYLE.md C10): messages are constant
 * capitalised sentences; context goes in fields. A pod is named by `pod`, `namespace` and `uid`
 * (podFields), a container by `container` and `containerID` — the names users grep for (issue #2
 * asked for exactly these; STYLE.md's `podUID`/`containerName` were not used so that one name
 * means one thing everywhere). Others: `source`, `op`, `workType`, `taskKind`, `durationMs`, `err`.
 */
import { pino, type Logger } from 'pino';
import type { Pod } from './api.js';

export type { Logger };

/**
 * verbosityToLevel maps the kubelet's `--v` to a pino level: 0–1 info, 2–3 debug, 4+ trace.
 */
export function verbosityToLevel(v: number): string {
  if (v >= 4) return 'trace';
  if (v >= 2) return 'debug';
  return 'info';
}

/** newLogger: JSON logs to stderr (fd 2) at `level`. */
export function newLogger(level = 'info', destinationFd = 2): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ fd: destinationFd, sync: false }));
}

/** podFields: the log fields that name a pod (`pod`, `namespace`, `uid`). */
export function podFields(pod: Pod): { pod: string; namespace: string; uid: string } {
  return { pod: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? 'default', uid: pod.metadata?.uid ?? '' };
}

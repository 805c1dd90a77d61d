// Counterpart of k8s.io/apiserver/pkg/server/healthz (the kubelet's /healthz handler).
import type { HealthReport } from '../host/agent-host.js';
import { textReply, type HttpReply } from '../http/reply.js';
import type { RouteContext } from './router.js';

/** formatHealthReport: one line per check (`[+]name ok`, `[-]name failed: why`), as healthz's verbose output. */
export function formatHealthReport(report: HealthReport): string {
  const lines = report.checks.map((c) =>
    c.ok ? `[+]${c.name} ok${c.message ? `: ${c.message}` : ''}` : `[-]${c.name} failed: ${c.message ?? 'reason unknown'}`,
  );
  lines.push(report.ok ? 'healthz check passed' : 'healthz check failed');
  return `${lines.join('\n')}\n`;
}

/**
 * healthzHandler answers `GET /healthz`: `200 ok` when every check passes; otherwise 500 with every
 * check listed (`[-]pleg failed: …`). `?verbose` lists the checks on success too.
 */
export function healthzHandler({ host, req }: RouteContext): HttpReply {
  const report = host.healthz();
  const ok = report.ok && report.checks.every((c) => c.ok);
  if (ok && !req.query.has('verbose')) return textReply(200, 'ok');
  return textReply(ok ? 200 : 500, formatHealthReport({ ...report, ok }));
}

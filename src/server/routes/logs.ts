// Counterpart of the kubelet server's getContainerLogs (pkg/kubelet/server/server.go) with PodLogOptions (validation.ValidatePodLogOptions).
import type { Status } from '../../shared/api.js';
import type { ContainerLogsRequest } from '../host/agent-host.js';
import { statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { statusError } from '../http/status.js';
import { queryBool } from '../http/query-bool.js';
import { hostErrorStatus } from './intake.js';

function int(query: URLSearchParams, name: string, min: number): number | undefined | Status {
  if (!query.has(name)) return undefined;
  const raw = query.get(name)!;
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    return statusError(400, 'BadRequest', `${name} must be an integer, got ${JSON.stringify(raw)}`);
  const n = Number(raw);
  if (n < min)
    return statusError(
      400,
      'BadRequest',
      `${name} must be ${min === 0 ? 'greater than or equal to 0' : `greater than or equal to ${min}`}, got ${n}`,
    );
  return n;
}

/**
 * parseLogOptions reads PodLogOptions from the query: `follow`, `previous`, `timestamps`
 * (booleans: absent, `false` or `0` is false, any other value true), `tailLines` (>= 0), `sinceSeconds` (>= 1), `limitBytes` (>= 1). Pure.
 * @returns the request, or a 400 Status naming the bad parameter.
 */
export function parseLogOptions(params: Record<string, string>, query: URLSearchParams): ContainerLogsRequest | Status {
  // Booleans as the apiserver and the kubelet decode PodLogOptions (query-bool.ts: only absent, `false` or `0` is false).
  const follow = queryBool(query, 'follow');
  const previous = queryBool(query, 'previous');
  const timestamps = queryBool(query, 'timestamps');
  const tailLines = int(query, 'tailLines', 0);
  const sinceSeconds = int(query, 'sinceSeconds', 1);
  const limitBytes = int(query, 'limitBytes', 1);
  for (const v of [tailLines, sinceSeconds, limitBytes]) if (typeof v === 'object') return v;
  if (query.has('sinceTime')) return statusError(400, 'BadRequest', 'sinceTime is not supported; use sinceSeconds');
  const out: ContainerLogsRequest = {
    namespace: params.namespace,
    pod: params.pod,
    container: params.container,
    follow,
    previous,
    timestamps,
  };
  if (tailLines !== undefined) out.tailLines = tailLines as number;
  if (sinceSeconds !== undefined) out.sinceSeconds = sinceSeconds as number;
  if (limitBytes !== undefined) out.limitBytes = limitBytes as number;
  return out;
}

/**
 * containerLogsHandler answers `GET /containerLogs/{namespace}/{pod}/{container}` with the log as
 * `text/plain`, streamed: the host's LogStream is written chunk by chunk, paused while the socket
 * is backpressured and cancelled when the client goes. With `follow` it lasts until the container
 * stops. 404 for an unknown pod or container, 400 for bad options (or `previous` without a dead attempt).
 */
export async function containerLogsHandler({ host, req, params }: RouteContext): Promise<HttpReply> {
  if (!host.containerLogs) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not serve container logs'));
  const opts = parseLogOptions(params, req.query);
  if ('kind' in opts) return statusReply(opts as Status);
  let stream: Awaited<ReturnType<NonNullable<typeof host.containerLogs>>>;
  try {
    stream = await host.containerLogs(opts as ContainerLogsRequest);
  } catch (err) {
    return statusReply(hostErrorStatus(err, params.pod));
  }
  return {
    status: 200,
    contentType: 'text/plain; charset=utf-8',
    body: '',
    // A log read to its end goes at the socket's speed; a follow gets each chunk whole at once.
    bulk: !(opts as ContainerLogsRequest).follow,
    stream: (sink) => {
      sink.onClose(() => stream.cancel());
      stream.onData((chunk) => {
        if (!sink.write(chunk)) {
          stream.pause();
          sink.onWritable(() => stream.resume());
        }
      });
      stream.onEnd(() => sink.end());
    },
  };
}

/** logsRoutes: GET /containerLogs/{namespace}/{pod}/{container}. */
export function logsRoutes(): Route[] {
  return [{ path: '/containerLogs/:namespace/:pod/:container', methods: { get: containerLogsHandler } }];
}

// Counterpart of the kubelet server's getRun (pkg/kubelet/server/server.go) and RunInContainer (kuberuntime: ExecSync, stdout then stderr): `POST /run/{namespace}/{pod}/{container}?cmd=…`.
import type { Status } from '../../shared/api.js';
import type { HttpReply } from '../http/reply.js';
import { statusReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { statusError } from '../http/status.js';
import { newIdleTimer, type StreamLimiter } from './stream-limits.js';
import { hostErrorStatus } from '../routes/intake.js';

/** kMaxRunOutputBytes: the most output a run answers (the CRI's 16 MiB gRPC message limit on ExecSync). */
export const kMaxRunOutputBytes = 16 * 1024 * 1024;

/** upgradeRequired: GET or POST of /exec and /attach without a WebSocket upgrade (the kubelet's "Upgrade request required"). */
function upgradeRequired(): HttpReply {
  return statusReply(
    statusError(
      400,
      'BadRequest',
      'Upgrade request required: open /exec and /attach as a WebSocket (sub-protocol v5.channel.k8s.io or v4.channel.k8s.io)',
    ),
  );
}

/**
 * runHandler: `cmd` is split on spaces (the kubelet's legacy run parameter); the command runs
 * without stdin or TTY; the answer is its output (stdout then stderr as the container wrote them,
 * interleaved) with 200 when it exits 0; a non-zero exit is a 500 Status with reason
 * NonZeroExitCode and the ExitCode cause (the kubelet answers 500 with the CodeExitError). 404 for
 * an unknown pod or container, 400 without `cmd` or for a container not running, 429 past the
 * stream bounds; the client going away ends the stream. Counts as a stream for the bounds.
 */
export function runHandler(limiter: StreamLimiter) {
  return ({ host, req, params, onAborted, user }: RouteContext): Promise<HttpReply> | HttpReply => {
    if (!host.streamTarget || !host.openContainerStream)
      return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not serve run'));
    const cmd = (req.query.get('cmd') ?? '').split(' ').filter((a) => a !== '');
    if (cmd.length === 0)
      return statusReply(
        statusError(400, 'BadRequest', 'cmd: required (the command, its arguments separated by spaces)', {
          causes: [{ field: 'cmd', reason: 'FieldValueRequired', message: 'Required value' }],
        }),
      );
    let target;
    try {
      target = host.streamTarget(params.namespace, params.pod, params.container);
    } catch (err) {
      return statusReply(hostErrorStatus(err, params.pod));
    }
    const over = limiter.check(target.podUid, user);
    if (over) return statusReply(over, { 'Retry-After': '1' });
    const release = limiter.acquire(target.podUid, user);
    const session = host.openContainerStream({
      kind: 'exec',
      containerId: target.containerId,
      command: cmd,
      stdin: false,
      stdout: true,
      stderr: true,
      tty: false,
    });
    return new Promise<HttpReply>((resolve) => {
      const chunks: Uint8Array[] = [];
      let size = 0;
      let done = false;
      const end = (reply: HttpReply) => {
        if (done) return;
        done = true;
        idle.stop();
        release();
        resolve(reply);
      };
      const idle = newIdleTimer(limiter.options.idleTimeoutMs, () => {
        session.close();
        end(
          statusReply(
            statusError(504, 'Timeout', `run: no output for ${limiter.options.idleTimeoutMs} ms (--streaming-connection-idle-timeout)`),
          ),
        );
      });
      onAborted?.(() => {
        session.close();
        end(statusReply(statusError(400, 'BadRequest', 'the client went away')));
      });
      session.onStarted(() => {});
      session.onOutput((_fd, chunk) => {
        idle.touch();
        size += chunk.byteLength;
        session.ack(chunk.byteLength);
        if (size > kMaxRunOutputBytes) {
          session.close();
          end(statusReply(statusError(500, 'InternalError', `run: the output exceeds ${kMaxRunOutputBytes} bytes`)));
          return;
        }
        chunks.push(chunk);
      });
      session.onExit((e) => {
        const body = Buffer.concat(chunks);
        if (e.error) return end(statusReply(hostErrorOr500(e.error, params.pod)));
        if (e.exitCode !== null && e.exitCode !== 0) {
          const tail = body.subarray(Math.max(0, body.length - 1024)).toString('utf8');
          return end(
            statusReply({
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Failure',
              code: 500,
              reason: 'NonZeroExitCode',
              message: `command '${cmd.join(' ')}' exited with ${e.exitCode}: ${tail}`,
              details: { causes: [{ reason: 'ExitCode', message: String(e.exitCode) }] },
            }),
          );
        }
        end({
          status: 200,
          contentType: 'text/plain; charset=utf-8',
          body: '',
          stream: (sink) => {
            if (body.length) sink.write(body);
            sink.end();
          },
        });
      });
    });
  };
}

function hostErrorOr500(err: Error, pod: string): Status {
  try {
    return hostErrorStatus(err, pod);
  } catch {
    return statusError(500, 'InternalError', `Internal error occurred: error executing command in container: ${err.message}`);
  }
}

/** streamingRoutes: POST /run/…, and the plain-HTTP answers of /exec and /attach (400: upgrade required). */
export function streamingRoutes(limiter: StreamLimiter): Route[] {
  return [
    { path: '/run/:namespace/:pod/:container', methods: { post: runHandler(limiter) } },
    { path: '/exec/:namespace/:pod/:container', methods: { get: upgradeRequired, post: upgradeRequired } },
    { path: '/attach/:namespace/:pod/:container', methods: { get: upgradeRequired, post: upgradeRequired } },
  ];
}

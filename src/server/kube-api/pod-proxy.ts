/**
 * The pod proxy of the Kubernetes API: `/api/v1/namespaces/{ns}/pods/{[scheme:]name[:port]}/proxy/{path}`
 * (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS), as the apiserver's ProxyREST
 * (pkg/registry/core/pod/rest/subresources.go) with pod.ResourceLocation
 * (pkg/registry/core/pod/strategy.go) and the proxy of k8s.io/apimachinery/pkg/util/proxy
 * (upgradeaware.go):
 *
 * - `name`, `name:port` or `http:name:port` (net.SplitSchemeNamePort); no port: the first port the
 *   pod's containers declare, else none (port 80). `https:` is refused by name: this node's proxy
 *   does not speak TLS to pods. The port must be a number (upstream joins the text as it is).
 * - The target: the pod's `status.podIP` (a hostNetwork pod's is the node's address, `--node-ip`).
 *   Only a global unicast address is dialed: a pod without an IP, or whose IP is loopback (the
 *   default `--node-ip` 127.0.0.1 of a hostNetwork pod), link-local, multicast, broadcast or
 *   unspecified, gets 400 `address not allowed`, as ResourceLocation's proxyutil.IsProxyableIP
 *   (pkg/proxy/util/utils.go: net.IP.IsGlobalUnicast): the proxy never reaches the node's loopback
 *   services.
 * - The request goes with its method, the rest of the path (still percent-encoded), the query, its
 *   headers minus the hop-by-hop ones (the fixed list and those its `Connection` header names, as
 *   net/http/httputil's ReverseProxy removeHopByHopHeaders) and the caller's credentials (the
 *   apiserver's authentication filter drops `Authorization`), and its body (already bounded by the
 *   server's body limit).
 * - The answer comes back with its status and headers (hop-by-hop ones dropped, the same way), its body streamed
 *   with backpressure (no size limit: a slow reader pauses the pod's socket). A target that refuses,
 *   fails or sends no response headers within {@link kProxyResponseTimeoutMs} gets 503
 *   ServiceUnavailable, `error trying to reach service: …`.
 *
 * Authorization is the server's: `pods/proxy` with the request's verb (authz/attributes.ts, as
 * requestinfo.go: GET/HEAD get, POST create, PUT update, PATCH patch, DELETE delete).
 */
import http from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { Pod } from '../../shared/api.js';
import { statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext, RouteHandler } from '../routes/router.js';
import { notFound, statusError } from '../http/status.js';
import { isStatus } from './request.js';

/** kProxyResponseTimeoutMs: how long (milliseconds) the proxy waits for a pod to connect and send its response headers before answering 503. */
export const kProxyResponseTimeoutMs = 15_000;

/** kPodProxyPath: the router pattern (`*`: the path inside the pod, any depth). */
export const kPodProxyPath = '/api/v1/namespaces/:namespace/pods/:proxyName/proxy/*';

/** RFC 9110 §7.6.1 hop-by-hop fields, and those the proxy sets itself. */
const kDroppedRequestHeaders = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'authorization',
  'host',
  'content-length',
]);
const kDroppedResponseHeaders = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'content-type',
  'date',
]);

/**
 * kNotProxyable: the addresses that are not global unicast (Go's net.IP.IsGlobalUnicast): unspecified,
 * loopback, link-local unicast, multicast, the IPv4 broadcast. IPv4-mapped IPv6 forms match the IPv4 rules.
 */
const kNotProxyable = new BlockList();
for (const [net, prefix, type] of [
  ['0.0.0.0', 32, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['255.255.255.255', 32, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
] as const)
  kNotProxyable.addSubnet(net, prefix, type);

/**
 * isProxyableIP: whether the pod proxy may dial `ip`, as proxyutil.IsProxyableIP
 * (pkg/proxy/util/utils.go): only a global unicast address. Pure.
 */
export function isProxyableIP(ip: string): boolean {
  const family = isIP(ip);
  return family !== 0 && !kNotProxyable.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * withoutHopByHop: `headers` minus the names in `dropped` and those its `Connection` header names
 * (RFC 9110 §7.6.1), as net/http/httputil's removeHopByHopHeaders. Array values are joined with ', '.
 * Pure.
 */
export function withoutHopByHop(
  headers: Record<string, string | string[] | undefined>,
  dropped: ReadonlySet<string>,
): Record<string, string> {
  const connection = headers.connection;
  const named = new Set(
    (Array.isArray(connection) ? connection.join(',') : (connection ?? ''))
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== ''),
  );
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined && !dropped.has(k) && !named.has(k)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** ProxyTarget: where a pod proxy request goes. */
export interface ProxyTarget {
  ip: string;
  port: number;
}

/**
 * parseProxyName splits `[scheme:]name[:port]` as net.SplitSchemeNamePort. Pure.
 * @returns `{scheme, name, port}` (port '' when absent), or a 400 Status naming the path segment.
 */
export function parseProxyName(id: string): { scheme: string; name: string; port: string } | ReturnType<typeof statusError> {
  const parts = id.split(':');
  const bad = (why: string) =>
    statusError(400, 'BadRequest', `invalid pod name in the proxy path ${JSON.stringify(id)}: ${why}`, {
      causes: [{ field: 'name', reason: 'FieldValueInvalid', message: why }],
    });
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) [name, port] = parts;
  else if (parts.length === 3) [scheme, name, port] = parts;
  else return bad('expected name, name:port or scheme:name:port');
  if (scheme !== '' && scheme !== 'http' && scheme !== 'https') return bad(`scheme ${JSON.stringify(scheme)} is neither http nor https`);
  if (scheme === 'https')
    return statusError(
      400,
      'BadRequest',
      `the https scheme is not served by this node's pod proxy (it does not speak TLS to pods): use ${name}${port ? `:${port}` : ''}`,
    );
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name) || name.length > 253) return bad(`${JSON.stringify(name)} is not a pod name`);
  if (port !== '' && (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535))
    return bad(`port ${JSON.stringify(port)} must be a number in 1-65535`);
  return { scheme: scheme || 'http', name, port };
}

/**
 * proxyTarget: the pod's address for a proxy request on `port` ('' → the first declared container
 * port, else 80), as pod.ResourceLocation (pkg/registry/core/pod/strategy.go). Pure.
 * @returns the target, or a 400 Status when the pod has no address, or one {@link isProxyableIP} refuses.
 */
export function proxyTarget(pod: Pod, port: string): ProxyTarget | ReturnType<typeof statusError> {
  let p = port;
  if (p === '') {
    const declared = (pod.spec?.containers ?? []).find((c) => (c.ports ?? []).length > 0)?.ports?.[0]?.containerPort;
    p = declared ? String(declared) : '80';
  }
  const ip = pod.status?.podIP ?? '';
  if (isIP(ip) === 0)
    return statusError(
      400,
      'BadRequest',
      `pod ${pod.metadata?.name ?? ''} has no IP address to proxy to (its network gives it none, or its sandbox is not running)`,
    );
  if (!isProxyableIP(ip))
    return statusError(
      400,
      'BadRequest',
      `address not allowed: pod ${pod.metadata?.name ?? ''}'s status.podIP ${ip} is not a global unicast address (loopback, link-local, multicast or unspecified), which the pod proxy never dials`,
    );
  return { ip, port: Number(p) };
}

/** proxyRest: the raw path inside the pod: what follows `/proxy` in `path`, '/' when nothing does. */
function proxyRest(path: string): string {
  const i = path.indexOf('/proxy');
  const rest = i < 0 ? '' : path.slice(i + '/proxy'.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function unreachable(cause: string): HttpReply {
  return statusReply(statusError(503, 'ServiceUnavailable', `error trying to reach service: ${cause}`));
}

/**
 * podProxyHandler forwards one request to the pod (see the file comment). Never throws: every
 * failure is a Status reply.
 */
export const podProxyHandler: RouteHandler = ({ host, req, params, body, onAborted }: RouteContext): Promise<HttpReply> | HttpReply => {
  const id = parseProxyName(params.proxyName);
  if (isStatus(id)) return statusReply(id);
  const pod = host.getPod(params.namespace, id.name);
  if (!pod) return statusReply(notFound('pods', id.name));
  const target = proxyTarget(pod, id.port);
  if (isStatus(target)) return statusReply(target);
  const headers = withoutHopByHop(req.headers, kDroppedRequestHeaders);
  headers.host = `${target.ip.includes(':') ? `[${target.ip}]` : target.ip}:${target.port}`;
  if (body && body.length > 0) headers['content-length'] = String(body.length);
  const query = req.query.toString();
  const method = req.method.toUpperCase();
  return new Promise<HttpReply>((resolve) => {
    let answered = false;
    const outgoing = http.request({
      host: target.ip,
      port: target.port,
      method,
      path: proxyRest(req.path) + (query ? `?${query}` : ''),
      headers,
      agent: false,
      timeout: kProxyResponseTimeoutMs,
    });
    const fail = (cause: string) => {
      if (answered) return;
      answered = true;
      outgoing.destroy();
      resolve(unreachable(cause));
    };
    const timer = setTimeout(() => fail(`no response from ${headers.host} within ${kProxyResponseTimeoutMs} ms`), kProxyResponseTimeoutMs);
    onAborted?.(() => {
      clearTimeout(timer);
      answered = true;
      outgoing.destroy();
    });
    outgoing.on('timeout', () => fail(`no response from ${headers.host} within ${kProxyResponseTimeoutMs} ms`));
    outgoing.on('error', (err) => fail(`${err.message}`));
    outgoing.on('response', (incoming) => {
      clearTimeout(timer);
      if (answered) return void incoming.destroy();
      answered = true;
      // From here the answer streams; the socket's idle timeout no longer applies.
      outgoing.setTimeout(0);
      const out = withoutHopByHop(incoming.headers, kDroppedResponseHeaders);
      const contentType = incoming.headers['content-type'] ?? 'application/octet-stream';
      const status = incoming.statusCode ?? 502;
      if (method === 'HEAD' || status === 204 || status === 304) {
        incoming.resume();
        const length = Number(incoming.headers['content-length'] ?? '0');
        resolve({ status, contentType, headers: out, body: '', headLength: method === 'HEAD' && Number.isFinite(length) ? length : 0 });
        return;
      }
      resolve({
        status,
        contentType,
        headers: out,
        body: '',
        // A proxied body at the socket's speed (uWS's framing and backpressure): a pod's streaming
        // answer (a server-sent event stream) then sees each chunk end with the next one.
        bulk: true,
        stream: (sink) => {
          sink.onClose(() => incoming.destroy());
          incoming.on('data', (chunk: Buffer) => {
            if (!sink.write(chunk)) {
              incoming.pause();
              sink.onWritable(() => incoming.resume());
            }
          });
          incoming.on('end', () => sink.end());
          // The pod broke off mid-answer: end what was sent (the client sees a short body).
          incoming.on('error', () => sink.end());
        },
      });
    });
    outgoing.end(body && body.length > 0 ? body : undefined);
  });
};

/** podProxyRoutes: every method of pods/{name}/proxy/{path}. */
export function podProxyRoutes(): Route[] {
  const h = podProxyHandler;
  return [{ path: kPodProxyPath, methods: { get: h, post: h, put: h, patch: h, delete: h, head: h, options: h } }];
}

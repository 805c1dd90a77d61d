/**
 * The dashboard over TLS only (issue #38, a break test's finding: the page on the plain-http port
 * sent the admin token to whatever process held that port while the agent was down). A browser
 * cannot authenticate a plain-http server, so no token may be typed into, or sent from, a page
 * loaded over http: on the plain-http listener of an agent that also serves `--tls-port`, the
 * page itself (`GET /`) answers 308 to the same host on the TLS port, as an apiserver-fronting
 * dashboard is only ever served over https; the page's own session.js refuses to send a token from
 * an http origin whatever happens (an agent without `--tls-port`, or a squatter's copy of the page).
 * Pure; main thread.
 */
import type { HttpReply } from '../http/reply.js';

/**
 * dashboardHttpsRedirect: the 308 answer that sends a browser asking for the page over plain http to
 * `https://<host>:<tlsPort>/`, or undefined when the request is not `GET /` or there is no TLS
 * listener (`tlsPort` 0). `host` is the request's `Host` header, already checked to name this node
 * (origin-check.ts); its port is replaced, an IPv6 literal keeps its brackets.
 */
export function dashboardHttpsRedirect(method: string, path: string, host: string, tlsPort: number): HttpReply | undefined {
  if (tlsPort <= 0 || method !== 'get' || path !== '/') return undefined;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  if (name === '' || name === ']') return undefined;
  const location = `https://${name}:${tlsPort}/`;
  return {
    status: 308,
    contentType: 'text/plain; charset=utf-8',
    headers: { Location: location },
    body: `The dashboard is served over TLS only: ${location}\n`,
  };
}

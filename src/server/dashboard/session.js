// The dashboard's bearer token (--token-auth-file, the agent's <root-dir>/admin.token). The page
// itself loads without a token; its reads need one too, as anonymous requests are off by default
// (--anonymous-auth=false, the KubeletConfiguration default). When an API call answers 401 (the
// first load of /node, the watch, the stats and events polls, a Delete, the terminal's exec) the
// page asks once for a token, keeps it in sessionStorage and sends it as
// `Authorization: Bearer` on fetch and as the apiserver's `base64url.bearer.authorization.k8s.io.`
// sub-protocol on WebSockets (a browser cannot set headers on them).
import { $, setConn } from './dom.js';

const kTokenKey = 'kubelet-ts.token';
const kBearerProtocolPrefix = 'base64url.bearer.authorization.k8s.io.';

/**
 * kTokenAllowed: whether this page may send a token at all — only over https, where the browser has
 * authenticated the server. Over plain http (even on 127.0.0.1, which browsers count as a secure
 * context) any local user who holds the port while the agent restarts would receive it (issue #38):
 * the page then keeps and sends no token and says where to go instead; the agent itself redirects
 * its http page to its --tls-port when it has one (dashboard/https-redirect.ts).
 */
const kTokenAllowed = location.protocol === 'https:';
if (!kTokenAllowed) sessionStorage.removeItem(kTokenKey);

/** session.token: the token in use ('' = anonymous); session.waitingForToken: the watch waits for the prompt. */
export const session = { token: kTokenAllowed ? (sessionStorage.getItem(kTokenKey) ?? '') : '', waitingForToken: false };
const listeners = [];

/** onSignIn registers `fn`, called after a token was entered. */
export function onSignIn(fn) {
  listeners.push(fn);
}

/** authHeaders: the Authorization header for `used` (default: the current token), or none. */
export function authHeaders(used = session.token) {
  return used ? { Authorization: `Bearer ${used}` } : {};
}

/** api fetches an API path with the token (JSON accepted unless `init.headers` says otherwise); a 401 shows the prompt. */
export async function api(path, init = {}) {
  const used = session.token;
  const res = await fetch(path, { ...init, headers: { Accept: 'application/json', ...authHeaders(used), ...(init.headers ?? {}) } });
  if (res.status === 401) askForToken(used, { write: (init.method ?? 'GET') !== 'GET' });
  return res;
}

/** base64url without padding of the token's UTF-8 bytes (Go's base64.RawURLEncoding). */
function base64url(text) {
  let bin = '';
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** wsProtocols: the sub-protocols to offer: the bearer one for `used` (if any), then `protocol`. */
export function wsProtocols(protocol, used = session.token) {
  return used ? [`${kBearerProtocolPrefix}${base64url(used)}`, protocol] : [protocol];
}

/**
 * askForToken shows the prompt after a 401 answered to a request sent with `used` ('' = none).
 * For a write (`write: true`) the watch keeps running: anonymous reads may still be allowed.
 */
export function askForToken(used, { write = false } = {}) {
  if (used !== session.token) return; // a newer token was entered meanwhile
  if (!kTokenAllowed) {
    $('insecure-note').hidden = false;
    setConn('auth', 'https needed');
    return;
  }
  if (used) {
    session.token = '';
    sessionStorage.removeItem(kTokenKey);
    $('token-error').textContent = 'That token was refused.';
  }
  $('token-form').hidden = false;
  $('token-input').focus();
  if (write || session.waitingForToken) return;
  session.waitingForToken = true;
  setConn('auth', 'token needed');
}

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const value = $('token-input').value.trim();
  if (!value || !kTokenAllowed) return;
  session.token = value;
  sessionStorage.setItem(kTokenKey, value);
  $('token-input').value = '';
  $('token-error').textContent = '';
  $('token-form').hidden = true;
  session.waitingForToken = false;
  for (const fn of listeners) fn();
});

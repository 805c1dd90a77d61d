// The dashboard's watch of WS /watch/pods (the apiserver's watch protocol: ADDED per existing pod,
// a BOOKMARK, then changes; ?resourceVersion= resumes, ERROR 410 lists again). Events are queued
// per pod UID (the latest wins) and handed over once per animation frame as one batch, so a burst
// of 300 changes costs one frame of DOM work.
import { $, setConn } from './dom.js';
import { session, onSignIn, askForToken, authHeaders, wsProtocols } from './session.js';

/** The sub-protocol offered beside the token's: the server echoes it back (a browser needs one). */
const kWatchProtocol = 'watch.kubelet-ts';
/**
 * A handshake not answered within this many milliseconds is abandoned and retried (a browser's own
 * limit is minutes: a lost upgrade would leave the page "connecting…" that long).
 */
const kHandshakeTimeoutMs = 10_000;
/** How long the 401 check after a refused handshake may take, milliseconds. */
const kTokenCheckTimeoutMs = 5_000;

let resourceVersion = '';
let live = false;
/** UIDs not yet confirmed by a fresh list (after a reconnect without resourceVersion). */
let stale = null;
let retryMs = 500;
let retryTimer;
let socket = null;
let pending = new Map();
let frameRequested = false;
let hooks;

/**
 * startWatch connects and keeps reconnecting (backoff 0.5 s doubling to 10 s; a handshake
 * unanswered for 10 s is retried).
 * `hooks.apply(batch)` gets a Map uid → last event ({type, object}) once per frame;
 * `hooks.knownUids()` lists the UIDs shown (to drop those gone after a relist);
 * `hooks.podOf(uid)` the shown pod; `hooks.onLiveAdd(uid)` is told of a pod ADDED after the list.
 */
export function startWatch(h) {
  hooks = h;
  onSignIn(() => {
    retryMs = 500;
    clearTimeout(retryTimer);
    connect();
  });
  connect();
}

function connect() {
  if (session.waitingForToken || socket) return;
  const url = new URL('/watch/pods', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (resourceVersion) url.searchParams.set('resourceVersion', resourceVersion);
  else stale = new Set(hooks.knownUids());
  live = false;
  setConn('connecting', 'connecting…');
  const used = session.token;
  const ws = new WebSocket(url, used ? wsProtocols(kWatchProtocol, used) : []);
  socket = ws;
  let opened = false;
  const handshake = setTimeout(() => {
    if (!opened) ws.close(); // fails the connection: onclose retries
  }, kHandshakeTimeoutMs);
  ws.onopen = () => {
    opened = true;
    clearTimeout(handshake);
    retryMs = 500;
  };
  ws.onmessage = (msg) => {
    let event;
    try {
      event = JSON.parse(msg.data);
    } catch {
      return;
    }
    onEvent(event);
  };
  ws.onclose = async () => {
    clearTimeout(handshake);
    socket = null;
    // A refused handshake does not tell the page why: ask an API path whether a token is needed.
    if (!opened) await needsToken(used);
    if (session.waitingForToken) return; // the prompt's submit reconnects
    setConn('down', `disconnected — retrying in ${Math.round(retryMs / 1000)}s`);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };
}

/** needsToken asks GET /node with `used`: a 401 shows the prompt (unless a newer token was entered). */
async function needsToken(used) {
  try {
    const res = await fetch('/node', {
      headers: { Accept: 'application/json', ...authHeaders(used) },
      signal: AbortSignal.timeout(kTokenCheckTimeoutMs),
    });
    if (res.status === 401) askForToken(used);
  } catch {
    // the agent is down or slow: retry as usual
  }
}

function onEvent(event) {
  const { type, object } = event;
  if (type === 'ERROR') {
    // 410 Gone/Expired: our resourceVersion is too old (or from an earlier agent run): list again.
    resourceVersion = '';
    return;
  }
  const rv = object?.metadata?.resourceVersion;
  if (rv) resourceVersion = rv;
  if (type === 'BOOKMARK') {
    if (stale) {
      for (const uid of stale) queue(uid, { type: 'DELETED', object: hooks.podOf(uid) });
      stale = null;
    }
    live = true;
    setConn('live', 'live');
    $('rv').textContent = `resourceVersion ${resourceVersion}`;
    return;
  }
  const uid = object?.metadata?.uid;
  if (!uid) return;
  stale?.delete(uid);
  if (type === 'ADDED' && live) hooks.onLiveAdd(uid);
  queue(uid, event);
}

function queue(uid, event) {
  pending.set(uid, event);
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(flush);
  }
}

function flush() {
  frameRequested = false;
  const batch = pending;
  pending = new Map();
  hooks.apply(batch);
  if (batch.size) $('rv').textContent = `resourceVersion ${resourceVersion}`;
}

/**
 * unlimitSendWindow for spdy-transport streams (npm; used by src/server/streaming/spdy-tunnel.ts,
 * the server end of kubectl's SPDY tunnel, and src/workers/streams/cri-spdy-session.ts, a client of
 * a CRI runtime's streaming server). Kubernetes' SPDY stack (Go's moby/spdystream) implements no
 * flow control: it never sends WINDOW_UPDATE, so a sender that keeps to SPDY's 64 KiB stream window
 * stalls for good after 64 KiB. Streams talking to it send without a window; the TCP connection is
 * the flow control, as upstream. Pure: no library is loaded here.
 */

/** The send side of a spdy-transport flow-control window (window.js Side), as far as it is touched here. */
interface WindowSide {
  current: number;
  max: number;
  limit: number;
}

/**
 * unlimitSendWindow: `stream` (a spdy-transport Stream; for SPDY/3.1 its session too) may send
 * without waiting for WINDOW_UPDATE. Reaches into the library's stream state (`_spdyState`), which
 * has no option for it; a stream without that state is left as is.
 */
export function unlimitSendWindow(stream: object): void {
  const state = (stream as { _spdyState?: { window?: { send?: WindowSide }; sessionWindow?: { send?: WindowSide } } })._spdyState;
  for (const side of [state?.window?.send, state?.sessionWindow?.send]) {
    if (!side) continue;
    side.limit = Number.MAX_SAFE_INTEGER;
    side.max = Number.MAX_SAFE_INTEGER;
    side.current = Number.MAX_SAFE_INTEGER;
  }
}

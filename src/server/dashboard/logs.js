// The detail panel's log tail: `GET /containerLogs/{ns}/{pod}/{container}?tailLines=200&follow=true`
// (the kubelet's log endpoint, as `kubectl logs -f --tail=200`) read as a stream and appended to a
// <pre>, keeping the last kMaxChars characters. One follow at a time; stop() aborts the request.
import { podPath } from './dom.js';
import { authHeaders } from './session.js';

/** The text kept in the view (characters): older output is dropped from the top. */
const kMaxChars = 256 * 1024;

/**
 * followLogs starts following `container` of `pod` into `pre`; `onState(text)` reports
 * `following`, `ended`, or the error (a Status message). Returns { stop() }.
 */
export function followLogs(pod, container, pre, onState) {
  const abort = new AbortController();
  pre.textContent = '';
  const path = `/containerLogs${podPath(pod).slice('/pods'.length)}/${encodeURIComponent(container)}?tailLines=200&follow=true`;
  (async () => {
    try {
      const res = await fetch(path, { headers: { Accept: 'text/plain', ...authHeaders() }, signal: abort.signal });
      if (!res.ok) {
        const status = await res.json().catch(() => ({}));
        onState(`${res.status}: ${status.message ?? res.statusText}`);
        return;
      }
      onState('following');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const stick = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        let text = pre.textContent + value;
        if (text.length > kMaxChars) text = text.slice(text.length - kMaxChars);
        pre.textContent = text;
        if (stick) pre.scrollTop = pre.scrollHeight;
      }
      onState('ended');
    } catch (err) {
      if (!abort.signal.aborted) onState(`failed: ${err.message}`);
    }
  })();
  return { stop: () => abort.abort() };
}

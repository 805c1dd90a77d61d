// The detail panel's terminal: xterm.js over the kubelet's exec WebSocket
// (`WS /exec/{ns}/{pod}/{container}?command=sh&stdin=1&stdout=1&stderr=1&tty=1`, sub-protocol
// v5.channel.k8s.io, as `kubectl exec -it POD -- sh` through the apiserver's WebSocket executor):
// each binary frame is one channel byte then data — 0 stdin, 1 stdout, 2 stderr, 3 the final
// Status, 4 resize (`{"Width":cols,"Height":rows}`, sent on open and whenever the fit addon
// changes the size). Exec is a write: it needs a bearer token (the sign-in prompt asks for one).
import { Terminal } from './xterm.mjs';
import { FitAddon } from './addon-fit.mjs';
import { podPath } from './dom.js';
import { session, askForToken, wsProtocols } from './session.js';

const kProtocol = 'v5.channel.k8s.io';
const kStdin = 0;
const kStatus = 3;
const kResize = 4;

/**
 * openTerminal runs `sh` in `container` of `pod` and shows it in `host` (an empty element);
 * `onState(text)` reports `connecting`, `connected`, `exited (…)`, `closed` or why it failed.
 * Returns { close() } which closes the socket (the server then ends the exec) and disposes the terminal.
 * The Terminal object is also left on `host.terminal` (read by the browser test).
 */
export function openTerminal(pod, container, host, onState) {
  host.replaceChildren();
  const term = new Terminal({
    cursorBlink: true,
    fontSize: 13,
    fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
    scrollback: 2000,
    theme: { background: '#1d2330' },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(host);
  host.terminal = term;
  fit.fit();
  if (!session.token) {
    term.writeln('Exec is a write: sign in with a bearer token (the form above), then press Connect.');
    onState('sign in needed');
    askForToken('', { write: true });
    return { close: () => term.dispose() };
  }
  const url = new URL(`/exec${podPath(pod).slice('/pods'.length)}/${encodeURIComponent(container)}`, location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.append('command', 'sh');
  for (const flag of ['stdin', 'stdout', 'stderr', 'tty']) url.searchParams.set(flag, '1');
  const ws = new WebSocket(url, wsProtocols(kProtocol));
  ws.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  let opened = false;
  let ended = false;
  const send = (channel, bytes) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    const frame = new Uint8Array(bytes.length + 1);
    frame[0] = channel;
    frame.set(bytes, 1);
    ws.send(frame);
  };
  const sendSize = () => send(kResize, encoder.encode(JSON.stringify({ Width: term.cols, Height: term.rows })));
  onState('connecting');
  ws.onopen = () => {
    opened = true;
    onState('connected');
    sendSize();
    term.focus();
  };
  ws.onmessage = (msg) => {
    const data = new Uint8Array(msg.data);
    if (data.length === 0) return;
    const payload = data.subarray(1);
    if (data[0] === kStatus) {
      ended = true;
      let status = {};
      try {
        status = JSON.parse(new TextDecoder().decode(payload));
      } catch {
        // not JSON: leave it empty
      }
      const text = status.status === 'Success' ? 'exited (0)' : `exited (${status.message ?? 'failure'})`;
      term.writeln(`\r\n[${text}]`);
      onState(text);
    } else if (payload.length) {
      term.write(payload);
    }
  };
  ws.onclose = (e) => {
    if (!opened) {
      term.writeln(`[could not open the exec stream (${e.code}): is the container running and may this token write?]`);
      onState('refused');
    } else if (!ended) {
      term.writeln(`\r\n[connection closed${e.reason ? `: ${e.reason}` : ''}]`);
      onState('closed');
    }
  };
  const input = term.onData((s) => send(kStdin, encoder.encode(s)));
  const resized = term.onResize(sendSize);
  const observer = new ResizeObserver(() => {
    if (host.clientWidth > 0) fit.fit();
  });
  observer.observe(host);
  return {
    close() {
      observer.disconnect();
      input.dispose();
      resized.dispose();
      ws.close();
      term.dispose();
    },
  };
}

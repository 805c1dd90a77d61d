// Port-forward through containerd's streaming server (src/workers/streams/cri-port-forward.ts): one connection
// into a sandbox on containerd's CNI bridge, flow control, the pod closing, a refused port, a sandbox that is gone.
import { describe, expect, it } from 'vitest';
import { kPortForwardWindowBytes } from '../../../src/shared/port-forward-protocol.js';
import { startCriPortForward, type CriPortForwardSpec } from '../../../src/workers/streams/cri-port-forward.js';
import { criEndpointOrSkip, useCriRun } from '../../support/cri.js';
import { BUSYBOX_IMAGE, waitFor } from '../../support/docker.js';
import { openPortForwardChannel } from '../../support/port-forward-channel.js';

const endpoint = criEndpointOrSkip();

describe.skipIf(!endpoint)("port-forward through containerd's streaming server", { timeout: 120_000 }, () => {
  const run = useCriRun(endpoint);
  const { runtime } = run;

  /** A sandbox on the CNI bridge running `script` in busybox; resolves the sandbox ID once `ready` answers. */
  async function sandbox(name: string, script: string): Promise<string> {
    const config = run.sandboxConfig(name, await run.logDirectory());
    const id = await runtime.runPodSandbox(config);
    const c = await runtime.createContainer(
      id,
      {
        metadata: { name, attempt: 0 },
        image: { image: BUSYBOX_IMAGE },
        command: ['sh', '-c', script],
        log_path: `${name}/0.log`,
        labels: { ...run.label },
      },
      config,
    );
    await runtime.startContainer(c);
    return id;
  }

  const open = (spec: CriPortForwardSpec) => openPortForwardChannel((port, onDone) => startCriPortForward(runtime, port, spec, onDone));

  it('relays an HTTP exchange with httpd in the sandbox, each chunk reported written; the pod closing ends it cleanly', async () => {
    try {
      const id = await sandbox('httpd', 'mkdir -p /www && echo served-through-cri > /www/index.html && exec httpd -f -p 8080 -h /www');
      // httpd may not listen yet: retry a refused connection (a fresh URL each time).
      const c = await waitFor(
        async () => {
          const c = open({ sandboxId: id, port: 8080 });
          c.port.postMessage({ t: 'data', data: new TextEncoder().encode('GET /index.html HTTP/1.0\r\n\r\n') });
          await waitFor(() => c.got.end, { timeoutMs: 20_000, description: 'end' });
          c.port.close();
          return c.got.end?.error ? null : c;
        },
        { timeoutMs: 30_000, description: 'httpd answered through port-forward' },
      );
      expect(c.got.data.toString()).toMatch(/^HTTP\/1\.[01] 200 OK\r\n/);
      expect(c.got.data.toString()).toContain('served-through-cri');
      expect(c.got.written).toBe('GET /index.html HTTP/1.0\r\n\r\n'.length);
      expect(c.got.end).toEqual({ error: undefined });
      expect(c.got.done).toBe(true);
    } finally {
      await run.cleanup();
    }
  });

  it('stops reading at the credit window and goes on as credit returns; closing from the main thread posts no end', async () => {
    try {
      const total = 4 * kPortForwardWindowBytes;
      // nc -l answers one connection with `total` bytes, then keeps it open (the client closes).
      const id = await sandbox('bulk', `while :; do head -c ${total} /dev/zero | nc -l -p 9000 -w 30 || true; done`);
      const c = await waitFor(
        async () => {
          const c = open({ sandboxId: id, port: 9000 });
          await waitFor(() => c.got.end || c.got.data.length > 0, { timeoutMs: 20_000, description: 'data or end' });
          if (c.got.end) {
            c.port.close();
            return null;
          }
          return c;
        },
        { timeoutMs: 30_000, description: 'nc answered through port-forward' },
      );
      await waitFor(() => c.got.data.length >= kPortForwardWindowBytes, { description: 'a window of data' });
      await new Promise((r) => setTimeout(r, 300));
      expect(c.got.data.length).toBeLessThan(total);
      await waitFor(
        () => {
          c.ackReceived();
          return c.got.data.length === total;
        },
        { timeoutMs: 20_000, description: 'all data' },
      );
      expect(c.got.data.equals(Buffer.alloc(total))).toBe(true);
      c.port.postMessage({ t: 'close' });
      await waitFor(() => c.got.done, { description: 'torn down' });
      expect(c.got.end).toBeUndefined();
      c.port.close();
    } finally {
      await run.cleanup();
    }
  });

  it("closeWrite reaches the runtime: the pod's answer comes back and the connection ends though the pod keeps it open", async () => {
    try {
      // Answers a line, then holds the connection 60 s: only the client's FIN (containerd then closes
      // the pod's socket after its 1 s grace) ends it before the test's deadline.
      const id = await sandbox('halfclose', `while :; do nc -l -p 9001 -e sh -c 'read l; echo "got:$l"; sleep 60' || true; done`);
      const c = await waitFor(
        async () => {
          const c = open({ sandboxId: id, port: 9001 });
          c.port.postMessage({ t: 'data', data: new TextEncoder().encode('abc\n') });
          c.port.postMessage({ t: 'closeWrite' });
          await waitFor(() => c.got.end, { timeoutMs: 20_000, description: 'end' });
          c.port.close();
          return c.got.end?.error ? null : c;
        },
        { timeoutMs: 40_000, description: 'the pod answered and the connection ended' },
      );
      expect(c.got.data.toString()).toBe('got:abc\n');
      expect(c.got.end).toEqual({ error: undefined });
    } finally {
      await run.cleanup();
    }
  });

  it("ends with the runtime's error for a port nothing listens on, and for a sandbox that does not exist", async () => {
    try {
      const id = await sandbox('quiet', 'sleep 3600');
      const refused = open({ sandboxId: id, port: 8081 });
      await waitFor(() => refused.got.end, { timeoutMs: 30_000, description: 'end' });
      expect(refused.got.end?.error).toMatch(/connection refused/);
      expect(refused.got.done).toBe(true);
      refused.port.close();

      const gone = open({ sandboxId: 'f'.repeat(64), port: 80 });
      await waitFor(() => gone.got.end, { timeoutMs: 30_000, description: 'end' });
      expect(gone.got.end?.error).toMatch(/^sandbox ffffffffffff: .*not found/i);
      gone.port.close();
    } finally {
      await run.cleanup();
    }
  });
});

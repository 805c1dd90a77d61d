// The remotecommand channel protocols (src/server/streaming/remotecommand.ts): query, negotiation, frames, statuses.
import { describe, expect, it } from 'vitest';
import {
  decodeFrame,
  encodeFrame,
  negotiateProtocol,
  parseResize,
  parseStreamQuery,
  statusPayload,
  streamResultStatus,
} from '../../../src/server/streaming/remotecommand.js';
import { newStreamLimiter } from '../../../src/server/streaming/stream-limits.js';

describe('remotecommand protocol', () => {
  it.each([
    [['v5.channel.k8s.io', 'v4.channel.k8s.io'], 'v5.channel.k8s.io', 4, true],
    [['v4.channel.k8s.io'], 'v4.channel.k8s.io', 4, false],
    [['SPDY/3.1', 'channel.k8s.io'], 'channel.k8s.io', 1, false],
    [[], '', 1, false],
  ])('negotiates %j as %s', (offered, name, statusVersion, closeSignal) => {
    expect(negotiateProtocol(offered)).toMatchObject({ name, statusVersion, closeSignal });
  });

  it('refuses offers it serves none of', () => {
    expect(negotiateProtocol(['v9.channel.k8s.io'])).toBeUndefined();
  });

  it('reads the query as NewOptions: stderr dropped with tty, at least one stream, command required for exec', () => {
    expect(parseStreamQuery('exec', new URLSearchParams('command=ls&command=-l&stdout=1&stderr=1&tty=1'))).toEqual({
      command: ['ls', '-l'],
      stdin: false,
      stdout: true,
      stderr: false,
      tty: true,
    });
    expect(parseStreamQuery('exec', new URLSearchParams('stdout=1'))).toMatchObject({
      code: 400,
      message: expect.stringContaining('command'),
    });
    expect(parseStreamQuery('attach', new URLSearchParams('tty=1'))).toMatchObject({
      code: 400,
      message: expect.stringContaining('at least 1 of stdin, stdout, stderr'),
    });
    expect(parseStreamQuery('attach', new URLSearchParams('stdin=yes'))).toMatchObject({
      code: 400,
      details: { causes: [{ field: 'stdin' }] },
    });
  });

  it('frames binary and base64 channels both ways', () => {
    const bin = negotiateProtocol(['v4.channel.k8s.io'])!;
    const b64 = negotiateProtocol(['base64.channel.k8s.io'])!;
    expect([...(encodeFrame(bin, 1, new Uint8Array([104, 105])) as Uint8Array)]).toEqual([1, 104, 105]);
    expect(encodeFrame(b64, 2, new TextEncoder().encode('hi'))).toBe('2aGk=');
    expect(decodeFrame(bin, new Uint8Array([0, 97]).buffer)).toEqual({ channel: 0, data: new Uint8Array([97]) });
    expect(decodeFrame(b64, new TextEncoder().encode('0YQ==').buffer)).toEqual({ channel: 0, data: new Uint8Array([97]) });
    expect(decodeFrame(bin, new ArrayBuffer(0))).toBeNull();
  });

  it('reads resize messages and refuses what is no size', () => {
    expect(parseResize(new TextEncoder().encode('{"Width":80,"Height":24}'))).toEqual({ width: 80, height: 24 });
    expect(parseResize(new TextEncoder().encode('{"Width":0,"Height":24}'))).toBeNull();
    expect(parseResize(new TextEncoder().encode('nope'))).toBeNull();
  });

  it('writes the exit as the kubelet does: v4 Status JSON, v1 text only on failure', () => {
    const v4 = negotiateProtocol(['v4.channel.k8s.io'])!;
    const v1 = negotiateProtocol([])!;
    const failed = streamResultStatus('exec', ['sh', '-c', 'exit 3'], 3);
    expect(failed).toMatchObject({
      status: 'Failure',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect(JSON.parse(new TextDecoder().decode(statusPayload(v4, streamResultStatus('exec', ['true'], 0))))).toEqual({
      metadata: {},
      status: 'Success',
    });
    expect(statusPayload(v1, streamResultStatus('exec', ['true'], 0))).toBeUndefined();
    expect(new TextDecoder().decode(statusPayload(v1, failed))).toContain('exited with 3');
    expect(streamResultStatus('attach', [], null, { message: 'boom' })).toMatchObject({
      reason: 'InternalError',
      code: 500,
      message: 'Internal error occurred: error attaching to container: boom',
    });
  });

  it('bounds streams per pod and per node', () => {
    const l = newStreamLimiter({ maxStreamsPerPod: 2, maxStreamsPerNode: 3 });
    const a1 = l.acquire('a');
    l.acquire('a');
    expect(l.check('a')).toMatchObject({ code: 429, message: expect.stringContaining('pod') });
    l.acquire('b');
    expect(l.check('c')).toMatchObject({ code: 429, message: expect.stringContaining('node') });
    a1();
    a1();
    expect(l.open).toBe(2);
    expect(l.check('a')).toBeUndefined();
  });
});

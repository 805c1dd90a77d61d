/**
 * The two transports of an exec or attach stream on a CRI streaming server, behind one shape
 * (cri-exec-stream.ts picks one): the remotecommand WebSocket (`v5.channel.k8s.io` /
 * `v4.channel.k8s.io`, client-go tools/remotecommand/websocket.go) and SPDY with
 * `v4.channel.k8s.io` (client-go tools/remotecommand/spdy.go and v4.go: an error stream, then
 * stdin, stdout, stderr and resize streams as asked; the Status on the error stream; the server
 * closes the connection at the end).
 */
import { kCloseChannel, openChannelSocket } from './cri-channel-socket.js';
import { openSpdySession, type SpdyClientStream } from './cri-spdy-session.js';

/** The remotecommand WebSocket sub-protocols, best first (wsstream's names). */
export const kRemoteCommandProtocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;
/** The remotecommand protocols offered over SPDY, best first (v4: the exit code as a Status). */
export const kSpdyRemoteCommandProtocols = ['v4.channel.k8s.io'] as const;
const kStdin = 0;
const kStdout = 1;
const kStderr = 2;
const kError = 3;
const kResize = 4;

/** What a transport reports; none runs after `close()`. */
export interface ExecEvents {
  output(fd: 1 | 2, chunk: Buffer): void;
  /** Text of the error channel (a metav1.Status, possibly in pieces). */
  status(text: string): void;
  /** The stream ended (once), after every output and status; `err` when the connection failed. */
  end(err?: Error): void;
}

/** The streams of one exec/attach, as asked of the runtime. */
export interface ExecChannels {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** ExecTransport: an open exec/attach connection. */
export interface ExecTransport {
  readonly protocol: string;
  /** True when closeStdin reaches the process (WebSocket v5, SPDY). */
  readonly stdinClosable: boolean;
  writeStdin(chunk: Buffer, done: () => void): void;
  closeStdin(): void;
  /** resize sends `{"Width","Height"}`; resolves once sent. */
  resize(width: number, height: number): Promise<void>;
  pause(): void;
  resume(): void;
  close(): void;
}

const resizeMessage = (width: number, height: number) => Buffer.from(JSON.stringify({ Width: width, Height: height }));

/**
 * openWebSocketExec connects to `url` offering `protocols`. Rejects as openChannelSocket does
 * (a refused upgrade carries `statusCode`).
 */
export async function openWebSocketExec(
  url: string,
  protocols: readonly string[],
  events: ExecEvents,
  handshakeTimeoutMs: number,
): Promise<ExecTransport> {
  const s = await openChannelSocket(
    url,
    [...protocols],
    {
      onMessage(channel, payload) {
        if (payload.length === 0) return;
        if (channel === kStdout) events.output(1, Buffer.from(payload));
        else if (channel === kStderr) events.output(2, Buffer.from(payload));
        else if (channel === kError) events.status(payload.toString('utf8'));
      },
      onClose: (err) => events.end(err),
    },
    handshakeTimeoutMs,
  );
  const v5 = s.protocol === kRemoteCommandProtocols[0];
  return {
    protocol: s.protocol,
    stdinClosable: v5,
    writeStdin: (chunk, done) => s.send(kStdin, chunk, done),
    // v4 has no close signal: a v4 client can only write nothing more.
    closeStdin: () => {
      if (v5) s.send(kCloseChannel, Buffer.from([kStdin]));
    },
    resize: (width, height) => new Promise<void>((resolve) => s.send(kResize, resizeMessage(width, height), resolve)),
    pause: () => s.pause(),
    resume: () => s.resume(),
    close: () => s.close(),
  };
}

/**
 * openSpdyExec connects to `url` over SPDY, opens the streams of `channels` (client-go's order: error
 * first) and resolves once the server answered every one (SYN_REPLY), so stdin is never written
 * sooner. Rejects with ERR_RUNTIME when a stream is reset or left unanswered for `handshakeTimeoutMs`
 * milliseconds, and as openSpdySession.
 */
export async function openSpdyExec(
  url: string,
  channels: ExecChannels,
  events: ExecEvents,
  handshakeTimeoutMs: number,
): Promise<ExecTransport> {
  let closed = false;
  let sessionEnded = false;
  let sessionErr: Error | undefined;
  const reading: Promise<void>[] = [];
  let ended = false;
  const maybeEnd = () => {
    if (!sessionEnded || ended) return;
    // Every read stream's buffered data is delivered before the end is reported.
    void Promise.all(reading).then(() => {
      if (ended || closed) return;
      ended = true;
      events.end(sessionErr);
    });
  };
  const session = await openSpdySession(
    url,
    [...kSpdyRemoteCommandProtocols],
    (err) => {
      sessionEnded = true;
      sessionErr = err;
      maybeEnd();
    },
    handshakeTimeoutMs,
  );
  const read = (stream: SpdyClientStream, fn: (chunk: Buffer) => void) => {
    stream.on('data', (chunk: Buffer) => {
      if (!closed) fn(chunk);
    });
    reading.push(
      new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
      }),
    );
  };
  let stdin: SpdyClientStream | undefined;
  let resize: SpdyClientStream | undefined;
  const opened: [SpdyClientStream, string][] = [];
  const open = async (streamtype: string) => {
    const stream = await session.openStream({ streamtype });
    opened.push([stream, streamtype]);
    return stream;
  };
  try {
    const error = await open('error');
    read(error, (c) => events.status(c.toString('utf8')));
    if (channels.stdin) stdin = await open('stdin');
    if (channels.stdout) read(await open('stdout'), (c) => events.output(1, c));
    if (channels.stderr && !channels.tty) read(await open('stderr'), (c) => events.output(2, c));
    if (channels.tty) resize = await open('resize');
    // Nothing is written before the server answered every stream (client-go's createStreams waits for
    // each reply): stdin written sooner lost the attached process's answer 1 run in 3 on containerd 1.6.
    // The resize stream alone may be reset unanswered (containerd 1.6, a TTY command that ended at once:
    // CI 2026-12-07); its loss costs nothing, the output and the Status came on their own streams.
    await Promise.all(opened.map(([stream, name]) => session.replied(stream, name, { resetIsEnd: name === 'resize' })));
  } catch (err) {
    session.close();
    throw err;
  }
  maybeEnd();
  let stdinClosed = false;
  return {
    protocol: session.protocol,
    stdinClosable: true,
    writeStdin: (chunk, done) => {
      if (!stdin || stdinClosed || closed) return done();
      stdin.write(chunk, () => done());
    },
    closeStdin: () => {
      if (stdinClosed) return;
      stdinClosed = true;
      stdin?.end();
    },
    resize: (width, height) =>
      new Promise<void>((resolve) => {
        if (!resize || closed) return resolve();
        resize.write(Buffer.concat([resizeMessage(width, height), Buffer.from('\n')]), () => resolve());
      }),
    pause: () => session.pause(),
    resume: () => session.resume(),
    close: () => {
      closed = true;
      session.close();
    },
  };
}

/**
 * The part of spdy-transport 3.x (npm; no published types) that spdy-tunnel.ts uses: a SPDY/3.1
 * server connection over a duplex byte stream, its incoming streams, and the SPDY parser's
 * header-block reader (patched there for Kubernetes' streams, which carry no HTTP pseudo-headers).
 */
declare module 'spdy-transport' {
  import type { Duplex } from 'node:stream';

  /** One SPDY stream: a Duplex of its DATA frames; `end()` sends FIN, `abort()` RST_STREAM. */
  export interface SpdyStream extends Duplex {
    readonly id: number;
    /** The SYN_STREAM's header block, names lower-case (values of a repeated name joined). */
    readonly headers: Record<string, string | string[] | undefined>;
    /** respond sends SYN_REPLY with `:status` and `headers`. */
    respond(status: number, headers: Record<string, string>, callback?: (err?: Error) => void): void;
    abort(code?: string, callback?: () => void): void;
  }

  export interface SpdyConnection {
    on(event: 'stream', fn: (stream: SpdyStream) => void): this;
    on(event: 'error', fn: (err: Error) => void): this;
    on(event: string, fn: (...args: unknown[]) => void): this;
    /** end sends GOAWAY and ends the connection once its streams are done. */
    end(callback?: () => void): void;
    destroyStreams(err?: Error): void;
  }

  export interface SpdyParser {
    parseKVs(buffer: unknown, callback: (err: Error | null, headers?: Record<string, unknown>) => void): void;
  }

  const transport: {
    connection: {
      create(
        socket: Duplex,
        options: { protocol: 'spdy' | 'http2'; isServer: boolean; maxStreams?: number; windowSize?: number },
      ): SpdyConnection;
    };
    protocol: { spdy: { parser: { create(options: object): SpdyParser } } };
  };
  export default transport;
}

// Counterpart of k8s.io/cli-runtime/pkg/genericiooptions (IOStreams): where a command writes and how it ends.
import { realClock, type Clock } from '../shared/clock.js';

/**
 * CliIo: where the command line writes and how it exits. `runCli` (src/main/cli.ts) passes the
 * process's streams; tests pass a recorder. Every client command takes one; nothing else of the
 * process is reached by the commands.
 */
export interface CliIo {
  /** Writes help/version text or a command's output (the text carries its newline). */
  stdout(text: string): void;
  /** Writes error text (with its newline). */
  stderr(text: string): void;
  /** Ends the process with `code`. */
  exit(code: number): void;
  /** The process's stdin and terminal (exec, attach); absent = no stdin, no TTY. */
  terminal?: CliTerminal;
  /** The clock of AGE columns and --wait deadlines (epoch ms); absent = the real clock (see {@link cliClock}). */
  clock?: Clock;
}

/** cliClock: the command's clock, `io.clock` or the real clock. */
export function cliClock(io: Pick<CliIo, 'clock'>): Clock {
  return io.clock ?? realClock;
}

/**
 * CliTerminal: the process's stdin and terminal, for `exec -it` and `attach -it` (kubectl's
 * term.TTY). Absent in tests that drive a command with plain text; `exec` then sends no stdin.
 */
export interface CliTerminal {
  /** The bytes typed or piped in. */
  stdin: NodeJS.ReadableStream;
  /** True when stdin is a terminal (a TTY is only requested then, as kubectl). */
  stdinIsTTY: boolean;
  /** Raw mode on or off (no line editing, no echo, no signals: every key goes to the container). */
  setRawMode(raw: boolean): void;
  /** The terminal's size in cells, or undefined when stdout is no terminal. */
  size(): { width: number; height: number } | undefined;
  /** onResize: `fn` runs on each SIGWINCH; returns the function that stops listening. */
  onResize(fn: () => void): () => void;
  /** Raw output bytes (exec output is not always text). */
  writeStdout(chunk: Uint8Array): void;
  writeStderr(chunk: Uint8Array): void;
}

/** processTerminal: the CliTerminal of this process (process.stdin/stdout/stderr, SIGWINCH). */
export function processTerminal(): CliTerminal {
  return {
    stdin: process.stdin,
    stdinIsTTY: process.stdin.isTTY === true,
    setRawMode(raw) {
      if (process.stdin.isTTY) process.stdin.setRawMode(raw);
    },
    size: () => (process.stdout.isTTY ? { width: process.stdout.columns, height: process.stdout.rows } : undefined),
    onResize(fn) {
      process.stdout.on('resize', fn);
      return () => process.stdout.off('resize', fn);
    },
    writeStdout: (c) => process.stdout.write(c),
    writeStderr: (c) => process.stderr.write(c),
  };
}

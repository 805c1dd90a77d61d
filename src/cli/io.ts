// Counterpart of k8s.io/cli-runtime/pkg/genericiooptions (IOStreams): where a command writes and how it ends.
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
}

// Counterpart of Docker's local listener (daemon/listeners: /var/run/docker.sock, a unix socket the
// daemon owns and makes 0660 root:docker) for the agent's `<root-dir>/kubelet-ts.sock`: the local
// administrator's way in, where the client knows the server by the socket file's owner and mode
// (src/cli/local-socket.ts) instead of trusting whoever holds a TCP port.
import { lstatSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { InvalidArgumentError } from '../shared/errors.js';

/** kUnixSocketName: the socket's file name under `--root-dir`. */
export const kUnixSocketName = 'kubelet-ts.sock';

/** kMaxUnixPathBytes: the longest path a unix socket may have (sun_path is 108 bytes with its NUL). */
export const kMaxUnixPathBytes = 107;

/** kUnixSocketMode: the socket file's mode (owner only, as the agent's user). */
export const kUnixSocketMode = 0o600;

/** Whether something answers on the socket at `path` (a live agent): resolves false on ECONNREFUSED or after 1000 ms. */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ path });
    const done = (live: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve(live);
    };
    const timer = setTimeout(() => done(false), 1000);
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/**
 * prepareUnixSocketPath makes `path` free for the agent's socket, or refuses it: a missing path is
 * fine; a stale socket of this process's user (left by a kill -9: nothing answers on it) is removed;
 * a live one (another agent on the same root dir), a path that is not a socket, or a socket owned by
 * another user is refused. Main thread, before listening.
 * @throws InvalidArgumentError naming `path` (too long for a unix socket, not a socket, not ours, in use).
 */
export async function prepareUnixSocketPath(path: string): Promise<void> {
  if (Buffer.byteLength(path) > kMaxUnixPathBytes) {
    throw new InvalidArgumentError(
      `unix socket ${path}: the path is longer than ${kMaxUnixPathBytes} bytes (a shorter --root-dir is needed)`,
    );
  }
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new InvalidArgumentError(`unix socket ${path}: ${(err as Error).message}`);
  }
  if (!st.isSocket()) throw new InvalidArgumentError(`unix socket ${path}: the path exists and is not a socket; refusing to replace it`);
  const uid = process.getuid?.() ?? 0;
  if (st.uid !== uid)
    throw new InvalidArgumentError(
      `unix socket ${path}: owned by uid ${st.uid}, not by this agent's user (uid ${uid}); refusing to replace it`,
    );
  if (await socketAnswers(path))
    throw new InvalidArgumentError(`unix socket ${path}: another process is serving on it (another agent with this --root-dir?)`);
  unlinkSync(path);
}

/**
 * removeUnixSocket deletes the agent's socket file at close when it is still a socket (best effort:
 * a missing file is fine). Main thread.
 */
export function removeUnixSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // gone already
  }
}

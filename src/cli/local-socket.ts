/**
 * How the client knows the agent's local socket is the agent's before it sends a token there: as
 * Docker's client trusts /var/run/docker.sock because of the file's owner and mode (the daemon
 * makes it root:docker 0660; only root or the group can have put it there), `<root-dir>/kubelet-ts.sock`
 * is trusted when its directory belongs to root or to this user and is writable by no one else, and
 * the socket belongs to root, to this user or to the admin token file's owner (in that directory:
 * only root or this user could have put it there) and is writable by no other user. A TCP port, by contrast, proves nothing:
 * any local user may bind a free one (issue #38 finding 1). Server side: src/server/unix-socket.ts.
 */
import { lstatSync, statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';

/** LocalSocketCheck: the socket is trusted, missing (the agent is not running there), or refused with the reason. */
export type LocalSocketCheck = { kind: 'trusted' } | { kind: 'missing' } | { kind: 'untrusted'; reason: string };

/**
 * checkLocalSocket decides whether the unix socket at `path` may receive a credential: it must be
 * a socket; its directory must be owned by root or this process's user and writable by neither
 * others nor a group other than root's (else someone else could have replaced the socket); the
 * socket must be owned by root, this user or the owner of `tokenFile` (the agent's admin token
 * in that directory, when it exists) and writable by neither others nor a group other than root's.
 * Synchronous (once per command); never throws.
 */
export function checkLocalSocket(path: string, tokenFile?: string): LocalSocketCheck {
  let sock: Stats;
  try {
    sock = lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    return { kind: 'untrusted', reason: `cannot inspect ${path}: ${(err as Error).message}` };
  }
  if (!sock.isSocket()) return { kind: 'untrusted', reason: `${path} is not a unix socket` };
  const self = process.getuid?.() ?? 0;
  let dir: Stats;
  try {
    dir = statSync(dirname(path));
  } catch (err) {
    return { kind: 'untrusted', reason: `cannot inspect ${dirname(path)}: ${(err as Error).message}` };
  }
  const othersWrite = (st: Stats) => (st.mode & 0o002) !== 0 || ((st.mode & 0o020) !== 0 && st.gid !== 0);
  const mode = (st: Stats) => (st.mode & 0o7777).toString(8);
  if (dir.uid !== 0 && dir.uid !== self)
    return {
      kind: 'untrusted',
      reason: `its directory ${dirname(path)} is owned by uid ${dir.uid}, not by root or this user (uid ${self})`,
    };
  if (othersWrite(dir))
    return { kind: 'untrusted', reason: `its directory ${dirname(path)} is writable by other users (mode ${mode(dir)})` };
  const owners = new Set<number>([0, self]);
  if (tokenFile) {
    try {
      owners.add(statSync(tokenFile).uid);
    } catch {
      // no admin token file: root or this user only
    }
  }
  if (!owners.has(sock.uid))
    return { kind: 'untrusted', reason: `${path} is owned by uid ${sock.uid}, not by root, this user or the admin token's owner` };
  if (othersWrite(sock)) return { kind: 'untrusted', reason: `${path} is writable by other users (mode ${mode(sock)})` };
  return { kind: 'trusted' };
}

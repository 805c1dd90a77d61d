/**
 * One small state file the agent rewrites whole (`<root-dir>/namespaces.json`,
 * `<root-dir>/node-spec.json`): each write goes through `<file>.tmp` (mode 0600, fsynced) and a
 * rename, then the directory is fsynced, so a crash or a power loss leaves the old text or the
 * new one, and only the agent's user reads it (issue #38 finding 4). Writes run one at a time in
 * the order they were asked, so a slower earlier write never lands after a later one. The
 * directory must exist (the root dir does). Also syncDir, the directory fsync every durable write of
 * the agent ends with (this one, and the intake store's: config/intake-store.ts). Main thread only.
 */
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/** SerialFile: writes of one file, in order. */
export interface SerialFile {
  /** write replaces the file's text; resolves once it is in place. @throws Error from the filesystem (ENOENT, ENOSPC, …): the file keeps its old text. */
  write(text: string): Promise<void>;
}

/** newSerialFile: the writer of `file`. */
export function newSerialFile(file: string): SerialFile {
  let chain: Promise<void> = Promise.resolve();
  return {
    write(text) {
      const next = chain.then(async () => {
        const tmp = `${file}.tmp`;
        const fh = await open(tmp, 'w', 0o600);
        try {
          await fh.chmod(0o600); // a .tmp an earlier run left behind keeps its mode on open
          await fh.writeFile(text);
          await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(tmp, file);
        await syncDir(dirname(file));
      });
      chain = next.catch(() => undefined);
      return next;
    },
  };
}

/** syncDir fsyncs a directory (after renames or unlinks in it). @throws the fs error. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/**
 * One small state file the agent rewrites whole (`<root-dir>/namespaces.json`,
 * `<root-dir>/node-spec.json`): each write goes through `<file>.tmp` and a rename, so a crash leaves
 * the old text or the new one, and writes run one at a time in the order they were asked, so a
 * slower earlier write never lands after a later one. The directory must exist (the root dir does).
 * Main thread only.
 */
import { rename, writeFile } from 'node:fs/promises';

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
        await writeFile(tmp, text);
        await rename(tmp, file);
      });
      chain = next.catch(() => undefined);
      return next;
    },
  };
}

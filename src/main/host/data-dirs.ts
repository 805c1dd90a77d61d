/**
 * Counterpart of pkg/kubelet/kubelet.go setupDataDirs (issue #38 finding 4): the root dir and
 * `pods/` are made 0750, as the kubelet's, so that no other local user reaches a pod's files
 * (Secret volumes, emptyDirs — which stay 0777 inside, as pkg/volume/emptydir makes them — etc-hosts,
 * termination messages) even when the root dir's parent is traversable. The agent's own state
 * directories under the root dir (the intake store, the serving certificate's `pki/`) are 0700 at
 * most, the CNI state `cni/` 0750 at most. A directory an earlier run (or an admin) left wider is
 * narrowed at start, and a warning names it and both modes. Only permission bits are taken away;
 * nothing is ever widened, no owner is changed. Main thread, before anything else reads the root dir.
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../shared/logging.js';
import { InvalidArgumentError } from '../../shared/errors.js';

/** The directories under the root dir and the widest mode each may have (`''` = the root dir itself). */
const kDataDirs: { dir: string; max: number; create: boolean }[] = [
  { dir: '', max: 0o750, create: true },
  { dir: 'pods', max: 0o750, create: true },
  { dir: 'intake', max: 0o700, create: false },
  { dir: 'intake-objects', max: 0o700, create: false },
  { dir: 'intake-set-aside', max: 0o700, create: false },
  { dir: 'pki', max: 0o700, create: false },
  { dir: 'cni', max: 0o750, create: true }, // made here, before the network set-up makes its subdirectories (mkdir would give it 0755)
];

const octal = (m: number) => (m & 0o7777).toString(8).padStart(4, '0');

/**
 * setupDataDirs creates `rootDir` and `rootDir/pods` (0750) and narrows them and the state
 * directories listed above to their modes when wider, logging each change at warn.
 * @throws InvalidArgumentError naming --root-dir when the root dir or `pods` is not a directory; the fs error of mkdir or chmod otherwise.
 */
export async function setupDataDirs(rootDir: string, logger: Logger): Promise<void> {
  for (const { dir, max, create } of kDataDirs) {
    const path = dir ? join(rootDir, dir) : rootDir;
    if (create) {
      await mkdir(path, { recursive: true, mode: max }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err; // a file there: refused below
      });
    }
    // A symbolic link (the root dir or pods/ on another disk) is followed, as the kubelet's MkdirAll does.
    const st = await stat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' && !create) return undefined;
      throw err;
    });
    if (!st) continue;
    if (!st.isDirectory()) {
      if (create) throw new InvalidArgumentError(`--root-dir: ${path} must be a directory`);
      continue;
    }
    const mode = st.mode & 0o7777;
    if ((mode & ~max) === 0) continue;
    const narrowed = mode & max;
    await chmod(path, narrowed);
    logger.warn(
      { dir: path, mode: octal(mode), now: octal(narrowed) },
      'Narrowed the mode of a directory under --root-dir that was wider than the kubelet makes it',
    );
  }
}

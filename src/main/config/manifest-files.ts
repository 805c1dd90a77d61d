/**
 * Counterpart of the file rules of pkg/kubelet/config/file.go: which directory entries are
 * manifests, how large one may be, and how the files' pods become one set (pure; source-file.ts
 * applies them).
 */
import type { Pod } from '../../shared/api.js';
import { podFullName } from '../../shared/annotations.js';

/**
 * kMaxManifestBytes: larger manifest files are refused (their last good pods stay). YAML is parsed
 * on the file source's worker thread; the cap bounds what crosses to it and back, and how long a
 * pathological file can hold that thread.
 */
export const kMaxManifestBytes = 1024 * 1024;

/**
 * isManifestFileName tells whether a directory entry is read as a manifest: names starting with
 * `.` (as file.go's `[^.]*` glob) and editor leftovers ending in `~`, `.swp` or `.tmp` are ignored
 * (docs/contracts.md "Pod sources and pod identity").
 */
export function isManifestFileName(name: string): boolean {
  return !(name.startsWith('.') || name.endsWith('~') || name.endsWith('.swp') || name.endsWith('.tmp'));
}

/** A pod whose full name an earlier file (or an earlier document of its own file) already holds. */
export interface DuplicateStaticPod {
  file: string;
  fullName: string;
  /** The file that holds the name. */
  heldBy: string;
}

/**
 * assembleFileSet builds the file source's set from its files in the order given (file name order):
 * every pod, except those whose full name an earlier pod holds, which are returned as duplicates
 * (pure). The first one wins, as file.go reads files in name order.
 */
export function assembleFileSet(files: { file: string; pods: Pod[] }[]): { pods: Pod[]; duplicates: DuplicateStaticPod[] } {
  const pods: Pod[] = [];
  const duplicates: DuplicateStaticPod[] = [];
  const owners = new Map<string, string>();
  for (const { file, pods: inFile } of files) {
    for (const pod of inFile) {
      const fullName = podFullName(pod);
      const heldBy = owners.get(fullName);
      if (heldBy === undefined) {
        owners.set(fullName, file);
        pods.push(pod);
      } else {
        duplicates.push({ file, fullName, heldBy });
      }
    }
  }
  return { pods, duplicates };
}

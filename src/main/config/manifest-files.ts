/**
 * Counterpart of the file rules of pkg/kubelet/config/file.go: which directory entries are
 * manifests, how large one may be, and how the files' pods become one set (pure; source-file.ts
 * applies them).
 */
import type { Pod } from '../../shared/api.js';
import { podFullName } from '../../shared/annotations.js';

/** kMaxManifestBytes: larger manifest files are refused, their last good pods kept (io/manifest-file.ts, where the manifest thread reads them). */
export { kMaxManifestBytes } from '../../io/manifest-file.js';

/**
 * isManifestFileName tells whether a directory entry is read as a manifest: names starting with
 * `.` (as file.go's `[^.]*` glob) and editor leftovers ending in `~`, `.swp` or `.tmp` are ignored
 * (docs/contracts.md "Pod sources and pod identity").
 */
export function isManifestFileName(name: string): boolean {
  return !(name.startsWith('.') || name.endsWith('~') || name.endsWith('.swp') || name.endsWith('.tmp'));
}

/** A pod whose full name another pod of the source holds (see assembleFileSet). */
export interface DuplicateStaticPod {
  file: string;
  fullName: string;
  /** The file that holds the name (the same file for two documents of one file). */
  heldBy: string;
  /** The pod left out. */
  pod: Pod;
}

/**
 * assembleFileSet builds the file source's set from its files (`files` in file name order): every
 * pod, except those whose full name another pod holds, which are returned as duplicates (pure).
 *
 * Who holds a name: the file that held it in the previous set (`previousOwners`, full name → file,
 * as returned last time), for as long as that file still offers a pod of that name — the running
 * pod keeps its name, whatever name a newcomer's file sorts as (docs/contracts.md: "the first one
 * seen wins"). A name with no such holder goes to the first file in name order, and within a
 * file to its first document, as the kubelet's PodConfig filterInvalidPods keeps the first pod of
 * a name in the order file.go read them. When the holder's file no longer offers the name, the
 * next one takes it over.
 * @returns the pods (in file order), the duplicates, and `owners` (full name → file) to pass as
 *   `previousOwners` next time.
 */
export function assembleFileSet(
  files: { file: string; pods: Pod[] }[],
  previousOwners: ReadonlyMap<string, string> = new Map(),
): { pods: Pod[]; duplicates: DuplicateStaticPod[]; owners: Map<string, string> } {
  const owners = new Map<string, string>();
  // The previous holders that still offer their name keep it.
  for (const { file, pods: inFile } of files) {
    for (const pod of inFile) {
      const fullName = podFullName(pod);
      if (previousOwners.get(fullName) === file) owners.set(fullName, file);
    }
  }
  for (const { file, pods: inFile } of files) {
    for (const pod of inFile) {
      const fullName = podFullName(pod);
      if (!owners.has(fullName)) owners.set(fullName, file);
    }
  }
  const pods: Pod[] = [];
  const duplicates: DuplicateStaticPod[] = [];
  const placed = new Set<string>();
  for (const { file, pods: inFile } of files) {
    for (const pod of inFile) {
      const fullName = podFullName(pod);
      const heldBy = owners.get(fullName)!;
      if (heldBy === file && !placed.has(fullName)) {
        placed.add(fullName);
        pods.push(pod);
      } else {
        duplicates.push({ file, fullName, heldBy, pod });
      }
    }
  }
  return { pods, duplicates, owners };
}

/**
 * The intake's pod files and their restore (issue #38 findings 9 and 10). Layout of
 * `{--root-dir}/intake/`:
 *
 * - `pod~{uid}.json` and its twin `pod~{uid}~2.json`: the same JSON, each written temp → fsync →
 *   rename, then the directory fsynced once (intake-store.ts writeFilesDurably). Named by UID
 *   (at most 128 characters of `[A-Za-z0-9._-]`, never `~`), so a name always fits in 255 bytes
 *   whatever the pod's name (a DNS-1123 subdomain of up to 253 characters), and the UID of a pod
 *   whose files are both unreadable is still known. Cost per stored pod: two files written and
 *   fsynced instead of one (twice the bytes on disk), one directory fsync as before.
 * - `{namespace}_{name}.json`: the naming before; restored, then rewritten in the new naming.
 *
 * At restore (as the kubelet trusts only its own checkpoints, pkg/kubelet/checkpointmanager: a
 * checkpoint that fails its check is reported and not used), per pod: the first copy that is a
 * regular file of the agent's user, not writable by group or others, and parses and validates
 * wins; the other copy is rewritten from it. A refused copy (special file, other owner, loose
 * mode) is set aside; an unreadable one (torn, truncated, not JSON) is left in place. When no copy
 * is usable the pod's UID is *held*: its running containers are left alone (the agent's
 * housekeeping does not clean them up) and a Warning event says so. Main thread only.
 */
import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { podFullName } from '../../shared/annotations.js';
import type { Pod } from '../../shared/api.js';
import { applyPodDefaults } from '../../shared/defaults.js';
import { formatFieldError } from '../../shared/errors.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import type { PodEventRecord } from '../../shared/sync-tasks.js';
import { validatePodForNode } from '../../shared/validation.js';
import { readStoredFile, setAsideStoredFile, writeFilesDurably } from './intake-store.js';
import { syncDir } from '../host/serial-file.js';

const kFileRe = /^pod~([A-Za-z0-9][A-Za-z0-9._-]{0,127})(~2)?\.json$/;

/** intakeFileNames: the two files of the pod of `uid`: `pod~{uid}.json` and its twin `pod~{uid}~2.json`. */
export function intakeFileNames(uid: string): [string, string] {
  return [`pod~${uid}.json`, `pod~${uid}~2.json`];
}

/** intakeFileName: the first of a stored pod's two files, `pod~{metadata.uid}.json`. */
export function intakeFileName(pod: Pod): string {
  return intakeFileNames(pod.metadata?.uid ?? '')[0];
}

/** podFiles: both files of `pod` with its stored JSON. */
export function podFiles(pod: Pod): { name: string; content: string }[] {
  const content = `${JSON.stringify(pod, null, 2)}\n`;
  return intakeFileNames(pod.metadata?.uid ?? '').map((name) => ({ name, content }));
}

/**
 * removePodFiles unlinks both files of `pod` (absent ones are fine) and a file of the old naming
 * `{namespace}_{name}.json` that a restore could not rewrite, then fsyncs the directory.
 * @throws other fs errors of the two files.
 */
export async function removePodFiles(dir: string, pod: Pod): Promise<void> {
  for (const name of intakeFileNames(pod.metadata?.uid ?? '')) {
    await unlink(join(dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
  await unlink(join(dir, `${pod.metadata?.namespace ?? 'default'}_${pod.metadata?.name ?? ''}.json`)).catch(() => {});
  await syncDir(dir);
}

/** A restored pod and the bytes of one of its copies. */
export interface RestoredPod {
  pod: Pod;
  bytes: number;
}

/** What restoreIntakePods found. */
export interface IntakeRestore {
  pods: RestoredPod[];
  /** UIDs of pods of which no copy was usable: their running containers must be left alone. */
  held: string[];
  /** Bytes of the files left in place that hold no restored pod (they still take room in the store). */
  strayBytes: number;
}

/** Dependencies of {@link restoreIntakePods}. */
export interface IntakeRestoreDeps {
  logger: Logger;
  /** Records a Warning event on `pod` (a stub with what is known: uid, and name and namespace when read). */
  recordEvent?: (pod: Pod, event: PodEventRecord) => void;
}

/** parsePodText: the pod in `text`, defaulted and valid for the node, else throws naming the problem. */
function parsePodText(text: string, uid?: string): Pod {
  const pod = applyPodDefaults(JSON.parse(text) as Pod);
  const errors = validatePodForNode(pod);
  if (errors.length > 0) throw new Error(errors.map(formatFieldError).join('; '));
  if (!pod.metadata?.uid) throw new Error('metadata.uid: Required value');
  if (uid !== undefined && pod.metadata.uid !== uid)
    throw new Error(`metadata.uid: Invalid value: "${pod.metadata.uid}": the file is named for uid ${uid}`);
  return pod;
}

/** A stub naming what is known of a stored pod for an event (no untrusted text is read for it). */
function stubPod(uid: string | undefined, namespace: string, name: string): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...(uid ? { uid } : {}) } } as Pod;
}

/** legacyStub: the pod a `{namespace}_{name}.json` file of the old naming names. */
function legacyStub(fileName: string): Pod {
  const base = fileName.replace(/\.json$/, '');
  const i = base.indexOf('_');
  return stubPod(undefined, i > 0 ? base.slice(0, i) : 'default', i > 0 ? base.slice(i + 1) : base);
}

class Restorer {
  readonly out: IntakeRestore = { pods: [], held: [], strayBytes: 0 };
  readonly #byName = new Set<string>();
  /** Messages of the copies of the pod being restored that were refused (owner, mode): one event each. */
  #refused: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly rootDir: string,
    private readonly deps: IntakeRestoreDeps,
  ) {}

  #warn(file: string, msg: string, detail: string, extra: Record<string, unknown> = {}): void {
    this.deps.logger.warn({ source: 'api', file, err: boundedField(detail), ...extra }, msg);
  }

  /**
   * #read: the pod of one copy, or undefined (logged; a refused copy set aside with an event, an
   * unreadable one left in place).
   */
  async #read(file: string, uid: string | undefined): Promise<{ pod: Pod; text: string } | undefined> {
    const r = await readStoredFile(file);
    if (r.kind === 'special' || r.kind === 'untrusted') {
      const aside = await setAsideStoredFile(this.rootDir, file).catch((err: Error) => `not moved: ${err.message}`);
      this.#warn(
        file,
        r.kind === 'special'
          ? 'Skipped a special file in the intake store without opening it; set it aside'
          : 'Refused an intake pod file the agent cannot trust; set it aside',
        r.reason,
        { setAside: aside },
      );
      if (r.kind === 'untrusted')
        this.#refused.push(`Refused the stored copy ${file} of this pod at restore: ${r.reason}; moved to ${aside}`);
      return undefined;
    }
    if (r.kind === 'error') {
      this.#warn(file, 'Could not read an intake pod file; leaving it in place', r.reason);
      return undefined;
    }
    try {
      return { pod: parsePodText(r.text, uid), text: r.text };
    } catch (err) {
      this.out.strayBytes += Buffer.byteLength(r.text);
      this.#warn(file, 'Could not restore an intake pod from this file; leaving it in place', (err as Error).message);
      return undefined;
    }
  }

  #keep(pod: Pod, text: string): boolean {
    const fullName = podFullName(pod);
    if (this.#byName.has(fullName)) return false;
    this.#byName.add(fullName);
    this.out.pods.push({ pod, bytes: Buffer.byteLength(text) });
    return true;
  }

  /** #event records a FailedRestore Warning on `pod`. */
  #event(pod: Pod, message: string): void {
    this.deps.recordEvent?.(pod, { type: 'Warning', reason: 'FailedRestore', message });
  }

  /** #restoreTwins: the pod of `uid` from its copies (names present in the directory). */
  async #restoreTwins(uid: string, present: Set<string>): Promise<void> {
    const names = intakeFileNames(uid);
    this.#refused = [];
    const got: ({ pod: Pod; text: string } | undefined)[] = [];
    for (const name of names) got.push(present.has(name) ? await this.#read(join(this.dir, name), uid) : undefined);
    const good = got.find((g) => g !== undefined);
    for (const m of this.#refused) this.#event(good?.pod ?? stubPod(uid, 'default', uid), m);
    if (!good) {
      this.out.held.push(uid);
      const message = `No stored copy of this pod could be read at restore (${names.join(', ')} in ${this.dir}); its running containers are left alone until the files are mended or removed and the agent restarted`;
      this.deps.logger.warn({ source: 'api', uid, dir: this.dir }, 'No readable copy of an intake pod; leaving its containers alone');
      this.#event(stubPod(uid, 'default', uid), message);
      return;
    }
    if (!this.#keep(good.pod, good.text)) return;
    if (got.some((g) => g?.text !== good.text)) {
      // Mend the missing, torn or refused copy from the good one, so the pod has its twin again.
      await writeFilesDurably(
        this.dir,
        podFiles(good.pod).map((f) => ({ name: f.name, content: good.text })),
      )
        .then(() => this.deps.logger.info({ source: 'api', uid, dir: this.dir }, 'Mended the second copy of an intake pod'))
        .catch((err: Error) => this.#warn(join(this.dir, names[0]), 'Could not mend the second copy of an intake pod', err.message));
    }
  }

  /** #restoreLegacy: a `{namespace}_{name}.json` file of the naming before; rewritten as twins, then unlinked. */
  async #restoreLegacy(name: string): Promise<void> {
    const file = join(this.dir, name);
    this.#refused = [];
    const got = await this.#read(file, undefined);
    for (const m of this.#refused) this.#event(legacyStub(name), m);
    if (!got) return;
    if (!this.#keep(got.pod, got.text)) {
      this.#warn(file, 'Skipped an intake pod file of the old naming: its pod is restored from another file', podFullName(got.pod));
      return;
    }
    try {
      await writeFilesDurably(
        this.dir,
        podFiles(got.pod).map((f) => ({ name: f.name, content: got.text })),
      );
      await unlink(file);
      await syncDir(this.dir);
    } catch (err) {
      this.#warn(file, 'Could not rewrite an intake pod file of the old naming; keeping it', (err as Error).message);
    }
  }

  async run(): Promise<IntakeRestore> {
    const uids = new Map<string, Set<string>>();
    const legacy: string[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (name.startsWith('.')) {
        if (name.endsWith('.tmp')) await unlink(join(this.dir, name)).catch(() => {});
        continue;
      }
      const m = kFileRe.exec(name);
      if (m) {
        const names = uids.get(m[1]) ?? new Set<string>();
        uids.set(m[1], names.add(name));
      } else if (name.endsWith('.json')) {
        legacy.push(name);
      }
    }
    for (const [uid, present] of uids) await this.#restoreTwins(uid, present);
    for (const name of legacy) await this.#restoreLegacy(name);
    return this.out;
  }
}

/**
 * restoreIntakePods reads the pods stored in `dir` (`{rootDir}/intake`, which exists), as the
 * module's header says. @throws the fs error of readdir only; a file's problem is logged.
 */
export function restoreIntakePods(dir: string, rootDir: string, deps: IntakeRestoreDeps): Promise<IntakeRestore> {
  return new Restorer(dir, rootDir, deps).run();
}

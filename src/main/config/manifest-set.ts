// Counterpart of the file source's pod store in pkg/kubelet/config/file.go (its cache.Store, sent whole as a SET by the store's UpdatePodsFunc).
/**
 * The file source's manifests as last read (source-file.ts decides what to read and when): each
 * file's last good pods and objects and the state of its last read, updated from each load
 * (apply); the pods' content hashes; and what is sent from them — a SET of the static pods and
 * one of the ConfigMaps and Secrets, each only when it changed, and each problem (a file's, the
 * path's, the watch's, a duplicate's) reported once per change. Main thread only; synchronous.
 */
import type { Pod } from '../../shared/api.js';
import { keyOf, type ConfigObject } from '../../shared/config-objects.js';
import { stableHash } from '../../shared/hash.js';
import { boundedField, type Logger } from '../../shared/logging.js';
import type { PodUpdate, SourceError } from '../../shared/pod-update.js';
import { staticPodContentHash } from '../../shared/static-pod.js';
import type { ConfigObjectUpdate } from './object-store.js';
import { assembleFileSet, type DuplicateStaticPod } from './manifest-files.js';
import { kMaxSettleReads, type ManifestLoad, type ManifestReadState } from './manifest-read.js';

/** One manifest file: its last good pods and the state of its last read (ManifestReadState). */
export interface FileState extends ManifestReadState {
  /** Last good static pods from this file, in document order. */
  pods: Pod[];
  /** Last good ConfigMaps and Secrets from this file (not static pods: names as given). */
  objects?: ConfigObject[];
  /** The error last reported for this file, if its last read/parse failed. */
  error?: string;
}

/** Where a ManifestSet sends (FileSourceDeps' callbacks: the file source hands its deps). Main thread. */
export interface ManifestSink {
  onUpdate(update: PodUpdate): void;
  onObjects?(update: ConfigObjectUpdate): void;
  onError(error: SourceError): void;
  onDuplicate?(pod: Pod, message: string): void;
}

/** What a ManifestSet asks of its file source. */
export interface ManifestSetHooks {
  /** The source's logger (component file-source). */
  logger: Logger;
  /** Whether the source stopped: nothing is sent or reported any more. */
  stopped(): boolean;
  /** A file still being written (a load `unsettled`): the source reads it again once its check is done. */
  readAgain(file: string): void;
}

/** ManifestSet: the manifests' state and what is sent from it (see the file doc). */
export class ManifestSet {
  /** Manifest files by absolute path. */
  readonly files = new Map<string, FileState>();
  /**
   * staticPodContentHash of the pods this source holds, by object: pods are replaced, never
   * mutated in place (src/server/host/agent-host.ts), so each pod is hashed once — by the loader's
   * thread, for every pod it decodes — however often it is compared.
   */
  readonly contentHashes = new WeakMap<Pod, string>();
  /** Error slots (path, watch, duplicates) keyed by slot, holding the message last reported. */
  private readonly reported = new Map<string, string>();
  private lastSetKey: string | undefined;
  /** The key of the last objects' SET sent (sendObjectsIfChanged). */
  private lastObjectsKey: string | undefined;
  /** Who held each full name in the last set sent (full name → file): it keeps the name (assembleFileSet). */
  private owners = new Map<string, string>();

  constructor(
    private readonly sink: ManifestSink,
    private readonly hooks: ManifestSetHooks,
  ) {}

  /** holderOf: the file that held full name `fullName` in the last set sent, if any. */
  holderOf(fullName: string): string | undefined {
    return this.owners.get(fullName);
  }

  /**
   * apply is the file source's readManifest's updating half: the file's new state from its load,
   * and its problems reported. Returns false when the file is not (or no longer) a regular file.
   */
  apply(file: string, load: ManifestLoad<FileState>): boolean {
    const { prev } = load;
    switch (load.kind) {
      case 'unchanged':
        return true;
      case 'gone':
        this.files.delete(file);
        return false;
      case 'unsettled':
        // Still being written: keep its last good pods and look again once this check is done.
        this.hooks.logger.info(
          { file, reads: kMaxSettleReads + 1 },
          'Pod manifest keeps changing while it is read; keeping its last good pods and reading it again',
        );
        this.hooks.readAgain(file);
        return true;
      case 'failed':
        this.files.set(file, {
          pods: prev?.pods ?? [],
          objects: prev?.objects,
          contentHash: undefined,
          readStat: load.readStat,
          error: load.message,
        });
        if (prev?.error !== load.message) this.reportFileError(file, load.message);
        return true;
    }
    const { contentHash, stat, readStat, parsed } = load;
    if (parsed === undefined) {
      prev!.stat = stat;
      prev!.readStat = readStat;
      return true; // unchanged: nothing to do, nothing to report again
    }
    if ('error' in parsed) {
      let message = parsed.error;
      if (!message.includes(file)) message = `${file}: ${message}`;
      // A thread that did not answer says nothing about the content: forget the hash so that the
      // next check parses the file again, and report the same failure only once.
      const kept = parsed.retry ? {} : { contentHash, stat, readStat };
      this.files.set(file, { pods: prev?.pods ?? [], objects: prev?.objects, ...kept, error: message });
      if (!parsed.retry || prev?.error !== message) this.reportFileError(file, message);
      return true;
    }
    let pods = parsed.pods;
    // Keep the previous object of an unchanged pod, so its config.seen time stays the first one.
    const before = new Map((prev?.pods ?? []).map((p) => [p.metadata?.uid, p] as const));
    pods = pods.map((pod) => {
      const old = before.get(pod.metadata?.uid);
      return old !== undefined && this.contentHash(old) === this.contentHash(pod) ? old : pod;
    });
    if (prev?.error !== undefined) this.hooks.logger.info({ file, pods: pods.length }, 'Pod manifest is valid again');
    this.files.set(file, { pods, objects: parsed.objects, contentHash, stat, readStat });
    return true;
  }

  /** contentHash: a pod's staticPodContentHash (config.seen left out), computed once per object. */
  contentHash(pod: Pod): string {
    let hash = this.contentHashes.get(pod);
    if (hash === undefined) this.contentHashes.set(pod, (hash = staticPodContentHash(pod)));
    return hash;
  }

  // --- sending ----------------------------------------------------------------------------

  /**
   * sendIfChanged assembles the current set in file name order, drops (and reports) pods whose
   * full name an earlier file already holds, and sends a SET when the set's UIDs or content
   * changed since the last one (always for the first). Pods are compared by their content hashes,
   * computed once per pod object (contentHash), so an unchanged set costs no hashing of pods.
   * With `progress` (a SET in the middle of an event check, readManifests) duplicates are left
   * out but not reported: the check's end, after recheckHolders, reports them.
   */
  sendIfChanged(progress = false): void {
    if (this.hooks.stopped()) return;
    const files = [...this.files.keys()].sort();
    const { pods, duplicates, owners } = assembleFileSet(
      files.map((file) => ({ file, pods: this.files.get(file)!.pods })),
      this.owners,
    );
    this.owners = owners;
    if (!progress) this.reportDuplicates(duplicates);
    this.sendObjectsIfChanged(files);
    const key = stableHash(
      pods.map((p) => [p.metadata?.uid, this.contentHash(p)]),
      32,
    );
    if (key === this.lastSetKey) return;
    this.lastSetKey = key;
    this.hooks.logger.info({ op: 'SET', pods: pods.length }, 'Sending static pods from pod manifest path');
    this.sink.onUpdate({ op: 'SET', source: 'file', pods });
  }

  /**
   * reportDuplicates reports each pod left out for its full name once (log, onError, onDuplicate),
   * and forgets those no longer left out. Once per pod, by UID: a left-out pod whose file changed
   * is a new pod (a new UID), reported again with the same message, so that it too gets its
   * Warning event.
   */
  private reportDuplicates(duplicates: DuplicateStaticPod[]): void {
    const slots = new Set<string>();
    for (const d of duplicates) {
      const slot = `duplicate:${d.file}:${d.fullName}:${d.pod.metadata?.uid ?? ''}`;
      slots.add(slot);
      const where = d.heldBy === d.file ? 'in another document of the same file' : `in ${d.heldBy}`;
      const message = `${d.file}: static pod "${d.fullName}" is already defined ${where}; ignoring this one`;
      if (this.report(slot, d.file, message)) this.sink.onDuplicate?.(d.pod, message);
    }
    for (const slot of [...this.reported.keys()]) {
      if (slot.startsWith('duplicate:') && !slots.has(slot)) this.reported.delete(slot);
    }
  }

  /** sendObjectsIfChanged: a SET of the files' ConfigMaps and Secrets (first file wins a name) when it changed since the last one (always the first). */
  private sendObjectsIfChanged(files: string[]): void {
    if (!this.sink.onObjects) return;
    const byKey = new Map<string, ConfigObject>();
    for (const file of files) for (const o of this.files.get(file)!.objects ?? []) if (!byKey.has(keyOf(o))) byKey.set(keyOf(o), o);
    const objects = [...byKey.values()];
    const key = stableHash(objects, 32);
    if (key === this.lastObjectsKey) return;
    this.lastObjectsKey = key;
    this.hooks.logger.info({ op: 'SET', objects: objects.length }, 'Sending ConfigMaps and Secrets from pod manifest path');
    this.sink.onObjects({ op: 'SET', source: 'file', objects });
  }

  /** reportFileError logs and reports (onError) a file's read, parse or validation problem, unless the source stopped. */
  reportFileError(file: string, message: string): void {
    if (this.hooks.stopped()) return;
    this.hooks.logger.warn({ file, detail: boundedField(message) }, 'Pod manifest is unreadable or invalid; keeping its last good pods');
    this.sink.onError({ source: 'file', origin: file, message });
  }

  /** report sends an error for a slot unless that very message was the slot's last one; returns true if it sent it. */
  report(slot: string, origin: string, message: string): boolean {
    if (this.hooks.stopped() || this.reported.get(slot) === message) return false;
    this.reported.set(slot, message);
    this.hooks.logger.warn({ file: origin, detail: boundedField(message) }, 'Pod manifest path problem');
    this.sink.onError({ source: 'file', origin, message });
    return true;
  }

  /** clearReported forgets a slot's last message (the problem is gone): the next one is reported again. */
  clearReported(slot: string): void {
    this.reported.delete(slot);
  }
}

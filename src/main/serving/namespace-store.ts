/**
 * The namespaces created through the Kubernetes API (`kubectl create namespace`, a Namespace in an
 * `apply -f`), kept in `<root-dir>/namespaces.json` so that they outlive a restart, as the
 * apiserver's registry keeps them (pkg/registry/core/namespace). Namespaces a pod, ConfigMap or
 * Secret uses exist without being created here (the agent runs static pods of any namespace);
 * this store only adds the empty ones a user made. Which may be deleted is the server's decision
 * (kube-api/namespaces.ts); this module stores. Main thread only.
 *
 * The file is a JSON array of `{name, uid, creationTimestamp, labels?, annotations?}`, written
 * whole (serial-file.ts: a crash leaves the old list or the new one). A
 * file that cannot be read as such a list is renamed `namespaces.json.broken` (kept for a person
 * to look at) and the store starts empty, with a warning; it never stops the agent.
 */
import { randomUUID } from 'node:crypto';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { CreatedNamespace } from '../../server/host/agent-host.js';
import type { Logger } from '../../shared/logging.js';
import { isStringMap } from '../../shared/validation-util.js';
import { newSerialFile } from '../host/serial-file.js';
import { realClock, type Clock } from '../../shared/clock.js';

export type { CreatedNamespace } from '../../server/host/agent-host.js';

/** NamespaceStore: the created namespaces, in memory, written through to the file. */
export interface NamespaceStore {
  /** load reads the file (once, at start; before it the store is empty). Never throws: see the module comment. */
  load(): Promise<void>;
  /** list: every created namespace, by name. */
  list(): CreatedNamespace[];
  get(name: string): CreatedNamespace | undefined;
  /**
   * add stores a new namespace (uid and creationTimestamp made here) and resolves once the file has it.
   * @throws Error when the file cannot be written (the namespace is then not stored).
   */
  add(ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }): Promise<CreatedNamespace>;
  /**
   * update sets the labels and annotations of `name` (each replaced whole; absent → none) and
   * resolves once the file has them. A namespace not stored yet (one in use, or a system one) is
   * stored now, with a new uid and creationTimestamp. @throws Error as add (nothing is changed then).
   */
  update(ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }): Promise<CreatedNamespace>;
  /** remove drops `name` and resolves once the file no longer has it; false if it was not stored. @throws Error as add. */
  remove(name: string): Promise<boolean>;
}

function isCreatedNamespace(v: unknown): v is CreatedNamespace {
  const o = v as Partial<CreatedNamespace>;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof o.name === 'string' &&
    typeof o.uid === 'string' &&
    typeof o.creationTimestamp === 'string' &&
    (o.labels === undefined || isStringMap(o.labels)) &&
    (o.annotations === undefined || isStringMap(o.annotations))
  );
}

/** newNamespaceStore: the store of `<rootDir>/namespaces.json`; call load() before serving. */
export function newNamespaceStore(rootDir: string, logger: Logger, clock: Clock = realClock): NamespaceStore {
  const file = join(rootDir, 'namespaces.json');
  const byName = new Map<string, CreatedNamespace>();
  const out = newSerialFile(file);
  const persist = () => out.write(JSON.stringify([...byName.values()], null, 1));
  /** store writes `ns` through to the file, keeping the uid and creationTimestamp of `had` (the record it replaces); restores `had` when the write fails. */
  const store = async (
    ns: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> },
    had?: CreatedNamespace,
  ): Promise<CreatedNamespace> => {
    const record: CreatedNamespace = {
      name: ns.name,
      uid: had?.uid ?? randomUUID(),
      creationTimestamp: had?.creationTimestamp ?? new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
      ...(ns.labels ? { labels: ns.labels } : {}),
      ...(ns.annotations ? { annotations: ns.annotations } : {}),
    };
    byName.set(ns.name, record);
    try {
      await persist();
    } catch (err) {
      if (had) byName.set(ns.name, had);
      else byName.delete(ns.name);
      throw err;
    }
    return record;
  };
  return {
    async load() {
      try {
        const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
        if (!Array.isArray(parsed) || !parsed.every(isCreatedNamespace)) throw new Error('not a list of {name, uid, creationTimestamp}');
        for (const ns of parsed) byName.set(ns.name, ns);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          logger.warn(
            { file, err: (err as Error).message },
            'Cannot read the created namespaces; set aside as namespaces.json.broken, starting with none',
          );
          await rename(file, `${file}.broken`).catch(() => undefined);
        }
      }
    },
    list: () => [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
    get: (name) => byName.get(name),
    add: (ns) => store(ns),
    update: (ns) => store(ns, byName.get(ns.name)),
    async remove(name) {
      const had = byName.get(name);
      if (!had) return false;
      byName.delete(name);
      try {
        await persist();
      } catch (err) {
        byName.set(name, had);
        throw err;
      }
      return true;
    },
  };
}

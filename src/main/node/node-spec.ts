/**
 * The part of this node's Node.spec a user may change through the Kubernetes API:
 * `spec.unschedulable` (`kubectl cordon` / `uncordon`, and `kubectl drain`, which cordons first).
 * On a cluster the apiserver stores it and only the scheduler reads it; here it is kept in
 * `<root-dir>/node-spec.json` (`{"unschedulable": true}`) so that a cordon outlives a restart, as
 * the Node object in the apiserver outlives the kubelet's. It admits and runs pods as before:
 * the kubelet admits pods bound to a cordoned node, and every pod given to this agent is bound to
 * it. A file that cannot be read counts as not cordoned, with a warning. Main thread only.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../shared/logging.js';
import { newSerialFile } from '../host/serial-file.js';

/** NodeSpecStore: the node's stored spec. */
export interface NodeSpecStore {
  /** unschedulable: whether the node is cordoned (read from the file once, on the first call). */
  unschedulable(): Promise<boolean>;
  /** setUnschedulable stores `value`; resolves once the file has it. @throws Error when the file cannot be written (the value is then unchanged). */
  setUnschedulable(value: boolean): Promise<void>;
}

/** newNodeSpecStore: the store of `<rootDir>/node-spec.json`. */
export function newNodeSpecStore(rootDir: string, logger: Logger): NodeSpecStore {
  const file = join(rootDir, 'node-spec.json');
  let loaded: Promise<boolean> | undefined;
  let value = false;
  const load = () =>
    (loaded ??= readFile(file, 'utf8')
      .then((text) => {
        const parsed = JSON.parse(text) as { unschedulable?: unknown };
        value = parsed?.unschedulable === true;
        return value;
      })
      .catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') logger.warn({ file, err: err.message }, 'Cannot read the node spec; the node is not cordoned');
        return value;
      }));
  const out = newSerialFile(file);
  return {
    unschedulable: async () => {
      await load();
      return value;
    },
    async setUnschedulable(next) {
      await load();
      await out.write(JSON.stringify({ unschedulable: next }));
      value = next;
    },
  };
}

/**
 * Counterpart of kuberuntime_container.go getTerminationMessage / readLastStringFromContainerLogs:
 * fills `message` of dead containers from the termination message file the container wrote (bind
 * mounted at its terminationMessagePath), or, with terminationMessagePolicy
 * FallbackToLogsOnError, from the end of its log when the file is empty and the container failed.
 */
import { open } from 'node:fs/promises';
import type { RuntimePod } from '../../shared/runtime-pod.js';
import { terminationMessageFile } from '../kubetypes/pod-dirs.js';

/** Most bytes of a termination message file read (kubelet: maxTerminationMessageLength... 4096 per container). */
export const kMaxTerminationMessageBytes = 4096;
/** FallbackToLogsOnError reads at most this many log lines (kubelet: kMaxContainerTerminationMessageLogLines)… */
export const kFallbackLogLines = 80;
/** …and at most this many bytes (kubelet: kMaxContainerTerminationMessageLogLength). */
export const kFallbackLogBytes = 2048;

/** Reads up to `max` bytes of `file`; '' when it is missing or unreadable. */
async function readHead(file: string, max: number): Promise<string> {
  try {
    const fh = await open(file, 'r');
    try {
      const buf = Buffer.alloc(max);
      const { bytesRead } = await fh.read(buf, 0, max, 0);
      return buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return '';
  }
}

/**
 * LogTailer: the optional runtime capability FallbackToLogsOnError needs: the last `lines` lines
 * (at most `bytes` bytes) of a container's stdout and stderr.
 */
export interface LogTailer {
  tailLogs(containerId: string, lines: number, bytes: number): Promise<string>;
}

/**
 * fillTerminationMessageFiles: sets `message` of every exited app container of `runtimePod` (in
 * place), as kuberuntime_container.go getTerminationMessage: the message of every exited app container from its termination message file; else, with
 * `io.kubernetes.container.terminationMessagePolicy: FallbackToLogsOnError` in its annotations
 * (by container ID) and a non-zero exit, the tail of its log when `tailer` is given; else what the
 * runtime said (ContainerStatus `message`). Never throws.
 */
export async function fillTerminationMessageFiles(
  rootDir: string,
  runtimePod: RuntimePod | null,
  annotations?: ReadonlyMap<string, Record<string, string>>,
  tailer?: LogTailer,
): Promise<void> {
  if (!runtimePod) return;
  await Promise.all(
    runtimePod.containers
      .filter((c) => c.state === 'exited')
      .map(async (c) => {
        let msg = await readHead(terminationMessageFile(rootDir, runtimePod.uid, c.name, c.attempt), kMaxTerminationMessageBytes);
        if (
          !msg &&
          c.exitCode !== 0 &&
          tailer &&
          annotations?.get(c.id)?.['io.kubernetes.container.terminationMessagePolicy'] === 'FallbackToLogsOnError'
        ) {
          msg = await tailer.tailLogs(c.id, kFallbackLogLines, kFallbackLogBytes).catch(() => '');
        }
        if (msg) c.message = msg;
      }),
  );
}

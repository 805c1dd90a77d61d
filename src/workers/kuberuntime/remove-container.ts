// Counterpart of pkg/kubelet/kuberuntime/kuberuntime_container.go removeContainer and removeContainerLog.
/**
 * Removing one container on a CRI runtime, as the kubelet does: its log files first (the live
 * `log_path` and every rotated `<log_path>.<time>[.gz]`: the runtime leaves them, and the log
 * manager of ../logs/container-log-manager.ts made the rotated ones), then RemoveContainer.
 */
import { isNotFound } from '../../shared/errors.js';
import { cleanContainerLogs } from '../logs/container-log-manager.js';
import type { RuntimeService } from '../runtime/cri/services.js';

/**
 * removeCriContainer removes container `id`'s log files, then the container (RemoveContainer). A
 * container the runtime no longer knows has no files to find: its RemoveContainer answers for it.
 * @throws the log removal's error (the container is then kept, to try again, as upstream), or RemoveContainer's.
 */
export async function removeCriContainer(runtime: Pick<RuntimeService, 'containerStatus' | 'removeContainer'>, id: string): Promise<void> {
  try {
    await cleanContainerLogs(runtime, id);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  await runtime.removeContainer(id);
}

/**
 * The node's memory capacity as the sync worker uses it (a container's oom_score_adj, as
 * pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust with the kubelet's machineInfo): the
 * kubelet reads cadvisor's MachineInfo.MemoryCapacity once at start (cm/container_manager_linux.go
 * NewContainerManager) and uses that figure for every container; this reads `os.totalmem()` once
 * per thread, not once per container start (a sysinfo(2) call each).
 */
import { totalmem } from 'node:os';

let capacity: number | undefined;

/** nodeMemoryCapacityBytes: the node's memory in bytes (os.totalmem()), read at the thread's first call. Never throws. */
export function nodeMemoryCapacityBytes(): number {
  capacity ??= totalmem();
  return capacity;
}

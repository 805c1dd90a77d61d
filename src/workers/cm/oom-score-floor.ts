// Counterpart of containerd's CRI `restrict_oom_score_adj` (pkg/cri/server/container_create_linux.go restrictOOMScoreAdj): an oom_score_adj is never set below the runtime's own.
/**
 * The lowest oom_score_adj the runtime can give a container from here, read once per thread: the
 * CRI syncer raises a container's oom_score_adj to it (sync-pod.ts), and so does dockershim
 * (runtime/docker/docker-cri-service.ts).
 */
import { readFile } from 'node:fs/promises';

let oomFloor: number | undefined;

/** CAP_SYS_RESOURCE, the capability a process needs to lower an oom_score_adj (capability.h). */
const kCapSysResource = 24n;

/**
 * oomScoreAdjFloor: the lowest oom_score_adj the runtime can give a container from here: -1000
 * when this process has CAP_SYS_RESOURCE (the runtime, started by the same root, then has it too),
 * else this process's own oom_score_adj — the kernel refuses a lower value without that capability,
 * and runc then fails the container's start (`can't get final child's PID from pipe`), as on this
 * project's CI machine. Read once per thread from /proc/self. Never rejects (-1000 when unreadable).
 */
export async function oomScoreAdjFloor(): Promise<number> {
  if (oomFloor !== undefined) return oomFloor;
  try {
    const status = await readFile('/proc/self/status', 'utf8');
    const capEff = BigInt(`0x${/^CapEff:\s*([0-9a-f]+)/m.exec(status)?.[1] ?? '0'}`);
    oomFloor = (capEff >> kCapSysResource) & 1n ? -1000 : Number((await readFile('/proc/self/oom_score_adj', 'utf8')).trim()) || 0;
  } catch {
    oomFloor = -1000;
  }
  return oomFloor;
}

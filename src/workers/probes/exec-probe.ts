/**
 * Counterpart of pkg/probe/exec (with the kubelet's prober.runProbe for Exec handlers): runs a
 * probe's command in the container (`docker exec`, or the CRI's ExecSync) and maps the exit code
 * to a verdict. Runs on a worker thread.
 */
import { isNotFound, serializeError } from '../../shared/errors.js';
import type { ExecProbeTask, ProbeOutcome } from '../../shared/probe-tasks.js';
import type { ContainerRuntime } from '../runtime/container/runtime.js';
import { isCommandTimeout } from '../runtime/cri/errors.js';

/**
 * runExecProbe runs `task.command` in `task.containerId` and resolves:
 * `success` on exit code 0, `failure` on any other exit code or when the command is still running
 * after `task.timeoutMs` milliseconds (output `command "…" timed out`, as the kubelet since
 * ExecProbeTimeout), `unknown` when it could not be run at all (container gone or not running,
 * Docker error) — the probe worker then keeps its previous result. Never rejects.
 */
export async function runExecProbe(
  runtime: ContainerRuntime,
  task: Pick<ExecProbeTask, 'containerId' | 'command' | 'timeoutMs'>,
): Promise<ProbeOutcome> {
  if (!Array.isArray(task.command) || task.command.length === 0) return { result: 'unknown', output: 'exec probe: command is empty' };
  try {
    const r = await runtime.execInContainer(task.containerId, task.command, task.timeoutMs);
    if (r.timedOut) return { result: 'failure', output: `command ${JSON.stringify(task.command.join(' '))} timed out` };
    if (r.exitCode === 0) return { result: 'success', output: r.output };
    // The kubelet's event reads `Liveness probe failed: <output>`; with no output, say why.
    return {
      result: 'failure',
      output: r.output.trim() ? r.output : `command ${JSON.stringify(task.command.join(' '))} exited with ${r.exitCode}`,
    };
  } catch (err) {
    return { result: 'unknown', output: isNotFound(err) ? `container ${task.containerId} not found` : serializeError(err).message };
  }
}

/** The part of the CRI's ContainerManager an exec probe or hook needs (services.ts). */
export interface ExecSyncer {
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<{ stdout: Buffer; stderr: Buffer; exit_code: number }>;
}

/**
 * runExecSyncProbe: runExecProbe over the CRI's ExecSync (pkg/probe/exec with the kubelet's
 * remote runtime): the timeout goes to the runtime in whole seconds (rounded up, at least 1); the
 * output is stdout then stderr; exit 0 → `success`; another code → `failure`; a command past its
 * timeout (cri/errors.ts isCommandTimeout, the kubelet's exec.TimeoutError) → `failure`
 * `command "…" timed out`; any other error (container gone, runtime down) → `unknown`. Never rejects.
 */
export async function runExecSyncProbe(
  runtime: ExecSyncer,
  task: Pick<ExecProbeTask, 'containerId' | 'command' | 'timeoutMs'>,
): Promise<ProbeOutcome> {
  if (!Array.isArray(task.command) || task.command.length === 0) return { result: 'unknown', output: 'exec probe: command is empty' };
  const cmd = JSON.stringify(task.command.join(' '));
  try {
    const r = await runtime.execSync(task.containerId, task.command, Math.max(1, Math.ceil(task.timeoutMs / 1000)));
    const output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
    if (r.exit_code === 0) return { result: 'success', output };
    return { result: 'failure', output: output.trim() ? output : `command ${cmd} exited with ${r.exit_code}` };
  } catch (err) {
    if (isCommandTimeout(err)) return { result: 'failure', output: `command ${cmd} timed out` };
    return { result: 'unknown', output: isNotFound(err) ? `container ${task.containerId} not found` : serializeError(err).message };
  }
}

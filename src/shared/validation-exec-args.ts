// Counterpart of the kernel's execve(2) limits (fs/exec.c: MAX_ARG_STRLEN, bprm_stack_limits) as the container's first process meets them.
/**
 * Arguments and environment the kernel cannot hand to a container's first process. The apiserver
 * accepts any length, but execve(2) refuses one string (an argv entry or an envp `NAME=value`) of
 * more than MAX_ARG_STRLEN = 32 pages = 131,072 bytes counting its NUL, and argv + envp together
 * beyond a quarter of the stack rlimit (fs/exec.c, bprm_stack_limits: the strings with their NULs
 * plus one 8-byte pointer each). Sent to Docker anyway, such a pod wedged `runc create` for 23
 * minutes on this machine (issue #38, finding 7). Refused up front by {@link validatePodForNode}
 * instead, naming the field. Pure functions over decoded JSON.
 */
import { child, ErrorList, index, isObj, type Obj } from './validation-util.js';

/** kMaxArgStrlenBytes: MAX_ARG_STRLEN, the most one argv or envp string may take, bytes, its NUL included (32 × 4 KiB pages). */
export const kMaxArgStrlenBytes = 131_072;

/**
 * kMaxExecArgsBytes: the most a container's `command` + `args` + literal `env` may take together,
 * bytes, counted as execve(2) counts them (each string's bytes, its NUL and an 8-byte pointer).
 * The kernel's figure is a quarter of the stack rlimit: 2 MiB (2,097,152, `getconf ARG_MAX`) with
 * the 8 MiB stack that Docker's containers get here by default; 64 KiB of it is left for what the
 * runtime and the image add to the environment (PATH, HOSTNAME, HOME, the image's own `Env`, the
 * service links), so the figure is 2,031,616.
 */
export const kMaxExecArgsBytes = 2 * 1024 * 1024 - 64 * 1024;

const kPointerBytes = 8;

/** The bytes execve copies for one string: its UTF-8 length plus its NUL. */
function stringBytes(s: string): number {
  return Buffer.byteLength(s, 'utf8') + 1;
}

/**
 * validateExecArgs reports, for every container and init container, each `command[i]`, `args[i]`
 * and `env[i]` (as `NAME=value`, literal values only: a `valueFrom` is unknown until the sync) over
 * {@link kMaxArgStrlenBytes}, as `spec.containers[0].args[0]: Too long: must have at most 131072
 * bytes (MAX_ARG_STRLEN, its NUL included), the most the kernel takes for one argument`; and a
 * container whose strings together pass {@link kMaxExecArgsBytes}, on its `command` (or `args`,
 * or `env`: the first one present). Values of the wrong type are left to validatePod. Never throws.
 */
export function validateExecArgs(el: ErrorList, spec: Obj): void {
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    const items = spec[list];
    if (!Array.isArray(items)) continue;
    items.forEach((c, i) => {
      if (!isObj(c)) return;
      const path = `spec.${list}[${i}]`;
      let total = 0;
      const count = (field: string, s: string, shown: () => string) => {
        const n = stringBytes(s);
        total += n + kPointerBytes;
        if (n > kMaxArgStrlenBytes) {
          el.tooLong(
            field,
            `must have at most ${kMaxArgStrlenBytes} bytes (MAX_ARG_STRLEN, its NUL included), the most the kernel takes for one argument; ${shown()} has ${n}`,
          );
        }
      };
      for (const name of ['command', 'args']) {
        const v = c[name];
        if (!Array.isArray(v)) continue;
        v.forEach((s, j) => typeof s === 'string' && count(index(child(path, name), j), s, () => 'this one'));
      }
      if (Array.isArray(c.env)) {
        c.env.forEach((e, j) => {
          if (!isObj(e) || typeof e.name !== 'string' || (e.value !== undefined && typeof e.value !== 'string')) return;
          count(index(child(path, 'env'), j), `${e.name}=${(e.value as string | undefined) ?? ''}`, () => `"${e.name}=<value>"`);
        });
      }
      if (total > kMaxExecArgsBytes) {
        const on = ['command', 'args', 'env'].find((f) => Array.isArray(c[f])) ?? 'command';
        el.tooLong(
          child(path, on),
          `command, args and env together must have at most ${kMaxExecArgsBytes} bytes (each string with its NUL and an 8-byte pointer), what execve takes here; these have ${total}`,
        );
      }
    });
  }
}

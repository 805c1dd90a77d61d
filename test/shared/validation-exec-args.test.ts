// Issue #38 finding 7: argv and envp strings the kernel's execve(2) cannot take are refused at validation.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { kMaxArgStrlenBytes, kMaxExecArgsBytes } from '../../src/shared/validation-exec-args.js';
import { validatePodForNode } from '../../src/shared/validation.js';

function errorsOf(container: Record<string, unknown>, list = 'containers'): string[] {
  const raw = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web' },
    spec: {
      containers: [{ name: 'web', image: 'kubelet-ts/busybox:1.35' }],
      [list]: [{ name: 'c', image: 'kubelet-ts/busybox:1.35', ...container }],
    },
  };
  return validatePodForNode(applyPodDefaults(raw as unknown as Pod)).map(formatFieldError);
}

describe('validateExecArgs (MAX_ARG_STRLEN and the argv + envp total)', () => {
  it('a string of 131072 bytes with its NUL passes; one byte more is Too long, naming the entry', () => {
    expect(errorsOf({ args: ['x'.repeat(kMaxArgStrlenBytes - 1)] })).toEqual([]);
    const errs = errorsOf({ args: ['ok', 'x'.repeat(kMaxArgStrlenBytes)] });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^spec\.containers\[0\]\.args\[1\]: Too long: must have at most 131072 bytes/);
  });

  it('counts UTF-8 bytes, not characters', () => {
    expect(errorsOf({ command: ['é'.repeat(70_000)] })[0]).toMatch(/^spec\.containers\[0\]\.command\[0\]: Too long/);
  });

  it('an env entry counts as NAME=value; a valueFrom is not counted', () => {
    expect(errorsOf({ env: [{ name: 'BIG', value: 'v'.repeat(kMaxArgStrlenBytes - 4) }] })[0]).toMatch(
      /^spec\.containers\[0\]\.env\[0\]: Too long/,
    );
    expect(errorsOf({ env: [{ name: 'BIG', value: 'v'.repeat(kMaxArgStrlenBytes - 5) }] })).toEqual([]);
    expect(errorsOf({ env: [{ name: 'F', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] })).toEqual([]);
  });

  it('init containers are checked as well', () => {
    expect(errorsOf({ command: ['x'.repeat(200_000)] }, 'initContainers')[0]).toMatch(/^spec\.initContainers\[0\]\.command\[0\]: Too long/);
  });

  it('strings each under the limit but together over the total are refused once, on the container', () => {
    const n = Math.ceil(kMaxExecArgsBytes / 100_000);
    const errs = errorsOf({ command: ['sh'], args: Array.from({ length: n }, () => 'y'.repeat(100_000)) });
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^spec\.containers\[0\]\.command: Too long: command, args and env together must have at most 2031616 bytes/);
  });
});

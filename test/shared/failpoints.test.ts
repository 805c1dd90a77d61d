// Unit tests of the failpoint hook (src/shared/failpoints.ts) and of the disk-full error's mapping to
// a 507 Status (issue 11 finding 9); the kills themselves are exercised by test/e2e/faults.docker.test.ts.
import { describe, expect, it } from 'vitest';
import { insufficientStorageError, isInsufficientStorage, isNoSpaceErrno, isRetriable } from '../../src/shared/errors.js';
import { failpoint, kFailpointNames, parseFailpoints } from '../../src/shared/failpoints.js';
import { hostErrorStatus } from '../../src/server/routes/intake.js';

describe('parseFailpoints', () => {
  it.each([
    [undefined, []],
    ['', []],
    ['after-intake-write', ['after-intake-write']],
    [' after-sandbox-create , ,before-container-create ', ['after-sandbox-create', 'before-container-create']],
  ])('reads %j as %j', (value, names) => {
    expect([...parseFailpoints(value)]).toEqual(names);
  });

  it('refuses an unknown name, naming the variable and the name', () => {
    expect(() => parseFailpoints('after-intake-wirte')).toThrow(/KUBELET_TS_FAILPOINTS: unknown failpoint "after-intake-wirte"/);
  });

  it('returns at once when the variable is unset (this test process has none)', () => {
    for (const name of kFailpointNames) failpoint(name);
    expect(process.env.KUBELET_TS_FAILPOINTS).toBeUndefined();
  });
});

describe('disk full', () => {
  const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

  it('an ENOSPC / EDQUOT errno becomes a retriable ERR_INSUFFICIENT_STORAGE naming the directory', () => {
    expect(isNoSpaceErrno(enospc)).toBe(true);
    expect(isNoSpaceErrno(Object.assign(new Error('x'), { code: 'EDQUOT' }))).toBe(true);
    expect(isNoSpaceErrno(Object.assign(new Error('x'), { code: 'EACCES' }))).toBe(false);
    const err = insufficientStorageError(enospc, '/var/lib/kubelet-ts/intake');
    expect(isInsufficientStorage(err)).toBe(true);
    expect(isRetriable(err)).toBe(true);
    expect(err.message).toBe('no space left on device (ENOSPC) writing /var/lib/kubelet-ts/intake');
  });

  it('answers 507 with an InternalError Status, as NewInternalError shapes it', () => {
    const status = hostErrorStatus(insufficientStorageError(enospc, '/r/intake'), 'web');
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 507,
      reason: 'InternalError',
      message: 'Internal error occurred: no space left on device (ENOSPC) writing /r/intake',
      details: { causes: [{ message: 'no space left on device (ENOSPC) writing /r/intake' }] },
    });
  });
});

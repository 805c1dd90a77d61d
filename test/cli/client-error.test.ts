// Tests of the client's errors (src/cli/client.ts, etcd-client.ts): kubectl's error classes as AgentErrors.
import { describe, expect, it } from 'vitest';
import { ClientError, codeForHttpStatus } from '../../src/cli/client.js';
import { EtcdCommandError } from '../../src/cli/etcd-client.js';
import { AgentError, isConflict, isForbidden, isInvalidInput, isNotFound, isRetriable, isUnavailable } from '../../src/shared/errors.js';

describe('ClientError', () => {
  it.each([
    [undefined, 'ERR_INVALID_ARGUMENT'],
    [400, 'ERR_INVALID_ARGUMENT'],
    [401, 'ERR_FORBIDDEN'],
    [403, 'ERR_FORBIDDEN'],
    [404, 'ERR_NOT_FOUND'],
    [409, 'ERR_CONFLICT'],
    [422, 'ERR_INVALID_MANIFEST'],
    [503, 'ERR_UNAVAILABLE'],
    [500, 'ERR_RUNTIME'],
  ] as const)('maps HTTP status %s to %s', (status, code) => {
    expect(codeForHttpStatus(status)).toBe(code);
    expect(new ClientError('x', status).code).toBe(code);
  });

  it('is an AgentError the is…() helpers classify, keeping its HTTP status', () => {
    const notFound = new ClientError('pods "web" not found', 404);
    expect(notFound).toBeInstanceOf(AgentError);
    expect(notFound).toBeInstanceOf(ClientError);
    expect(notFound).toMatchObject({ name: 'ClientError', status: 404, message: 'pods "web" not found' });
    expect(isNotFound(notFound)).toBe(true);
    expect(isForbidden(new ClientError('no', 403))).toBe(true);
    expect(isConflict(new ClientError('no', 409))).toBe(true);
    expect(new ClientError('exists', 409, 'ERR_ALREADY_EXISTS').code).toBe('ERR_ALREADY_EXISTS');
    const unreachable = new ClientError('cannot reach the kubelet-ts API at http://x: refused', undefined, 'ERR_UNAVAILABLE');
    expect(isUnavailable(unreachable) && isRetriable(unreachable)).toBe(true);
    expect(unreachable.status).toBeUndefined();
  });

  it('EtcdCommandError is an invalid-input AgentError by default', () => {
    const err = new EtcdCommandError('apply with --etcd-servers needs --node NAME (the node that runs the pods)');
    expect(err).toBeInstanceOf(AgentError);
    expect(err instanceof ClientError).toBe(false);
    expect(err).toMatchObject({ name: 'EtcdCommandError', code: 'ERR_INVALID_ARGUMENT' });
    expect(isInvalidInput(err)).toBe(true);
  });
});

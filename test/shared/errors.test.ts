// Tests of src/shared/errors.ts (apimachinery's api/errors helpers and undici's branded error base).
import { describe, expect, it } from 'vitest';
import {
  AgentError,
  ConflictError,
  deserializeError,
  ForbiddenError,
  InvalidArgumentError,
  InvalidManifestError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalidInput,
  isNotFound,
  isRetriable,
  isUnavailable,
  kAgentErrorBrand,
  serializeError,
  statusReasonOf,
} from '../../src/shared/errors.js';

describe('AgentError classification', () => {
  it.each([
    ['isNotFound', isNotFound, new AgentError('ERR_NOT_FOUND', 'x')],
    ['isAlreadyExists', isAlreadyExists, new AgentError('ERR_ALREADY_EXISTS', 'x')],
    ['isConflict', isConflict, new ConflictError('x')],
    ['isForbidden', isForbidden, new ForbiddenError('x')],
    ['isUnavailable (runtime)', isUnavailable, new AgentError('ERR_RUNTIME_UNAVAILABLE', 'x', { retriable: true })],
    ['isUnavailable (API)', isUnavailable, new AgentError('ERR_UNAVAILABLE', 'x')],
    ['isInvalidInput', isInvalidInput, new InvalidArgumentError('x')],
    ['isRetriable', isRetriable, new AgentError('ERR_RUNTIME', 'x', { retriable: true })],
  ])('%s is true for its own code and false for another', (_name, is, err) => {
    expect(is(err)).toBe(true);
    expect(is(new AgentError('ERR_PROTOCOL', 'other'))).toBe(false);
    expect(is(undefined)).toBe(false);
  });

  it('classifies plain data carrying a code, as errors from a worker arrive', () => {
    expect(isForbidden({ code: 'ERR_FORBIDDEN' })).toBe(true);
    expect(isConflict({ code: 'ERR_CONFLICT' })).toBe(true);
  });

  it('keeps the container reason and the Status reason in two fields', () => {
    const pull = new AgentError('ERR_RUNTIME', 'pull failed', { retriable: true, reason: 'ErrImagePull' });
    expect(pull.reason).toBe('ErrImagePull');
    expect(pull.statusReason).toBeUndefined();
    const forbidden = new ForbiddenError('pods "web" is forbidden');
    expect(forbidden).toMatchObject({ code: 'ERR_FORBIDDEN', statusReason: 'Forbidden', name: 'ForbiddenError' });
    expect(forbidden.reason).toBeUndefined();
  });

  it.each([
    [new AgentError('ERR_NOT_FOUND', 'x'), 'NotFound'],
    [new AgentError('ERR_ALREADY_EXISTS', 'x'), 'AlreadyExists'],
    [new ConflictError('x'), 'Conflict'],
    [new ForbiddenError('x'), 'Forbidden'],
    [new InvalidArgumentError('x'), 'BadRequest'],
    [new InvalidManifestError('f', []), 'Invalid'],
    [new InvalidArgumentError('x', { statusReason: 'Conflict' }), 'Conflict'],
    [new AgentError('ERR_RUNTIME', 'x'), undefined],
  ])('statusReasonOf(%s) is %s', (err, reason) => {
    expect(statusReasonOf(err)).toBe(reason);
  });
});

describe('the brand', () => {
  it('makes instanceof follow the class chain', () => {
    const err = new ForbiddenError('x');
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).toBeInstanceOf(AgentError);
    expect(err).toBeInstanceOf(Error);
    expect(err instanceof ConflictError).toBe(false);
    expect(new AgentError('ERR_RUNTIME', 'x') instanceof InvalidArgumentError).toBe(false);
    expect({} instanceof AgentError).toBe(false);
    expect(new Error('x') instanceof AgentError).toBe(false);
  });

  it('is a non-enumerable Symbol.for property, so a copy of the module classifies the error', async () => {
    const err = new InvalidArgumentError('x');
    expect(Object.keys(err)).not.toContain(String(kAgentErrorBrand));
    expect(kAgentErrorBrand).toBe(Symbol.for('kubelet-ts.error'));
    // @ts-expect-error a query string makes vitest load a second copy of the module (TS cannot resolve it)
    const copy = (await import('../../src/shared/errors.js?copy')) as typeof import('../../src/shared/errors.js');
    expect(copy.AgentError).not.toBe(AgentError);
    expect(err instanceof copy.AgentError).toBe(true);
    expect(err instanceof copy.InvalidArgumentError).toBe(true);
    expect(new copy.ForbiddenError('y') instanceof AgentError).toBe(true);
    expect(serializeError(new copy.ConflictError('z'))).toMatchObject({
      name: 'ConflictError',
      code: 'ERR_CONFLICT',
      statusReason: 'Conflict',
    });
  });
});

describe('serializeError / deserializeError', () => {
  it('keeps name, code, reasons, and the field errors of an invalid manifest through structured clone', () => {
    const bad = new InvalidManifestError('pods/web.yaml', [{ field: 'spec.containers[0].name', type: 'Required value' }]);
    const back = deserializeError(structuredClone(serializeError(bad)));
    expect(back).toBeInstanceOf(InvalidManifestError);
    expect(back).toMatchObject({
      name: 'InvalidManifestError',
      code: 'ERR_INVALID_MANIFEST',
      message: bad.message,
      source: 'pods/web.yaml',
      errors: bad.errors,
    });
    expect(isInvalidInput(back)).toBe(true);

    const pull = deserializeError(
      structuredClone(serializeError(new AgentError('ERR_RUNTIME', 'no', { retriable: true, reason: 'ErrImagePull' }))),
    );
    expect(pull).toMatchObject({ name: 'AgentError', code: 'ERR_RUNTIME', retriable: true, reason: 'ErrImagePull' });

    const forbidden = deserializeError(structuredClone(serializeError(new ForbiddenError('no'))));
    expect(forbidden).toMatchObject({ name: 'ForbiddenError', code: 'ERR_FORBIDDEN', statusReason: 'Forbidden' });
    expect(isForbidden(forbidden)).toBe(true);

    expect(deserializeError(serializeError(new InvalidArgumentError('bad')))).toBeInstanceOf(InvalidArgumentError);
  });

  it('maps a foreign error to a retriable ERR_RUNTIME (keeping a string code) and an unknown code to ERR_RUNTIME', () => {
    expect(serializeError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toEqual({
      name: 'Error',
      code: 'ECONNREFUSED',
      message: 'refused',
      retriable: true,
    });
    expect(serializeError('boom')).toEqual({ name: 'Error', code: 'ERR_RUNTIME', message: 'boom', retriable: true });
    expect(deserializeError({ name: 'Error', code: 'ECONNREFUSED', message: 'refused', retriable: true })).toMatchObject({
      code: 'ERR_RUNTIME',
      name: 'Error',
      retriable: true,
    });
  });
});

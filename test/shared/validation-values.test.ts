// Issue #11 finding 5: values outside what the apiserver's types hold, or what the runtime takes.
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { isQuantity, parseQuantity, quantityError } from '../../src/shared/quantity.js';
import { validatePod, validatePodForNode } from '../../src/shared/validation.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Raw = any;

const base: Raw = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web' },
  spec: { containers: [{ name: 'web', image: 'kubelet-ts/busybox:1.35', command: ['httpd', '-f'] }] },
};

function errorsOf(mutate: (p: Raw) => void, validate: (p: Pod) => unknown[] = validatePod): string[] {
  const raw = structuredClone(base);
  mutate(raw);
  return (validate(applyPodDefaults(raw as Pod)) as Parameters<typeof formatFieldError>[0][]).map(formatFieldError);
}

const c0 = (p: Raw): Raw => p.spec.containers[0];
const I64 = 'must be an integer between -9007199254740991 and 9007199254740991, inclusive (int64)';
const I32 = 'must be an integer between -2147483648 and 2147483647, inclusive (int32)';
const liveness = (p: Raw, probe: Raw) => {
  c0(p).livenessProbe = { tcpSocket: { port: 80 }, ...probe };
};

describe('validatePod: integer fields hold only their Go type', () => {
  it.each<[string, (p: Raw) => void, string[]]>([
    [
      'grace period 1e308',
      (p) => {
        p.spec.terminationGracePeriodSeconds = 1e308;
      },
      [`spec.terminationGracePeriodSeconds: Invalid value: 1e+308: ${I64}`],
    ],
    [
      'grace period 2^64',
      (p) => {
        p.spec.terminationGracePeriodSeconds = 2 ** 64;
      },
      [`spec.terminationGracePeriodSeconds: Invalid value: 18446744073709552000: ${I64}`],
    ],
    [
      'grace period 2^53-1',
      (p) => {
        p.spec.terminationGracePeriodSeconds = Number.MAX_SAFE_INTEGER;
      },
      [],
    ],
    [
      'activeDeadlineSeconds 1e308',
      (p) => {
        p.spec.activeDeadlineSeconds = 1e308;
      },
      [`spec.activeDeadlineSeconds: Invalid value: 1e+308: ${I64}`],
    ],
    [
      'priority 2^31',
      (p) => {
        p.spec.priority = 2 ** 31;
      },
      [`spec.priority: Invalid value: 2147483648: ${I32}`],
    ],
    [
      'priority -2^31',
      (p) => {
        p.spec.priority = -(2 ** 31);
      },
      [],
    ],
    [
      'tolerationSeconds 2^64',
      (p) => {
        p.spec.tolerations = [{ operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 ** 64 }];
      },
      [`spec.tolerations[0].tolerationSeconds: Invalid value: 18446744073709552000: ${I64}`],
    ],
    [
      'containerPort 1e10',
      (p) => {
        c0(p).ports = [{ containerPort: 1e10 }];
      },
      [`spec.containers[0].ports[0].containerPort: Invalid value: 10000000000: ${I32}`],
    ],
    [
      'probe timeoutSeconds 2^31',
      (p) => liveness(p, { timeoutSeconds: 2 ** 31 }),
      [`spec.containers[0].livenessProbe.timeoutSeconds: Invalid value: 2147483648: ${I32}`],
    ],
    ['probe timeoutSeconds 2^31-1', (p) => liveness(p, { timeoutSeconds: 2 ** 31 - 1, periodSeconds: 2 ** 31 - 1 }), []],
    [
      'probe periodSeconds 1e308',
      (p) => liveness(p, { periodSeconds: 1e308 }),
      [`spec.containers[0].livenessProbe.periodSeconds: Invalid value: 1e+308: ${I32}`],
    ],
    [
      'probe initialDelaySeconds 2^40',
      (p) => liveness(p, { initialDelaySeconds: 2 ** 40 }),
      [`spec.containers[0].livenessProbe.initialDelaySeconds: Invalid value: 1099511627776: ${I32}`],
    ],
    [
      'probe failureThreshold 2^32',
      (p) => liveness(p, { failureThreshold: 2 ** 32 }),
      [`spec.containers[0].livenessProbe.failureThreshold: Invalid value: 4294967296: ${I32}`],
    ],
    [
      'probe grace period 0',
      (p) => liveness(p, { terminationGracePeriodSeconds: 0 }),
      ['spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0'],
    ],
    [
      'probe grace period "10"',
      (p) => liveness(p, { terminationGracePeriodSeconds: '10' }),
      ['spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: "10": must be an integer'],
    ],
    [
      'probe grace period 1e308',
      (p) => liveness(p, { terminationGracePeriodSeconds: 1e308 }),
      [`spec.containers[0].livenessProbe.terminationGracePeriodSeconds: Invalid value: 1e+308: ${I64}`],
    ],
  ])('%s', (_name, mutate, expected) => {
    expect(errorsOf(mutate)).toEqual(expected);
  });
});

describe('validatePod: string lists hold strings only', () => {
  it.each<[string, (p: Raw) => void, string[]]>([
    [
      'command [null]',
      (p) => {
        c0(p).command = [null];
      },
      ['spec.containers[0].command[0]: Invalid value: null: must be a string'],
    ],
    [
      'args ["a", null]',
      (p) => {
        c0(p).args = ['a', null];
      },
      ['spec.containers[0].args[1]: Invalid value: null: must be a string'],
    ],
    [
      'exec probe command [null]',
      (p) => {
        c0(p).livenessProbe = { exec: { command: [null] } };
      },
      [
        'spec.containers[0].livenessProbe.exec.command[0]: Invalid value: null: must be a string',
        'spec.containers[0].livenessProbe.exec.command: Required value',
      ],
    ],
    [
      'preStop command [1]',
      (p) => {
        c0(p).lifecycle = { preStop: { exec: { command: ['sh', 1] } } };
      },
      ['spec.containers[0].lifecycle.preStop.exec.command[1]: Invalid value: 1: must be a string'],
    ],
  ])('%s', (_name, mutate, expected) => {
    expect(errorsOf(mutate)).toEqual(expected);
  });
});

describe('quantities', () => {
  it.each<[unknown, string | null]>([
    ['1e400', 'value too large: must be at most 1.7976931348623157e+308'],
    ['1e308', null],
    ['1e20', null],
    ['10Ei', null],
    [Infinity, 'must be a finite number'],
    ['12x', "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"],
  ])('%j → %j', (q, why) => {
    expect(quantityError(q)).toBe(why);
    expect(isQuantity(q)).toBe(why === null);
  });

  it('parseQuantity throws naming the field for a value it cannot hold', () => {
    expect(() => parseQuantity('1e400', 'spec.containers[0].resources.limits.memory')).toThrow(
      'spec.containers[0].resources.limits.memory: Invalid value: "1e400": value too large',
    );
    expect(parseQuantity('8Ei')).toBe(2 ** 63);
  });

  it.each<[string, (p: Raw) => void, string[]]>([
    [
      'memory limit 1e400',
      (p) => {
        c0(p).resources = { limits: { memory: '1e400' } };
      },
      ['spec.containers[0].resources.limits[memory]: Invalid value: "1e400": value too large: must be at most 1.7976931348623157e+308'],
    ],
    [
      'cpu request 1e400',
      (p) => {
        c0(p).resources = { requests: { cpu: '1e400' } };
      },
      ['spec.containers[0].resources.requests[cpu]: Invalid value: "1e400": value too large: must be at most 1.7976931348623157e+308'],
    ],
    [
      'emptyDir sizeLimit 1e400',
      (p) => {
        p.spec.volumes = [{ name: 'v', emptyDir: { sizeLimit: '1e400' } }];
      },
      ['spec.volumes[0].emptyDir.sizeLimit: Invalid value: "1e400": value too large: must be at most 1.7976931348623157e+308'],
    ],
  ])('validatePod: %s', (_name, mutate, expected) => {
    expect(errorsOf(mutate)).toEqual(expected);
  });

  const MEM = 'must be less than 8Ei (2^63 bytes), the most the container runtime takes';
  const CPU = 'must be at most 175921860444m, the largest CFS quota the kernel takes (2^44-1 µs per 100 ms period)';
  it.each<[string, (p: Raw) => void, string[]]>([
    [
      'memory limit 1e20',
      (p) => {
        c0(p).resources = { limits: { memory: '1e20' } };
      },
      [`spec.containers[0].resources.limits[memory]: Invalid value: "1e20": ${MEM}`],
    ],
    [
      'memory limit 8Ei',
      (p) => {
        c0(p).resources = { limits: { memory: '8Ei' } };
      },
      [`spec.containers[0].resources.limits[memory]: Invalid value: "8Ei": ${MEM}`],
    ],
    [
      'memory limit 7Ei',
      (p) => {
        c0(p).resources = { limits: { memory: '7Ei' } };
      },
      [],
    ],
    [
      'memory limit 4Mi',
      (p) => {
        c0(p).resources = { limits: { memory: '4Mi' } };
      },
      [
        'spec.containers[0].resources.limits[memory]: Invalid value: "4Mi": must be 0 (no limit) or at least 6Mi, the least the container runtime takes',
      ],
    ],
    [
      'memory limit 6Mi and 0',
      (p) => {
        c0(p).resources = { limits: { memory: '6Mi' } };
        p.spec.initContainers = [{ name: 'i', image: 'i:1', resources: { limits: { memory: '0' } } }];
      },
      [],
    ],
    [
      'memory request 1e19 (a number)',
      (p) => {
        c0(p).resources = { requests: { memory: 1e19 } };
      },
      [`spec.containers[0].resources.requests[memory]: Invalid value: "10000000000000000000": ${MEM}`],
    ],
    [
      'init container memory limit 1e20',
      (p) => {
        p.spec.initContainers = [{ name: 'init', image: 'i:1', resources: { limits: { memory: '1e20' } } }];
      },
      [`spec.initContainers[0].resources.limits[memory]: Invalid value: "1e20": ${MEM}`],
    ],
    [
      'cpu limit 1e12',
      (p) => {
        c0(p).resources = { limits: { cpu: '1e12' } };
      },
      [`spec.containers[0].resources.limits[cpu]: Invalid value: "1e12": ${CPU}`],
    ],
    [
      'cpu limit 175921860445m',
      (p) => {
        c0(p).resources = { limits: { cpu: '175921860445m' } };
      },
      [`spec.containers[0].resources.limits[cpu]: Invalid value: "175921860445m": ${CPU}`],
    ],
    [
      'cpu limit 175921860444m',
      (p) => {
        c0(p).resources = { limits: { cpu: '175921860444m' } };
      },
      [],
    ],
    [
      'cpu request 1e12 without a limit (shares are capped)',
      (p) => {
        c0(p).resources = { requests: { cpu: '1e12' } };
      },
      [],
    ],
  ])('validatePodForNode: %s', (_name, mutate, expected) => {
    expect(errorsOf(mutate, validatePodForNode)).toEqual(expected);
  });
});

import { describe, expect, it } from 'vitest';
import type { ContainerStatus, Pod, Volume } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import {
  effectiveGracePeriodSeconds,
  emptyDirSizeLimitBytes,
  getPhase,
  isGracePeriodFromLabels,
  isPodFinished,
  isPodPhaseTerminal,
  isRestartableInitContainer,
  kDefaultRestartPolicy,
  kDefaultTerminationGracePeriodSeconds,
  kGracePeriodFromLabels,
  podCanFinish,
  podRestartPolicy,
  podTerminationGracePeriodSeconds,
  restartsAfterKill,
  shouldRestartExitedContainer,
} from '../../src/shared/pod-policy.js';

const pod = (spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): Pod =>
  ({
    metadata: { name: 'p', namespace: 'default', uid: 'u', ...metadata },
    spec: { containers: [{ name: 'a', image: 'i' }], ...spec },
  }) as Pod;

describe('grace period (pod_workers.go calculateEffectiveGracePeriod)', () => {
  it('defaults to the apiserver default of 30 s', () => {
    expect(kDefaultTerminationGracePeriodSeconds).toBe(30);
  });

  it.each([
    ['unset', pod(), 30],
    ['no spec', undefined, 30],
    ['null', pod({ terminationGracePeriodSeconds: null }), 30],
    ['0 (kill at once)', pod({ terminationGracePeriodSeconds: 0 }), 0],
    ['set', pod({ terminationGracePeriodSeconds: 7 }), 7],
    ['negative (never admitted) counts as unset', pod({ terminationGracePeriodSeconds: -3 }), 30],
  ])('podTerminationGracePeriodSeconds: %s → %s', (_what, p, want) => {
    expect(podTerminationGracePeriodSeconds(p)).toBe(want);
  });

  it.each([
    ["no override: the pod's", pod({ terminationGracePeriodSeconds: 7 }), undefined, 7],
    ["null override: the pod's", pod({ terminationGracePeriodSeconds: 7 }), null, 7],
    ['override wins', pod({ terminationGracePeriodSeconds: 7 }), 2, 2],
    ['override 0 wins (force delete)', pod({ terminationGracePeriodSeconds: 7 }), 0, 0],
    ['no override, unset spec: the default', pod(), undefined, 30],
  ])('effectiveGracePeriodSeconds: %s', (_what, p, override, want) => {
    expect(effectiveGracePeriodSeconds(p, override)).toBe(want);
  });

  it('the "use the labels\' grace period" sentinel is any negative number', () => {
    expect(kGracePeriodFromLabels).toBe(-1);
    expect(isGracePeriodFromLabels(kGracePeriodFromLabels)).toBe(true);
    expect(isGracePeriodFromLabels(-5)).toBe(true);
    expect(isGracePeriodFromLabels(0)).toBe(false);
    expect(isGracePeriodFromLabels(30)).toBe(false);
  });
});

type Policy = 'Always' | 'OnFailure' | 'Never';
const withPolicy = (restartPolicy?: Policy, containers = ['a'], initContainers: { name: string; restartPolicy?: string }[] = []): Pod =>
  pod({
    ...(restartPolicy ? { restartPolicy } : {}),
    containers: containers.map((name) => ({ name, image: 'i' })),
    initContainers: initContainers.map((c) => ({ image: 'i', ...c })),
  });

describe('restart policy (kubecontainer.ShouldContainerBeRestarted)', () => {
  it('defaults to Always', () => {
    expect(podRestartPolicy(withPolicy())).toBe('Always');
    expect(podRestartPolicy(withPolicy('Never'))).toBe('Never');
  });

  it('the apiserver defaults (shared/defaults.ts) and the rules read one default (kDefaultRestartPolicy)', () => {
    expect(kDefaultRestartPolicy).toBe('Always');
    expect(applyPodDefaults(withPolicy()).spec?.restartPolicy).toBe(kDefaultRestartPolicy);
    expect(applyPodDefaults(withPolicy()).spec?.terminationGracePeriodSeconds).toBe(kDefaultTerminationGracePeriodSeconds);
  });

  // helpers_test.go TestShouldContainerBeRestarted: an exited container, by policy and exit code.
  it.each([
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 1, true],
    ['OnFailure', 137, true],
    ['Never', 0, false],
    ['Never', 1, false],
    [undefined, 0, true],
  ] as const)('%s, exit code %s → restart %s', (policy, exitCode, want) => {
    expect(shouldRestartExitedContainer(withPolicy(policy), exitCode)).toBe(want);
  });

  it.each([
    ['Always', true],
    ['OnFailure', true],
    ['Never', false],
  ] as const)('a container killed while running (probe, postStart) under %s → restart %s', (policy, want) => {
    expect(restartsAfterKill(withPolicy(policy))).toBe(want);
  });

  it('a sidecar is an init container with restartPolicy Always', () => {
    expect(isRestartableInitContainer({ restartPolicy: 'Always' })).toBe(true);
    expect(isRestartableInitContainer({})).toBe(false);
  });
});

describe('pod finished (podutil.IsPodPhaseTerminal, getPhase)', () => {
  it.each([
    ['Pending', false],
    ['Running', false],
    ['Succeeded', true],
    ['Failed', true],
    ['Unknown', false],
    [undefined, false],
  ] as const)('phase %s terminal → %s', (phase, want) => expect(isPodPhaseTerminal(phase)).toBe(want));

  it.each([
    ['Never', 'Succeeded', true],
    ['OnFailure', 'Failed', true],
    ['Never', 'Running', false],
    ['Always', 'Failed', false],
    ['Always', 'Succeeded', false],
    [undefined, 'Succeeded', false],
  ] as const)('%s pod in phase %s is finished by itself → %s', (policy, phase, want) => {
    expect(podCanFinish(withPolicy(policy))).toBe(policy !== undefined && policy !== 'Always');
    expect(isPodFinished(withPolicy(policy), phase)).toBe(want);
  });
});

const running = (name: string): ContainerStatus => ({
  name,
  image: 'i',
  imageID: '',
  ready: true,
  restartCount: 0,
  state: { running: { startedAt: 'x' } },
});
const exited = (name: string, exitCode: number): ContainerStatus => ({
  name,
  image: 'i',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode } },
});
const waiting = (name: string, lastExit?: number): ContainerStatus => ({
  name,
  image: 'i',
  imageID: '',
  ready: false,
  restartCount: 1,
  state: { waiting: { reason: 'CrashLoopBackOff' } },
  ...(lastExit !== undefined ? { lastState: { terminated: { exitCode: lastExit } } } : {}),
});

// kubelet_pods_test.go: TestPodPhaseWithRestartAlways / Never / OnFailure and the init-container tables, as far as they apply.
describe('getPhase (kubelet_pods.go getPhase)', () => {
  it.each([
    ['Always: all running', 'Always', [running('a'), running('b')], false, 'Running'],
    ['Always: all stopped (will restart)', 'Always', [exited('a', 0), exited('b', 1)], false, 'Running'],
    ['Always: all stopped, pod terminal, one failed', 'Always', [exited('a', 0), exited('b', 1)], true, 'Failed'],
    ['Always: all stopped, pod terminal, all succeeded', 'Always', [exited('a', 0), exited('b', 0)], true, 'Succeeded'],
    ['Always: one running, one status missing', 'Always', [running('a')], false, 'Pending'],
    ['Always: one running, one in backoff', 'Always', [running('a'), waiting('b', 1)], false, 'Running'],
    ['Always: one waiting for a first start', 'Always', [running('a'), waiting('b')], false, 'Pending'],
    ['Never: all succeeded', 'Never', [exited('a', 0), exited('b', 0)], false, 'Succeeded'],
    ['Never: one failed', 'Never', [exited('a', 0), exited('b', 1)], false, 'Failed'],
    ['Never: one still running', 'Never', [running('a'), exited('b', 1)], false, 'Running'],
    ['OnFailure: all succeeded', 'OnFailure', [exited('a', 0), exited('b', 0)], false, 'Succeeded'],
    ['OnFailure: one failed (will restart)', 'OnFailure', [exited('a', 0), exited('b', 1)], false, 'Running'],
    ['OnFailure: one in backoff after a failure', 'OnFailure', [exited('a', 0), waiting('b', 1)], false, 'Running'],
  ] as const)('%s → %s', (_what, policy, statuses, terminal, want) => {
    expect(getPhase(withPolicy(policy, ['a', 'b']), [...statuses], terminal)).toBe(want);
  });

  it.each([
    ['init running', 'Always', [running('i')], 'Pending'],
    ['init failed, Always (retried)', 'Always', [exited('i', 1)], 'Pending'],
    ['init failed, in backoff, OnFailure', 'OnFailure', [waiting('i', 1)], 'Pending'],
    ['init failed, Never', 'Never', [exited('i', 1)], 'Failed'],
    ['init succeeded, app not started yet', 'Always', [exited('i', 0)], 'Pending'],
  ] as const)('init containers: %s → %s', (_what, policy, initStatuses, want) => {
    expect(getPhase(withPolicy(policy, ['a'], [{ name: 'i' }]), [], false, [...initStatuses])).toBe(want);
  });

  it('a sidecar that runs but is not started keeps the pod Pending; once started, it is initialized', () => {
    const p = withPolicy('Always', ['a'], [{ name: 's', restartPolicy: 'Always' }]);
    expect(getPhase(p, [], false, [{ ...running('s'), started: false }])).toBe('Pending');
    expect(getPhase(p, [running('a')], false, [{ ...running('s'), started: true }])).toBe('Running');
  });

  it('app containers that started before: a failing init container does not make the pod Pending again', () => {
    expect(getPhase(withPolicy('Always', ['a'], [{ name: 'i' }]), [running('a')], false, [exited('i', 1)])).toBe('Running');
  });
});

// eviction_manager.go emptyDirLimitEviction: the verdict the worker's volume check and the eviction manager share.
describe('emptyDir sizeLimit verdict (emptyDirLimitEviction)', () => {
  const vol = (sizeLimit?: unknown, name = 'scratch') => ({ name, emptyDir: sizeLimit === undefined ? {} : { sizeLimit } }) as Volume;
  it.each([
    ['no limit', vol(), undefined],
    ['0', vol('0'), undefined],
    ['1Mi', vol('1Mi'), 1024 * 1024],
    ['a number', vol(5000), 5000],
    ['does not parse', vol('lots'), undefined],
    ['not an emptyDir', { name: 'c', configMap: { name: 'x' } } as Volume, undefined],
  ] as const)('limit of %s → %s', (_what, v, want) => {
    expect(emptyDirSizeLimitBytes(v)).toBe(want);
  });
});

// Pod Security Admission's decisions (namespace labels, modes, exemptions, updates) and the node's
// refusal of a hostPort on the agent's own port — issue #38 findings 2 and 8.
import { describe, expect, it } from 'vitest';
import { admitPod } from '../../../src/shared/pod-security/admission.js';
import { agentPortConflicts } from '../../../src/shared/pod-security/agent-ports.js';
import { policyToEvaluate, type NamespacePolicy } from '../../../src/shared/pod-security/policy.js';
import { kDefaultPolicy } from '../../../src/shared/pod-security/admission.js';

const hostPortPod = {
  metadata: { name: 'p', namespace: 'team-a' },
  spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 12080 }] }] },
};
const rootPod = {
  metadata: { name: 'p', namespace: 'team-a' },
  spec: { containers: [{ name: 'c', image: 'i', securityContext: { runAsUser: 0 } }] },
};
const lv = (p: NamespacePolicy) => ({
  enforce: `${p.enforce.level}:${p.enforce.version}`,
  warn: `${p.warn.level}:${p.warn.version}`,
  audit: `${p.audit.level}:${p.audit.version}`,
});

describe('policyToEvaluate', () => {
  it('reads the three modes and their versions, the default filling what is absent', () => {
    const { policy, errors } = policyToEvaluate(
      {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/enforce-version': 'v1.24',
        'pod-security.kubernetes.io/warn': 'privileged',
      },
      kDefaultPolicy,
    );
    expect(errors).toEqual([]);
    expect(lv(policy)).toEqual({ enforce: 'restricted:v1.24', warn: 'privileged:latest', audit: 'baseline:latest' });
    expect(policy.enforce.minor).toBe(24);
  });
  it('an invalid enforce level reads restricted, an invalid warn or audit level privileged, an invalid version latest; each reported', () => {
    const { policy, errors } = policyToEvaluate(
      {
        'pod-security.kubernetes.io/enforce': 'strict',
        'pod-security.kubernetes.io/warn': 'loud',
        'pod-security.kubernetes.io/audit': '',
        'pod-security.kubernetes.io/audit-version': '1.25',
        'pod-security.kubernetes.io/warn-version': 'v1.025',
      },
      kDefaultPolicy,
    );
    expect(lv(policy)).toEqual({ enforce: 'restricted:latest', warn: 'privileged:latest', audit: 'privileged:latest' });
    expect(errors.map((e) => e.field)).toEqual([
      'metadata.labels[pod-security.kubernetes.io/enforce]',
      'metadata.labels[pod-security.kubernetes.io/audit]',
      'metadata.labels[pod-security.kubernetes.io/audit-version]',
      'metadata.labels[pod-security.kubernetes.io/warn]',
      'metadata.labels[pod-security.kubernetes.io/warn-version]',
    ]);
    expect(errors[0].message).toBe('must be one of privileged, baseline, restricted');
    expect(errors[2].message).toBe('must be "latest" or "v1.x"');
  });
});

describe('admitPod', () => {
  it("a namespace without labels enforces baseline: a hostPort is refused with the apiserver's message", () => {
    expect(admitPod({ pod: hostPortPod, namespace: 'team-a', exempt: false })).toEqual({
      denied: 'violates PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 12080)',
      warnings: [],
      audit: 'would violate PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 12080)',
    });
  });
  it('exempt requesters (system:masters) are not evaluated', () => {
    expect(admitPod({ pod: hostPortPod, namespace: 'team-a', exempt: true })).toEqual({ warnings: [] });
  });
  it('enforce restricted refuses a root pod; baseline allows it', () => {
    const labels = { 'pod-security.kubernetes.io/enforce': 'restricted' };
    expect(admitPod({ pod: rootPod, namespace: 'team-a', namespaceLabels: labels, exempt: false }).denied).toMatch(
      /^violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false .*runAsUser=0 \(container "c" must not set runAsUser=0\)/,
    );
    expect(admitPod({ pod: rootPod, namespace: 'team-a', exempt: false }).denied).toBeUndefined();
  });
  it('warn adds a warning and lets the pod in', () => {
    const labels = {
      'pod-security.kubernetes.io/enforce': 'privileged',
      'pod-security.kubernetes.io/warn': 'baseline',
      'pod-security.kubernetes.io/audit': 'privileged',
    };
    expect(admitPod({ pod: hostPortPod, namespace: 'team-a', namespaceLabels: labels, exempt: false })).toEqual({
      warnings: ['would violate PodSecurity "baseline:latest": hostPort (container "c" uses hostPort 12080)'],
    });
  });
  it('no warning repeats the enforce refusal; a different warn level still warns', () => {
    expect(admitPod({ pod: hostPortPod, namespace: 'team-a', exempt: false }).warnings).toEqual([]);
    const r = admitPod({
      pod: hostPortPod,
      namespace: 'team-a',
      namespaceLabels: { 'pod-security.kubernetes.io/warn': 'restricted' },
      exempt: false,
    });
    expect(r.denied).toBeDefined();
    expect(r.warnings[0]).toMatch(
      /^would violate PodSecurity "restricted:latest": hostPort \(container "c" uses hostPort 12080\), allowPrivilegeEscalation != false/,
    );
  });
  it('invalid labels: enforce fails closed (restricted) and a warning says so', () => {
    const r = admitPod({
      pod: rootPod,
      namespace: 'team-a',
      namespaceLabels: { 'pod-security.kubernetes.io/enforce': 'bogus' },
      exempt: false,
    });
    expect(r.denied).toMatch(/^violates PodSecurity "restricted:latest"/);
    expect(r.warnings[0]).toBe(
      'namespace "team-a" has invalid PodSecurity labels (metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted); evaluating enforce=restricted:latest',
    );
  });
  it('an update that changes neither the spec nor a security annotation is not evaluated again; one that does is', () => {
    const relabelled = { ...hostPortPod, metadata: { ...hostPortPod.metadata, labels: { a: 'b' } } };
    expect(admitPod({ pod: relabelled, oldPod: hostPortPod, namespace: 'team-a', exempt: false }).denied).toBeUndefined();
    const plain = { ...hostPortPod, spec: { containers: [{ name: 'c', image: 'i' }] } };
    expect(admitPod({ pod: hostPortPod, oldPod: plain, namespace: 'team-a', exempt: false }).denied).toBeDefined();
    const annotated = {
      ...plain,
      metadata: { ...plain.metadata, annotations: { 'container.apparmor.security.beta.kubernetes.io/c': 'unconfined' } },
    };
    expect(admitPod({ pod: annotated, oldPod: plain, namespace: 'team-a', exempt: false }).denied).toMatch(/forbidden AppArmor profile/);
  });
});

describe('agentPortConflicts', () => {
  const withPort = (port: Record<string, unknown>) => ({
    spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }, { containerPort: 81, ...port }] }] },
  });
  const listen = { address: '127.0.0.1', ports: [12080, 12443] };
  it('names the field of a TCP hostPort that is an agent port on an empty, wildcard or loopback hostIP', () => {
    for (const hostIP of [undefined, '', '0.0.0.0', '::', '127.0.0.1', '127.0.0.2', '::1']) {
      const errors = agentPortConflicts(withPort({ hostPort: 12443, ...(hostIP === undefined ? {} : { hostIP }) }), listen);
      expect(errors.map((e) => [e.field, e.type, e.value])).toEqual([['spec.containers[0].ports[1].hostPort', 'Invalid value', 12443]]);
    }
  });
  it('allows other ports, UDP, and a hostIP that does not reach the agent', () => {
    expect(agentPortConflicts(withPort({ hostPort: 12081 }), listen)).toEqual([]);
    expect(agentPortConflicts(withPort({ hostPort: 12080, protocol: 'UDP' }), listen)).toEqual([]);
    expect(agentPortConflicts(withPort({ hostPort: 12080, hostIP: '10.0.0.5' }), listen)).toEqual([]);
  });
  it('any hostIP conflicts when the agent binds a wildcard; its own address does too', () => {
    expect(agentPortConflicts(withPort({ hostPort: 12080, hostIP: '10.0.0.5' }), { address: '0.0.0.0', ports: [12080] })).toHaveLength(1);
    expect(agentPortConflicts(withPort({ hostPort: 12080, hostIP: '10.0.0.5' }), { address: '10.0.0.5', ports: [12080] })).toHaveLength(1);
  });
});

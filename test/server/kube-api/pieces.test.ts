// Unit tests of the kube-API's pure pieces: field selectors, Tables, Accept negotiation, DeleteOptions
// and preconditions, the access decisions of `kubectl auth can-i`, and the protobuf review bodies.
import protobuf from 'protobufjs/minimal.js';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../../src/shared/api.js';
import { kAdminUser, kAnonymousUser, kReadOnlyGroup } from '../../../src/server/auth/auth.js';
import { checkPreconditions, parseDeleteOptions } from '../../../src/server/kube-api/delete-options.js';
import {
  checkFieldLabels,
  eventFields,
  matchesFieldSelector,
  parseFieldSelector,
  podFields,
} from '../../../src/server/kube-api/field-selector.js';
import { humanDuration, since } from '../../../src/shared/human-duration.js';
import { mirrorPodWriteRefused, presentPod } from '../../../src/server/kube-api/present.js';
import { decodeReviewBody } from '../../../src/shared/kube-protobuf.js';
import { kubeErrorStatus, parseIncludeObject, parseListFilter, wantsTable } from '../../../src/server/kube-api/request.js';
import { accessDecision, userInfo } from '../../../src/server/kube-api/reviews.js';
import { kEventPrinter, kNodePrinter, kPodPrinter, toTable } from '../../../src/server/kube-api/table.js';
import { AgentError } from '../../../src/shared/errors.js';

const now = Date.parse('2026-12-02T12:00:00Z');
const pod: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: 'u1', labels: { app: 'web' }, creationTimestamp: '2026-12-02T11:55:00Z' },
  spec: { nodeName: 'n1', containers: [{ name: 'a' }, { name: 'b' }], restartPolicy: 'Always' },
  status: {
    phase: 'Running',
    podIP: '10.0.0.5',
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [
      {
        name: 'a',
        ready: true,
        restartCount: 2,
        image: 'x',
        imageID: '',
        state: { running: {} },
        lastState: { terminated: { exitCode: 1, finishedAt: '2026-12-02T11:58:00Z' } },
      },
      { name: 'b', ready: false, restartCount: 0, image: 'x', imageID: '', state: { waiting: { reason: 'CrashLoopBackOff' } } },
    ],
  },
};

describe('field selectors (fields.ParseSelector and the pod field labels)', () => {
  it('parses =, == and != terms with escapes', () => {
    expect(parseFieldSelector('')).toEqual([]);
    expect(parseFieldSelector('metadata.name=web,status.phase!=Failed')).toEqual([
      { field: 'metadata.name', op: '=', value: 'web' },
      { field: 'status.phase', op: '!=', value: 'Failed' },
    ]);
    expect(parseFieldSelector('metadata.name==a\\,b')).toEqual([{ field: 'metadata.name', op: '=', value: 'a,b' }]);
  });
  it('refuses what it cannot understand, naming the term', () => {
    expect(() => parseFieldSelector('metadata.name')).toThrow(
      "fieldSelector: invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    );
    expect(() => parseFieldSelector('a=b=c')).toThrow(/unescaped '='/);
    expect(() => parseFieldSelector('a=\\x')).toThrow(/invalid escape sequence/);
  });
  it('matches pods by name, namespace, node and phase, and refuses unknown labels as the apiserver', () => {
    const f = podFields(pod);
    expect(matchesFieldSelector(parseFieldSelector('metadata.name=web,spec.nodeName=n1,status.phase=Running'), f)).toBe(true);
    expect(matchesFieldSelector(parseFieldSelector('status.phase!=Running'), f)).toBe(false);
    expect(matchesFieldSelector(parseFieldSelector('metadata.namespace=other'), f)).toBe(false);
    expect(() => checkFieldLabels(parseFieldSelector('spec.image=x'), Object.keys(f))).toThrow('field label not supported: spec.image');
    const filter = parseListFilter(new URLSearchParams('fieldSelector=spec.foo%3Dbar'), Object.keys(f));
    expect(filter).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest', message: 'field label not supported: spec.foo' });
    expect(parseListFilter(new URLSearchParams('labelSelector=a%20in'), Object.keys(f))).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
  it('offers the involvedObject labels of events that kubectl describe uses', () => {
    const f = eventFields({
      metadata: {},
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default', uid: 'u1' },
      reason: 'Started',
      type: 'Normal',
    });
    expect(
      matchesFieldSelector(
        parseFieldSelector('involvedObject.name=web,involvedObject.namespace=default,involvedObject.uid=u1,involvedObject.kind=Pod'),
        f,
      ),
    ).toBe(true);
    expect(matchesFieldSelector(parseFieldSelector('involvedObject.uid=u2'), f)).toBe(false);
  });
});

describe('Tables (the apiserver printers)', () => {
  it('prints a pod row as printPod: READY, STATUS, RESTARTS with the last restart, AGE and the wide columns', () => {
    const t = toTable(kPodPrinter, [presentPod(pod)], { include: 'Metadata', nowMs: now, resourceVersion: '7' });
    expect(t).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: '7' } });
    expect(t.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Name', 0],
      ['Ready', 0],
      ['Status', 0],
      ['Restarts', 0],
      ['Age', 0],
      ['IP', 1],
      ['Node', 1],
      ['Nominated Node', 1],
      ['Readiness Gates', 1],
    ]);
    expect(t.rows[0].cells).toEqual(['web', '1/2', 'CrashLoopBackOff', '2 (2m ago)', '5m', '10.0.0.5', 'n1', '<none>', '<none>']);
    expect(t.rows[0].object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: presentPod(pod).metadata });
  });
  it('includeObject=Object carries the pod, None nothing; a bad value is a 400 naming the parameter', () => {
    expect(toTable(kPodPrinter, [presentPod(pod)], { include: 'Object', nowMs: now }).rows[0].object).toMatchObject({
      kind: 'Pod',
      apiVersion: 'v1',
    });
    expect(toTable(kPodPrinter, [pod], { include: 'None', nowMs: now }).rows[0]).not.toHaveProperty('object');
    expect(parseIncludeObject(new URLSearchParams('includeObject=All'))).toMatchObject({
      code: 400,
      message: expect.stringContaining('includeObject'),
    });
    expect(parseIncludeObject(new URLSearchParams(''))).toBe('Metadata');
  });
  it('shows Terminating once the pod has a deletionTimestamp, and readiness gates as met/all', () => {
    const p = {
      ...pod,
      metadata: { ...pod.metadata, deletionTimestamp: '2026-12-02T11:59:00Z' },
      spec: { ...pod.spec!, readinessGates: [{ conditionType: 'Ready' }, { conditionType: 'x/y' }] },
    };
    const cells = toTable(kPodPrinter, [p], { include: 'None', nowMs: now }).rows[0].cells;
    expect(cells[2]).toBe('Terminating');
    expect(cells[8]).toBe('1/2');
  });
  it('prints nodes and events', () => {
    const n = toTable(
      kNodePrinter,
      [
        {
          metadata: { name: 'n1', creationTimestamp: '2026-12-01T12:00:00Z' },
          status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v0.1.0' } as never },
        },
      ],
      { include: 'None', nowMs: now },
    );
    expect(n.rows[0].cells.slice(0, 5)).toEqual(['n1', 'Ready', '<none>', '24h', 'v0.1.0']);
    const e = toTable(
      kEventPrinter,
      [
        {
          metadata: { name: 'web.1' },
          involvedObject: { kind: 'Pod', name: 'web' },
          type: 'Warning',
          reason: 'BackOff',
          message: 'Back-off ',
          count: 3,
          firstTimestamp: '2026-12-02T11:50:00Z',
          lastTimestamp: '2026-12-02T11:59:30Z',
        },
      ],
      { include: 'None', nowMs: now },
    );
    expect(e.rows[0].cells.slice(0, 7)).toEqual(['30s (x3 over 10m)', 'Warning', 'BackOff', 'pod/web', '', '', 'Back-off']);
  });
  it('renders ages as HumanDuration', () => {
    expect([
      humanDuration(45_000),
      humanDuration(312_000),
      humanDuration(3 * 3_600_000),
      humanDuration(53 * 3_600_000),
      humanDuration(-5),
    ]).toEqual(['45s', '5m12s', '3h', '2d5h', '0s']);
    expect(since(undefined, now)).toBe('<unknown>');
  });
});

describe('Accept negotiation, mirror pods and error Statuses', () => {
  it('answers a Table only when the first servable JSON range asks for one', () => {
    expect(
      wantsTable('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'),
    ).toBe(true);
    expect(wantsTable('application/json')).toBe(false);
    expect(wantsTable(undefined)).toBe(false);
    expect(wantsTable('application/vnd.kubernetes.protobuf,application/json')).toBe(false);
    expect(wantsTable('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json')).toBe(false);
  });
  it('shows a static pod with the mirror annotation, and refuses writes with a Forbidden Status', () => {
    const st = presentPod(
      {
        metadata: {
          name: 's-n1',
          annotations: {
            'kubernetes.io/config.source': 'file',
            'kubernetes.io/config.hash': 'abc',
            'kubernetes.io/config.seen': '2026-12-02T11:00:00Z',
          },
        },
      },
      12,
    );
    expect(st.metadata).toMatchObject({
      resourceVersion: '12',
      creationTimestamp: '2026-12-02T11:00:00Z',
      annotations: { 'kubernetes.io/config.mirror': 'abc' },
    });
    expect(presentPod(pod).metadata?.annotations).toBeUndefined();
    // AGE of a static pod adopted by a restarted agent: its kept status.startTime, not the new agent's config.seen.
    const adopted = presentPod({
      metadata: {
        name: 's-n1',
        annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.seen': '2026-12-02T11:00:00Z' },
      },
      status: { startTime: '2026-12-01T08:00:00Z' },
    });
    expect(adopted.metadata?.creationTimestamp).toBe('2026-12-01T08:00:00Z');
    expect(mirrorPodWriteRefused('s-n1', 'delete')).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      details: { name: 's-n1', kind: 'pods' },
    });
  });
  it('maps seam and host errors to the apiserver Statuses', () => {
    expect(
      kubeErrorStatus(
        new AgentError('ERR_INVALID_ARGUMENT', 'patch type "x" is not supported yet', { statusReason: 'UnsupportedMediaType' }),
        'pods',
        'web',
      ),
    ).toMatchObject({ code: 415, reason: 'UnsupportedMediaType' });
    expect(kubeErrorStatus(new AgentError('ERR_ALREADY_EXISTS', 'pods "web" already exists'), 'pods', 'web')).toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
      details: { name: 'web', kind: 'pods' },
    });
    expect(kubeErrorStatus(new AgentError('ERR_CONFLICT', 'x'), 'pods', 'web')).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(kubeErrorStatus(new Error('boom'), 'pods', 'web')).toMatchObject({
      code: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: boom',
    });
  });
});

describe('DeleteOptions and preconditions', () => {
  it('reads the query or the JSON body, and refuses bad values naming the field', () => {
    expect(parseDeleteOptions(new URLSearchParams('gracePeriodSeconds=3&propagationPolicy=Background'), undefined)).toEqual({
      gracePeriodSeconds: 3,
      propagationPolicy: 'Background',
    });
    expect(
      parseDeleteOptions(
        new URLSearchParams(),
        Buffer.from('{"kind":"DeleteOptions","gracePeriodSeconds":0,"preconditions":{"uid":"u1"}}'),
      ),
    ).toEqual({ gracePeriodSeconds: 0, preconditions: { uid: 'u1' } });
    expect(parseDeleteOptions(new URLSearchParams('gracePeriodSeconds=-1'), undefined)).toEqual({});
    expect(parseDeleteOptions(new URLSearchParams('propagationPolicy=Sometimes'), undefined)).toMatchObject({
      code: 400,
      message: expect.stringMatching(/^propagationPolicy: Invalid value: "Sometimes"/),
    });
    expect(parseDeleteOptions(new URLSearchParams('gracePeriodSeconds=soon'), undefined)).toMatchObject({
      code: 400,
      message: expect.stringMatching(/^gracePeriodSeconds/),
    });
    expect(parseDeleteOptions(new URLSearchParams(), Buffer.from('{'))).toMatchObject({ code: 400 });
  });
  it('answers 409 Conflict when the uid or resourceVersion precondition fails', () => {
    expect(checkPreconditions({ preconditions: { uid: 'u1' } }, 'pods', 'web', 'u1', 5)).toBeUndefined();
    expect(checkPreconditions({ preconditions: { uid: 'u2' } }, 'pods', 'web', 'u1', 5)).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: u2, UID in object meta: u1',
    });
    expect(checkPreconditions({ preconditions: { resourceVersion: '4' } }, 'pods', 'web', 'u1', 5)).toMatchObject({
      code: 409,
      message: expect.stringContaining('ResourceVersion in precondition: 4, ResourceVersion in object meta: 5'),
    });
  });
});

describe('self reviews (kubectl auth whoami / can-i)', () => {
  const viewer = { name: 'viewer', uid: '2', groups: [kReadOnlyGroup] };
  it('reports the user with system:authenticated, anonymous without', () => {
    expect(userInfo(kAdminUser)).toEqual({
      username: 'kubelet-ts:admin',
      uid: 'kubelet-ts:admin',
      groups: ['system:masters', 'system:authenticated'],
    });
    expect(userInfo(kAnonymousUser)).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });
  it('allows what the node allows: the admin everything served, the read-only group reads without streams', () => {
    const ra = (verb: string, resource: string, subresource = '', group = '') => ({
      resourceAttributes: { verb, resource, subresource, group },
    });
    expect(accessDecision(kAdminUser, ra('create', 'pods')).allowed).toBe(true);
    expect(accessDecision(viewer, ra('list', 'pods')).allowed).toBe(true);
    expect(accessDecision(viewer, ra('create', 'pods'))).toMatchObject({ allowed: false, denied: true });
    expect(accessDecision(viewer, ra('get', 'pods', 'exec')).allowed).toBe(false);
    expect(accessDecision(kAnonymousUser, ra('delete', 'pods')).allowed).toBe(false);
    expect(accessDecision(kAdminUser, ra('list', 'deployments', '', 'apps'))).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('deployments.apps is not served by this node'),
    });
  });
  it('decodes the protobuf SelfSubjectAccessReview kubectl sends', () => {
    const W = protobuf.Writer;
    const ra = W.create()
      .uint32(0x0a)
      .string('default')
      .uint32(0x12)
      .string('create')
      .uint32(0x2a)
      .string('pods')
      .uint32(0x32)
      .string('exec')
      .finish();
    const spec = W.create().uint32(0x0a).bytes(ra).finish();
    const obj = W.create().uint32(0x12).bytes(spec).finish();
    const typeMeta = W.create().uint32(0x0a).string('authorization.k8s.io/v1').uint32(0x12).string('SelfSubjectAccessReview').finish();
    const unknown = W.create().uint32(0x0a).bytes(typeMeta).uint32(0x12).bytes(obj).finish();
    const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(unknown)]);
    expect(decodeReviewBody(body)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods', subresource: 'exec' } },
    });
    expect(() => decodeReviewBody(Buffer.from('{}'))).toThrow(/magic prefix/);
  });
});

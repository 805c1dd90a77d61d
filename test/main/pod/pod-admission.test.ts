// Admission (src/main/pod/pod-admission.ts): the chain of admit handlers stops at the first refusal,
// an added handler (the eviction manager's) is asked only after the built-in ones admit, and the
// ledger of admitted pods gives a slot back once, on release.
import { describe, expect, it } from 'vitest';
import { newPodAdmission } from '../../../src/main/pod/pod-admission.js';
import type { PodRecord } from '../../../src/main/pod/pod-manager.js';
import type { Pod } from '../../../src/shared/api.js';
import { podRequests } from '../../../src/main/pod/admission.js';
import { countingContainers } from '../../support/read-counter.js';

function record(name: string, cpu?: string, hostPort?: number): PodRecord {
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'img:1',
          ...(cpu ? { resources: { requests: { cpu } } } : {}),
          ...(hostPort ? { ports: [{ containerPort: 80, hostPort }] } : {}),
        },
      ],
    },
  };
  return { uid: `uid-${name}`, pod, waiting: {}, backoff: {}, startTimeMs: 0 };
}
const capacity = { pods: 2, cpuMilli: 1000, memoryBytes: 2 ** 30 };

describe('pod admission: the chain and the ledger', () => {
  it('refuses at the first failing handler, in the kubelet order, and asks an added handler only after the built-in ones admit', () => {
    const asked: string[] = [];
    const admission = newPodAdmission({ capacity, podNetwork: false });
    admission.addAdmitHandler({
      admit: (pod) => {
        asked.push(pod.metadata!.name!);
        return pod.metadata!.name === 'pressured' ? { admit: false, reason: 'Evicted', message: 'under pressure' } : { admit: true };
      },
    });
    const cases: [PodRecord, string | undefined][] = [
      [record('port', '2', 8080), 'HostPortNotSupported'],
      [record('big', '2'), 'OutOfcpu'],
      [record('pressured'), 'Evicted'],
      [record('ok'), undefined],
    ];
    for (const [r, reason] of cases) {
      const result = admission.admit(r);
      expect(result.admit ? undefined : result.reason, r.pod.metadata!.name).toBe(reason);
    }
    expect(asked).toEqual(['pressured', 'ok']);
    expect(admission.freeSlots()).toBe(1);
  });

  it('counts what admitted pods request, and gives a share back once on release', () => {
    const admission = newPodAdmission({ capacity });
    const a = record('a', '600m');
    expect(admission.admit(a)).toEqual({ admit: true });
    expect(admission.admit(record('b', '600m'))).toMatchObject({ admit: false, reason: 'OutOfcpu' });
    admission.release(a);
    admission.release(a);
    expect(admission.freeSlots()).toBe(2);
    expect(admission.admit(record('c', '600m'))).toEqual({ admit: true });
    expect(admission.admit(record('d'))).toEqual({ admit: true });
    expect(admission.admit(record('e'))).toMatchObject({ admit: false, reason: 'OutOfpods' });
  });

  it("reads an admitted pod's resources once for cpu and memory and once for extended resources; its requests are then known (issue #42)", () => {
    const admission = newPodAdmission({ capacity });
    const r = record('a', '200m');
    const counted = countingContainers(r.pod.spec!.containers);
    r.pod = { ...r.pod, spec: { ...r.pod.spec!, containers: counted.containers } };
    expect(admission.admit(r)).toEqual({ admit: true });
    // podRequests (cpu and memory) once, podScalarRequests (extended, hugepages) once: not podRequests again for the ledger.
    expect(counted.reads()).toBe(2);
    expect(podRequests(r.pod)).toEqual({ cpuMilli: 200, memoryBytes: 0 });
    expect(counted.reads()).toBe(2);
    admission.release(r);
    expect(admission.admit(record('b', '900m'))).toEqual({ admit: true }); // a's 200m was given back
  });
});

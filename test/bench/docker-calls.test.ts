// The pure parts of the bench's Docker call proxy (bench/docker-calls.ts): naming a pod's container
// calls and subtracting them from a pod's startup.
import { describe, expect, it } from 'vitest';
import { dockerRoute, outsideSpansMs, podUidOfName } from '../../bench/docker-calls.js';

describe('bench docker-calls', () => {
  it('names a route without the version, the query or the reference', () => {
    expect(dockerRoute('POST', '/v1.43/containers/abc/start?x=1')).toBe('POST /containers/{id}/start');
    expect(dockerRoute('POST', '/v1.43/containers/create?name=k8s_POD_a_b_c_0')).toBe('POST /containers/create');
    expect(dockerRoute('GET', '/v1.43/images/kubelet-ts/busybox:1.35/json')).toBe('GET /images/{name}/json');
  });

  it('finds the pod UID in a kubelet container name, and none in another name', () => {
    expect(podUidOfName('k8s_POD_web-node1_default_0123abcd_0')).toBe('0123abcd');
    expect(podUidOfName('/k8s_main_web-node1_default_0123abcd_2')).toBe('0123abcd');
    expect(podUidOfName('bench-raw-x-8-1-POD')).toBeUndefined();
    expect(podUidOfName('k8s_main_web')).toBeUndefined();
  });

  it('subtracts the union of the spans clipped to the window', () => {
    expect(outsideSpansMs(0, 100, [])).toBe(100);
    // Overlapping spans count once: 10–50 and 30–70 cover 60 ms.
    expect(
      outsideSpansMs(0, 100, [
        [10, 50],
        [30, 70],
      ]),
    ).toBe(40);
    // A span inside another, out of order, and one partly outside the window.
    expect(
      outsideSpansMs(0, 100, [
        [60, 120],
        [20, 30],
        [10, 40],
      ]),
    ).toBe(30);
    // Spans wholly outside the window take nothing away.
    expect(
      outsideSpansMs(100, 200, [
        [0, 50],
        [250, 300],
      ]),
    ).toBe(100);
    expect(outsideSpansMs(0, 10, [[0, 10]])).toBe(0);
  });
});

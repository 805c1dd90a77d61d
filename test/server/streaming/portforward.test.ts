// The port-forward WebSocket protocol (src/server/streaming/portforward.ts): the port query, negotiation, prefix frames, error text.
import { describe, expect, it } from 'vitest';
import {
  kMaxForwardedPorts,
  negotiatePortForwardProtocol,
  parsePortForwardQuery,
  portForwardError,
  portPrefix,
} from '../../../src/server/streaming/portforward.js';

const q = (s: string) => new URLSearchParams(s);

describe('port-forward protocol', () => {
  it.each([
    [['v4.channel.k8s.io'], 'v4.channel.k8s.io', false],
    [['v4.base64.channel.k8s.io', 'v4.channel.k8s.io'], 'v4.base64.channel.k8s.io', true],
    [['x.k8s.io', 'v4.channel.k8s.io'], 'v4.channel.k8s.io', false],
    [[], '', false],
  ])('negotiates %j as %j', (offered, name, base64) => {
    expect(negotiatePortForwardProtocol(offered)).toMatchObject({ name, base64, closeSignal: false });
  });

  it('refuses the SPDY name portforward.k8s.io and the exec-only v5 protocol, as the kubelet on a WebSocket', () => {
    expect(negotiatePortForwardProtocol(['portforward.k8s.io'])).toBeUndefined();
    expect(negotiatePortForwardProtocol(['v5.channel.k8s.io'])).toBeUndefined();
  });

  it('reads repeated and comma-separated ports in order, repeats kept', () => {
    expect(parsePortForwardQuery(q('port=80&port=8080,9090&port=80'))).toEqual([80, 8080, 9090, 80]);
    expect(parsePortForwardQuery(q('port=65535'))).toEqual([65535]);
  });

  it('reads ?ports= on the Kubernetes API path (PodPortForwardOptions), and names that parameter in its 400', () => {
    expect(parsePortForwardQuery(q('ports=8080,9090&ports=80'), 'ports')).toEqual([8080, 9090, 80]);
    const s = parsePortForwardQuery(q('port=8080'), 'ports');
    expect(s).toMatchObject({
      kind: 'Status',
      code: 400,
      message: 'query parameter "ports" is required',
      details: { causes: [{ field: 'ports' }] },
    });
    expect(parsePortForwardQuery(q('ports=0'), 'ports')).toMatchObject({ code: 400, details: { causes: [{ field: 'ports' }] } });
  });

  it.each([
    ['', 'query parameter "port" is required'],
    ['port=', 'query parameter "port" cannot be empty'],
    ['port=0', 'port "0" must be > 0'],
    ['port=80,0', 'port "80,0" must be > 0'],
    ['port=65536', 'unable to parse "65536" as a port'],
    ['port=http', 'unable to parse "http" as a port'],
    ['port=-1', 'unable to parse "-1" as a port'],
    ['port=8080,', 'unable to parse "8080," as a port'],
    [`port=${Array.from({ length: kMaxForwardedPorts + 1 }, () => '1').join(',')}`, `at most ${kMaxForwardedPorts} ports`],
  ])('refuses %j with a 400 naming port', (query, message) => {
    const s = parsePortForwardQuery(q(query));
    expect(s).toMatchObject({ kind: 'Status', code: 400, reason: 'BadRequest', details: { causes: [{ field: 'port' }] } });
    expect((s as { message: string }).message).toContain(message);
  });

  it('the prefix frame is the port as 2 bytes little-endian', () => {
    expect([...portPrefix(8080)]).toEqual([0x90, 0x1f]);
    expect([...portPrefix(1)]).toEqual([1, 0]);
    expect([...portPrefix(65535)]).toEqual([255, 255]);
  });

  it("the error channel text is the kubelet's", () => {
    expect(new TextDecoder().decode(portForwardError(9, 'abc', 'u-1', 'dial tcp 127.0.0.1:9: connect: connection refused'))).toBe(
      'error forwarding port 9 to pod abc, uid u-1: dial tcp 127.0.0.1:9: connect: connection refused',
    );
  });
});

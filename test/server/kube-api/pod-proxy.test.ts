import { describe, expect, it } from 'vitest';
import { isProxyableIP, parseProxyName, proxyTarget, withoutHopByHop } from '../../../src/server/kube-api/pod-proxy.js';
import type { Pod } from '../../../src/shared/api.js';

describe('pods/{name}/proxy: the name and the target (issue 39 item 9)', () => {
  it('splits name, name:port and http:name:port as net.SplitSchemeNamePort', () => {
    expect(parseProxyName('web')).toEqual({ scheme: 'http', name: 'web', port: '' });
    expect(parseProxyName('web:8080')).toEqual({ scheme: 'http', name: 'web', port: '8080' });
    expect(parseProxyName('http:web:8080')).toEqual({ scheme: 'http', name: 'web', port: '8080' });
  });

  it.each([
    ['https:web:8443', 'https scheme is not served'],
    ['ftp:web:21', 'neither http nor https'],
    ['web:http', 'must be a number'],
    ['web:0', 'must be a number'],
    ['web:65536', 'must be a number'],
    ['a:b:c:d', 'expected name'],
    ['Web', 'not a pod name'],
  ])('refuses %j with a 400 (%s)', (id, message) => {
    expect(parseProxyName(id)).toMatchObject({ kind: 'Status', code: 400, message: expect.stringContaining(message) });
  });

  const pod = (spec: Pod['spec'], podIP?: string): Pod => ({ metadata: { name: 'web' }, spec, status: podIP ? { podIP } : {} });
  it("defaults the port to the first declared container port, else 80; a hostNetwork pod goes to its podIP (the node's)", () => {
    const containers = [
      { name: 'a', image: 'x' },
      { name: 'b', image: 'x', ports: [{ containerPort: 9000 }, { containerPort: 9001 }] },
    ];
    expect(proxyTarget(pod({ containers }, '10.0.0.5'), '')).toEqual({ ip: '10.0.0.5', port: 9000 });
    expect(proxyTarget(pod({ containers: [{ name: 'a', image: 'x' }] }, '10.0.0.5'), '')).toEqual({ ip: '10.0.0.5', port: 80 });
    expect(proxyTarget(pod({ containers, hostNetwork: true }, '192.168.1.2'), '8080')).toEqual({ ip: '192.168.1.2', port: 8080 });
  });

  it('refuses a pod IP that is not global unicast with a 400 address not allowed (proxyutil.IsProxyableIP)', () => {
    for (const ip of [
      '127.0.0.1',
      '127.9.9.9',
      '169.254.169.254',
      '224.0.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
    ]) {
      expect(isProxyableIP(ip), ip).toBe(false);
      expect(proxyTarget(pod({ containers: [], hostNetwork: true }, ip), '8080'), ip).toMatchObject({
        kind: 'Status',
        code: 400,
        message: expect.stringContaining('address not allowed'),
      });
    }
    for (const ip of ['10.0.0.5', '172.17.0.2', '192.168.1.2', '8.8.8.8', 'fd00::5', '2001:db8::1'])
      expect(isProxyableIP(ip), ip).toBe(true);
    expect(isProxyableIP('localhost')).toBe(false);
  });

  it('drops the fixed hop-by-hop headers and those Connection names (httputil removeHopByHopHeaders)', () => {
    const dropped = new Set(['connection', 'keep-alive', 'authorization']);
    expect(
      withoutHopByHop(
        {
          connection: 'keep-alive, X-Hop ,x-other',
          'x-hop': '1',
          'x-other': '2',
          'x-end': '3',
          authorization: 'Bearer t',
          'set-cookie': ['a=1', 'b=2'],
          absent: undefined,
        },
        dropped,
      ),
    ).toEqual({ 'x-end': '3', 'set-cookie': 'a=1, b=2' });
    expect(withoutHopByHop({ connection: ['close', 'X-A'], 'x-a': '1', 'x-b': '2' }, dropped)).toEqual({ 'x-b': '2' });
    expect(withoutHopByHop({ 'x-b': '2' }, dropped)).toEqual({ 'x-b': '2' });
  });

  it('refuses a pod without an IP with a 400', () => {
    expect(proxyTarget(pod({ containers: [] }), '80')).toMatchObject({
      kind: 'Status',
      code: 400,
      message: expect.stringContaining('no IP address'),
    });
  });
});

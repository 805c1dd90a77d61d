import { describe, expect, it } from 'vitest';
import { parseProxyName, proxyTarget } from '../../../src/server/kube-api/pod-proxy.js';
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
  it('defaults the port to the first declared container port, else 80; hostNetwork goes to loopback', () => {
    const containers = [{ name: 'a', image: 'x' }, { name: 'b', image: 'x', ports: [{ containerPort: 9000 }, { containerPort: 9001 }] }];
    expect(proxyTarget(pod({ containers }, '10.0.0.5'), '')).toEqual({ ip: '10.0.0.5', port: 9000 });
    expect(proxyTarget(pod({ containers: [{ name: 'a', image: 'x' }] }, '10.0.0.5'), '')).toEqual({ ip: '10.0.0.5', port: 80 });
    expect(proxyTarget(pod({ containers, hostNetwork: true }, '192.168.1.2'), '8080')).toEqual({ ip: '127.0.0.1', port: 8080 });
  });

  it('refuses a pod without an IP with a 400', () => {
    expect(proxyTarget(pod({ containers: [] }), '80')).toMatchObject({ kind: 'Status', code: 400, message: expect.stringContaining('no IP address') });
  });
});

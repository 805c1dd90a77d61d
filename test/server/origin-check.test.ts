import { describe, expect, it } from 'vitest';
import { checkHostAndOrigin, newOriginPolicy } from '../../src/server/origin-check.js';

describe('checkHostAndOrigin (issue #38 finding 5: no cross-site or DNS-rebinding read)', () => {
  const http = newOriginPolicy('http', ['node-a', '10.1.2.3', '0.0.0.0', 'fd00::5']);
  const https = newOriginPolicy('https', ['node-a']);

  it.each([
    ['127.0.0.1:10250', ''],
    ['localhost:10250', ''],
    ['[::1]:10250', ''],
    ['NODE-A:10250', ''],
    ['10.1.2.3:8080', ''],
    ['[fd00::5]:10250', ''],
    ['127.0.0.1:10250', 'http://127.0.0.1:10250'],
    ['node-a', 'http://node-a'],
    ['node-a:80', 'http://node-a'],
  ])('allows Host %s with Origin %j', (host, origin) => {
    expect(checkHostAndOrigin(http, host, origin)).toBeUndefined();
  });

  it.each([
    ['evil.example:10250', '', 'Host header'],
    ['', '', 'Host header'],
    ['0.0.0.0:10250', '', 'Host header'],
    ['127.0.0.1.evil.example:1', '', 'Host header'],
    ['127.0.0.1:10250', 'http://evil.example', 'Origin header'],
    ['127.0.0.1:10250', 'null', 'Origin header'],
    ['127.0.0.1:10250', 'http://127.0.0.1:3000', 'Origin header'],
    ['127.0.0.1:10250', 'https://127.0.0.1:3000', 'Origin header'],
    ['127.0.0.1', 'https://127.0.0.1', 'Origin header'],
    ['127.0.0.1:10250', 'http://localhost:10250', 'Origin header'],
  ])('refuses Host %s with Origin %j: 403 naming the %s', (host, origin, header) => {
    expect(checkHostAndOrigin(http, host, origin)).toMatchObject({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message: expect.stringContaining(header),
    });
  });

  it('checks the scheme of the listener: https origins on the TLS listener', () => {
    expect(checkHostAndOrigin(https, 'node-a:10443', 'https://node-a:10443')).toBeUndefined();
    expect(checkHostAndOrigin(https, 'node-a', 'https://node-a:443')).toBeUndefined();
    expect(checkHostAndOrigin(https, 'node-a:10443', 'http://node-a:10444')?.code).toBe(403);
    expect(checkHostAndOrigin(https, 'node-a', 'http://node-a')?.code).toBe(403);
  });

  it("allows the other scheme on the listener's own explicit port (issue 39: websocket-client sends Origin http://host:port for wss://)", () => {
    expect(checkHostAndOrigin(https, 'node-a:10443', 'http://node-a:10443')).toBeUndefined();
    expect(checkHostAndOrigin(http, '127.0.0.1:10250', 'https://127.0.0.1:10250')).toBeUndefined();
    expect(checkHostAndOrigin(https, 'node-a:10443', 'http://evil.example:10443')?.code).toBe(403);
  });
});

import { describe, expect, it } from 'vitest';
import { textReply } from '../../../src/server/http/reply.js';
import { newRouter, type RouteHandler } from '../../../src/server/routes/router.js';

const a: RouteHandler = () => textReply(200, 'a');
const b: RouteHandler = () => textReply(200, 'b');
const c: RouteHandler = () => textReply(200, 'c');
const router = newRouter([
  { path: '/pods/:namespace/:name', methods: { get: a, delete: a } },
  { path: '/pods/static/list', methods: { get: b } },
  { path: '/pods', methods: { get: c, post: c } },
]);

describe('newRouter', () => {
  it('matches a pattern and decodes its params', () => {
    const m = router.match('get', '/pods/my%20ns/web');
    expect(m).toEqual({ kind: 'handler', handler: a, params: { namespace: 'my ns', name: 'web' } });
  });

  it('prefers a static segment over a :param', () => {
    expect(router.match('get', '/pods/static/list')).toMatchObject({ kind: 'handler', handler: b });
  });

  it('ignores one trailing slash', () => {
    expect(router.match('get', '/pods/')).toMatchObject({ kind: 'handler', handler: c });
  });

  it('does not match an empty :param', () => {
    expect(router.match('get', '/pods//web')).toEqual({ kind: 'notFound' });
  });

  it('answers methodNotAllowed with the allowed methods', () => {
    expect(router.match('put', '/pods/default/web')).toEqual({ kind: 'methodNotAllowed', allow: ['GET', 'DELETE'] });
  });

  it('a last segment * matches any rest, none included, and keeps the :params before it', () => {
    const r = newRouter([{ path: '/p/:name/proxy/*', methods: { get: a, head: b } }]);
    for (const path of ['/p/web/proxy', '/p/web/proxy/', '/p/web/proxy/a', '/p/web/proxy/a/b//c/']) {
      expect(r.match('get', path)).toEqual({ kind: 'handler', handler: a, params: { name: 'web' } });
    }
    expect(r.match('head', '/p/web/proxy/x')).toMatchObject({ kind: 'handler', handler: b });
    expect(r.match('get', '/p/web')).toEqual({ kind: 'notFound' });
  });

  it('answers notFound for an unknown path', () => {
    expect(router.match('get', '/nodes')).toEqual({ kind: 'notFound' });
    expect(router.match('get', '/')).toEqual({ kind: 'notFound' });
  });

  it('answers badPath for a malformed percent-encoding', () => {
    expect(router.match('get', '/pods/a/%zz')).toEqual({ kind: 'badPath' });
  });
});

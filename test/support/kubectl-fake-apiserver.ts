/**
 * A test-only, in-process stand-in for the apiserver routes (the real ones live in
 * src/server/kube-api/ on another branch): just enough discovery, the OpenAPI documents of
 * src/server/kube-api/openapi.ts, and one namespace of Pods (get, create, patch through
 * patchPod; `fieldValidation=Strict` checked with unknownFields), so that /usr/bin/kubectl can be driven against the two pure modules. It records
 * every request (method, URL, Content-Type, Accept, body). Listens on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pod } from '../../src/shared/api.js';
import { statusReasonOf } from '../../src/shared/errors.js';
import { strictDecodingMessage, unknownFields } from '../../src/server/kube-api/field-validation.js';
import { openApi } from '../../src/server/kube-api/openapi.js';
import { patchPod } from '../../src/server/kube-api/patch.js';

/** One request the fake apiserver received. */
export interface RecordedRequest {
  method: string;
  url: string;
  contentType: string;
  accept: string;
  body: string;
}

/** A running fake apiserver: its URL, the Pods it holds (by `namespace/name`) and the requests it got. */
export interface FakeApiServer {
  url: string;
  pods: Map<string, Pod>;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const kCodeByReason: Record<string, number> = {
  BadRequest: 400,
  NotFound: 404,
  Conflict: 409,
  Invalid: 422,
  UnsupportedMediaType: 415,
  NotAcceptable: 406,
  Forbidden: 403,
};

function send(res: ServerResponse, code: number, body: unknown, type = 'application/json'): void {
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  send(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

const kPodResource = {
  name: 'pods',
  singularName: 'pod',
  namespaced: true,
  kind: 'Pod',
  shortNames: ['po'],
  categories: ['all'],
  verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
};

/** startFakeApiServer listens on an ephemeral loopback port; resolves once listening. */
export async function startFakeApiServer(): Promise<FakeApiServer> {
  const pods = new Map<string, Pod>();
  const requests: RecordedRequest[] = [];
  let rv = 1;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const rec: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        contentType: String(req.headers['content-type'] ?? ''),
        accept: String(req.headers.accept ?? ''),
        body,
      };
      requests.push(rec);
      try {
        handle(rec, res);
      } catch (err) {
        const reason = statusReasonOf(err) ?? 'InternalError';
        status(res, kCodeByReason[reason] ?? 500, reason, err instanceof Error ? err.message : String(err));
      }
    });
  });
  const handle = (r: RecordedRequest, res: ServerResponse): void => {
    const u = new URL(r.url, 'http://127.0.0.1');
    const p = u.pathname;
    if (p === '/version') return send(res, 200, { major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' });
    if (p === '/api')
      return send(res, 200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: u.host }],
      });
    if (p === '/apis') return send(res, 200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [] });
    if (p === '/api/v1') return send(res, 200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [kPodResource] });
    const doc = openApi(r.url, r.accept);
    if (doc !== undefined) return send(res, 200, doc.body, doc.contentType);
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods(?:\/([^/]+))?$/.exec(p);
    if (m === null) return status(res, 404, 'NotFound', `the server could not find the requested resource (${p})`);
    const [, ns, name] = m;
    const strict = u.searchParams.get('fieldValidation') === 'Strict';
    const refuseUnknown = (obj: unknown): boolean => {
      const unknown = strict ? unknownFields(obj, 'Pod') : [];
      if (unknown.length > 0)
        status(res, 400, 'BadRequest', `Pod in version "v1" cannot be handled as a Pod: ${strictDecodingMessage(unknown)}`);
      return unknown.length > 0;
    };
    if (name === undefined && r.method === 'POST') {
      const pod = JSON.parse(r.body) as Pod;
      if (refuseUnknown(pod)) return;
      const key = `${ns}/${pod.metadata?.name ?? ''}`;
      if (pods.has(key)) return status(res, 409, 'AlreadyExists', `pods "${pod.metadata?.name}" already exists`);
      const stored: Pod = { ...pod, metadata: { ...pod.metadata, namespace: ns, uid: `uid-${rv}`, resourceVersion: String(++rv) } };
      pods.set(key, stored);
      return send(res, 201, stored);
    }
    if (name === undefined)
      return send(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: String(rv) }, items: [...pods.values()] });
    const key = `${ns}/${name}`;
    const cur = pods.get(key);
    if (cur === undefined) return status(res, 404, 'NotFound', `pods "${name}" not found`);
    if (r.method === 'GET') return send(res, 200, cur);
    if (r.method === 'PATCH') {
      const force = u.searchParams.get('force');
      const next = patchPod(cur, r.contentType, r.body, {
        fieldManager: u.searchParams.get('fieldManager') ?? undefined,
        force: force === 'true',
      });
      if (refuseUnknown(next)) return;
      next.metadata = { ...next.metadata, resourceVersion: String(++rv) };
      pods.set(key, next);
      return send(res, 200, next);
    }
    return status(res, 405, 'MethodNotAllowed', `${r.method} is not supported here`);
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    pods,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

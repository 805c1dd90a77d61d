/**
 * Counterpart of the apiserver's ConfigMap and Secret REST storage as a one-node API
 * (pkg/registry/core/configmap and pkg/registry/core/secret: their strategies over
 * registry/generic/registry/store.go; the handlers of staging/src/k8s.io/apiserver/pkg/endpoints/handlers
 * create.go, update.go, patch.go, delete.go): create (with `generateName`), update, patch (the
 * four patch types of the pod API: patch.ts) and delete of `configmaps` and `secrets`, each with
 * `?dryRun=All`. The objects are the API source's (AgentHost.submitObjects/replaceObject/
 * deleteObject: the intake's object source, persisted under the root dir and restored at start);
 * an object of another source (a manifest file, etcd) refuses writes (403), and a create of its
 * name is 409 AlreadyExists, as the object store defines conflicts.
 *
 * As upstream: the server sets `uid` and `creationTimestamp`; `metadata.resourceVersion` is the
 * object store's and a write carrying a stale one is 409 Conflict (an update without one is
 * unconditional, AllowUnconditionalUpdate); a PATCH that sets none is applied again to the newer
 * object when another write came first; `immutable: true` refuses changes of the data (422).
 *
 * Secrets: no Secret value leaves the agent (issue #12): every reply is redactConfigObject's (no
 * `data`; the `kubectl.kubernetes.io/last-applied-configuration` annotation with its values
 * blanked). Because a Secret is read without its data, a PUT of a Secret that carries neither
 * `data` nor `stringData` keeps the stored data (a read-modify-write of a redacted Secret must not
 * wipe it), and a patch applies to the stored object, never to the redacted one. The read-side
 * annotation `kubelet-ts/secret-keys` is never stored. Stricter than the apiserver, which stores
 * the `kubectl.kubernetes.io/last-applied-configuration` annotation as sent: a Secret's is stored
 * with its values blanked (withoutAppliedValues; a patch sees it so too, also on an object stored
 * before), so no JSON patch `copy` or `test` of it reads a value back (break test of #39, finding 2).
 */
import { randomInt } from 'node:crypto';
import type { Status } from '../../shared/api.js';
import {
  configObjectResource,
  redactConfigObject,
  withoutAppliedValues,
  type ConfigObject,
  type ConfigObjectKind,
} from '../../shared/config-objects.js';
import { isConflict, isForbidden, isInvalidInput, type FieldError } from '../../shared/errors.js';
import type { AgentHost } from '../host/agent-host.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from '../routes/router.js';
import { invalidStatus, parsePodsBody } from '../routes/intake.js';
import { notFound, statusError } from '../http/status.js';
import { parseDeleteOptions } from './delete-options.js';
import { patchObject } from './patch.js';
import { kConfigObjectPatchMeta } from './patch/pod-strategies.js';
import { kProtobufMediaType } from '../../shared/kube-protobuf.js';
import { decodeBodyOffThread } from './protobuf-body.js';
import { configObjectFields } from './field-selector.js';
import { isStatus, kubeErrorStatus, matchesFilter, parseDryRun, parseListFilter } from './request.js';

/** kSecretKeysAnnotation: the read-side annotation redactConfigObject lists a Secret's keys in; never stored. */
const kSecretKeysAnnotation = 'kubelet-ts/secret-keys';
/** kPatchAttempts: how many times a PATCH is applied to an object that keeps changing before 409 Conflict (as pods.ts). */
const kPatchAttempts = 5;
/** names.SimpleNameGenerator: a generated name is the prefix cut to 58 characters and 5 of these. */
const kNameAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const kMaxGeneratePrefix = 63 - 5;

/** resourceOf: `configmaps` or `secrets`. */
function resourceOf(kind: ConfigObjectKind): string {
  return configObjectResource(kind);
}

/**
 * generateName: `prefix` cut to 58 characters followed by 5 random characters of the apiserver's
 * alphabet (k8s.io/apiserver/pkg/storage/names: SimpleNameGenerator).
 */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += kNameAlphabet[randomInt(kNameAlphabet.length)];
  return `${prefix.slice(0, kMaxGeneratePrefix)}${suffix}`;
}

/** jsonObjectOf: the body as a JSON object, or undefined (YAML, or not an object). */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** errorStatus: an AgentHost write's refusal as the apiserver's Status (422 names the kind). */
function errorStatus(err: unknown, kind: ConfigObjectKind, name: string): Status {
  if (isInvalidInput(err) && Array.isArray((err as { errors?: unknown }).errors))
    return invalidStatus(name, (err as { errors: FieldError[] }).errors, kind);
  return kubeErrorStatus(err, resourceOf(kind), name);
}

/** withoutReadAnnotation: `o` without the read-side `kubelet-ts/secret-keys` annotation. */
function withoutReadAnnotation(o: ConfigObject): ConfigObject {
  const ann = o.metadata?.annotations;
  if (!ann || !Object.hasOwn(ann, kSecretKeysAnnotation)) return o;
  const { [kSecretKeysAnnotation]: _keys, ...rest } = ann;
  return { ...o, metadata: { ...o.metadata, annotations: rest } } as ConfigObject;
}

/** present: an object as every reply shows it (a Secret redacted). */
function present(o: ConfigObject): ConfigObject {
  return { ...redactConfigObject(o), apiVersion: 'v1' } as ConfigObject;
}

/** current: the object `kind namespace/name` the agent holds (any source; with its data), or undefined. */
function current(host: AgentHost, kind: ConfigObjectKind, namespace: string, name: string): ConfigObject | undefined {
  return host.listObjects?.(kind).find((o) => o.metadata?.name === name && (o.metadata?.namespace ?? 'default') === namespace);
}

/**
 * decodeOne: the body as one object of `kind` (decoded and validated on the body decoder thread,
 * as pod bodies), its namespace (and name, when `name` is given) those of the URL; else the refusal.
 */
async function decodeOne(
  ctx: RouteContext,
  kind: ConfigObjectKind,
  text: string,
  contentType: string | undefined,
  name: string,
): Promise<ConfigObject | HttpReply> {
  const { host, params } = ctx;
  const parsed = await parsePodsBody(host, Buffer.from(text, 'utf8'), contentType, { namespace: params.namespace, name }, kind);
  if (!parsed.ok) return parsed.reply;
  if (!parsed.single || parsed.pods.length !== 0 || parsed.objects.length !== 1 || parsed.objects[0].kind !== kind) {
    return statusReply(statusError(400, 'BadRequest', `the body must be exactly one ${kind} (apiVersion v1)`));
  }
  const object = parsed.objects[0];
  if (name !== '' && object.metadata?.name !== name) {
    return statusReply(
      statusError(400, 'BadRequest', `the name of the object (${object.metadata?.name}) does not match the name on the URL (${name})`),
    );
  }
  if ((object.metadata?.namespace ?? 'default') !== params.namespace) {
    return statusReply(
      statusError(
        400,
        'BadRequest',
        `the namespace of the provided object (${object.metadata?.namespace}) does not match the namespace sent on the request (${params.namespace})`,
      ),
    );
  }
  return withoutAppliedValues(withoutReadAnnotation(object));
}

/**
 * bodyText: the request body as text and its Content-Type; a protobuf body (kubectl's typed
 * clients: `create configmap`, `create secret`) as its JSON form; a body that does not decode is
 * 400 naming what failed. A JSON object that leaves out `apiVersion` or `kind` (the Python
 * client sends none) gets those of the URL, as the apiserver's decoder defaults them from the
 * request's GroupVersionKind.
 */
async function bodyText(ctx: RouteContext, kind: ConfigObjectKind): Promise<{ text: string; contentType: string | undefined } | HttpReply> {
  const contentType = ctx.req.headers['content-type'];
  let text: string;
  if ((contentType ?? '').split(';')[0].trim().toLowerCase() !== kProtobufMediaType) {
    text = (ctx.body ?? Buffer.alloc(0)).toString('utf8');
  } else {
    // A ConfigMap or Secret only (refused before decoding), decoded off the main thread.
    const decoded = await decodeBodyOffThread(ctx.host, ctx.body, ['ConfigMap', 'Secret']);
    return decoded.kind === 'Status' && typeof decoded.code === 'number'
      ? statusReply(decoded as unknown as Status)
      : { text: JSON.stringify(decoded), contentType: 'application/json' };
  }
  const raw = jsonObjectOf(text);
  if (raw && (raw.apiVersion === undefined || raw.kind === undefined))
    return { text: JSON.stringify({ apiVersion: 'v1', kind, ...raw }), contentType };
  return { text, contentType };
}

/**
 * secretValueReadRefusal: a JSON patch of a Secret may write its data but never read it: a
 * `copy` or `move` from `/data…` (which would put a value where a reply shows it, an annotation)
 * or a `test` of `/data…` (an oracle for a guessed value) is 400, else undefined. Stricter than
 * the apiserver, which answers a Secret's data to anyone who may read it; here nobody may.
 */
function secretValueReadRefusal(kind: ConfigObjectKind, contentType: string, text: string): HttpReply | undefined {
  if (kind !== 'Secret' || contentType !== 'application/json-patch+json') return undefined;
  let ops: unknown;
  try {
    ops = JSON.parse(text);
  } catch {
    return undefined; // patchObject answers the parse error
  }
  if (!Array.isArray(ops)) return undefined;
  const reads = (p: unknown) => typeof p === 'string' && /^\/(data|stringData)(\/|$)/.test(p);
  const i = ops.findIndex(
    (op: { op?: unknown; from?: unknown; path?: unknown } | null) =>
      op !== null &&
      typeof op === 'object' &&
      (((op.op === 'copy' || op.op === 'move') && reads(op.from)) || (op.op === 'test' && reads(op.path))),
  );
  if (i < 0) return undefined;
  return statusReply(
    statusError(
      400,
      'BadRequest',
      `json patch: op ${i}: a Secret's values are never read back by this agent: copy, move and test of /data are not served`,
    ),
  );
}

function isReply(v: unknown): v is HttpReply {
  return typeof v === 'object' && v !== null && typeof (v as HttpReply).status === 'number' && 'body' in v && 'contentType' in v;
}

/** configObjectRoutes: POST, PUT, PATCH and DELETE of `kind` under /api/v1/namespaces/{namespace}/. */
function routesOf(kind: ConfigObjectKind): Route[] {
  const resource = resourceOf(kind);

  /** create: POST …/{resource}: 201 with the object as stored (its uid, creationTimestamp and resourceVersion). */
  const create = async (ctx: RouteContext): Promise<HttpReply> => {
    const decoded = await bodyText(ctx, kind);
    return isReply(decoded) ? decoded : createFrom(ctx, decoded.text, decoded.contentType);
  };

  /** createFrom: a create of the object `text` (a POST's body, or a server-side apply's result for an absent name). */
  const createFrom = async (ctx: RouteContext, body: string, contentType: string | undefined): Promise<HttpReply> => {
    const { host, req } = ctx;
    if (!host.submitObjects) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not create ${resource}`));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    let text = body;
    const raw = jsonObjectOf(text);
    const meta = raw?.metadata as Record<string, unknown> | undefined;
    if (meta && typeof meta === 'object' && typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '') {
      return statusReply(statusError(400, 'BadRequest', 'resourceVersion should not be set on objects to be created'));
    }
    if (
      raw &&
      meta &&
      typeof meta === 'object' &&
      (meta.name === undefined || meta.name === '') &&
      typeof meta.generateName === 'string' &&
      meta.generateName !== ''
    ) {
      text = JSON.stringify({ ...raw, metadata: { ...meta, name: generateName(meta.generateName) } });
    }
    const object = await decodeOne(ctx, kind, text, contentType, '');
    if (isReply(object)) return object;
    try {
      const [created] = await host.submitObjects([object], { dryRun });
      return jsonReply(201, present(created));
    } catch (err) {
      return statusReply(errorStatus(err, kind, object.metadata?.name ?? ''));
    }
  };

  /**
   * store: the PUT path (also a PATCH's result). `basedOn` (a PATCH's) is the resourceVersion the
   * patch was applied to: a 409 then means another write came first, and the caller applies the
   * patch again (answered as kStale) unless the patch set a resourceVersion of its own.
   */
  const store = async (
    ctx: RouteContext,
    text: string,
    contentType: string | undefined,
    basedOn?: string,
  ): Promise<HttpReply | 'stale'> => {
    const { host, req, params } = ctx;
    if (!host.replaceObject) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not update ${resource}`));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const existing = current(host, kind, params.namespace, params.name);
    if (!existing) return statusReply(notFound(resource, params.name));
    let object = await decodeOne(ctx, kind, text, contentType, params.name);
    if (isReply(object)) return object;
    if (object.kind === 'Secret' && existing.kind === 'Secret' && basedOn === undefined) {
      const raw = jsonObjectOf(text);
      // A Secret read here has no data: a replace that sends none keeps the stored data.
      if (raw && raw.data === undefined && raw.stringData === undefined) object = { ...object, data: existing.data };
    }
    try {
      return jsonReply(200, present(await host.replaceObject(object, { dryRun })));
    } catch (err) {
      if (basedOn !== undefined && object.metadata?.resourceVersion === basedOn && isConflict(err)) return 'stale';
      return statusReply(errorStatus(err, kind, params.name));
    }
  };

  const conflict = (name: string) =>
    statusError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${resource} ${JSON.stringify(name)}: the object has been modified; please apply your changes to the latest version and try again`,
      { name, kind: resource },
    );
  const params = (ctx: RouteContext) => ctx.params as { namespace: string; name: string };

  const update = async (ctx: RouteContext): Promise<HttpReply> => {
    const decoded = await bodyText(ctx, kind);
    if (isReply(decoded)) return decoded;
    const r = await store(ctx, decoded.text, decoded.contentType);
    return r === 'stale' ? statusReply(conflict(params(ctx).name)) : r;
  };

  /**
   * patch: apply the patch to the stored object (a Secret with its data: the patch never sees the
   * redacted one) and store the result as a PUT would; applied again to the newer object when
   * another write came first (the apiserver's GuaranteedUpdate), up to kPatchAttempts times.
   */
  const patch = async (ctx: RouteContext): Promise<HttpReply> => {
    const { host, req, body } = ctx;
    const { namespace, name } = params(ctx);
    const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const force = (req.query.get('force') ?? '').toLowerCase();
    const text = (body ?? Buffer.alloc(0)).toString('utf8');
    const refused = secretValueReadRefusal(kind, contentType, text);
    if (refused) return refused;
    for (let attempt = 1; ; attempt++) {
      const existing = current(host, kind, namespace, name);
      // Server-side apply of an absent name creates it (the apiserver's patcher with an empty live object).
      if (!existing && contentType !== 'application/apply-patch+yaml') return statusReply(notFound(resource, name));
      const base = (
        existing ? { ...withoutAppliedValues(existing), apiVersion: 'v1' } : { apiVersion: 'v1', kind, metadata: { name, namespace } }
      ) as ConfigObject;
      let patched: ConfigObject;
      try {
        patched = patchObject(
          base,
          contentType,
          text,
          {
            ...(req.query.has('fieldManager') ? { fieldManager: req.query.get('fieldManager')! } : {}),
            ...(force === 'true' || force === '1' ? { force: true } : {}),
          },
          { kind, meta: kConfigObjectPatchMeta },
        );
      } catch (err) {
        return statusReply(errorStatus(err, kind, name));
      }
      if (!existing) return createFrom(ctx, JSON.stringify(patched), 'application/json');
      const r = await store(ctx, JSON.stringify(patched), 'application/json', base.metadata?.resourceVersion ?? '');
      if (r !== 'stale') return r;
      if (attempt === kPatchAttempts) return statusReply(conflict(name));
    }
  };

  /**
   * remove: DELETE …/{resource}/{name}: 200 with a Success Status naming it (the generic store's
   * answer for these kinds), or 200 with the object when it is only marked deleted (a claim in use).
   */
  const remove = async (ctx: RouteContext): Promise<HttpReply> => {
    const { host, req, body } = ctx;
    const { namespace, name } = params(ctx);
    if (!host.deleteObject) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not delete ${resource}`));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const opts = parseDeleteOptions(req.query, body);
    if (isStatus(opts)) return statusReply(opts);
    try {
      const gone = await host.deleteObject(kind, namespace, name, {
        dryRun: dryRun || opts.dryRun === true,
        ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
      });
      // Kept by a finalizer (a claim in use: pvc-protection): the object as it now is, as the generic store's Delete answers when it only marked it.
      if (gone.metadata?.deletionTimestamp) return jsonReply(200, present(gone));
      return jsonReply(200, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: { name, kind: resource, ...(gone.metadata?.uid ? { uid: gone.metadata.uid } : {}) },
      } satisfies Status);
    } catch (err) {
      return statusReply(errorStatus(err, kind, name));
    }
  };

  /**
   * removeCollection: DELETE …/{resource} (deletecollection, label and field selectors): every
   * matching object of the namespace the API may delete, answered as a List of them (a Secret
   * redacted); another source's objects are left (as pods' deletecollection leaves static pods).
   */
  const removeCollection = async (ctx: RouteContext): Promise<HttpReply> => {
    const { host, req, body } = ctx;
    const { namespace } = params(ctx);
    if (!host.deleteObject || !host.listObjects)
      return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not delete ${resource}`));
    const dryRun = parseDryRun(req.query);
    if (isStatus(dryRun)) return statusReply(dryRun);
    const filter = parseListFilter(req.query, Object.keys(configObjectFields({ kind } as ConfigObject)));
    if (isStatus(filter)) return statusReply(filter);
    const opts = parseDeleteOptions(req.query, body);
    if (isStatus(opts)) return statusReply(opts);
    const targets = host
      .listObjects(kind)
      .filter(
        (o) => (o.metadata?.namespace ?? 'default') === namespace && matchesFilter(filter, o.metadata?.labels, () => configObjectFields(o)),
      );
    const items: ConfigObject[] = [];
    for (const o of targets) {
      try {
        items.push(present(await host.deleteObject(kind, namespace, o.metadata?.name ?? '', { dryRun: dryRun || opts.dryRun === true })));
      } catch (err) {
        if (isForbidden(err)) continue;
        const st = errorStatus(err, kind, o.metadata?.name ?? '');
        if (st.code !== 404) return statusReply(st);
      }
    }
    return jsonReply(200, { apiVersion: 'v1', kind: `${kind}List`, metadata: {}, items });
  };

  const base = `/api/v1/namespaces/:namespace/${resource}`;
  return [
    { path: base, methods: { post: create, delete: removeCollection } },
    { path: `${base}/:name`, methods: { put: update, patch, delete: remove } },
  ];
}

/**
 * configObjectWriteRoutes: the write methods of configmaps and secrets, merged by resources.ts
 * into the read routes of the same paths.
 */
export function configObjectWriteRoutes(): Route[] {
  return [...routesOf('ConfigMap'), ...routesOf('Secret'), ...routesOf('PersistentVolumeClaim')];
}

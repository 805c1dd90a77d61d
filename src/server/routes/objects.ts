// Counterpart of the apiserver's update and delete handlers for ConfigMaps and Secrets (k8s.io/apiserver/pkg/endpoints/handlers update.go, delete.go), for the intake's objects; the full /api/v1/namespaces/{ns}/configmaps API is issue #15's.
import type { ConfigObjectKind } from '../../shared/config-objects.js';
import { redactConfigObject } from '../../shared/config-objects.js';
import { isInvalidInput, type FieldError } from '../../shared/errors.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { statusError } from '../http/status.js';
import { hostErrorStatus, invalidStatus, parsePodsBody } from './intake.js';
import { refusingDryRun } from './no-dry-run.js';

/**
 * replaceObjectHandler answers `PUT /configmaps/{namespace}/{name}` and `PUT /secrets/…`: the body
 * is one object of that kind (YAML or JSON, decoded on the body decoder thread); a name/namespace
 * it leaves out is taken from the URL, one it gives must match (400). 200 with the stored object
 * (a Secret without its data); 404 when the intake has no such object, 403 for another source's,
 * 422 when `immutable` or a Secret's type forbids the change.
 */
function replaceObjectHandler(kind: ConfigObjectKind) {
  return async ({ host, req, params, body }: RouteContext): Promise<HttpReply> => {
    if (!host.replaceObject) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not support PUT of ${kind}s`));
    const parsed = await parsePodsBody(host, body, req.headers['content-type'], { namespace: params.namespace, name: params.name });
    if (!parsed.ok) return parsed.reply;
    if (!parsed.single || parsed.objects.length !== 1 || parsed.objects[0].kind !== kind) {
      return statusReply(statusError(400, 'BadRequest', `PUT /${kind.toLowerCase()}s/{namespace}/{name} takes exactly one ${kind}`));
    }
    const object = parsed.objects[0];
    if (object.metadata?.name !== params.name) {
      return statusReply(
        statusError(
          400,
          'BadRequest',
          `the name of the object (${object.metadata?.name}) does not match the name on the URL (${params.name})`,
        ),
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
    try {
      return jsonReply(200, redactConfigObject(await host.replaceObject(object)));
    } catch (err) {
      if (isInvalidInput(err) && Array.isArray((err as { errors?: unknown }).errors)) {
        return statusReply(invalidStatus(params.name, (err as { errors: FieldError[] }).errors, kind));
      }
      return statusReply(hostErrorStatus(err, params.name));
    }
  };
}

/** deleteObjectHandler answers `DELETE /configmaps/{namespace}/{name}` and `DELETE /secrets/…`: 200 with the object removed (a Secret without its data). */
function deleteObjectHandler(kind: ConfigObjectKind) {
  return async ({ host, params }: RouteContext): Promise<HttpReply> => {
    if (!host.deleteObject) return statusReply(statusError(405, 'MethodNotAllowed', `this agent does not support DELETE of ${kind}s`));
    try {
      return jsonReply(200, redactConfigObject(await host.deleteObject(kind, params.namespace, params.name)));
    } catch (err) {
      return statusReply(hostErrorStatus(err, params.name));
    }
  };
}

/** objectRoutes: PUT and DELETE /configmaps/{namespace}/{name} and /secrets/{namespace}/{name} (POST is POST /pods). */
export function objectRoutes(): Route[] {
  return [
    {
      path: '/configmaps/:namespace/:name',
      methods: { put: refusingDryRun(replaceObjectHandler('ConfigMap')), delete: refusingDryRun(deleteObjectHandler('ConfigMap')) },
    },
    {
      path: '/secrets/:namespace/:name',
      methods: { put: refusingDryRun(replaceObjectHandler('Secret')), delete: refusingDryRun(deleteObjectHandler('Secret')) },
    },
  ];
}

// Counterpart of the apiserver's event list (GET /api/v1/events) served from the kubelet's own recorder.
import type { Event } from '../../shared/api.js';
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { statusError } from '../http/status.js';

/**
 * listEventsHandler answers `GET /events`: an `EventList` of the recent core/v1 Events (bounded
 * ring, oldest first); `?namespace=` keeps one namespace's events.
 */
export function listEventsHandler({ host, req }: RouteContext): HttpReply {
  if (!host.listEvents) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not record events'));
  const namespace = req.query.get('namespace') ?? '';
  const items: Event[] = host
    .listEvents()
    .filter((e) => namespace === '' || (e.metadata?.namespace ?? e.involvedObject?.namespace) === namespace);
  return jsonReply(200, { apiVersion: 'v1', kind: 'EventList', metadata: {}, items });
}

/** eventsRoutes: GET /events. */
export function eventsRoutes(): Route[] {
  return [{ path: '/events', methods: { get: listEventsHandler } }];
}

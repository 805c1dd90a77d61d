// Counterpart of the apiserver's GET /api/v1/nodes/{name} for this node (the Node the kubelet posts, pkg/kubelet/kubelet_node_status.go).
import { jsonReply, statusReply, type HttpReply } from '../http/reply.js';
import type { Route, RouteContext } from './router.js';
import { statusError } from '../http/status.js';

/** getNodeHandler answers `GET /node`: this node as a core/v1 `Node` (conditions, capacity, allocatable, nodeInfo, addresses). */
export async function getNodeHandler({ host }: RouteContext): Promise<HttpReply> {
  if (!host.getNode) return statusReply(statusError(405, 'MethodNotAllowed', 'this agent does not report its Node'));
  const node = await host.getNode();
  return jsonReply(200, { apiVersion: 'v1', kind: 'Node', ...node });
}

/** nodeRoutes: GET /node. */
export function nodeRoutes(): Route[] {
  return [{ path: '/node', methods: { get: getNodeHandler } }];
}

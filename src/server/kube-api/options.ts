/**
 * The seams of the Kubernetes API slice (src/server/kube-api): what the agent plugs in from outside
 * this folder — the PATCH logic for pods and the OpenAPI documents — with the defaults used when
 * nothing is plugged in. As the apiserver's REST storage takes its patchers and the OpenAPI
 * service as injected handlers (k8s.io/apiserver/pkg/endpoints/handlers/patch.go, pkg/server/routes/openapi.go).
 */
import type { Pod } from '../../shared/api.js';
import type { WatchLimiter } from '../http/watch-limits.js';

/** PatchQuery: the query parameters of a PATCH that the patcher needs (server-side apply's `fieldManager` and `force`). */
export interface PatchQuery {
  fieldManager?: string;
  force?: boolean;
}

/**
 * PatchPod: applies a PATCH body to the current pod and returns the patched pod (not stored yet: the
 * route stores it as a PUT would). `contentType` is the request's Content-Type without parameters
 * (`application/json-patch+json`, `application/merge-patch+json`,
 * `application/strategic-merge-patch+json`, `application/apply-patch+yaml`). Synchronous.
 * @throws AgentError ERR_INVALID_ARGUMENT (→ 400 or, with `statusReason` Invalid, 422), ERR_CONFLICT
 *   (→ 409), or one with `statusReason` `UnsupportedMediaType` (→ 415).
 */
export type PatchPod = (current: Pod, contentType: string, body: string, query: PatchQuery) => Pod;

/** OpenApiDocument: an OpenAPI document as served (`application/json`, `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`, …). */
export interface OpenApiDocument {
  contentType: string;
  body: Buffer | string;
}

/**
 * OpenApi: the document for `path` (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/api/v1`, …) in a
 * format `accept` (the request's Accept header) allows, or undefined for 404.
 */
export type OpenApi = (path: string, accept: string) => OpenApiDocument | undefined;

/** KubeApiOptions: the kube-API's seams (AgentServerOptions.kubeApi); every field optional. */
export interface KubeApiOptions {
  /** PATCH of a pod; default: patch.ts patchPod (JSON, merge, strategic merge, server-side apply). */
  patchPod?: PatchPod;
  /** /openapi/v2 and /openapi/v3…; default: openapi.ts openApi (the shipped core/v1 documents). */
  openApi?: OpenApi;
  /** The bound on concurrent watches (watch-limits.ts), shared with `WS /watch/pods`; undefined = no bound. */
  watchLimiter?: WatchLimiter;
  /** The gitVersion `/version` reports (default `v1.32.0-kubelet-ts`: kubectl warns on skew over one minor version). */
  gitVersion?: string;
}

/** kDefaultGitVersion: what /version reports without KubeApiOptions.gitVersion. */
export const kDefaultGitVersion = 'v1.32.0-kubelet-ts';

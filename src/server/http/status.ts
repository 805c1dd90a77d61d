// Counterpart of k8s.io/apimachinery/pkg/api/errors (StatusError): errors as metav1.Status objects.
import type { Status, StatusReason } from '../../shared/api.js';

/** StatusReason: the Kubernetes `metav1.StatusReason` values this server uses (defined in shared/api.ts). */
export type { StatusReason };

/** StatusDetails: `metav1.StatusDetails` (name, kind of the object, field causes). */
export type StatusDetails = NonNullable<Status['details']>;

/**
 * statusError builds a failure `Status` (`kind: Status`, `apiVersion: v1`, `status: Failure`) as the
 * apiserver returns it for an error.
 * @param code the HTTP status code, e.g. 404.
 * @param reason the machine-readable reason, e.g. `NotFound`.
 * @param message the human-readable message, e.g. `pods "web" not found`.
 * @param details optional details (`name`, `kind`, `causes`).
 */
export function statusError(code: number, reason: StatusReason, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details !== undefined) status.details = details;
  return status;
}

/** notFound: 404 `pods "name" not found`, with details naming the object (as errors.NewNotFound). */
export function notFound(resource: string, name: string): Status {
  return statusError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
}

/**
 * The error of a container whose spec cannot be turned into a runtime config: the kubelet's
 * `CreateContainerConfigError` waiting reason (pkg/kubelet/kuberuntime/kuberuntime_container.go
 * startContainer, ErrCreateContainerConfig). A leaf, for the container config, the downward API
 * values and the security context alike.
 */
import { AgentError } from '../../shared/errors.js';

/** configError: an AgentError with reason `CreateContainerConfigError` (the spec cannot be turned into a container config). */
export function configError(message: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', message, { reason: 'CreateContainerConfigError' });
}

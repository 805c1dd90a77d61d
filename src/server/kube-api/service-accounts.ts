/**
 * The ServiceAccounts the node's API shows (read only: get, list, watch), as the service account
 * controller (pkg/controller/serviceaccount/serviceaccounts_controller.go) keeps one named
 * `default` in every namespace; and, since the node's ServiceAccount admission takes any name a pod
 * gives as an account of its namespace (shared/service-account-admission.ts), every account a pod
 * of the node names. Each is created when its namespace was; UIDs are the ones in tokens' claims.
 */
import type { Pod } from '../../shared/api.js';
import {
  kDefaultServiceAccountName,
  podServiceAccountName,
  serviceAccountObject,
  type ServiceAccountObject,
} from '../../shared/service-account-admission.js';
import type { AgentHost } from '../host/agent-host.js';
import { namespaceObjects } from './namespaces.js';

/** serviceAccountObjects: `default` in every namespace the node shows, and the accounts its pods name, sorted by namespace and name. */
export function serviceAccountObjects(host: AgentHost): ServiceAccountObject[] {
  const namespaces = new Map(namespaceObjects(host).map((n) => [n.metadata.name, n.metadata.creationTimestamp]));
  const names = new Set<string>();
  for (const ns of namespaces.keys()) names.add(`${ns}/${kDefaultServiceAccountName}`);
  for (const p of host.listPods() as Pod[]) names.add(`${p.metadata?.namespace || 'default'}/${podServiceAccountName(p)}`);
  return [...names].sort().map((key) => {
    const [ns, name] = key.split('/');
    return serviceAccountObject(ns, name, namespaces.get(ns));
  });
}

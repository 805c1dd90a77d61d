/**
 * The node's service accounts, wired: the signing key and token manager (token-manager.ts), the
 * authenticator of the node's API for the tokens it signed (server/auth/service-account-tokens.ts,
 * bound to the pods the node runs), and what a pod's sync gets beside its ConfigMaps and Secrets —
 * the tokens of its projected `serviceAccountToken` sources (as the kubelet's projected volume
 * plugin asks the token manager, pkg/volume/projected/projected.go collectData) and the
 * `kube-root-ca.crt` ConfigMap with the CA the node's TLS port serves (as the root CA publisher,
 * pkg/controller/certificates/rootcacertpublisher, puts in every namespace). Main thread.
 */
import type { KeyObject } from 'node:crypto';
import type { ConfigMap, Pod } from '../../shared/api.js';
import { realClock, type Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logging.js';
import type { PodConfigObjects } from '../../shared/sync-tasks.js';
import { kubernetesServiceEndpoint } from '../../shared/kubernetes-service-env.js';
import { kRootCaConfigMapName, podServiceAccountName, serviceAccountUid } from '../../shared/service-account-admission.js';
import { unionTokenAuthenticators, type TokenAuthenticator } from '../../server/auth/auth.js';
import { newServiceAccountAuthenticator, type BoundObjects } from '../../server/auth/service-account-tokens.js';
import { ensureServiceAccountKey, newTokenManager, type TokenManager } from './token-manager.js';

/** Dependencies of {@link newNodeServiceAccounts}. */
export interface NodeServiceAccountsDeps {
  rootDir: string;
  logger: Logger;
  /** The pod `namespace/name` the node has now: its UID and `deletionTimestamp` if being deleted (undefined = none). */
  pod: BoundObjects['pod'];
  /** The agent's clock (token issue and expiry times); default the real clock. */
  clock?: Clock;
}

/** NodeServiceAccounts: see the file's comment. */
export interface NodeServiceAccounts {
  /** The API's authenticator of the node's bound tokens (goes after the static tokens). */
  readonly authenticator: TokenAuthenticator;
  readonly tokens: TokenManager;
  /** serviceAccountUid: the UID of ServiceAccount `namespace/name` (every name is one: admission's comment). */
  serviceAccountUid(namespace: string, name: string): string;
  /**
   * setApi: the node's TLS API as pods see it: `caPem` (the CA the TLS port serves, '' = none) put in
   * every namespace's `kube-root-ca.crt`, and where pods reach it (kubernetesServiceEndpoint):
   * `tlsPort` read at each sync (the port is known once the server listens), `onPodNetwork` whether
   * pods not on the host network are on the agent's pod network.
   */
  setApi(api: { caPem: string; address: string; tlsPort: () => number; gateway: string; onPodNetwork: boolean }): void;
  /** rootCaConfigMap: the `kube-root-ca.crt` ConfigMap of `namespace`. */
  rootCaConfigMap(namespace: string): ConfigMap;
  /**
   * configObjectsFor: `base` (the pod's ConfigMaps and Secrets) with the node's `kube-root-ca.crt`
   * ConfigMap when the pod names it (in place of any the store has: a user who may write ConfigMaps
   * must not choose the CA pods check the API with), and the tokens of its projected
   * `serviceAccountToken` sources (PodConfigObjects.serviceAccountTokens). `base` as it is when the
   * pod needs neither. A token that cannot be issued is left out (the mount then fails and is retried).
   */
  configObjectsFor(pod: Pod, base: PodConfigObjects | undefined): PodConfigObjects | undefined;
}

/**
 * newNodeServiceAccounts reads or makes the signing key (ensureServiceAccountKey) and builds the rest.
 * @throws InvalidArgumentError as ensureServiceAccountKey.
 */
export async function newNodeServiceAccounts(deps: NodeServiceAccountsDeps): Promise<NodeServiceAccounts> {
  const key = await ensureServiceAccountKey(deps.rootDir);
  deps.logger.info({ file: key.path }, 'Using the service account signing key');
  return build(deps, key.privateKey, key.publicKey);
}

function build(deps: NodeServiceAccountsDeps, privateKey: KeyObject, publicKey: KeyObject): NodeServiceAccounts {
  const clock = deps.clock ?? realClock;
  const tokens = newTokenManager(privateKey, clock);
  const saUid = serviceAccountUid;
  let rootCa = '';
  let api: Parameters<NodeServiceAccounts['setApi']>[0] | undefined;
  const rootCaConfigMap = (namespace: string): ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: kRootCaConfigMapName,
      namespace,
      annotations: {
        'kubernetes.io/description':
          'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
      },
    },
    data: { 'ca.crt': rootCa },
  });
  const authenticator = newServiceAccountAuthenticator(
    publicKey,
    { pod: deps.pod, serviceAccountUid: saUid },
    {
      clock,
      onReject: (reason) => deps.logger.debug({ reason }, 'Refused a service account token'),
    },
  );
  return {
    authenticator,
    tokens,
    serviceAccountUid: saUid,
    rootCaConfigMap,
    setApi(a) {
      api = a;
      rootCa = a.caPem;
    },
    configObjectsFor(pod, base) {
      const volumes = pod.spec?.volumes ?? [];
      const ns = pod.metadata?.namespace || 'default';
      const needsCa = volumes.some(
        (v) => v.configMap?.name === kRootCaConfigMapName || v.projected?.sources?.some((s) => s.configMap?.name === kRootCaConfigMapName),
      );
      const withToken = volumes.filter((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
      const endpoint =
        api && kubernetesServiceEndpoint(pod, api.onPodNetwork, { address: api.address, tlsPort: api.tlsPort(), gateway: api.gateway });
      if (withToken.length === 0 && !endpoint && !needsCa) return base;
      const out: PodConfigObjects = base ? { ...base, configMaps: { ...base.configMaps } } : { configMaps: {}, secrets: {} };
      if (endpoint) out.kubernetesService = endpoint;
      // Always the node's own, over one a user stored in the namespace (break-46): upstream the root CA
      // publisher puts the cluster's CA back into a kube-root-ca.crt anyone changed.
      if (needsCa) out.configMaps[kRootCaConfigMapName] = rootCaConfigMap(ns);
      const sa = podServiceAccountName(pod);
      const issued: Record<string, string> = {};
      for (const v of withToken) {
        v.projected!.sources!.forEach((s, i) => {
          const src = s.serviceAccountToken;
          if (!src) return;
          try {
            issued[`${v.name}/${i}`] = tokens.getToken({
              namespace: ns,
              serviceAccount: { name: sa, uid: saUid(ns, sa) },
              pod: { name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' },
              audiences: src.audience ? [src.audience] : undefined,
              expirationSeconds: src.expirationSeconds ?? undefined,
            });
          } catch (err) {
            deps.logger.warn(
              { pod: `${ns}/${pod.metadata?.name}`, volume: v.name, err: (err as Error).message },
              'Could not issue a service account token',
            );
          }
        });
      }
      if (Object.keys(issued).length > 0) out.serviceAccountTokens = issued;
      return out;
    },
  };
}

/**
 * boundPodOf: the lookup a token's bound-pod check needs, over the pod manager's full-name index:
 * the pod `namespace/name` the node has, its UID, its service account (podServiceAccountName), and
 * its `deletionTimestamp` if it has one.
 */
export function boundPodOf(getByFullName: (fullName: string) => { pod: Pod } | undefined): NodeServiceAccountsDeps['pod'] {
  return (namespace, name) => {
    const r = getByFullName(`${namespace}/${name}`);
    const deletionTimestamp = r?.pod.metadata?.deletionTimestamp;
    return r
      ? {
          uid: r.pod.metadata?.uid ?? '',
          serviceAccountName: podServiceAccountName(r.pod),
          ...(deletionTimestamp ? { deletionTimestamp } : {}),
        }
      : undefined;
  };
}

/** withServiceAccountAuth: `auth` whose tokens also include the node's bound tokens (after the static ones); undefined stays undefined. */
export function withServiceAccountAuth<T extends { tokens: TokenAuthenticator }>(
  auth: T | undefined,
  sa: NodeServiceAccounts,
): T | undefined {
  return auth && { ...auth, tokens: unionTokenAuthenticators(auth.tokens, sa.authenticator) };
}

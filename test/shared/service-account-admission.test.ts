// The ServiceAccount admission plugin (#43 item 1) and the `kubernetes` service env (item 4 of the task).
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { kubernetesServiceEndpoint, kubernetesServiceEnv, podNetworkGateway } from '../../src/shared/kubernetes-service-env.js';
import {
  admitServiceAccount,
  kServiceAccountMountPath,
  randomVolumeSuffix,
  serviceAccountTokenVolume,
} from '../../src/shared/service-account-admission.js';

const mk = (spec: Partial<NonNullable<Pod['spec']>> = {}): Pod =>
  ({ metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'a', image: 'i' }], ...spec } }) as Pod;

describe('ServiceAccount admission', () => {
  it('defaults serviceAccountName to default and mounts kube-api-access-<5> read-only in every init and app container', () => {
    const pod = admitServiceAccount(mk({ initContainers: [{ name: 'i', image: 'i' }] }));
    expect(pod.spec?.serviceAccountName).toBe('default');
    const vol = pod.spec!.volumes!.find((v) => v.name.startsWith('kube-api-access-'))!;
    expect(vol.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(vol).toEqual(serviceAccountTokenVolume(vol.name));
    expect(vol.projected?.sources?.[0]).toEqual({ serviceAccountToken: { path: 'token', expirationSeconds: 3607 } });
    expect(vol.projected?.sources?.[1]).toEqual({ configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } });
    expect(vol.projected?.sources?.[2]).toEqual({
      downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] },
    });
    for (const c of [...pod.spec!.initContainers!, ...pod.spec!.containers])
      expect(c.volumeMounts).toEqual([{ name: vol.name, readOnly: true, mountPath: kServiceAccountMountPath }]);
  });

  it('keeps a given serviceAccountName (also the deprecated serviceAccount)', () => {
    expect(admitServiceAccount(mk({ serviceAccountName: 'robot' })).spec?.serviceAccountName).toBe('robot');
    expect(admitServiceAccount(mk({ serviceAccount: 'old' } as object)).spec?.serviceAccountName).toBe('old');
  });

  it('mounts nothing with automountServiceAccountToken false on the pod, or on the service account unless the pod says true', () => {
    expect(admitServiceAccount(mk({ automountServiceAccountToken: false })).spec?.volumes).toBeUndefined();
    expect(admitServiceAccount(mk(), { serviceAccountAutomount: false }).spec?.volumes).toBeUndefined();
    expect(admitServiceAccount(mk({ automountServiceAccountToken: true }), { serviceAccountAutomount: false }).spec?.volumes).toHaveLength(
      1,
    );
  });

  it('leaves a container that mounts something at the path alone, adds no volume when none needs it, and reuses an existing kube-api-access volume', () => {
    const own = { name: 'mine', mountPath: kServiceAccountMountPath };
    const pod = admitServiceAccount(
      mk({ containers: [{ name: 'a', image: 'i', volumeMounts: [own] }], volumes: [{ name: 'mine', emptyDir: {} }] }),
    );
    expect(pod.spec?.containers[0].volumeMounts).toEqual([own]);
    expect(pod.spec?.volumes).toEqual([{ name: 'mine', emptyDir: {} }]);
    const again = admitServiceAccount(admitServiceAccount(mk(), { volumeName: 'kube-api-access-abcde' }));
    expect(again.spec?.volumes?.map((v) => v.name)).toEqual(['kube-api-access-abcde']);
    expect(again.spec?.containers[0].volumeMounts).toHaveLength(1);
  });

  it("randomVolumeSuffix: 5 characters of utilrand's alphabet", () => {
    for (let i = 0; i < 50; i++) expect(randomVolumeSuffix()).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });
});

describe('the kubernetes service env', () => {
  it('hostNetwork pods reach the API on loopback (or the specific bind address); bridge pods only when it listens on the gateway or every address; network-none pods and no TLS port: none', () => {
    const host = mk({ hostNetwork: true });
    const bridged = mk();
    const api = { address: '127.0.0.1', tlsPort: 10250, gateway: '10.222.0.1' };
    expect(kubernetesServiceEndpoint(host, true, api)).toEqual({ host: '127.0.0.1', port: 10250 });
    expect(kubernetesServiceEndpoint(host, true, { ...api, address: '0.0.0.0' })).toEqual({ host: '127.0.0.1', port: 10250 });
    expect(kubernetesServiceEndpoint(host, true, { ...api, address: '192.168.1.5' })).toEqual({ host: '192.168.1.5', port: 10250 });
    expect(kubernetesServiceEndpoint(bridged, true, api)).toBeUndefined();
    expect(kubernetesServiceEndpoint(bridged, true, { ...api, address: '0.0.0.0' })).toEqual({ host: '10.222.0.1', port: 10250 });
    expect(kubernetesServiceEndpoint(bridged, true, { ...api, address: '10.222.0.1' })).toEqual({ host: '10.222.0.1', port: 10250 });
    expect(kubernetesServiceEndpoint(bridged, false, { ...api, address: '0.0.0.0' })).toBeUndefined();
    expect(kubernetesServiceEndpoint(host, true, { ...api, tlsPort: 0 })).toBeUndefined();
  });

  it('names the variables as envvars.FromServices does for the kubernetes service', () => {
    expect(Object.fromEntries(kubernetesServiceEnv({ host: '127.0.0.1', port: 6443 }))).toEqual({
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: '6443',
      KUBERNETES_SERVICE_PORT_HTTPS: '6443',
      KUBERNETES_PORT: 'tcp://127.0.0.1:6443',
      KUBERNETES_PORT_6443_TCP: 'tcp://127.0.0.1:6443',
      KUBERNETES_PORT_6443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_6443_TCP_PORT: '6443',
      KUBERNETES_PORT_6443_TCP_ADDR: '127.0.0.1',
    });
    expect(kubernetesServiceEnv(undefined)).toEqual([]);
    expect(podNetworkGateway('10.222.3.0/24')).toBe('10.222.3.1');
    expect(podNetworkGateway('')).toBe('');
  });
});

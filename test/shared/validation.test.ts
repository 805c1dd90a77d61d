import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { applyPodDefaults } from '../../src/shared/defaults.js';
import { formatFieldError } from '../../src/shared/errors.js';
import { kSupportedContainerFields, kSupportedPodSpecFields, validatePod } from '../../src/shared/validation.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Raw = any;

const base: Raw = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', labels: { app: 'web' }, annotations: { 'example.com/owner': 'team-a' } },
  spec: {
    containers: [
      {
        name: 'web',
        image: 'kubelet-ts/busybox:1.35',
        command: ['httpd', '-f'],
        ports: [{ name: 'http', containerPort: 8080 }],
        env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
        resources: { limits: { cpu: '500m', memory: '64Mi' }, requests: { cpu: '100m' } },
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        readinessProbe: { httpGet: { port: 'http' } },
      },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
  },
};

function errorsOf(mutate: (p: Raw) => void): string[] {
  const raw = structuredClone(base);
  mutate(raw);
  return validatePod(applyPodDefaults(raw as Pod)).map(formatFieldError);
}

const c0 = (p: Raw): Raw => p.spec.containers[0];
const L63 =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUB =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QN =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LV =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('validatePod', () => {
  it('accepts the base pod and a defaulted empty-ish one', () => {
    expect(errorsOf(() => {})).toEqual([]);
    expect(
      errorsOf((p) => {
        p.spec = { containers: [{ name: 'c', image: 'i:1' }] };
      }),
    ).toEqual([]);
  });

  it.each<[string, (p: Raw) => void, string[]]>([
    // metadata
    [
      'missing name',
      (p) => {
        delete p.metadata.name;
      },
      ['metadata.name: Required value: name or generateName is required'],
    ],
    [
      'bad name',
      (p) => {
        p.metadata.name = 'Web';
      },
      [`metadata.name: Invalid value: "Web": ${SUB}`],
    ],
    [
      'name too long',
      (p) => {
        p.metadata.name = 'a'.repeat(254);
      },
      [`metadata.name: Invalid value: "${'a'.repeat(254)}": must be no more than 253 characters`],
    ],
    [
      'bad namespace',
      (p) => {
        p.metadata.namespace = 'kube.system';
      },
      [`metadata.namespace: Invalid value: "kube.system": ${L63}`],
    ],
    [
      'generateName',
      (p) => {
        p.metadata.generateName = 'web-';
      },
      ['metadata.generateName: Not supported'],
    ],
    [
      'ownerReferences',
      (p) => {
        p.metadata.ownerReferences = [{ name: 'x' }];
      },
      ['metadata.ownerReferences: Not supported'],
    ],
    [
      'apiserver bookkeeping is tolerated',
      (p) => {
        Object.assign(p.metadata, { creationTimestamp: '2024-01-01T00:00:00Z', resourceVersion: '42', uid: 'u-1' });
      },
      [],
    ],
    [
      'a UUID uid',
      (p) => {
        p.metadata.uid = '0b4c2a52-1d4e-4f5c-9a43-7d6f00c1e001';
      },
      [],
    ],
    ...['a_b_c', 'a/b', '..', 'a.b', 'a b'].map(
      (uid) =>
        [
          `uid ${JSON.stringify(uid)} (container names split on '_', pod dirs on '/')`,
          (p: Raw) => {
            p.metadata.uid = uid;
          },
          [
            `metadata.uid: Invalid value: ${JSON.stringify(uid)}: must consist of letters, digits or '-' (e.g. a UUID): the node's container names split on '_' and its pod directories on '/'`,
          ],
        ] as [string, (p: Raw) => void, string[]],
    ),
    [
      'uid too long',
      (p) => {
        p.metadata.uid = 'a'.repeat(129);
      },
      ['metadata.uid: Too long: must have at most 128 characters'],
    ],
    [
      'bad label key',
      (p) => {
        p.metadata.labels['-app'] = 'x';
      },
      [`metadata.labels: Invalid value: "-app": ${QN}`],
    ],
    [
      'bad label value',
      (p) => {
        p.metadata.labels.app = 'a b';
      },
      [`metadata.labels: Invalid value: "a b": ${LV}`],
    ],
    [
      'long label value',
      (p) => {
        p.metadata.labels.app = 'v'.repeat(64);
      },
      [`metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`],
    ],
    [
      'non-string label value',
      (p) => {
        p.metadata.labels.version = 2;
      },
      ['metadata.labels[version]: Invalid value: 2: must be a string'],
    ],
    [
      'bad annotation key',
      (p) => {
        p.metadata.annotations['a/b/c'] = 'x';
      },
      [expect.stringMatching(/^metadata\.annotations: Invalid value: "a\/b\/c": a qualified name must consist of/) as unknown as string],
    ],
    [
      'annotations over 256 KiB',
      (p) => {
        p.metadata.annotations.big = 'x'.repeat(262144);
      },
      ['metadata.annotations: Too long: must have at most 262144 bytes'],
    ],
    // containers
    [
      'no containers',
      (p) => {
        p.spec.containers = [];
      },
      ['spec.containers: Required value'],
    ],
    [
      'containers not a list',
      (p) => {
        p.spec.containers = 'web';
      },
      ['spec.containers: Invalid value: "web": must be a list', 'spec.containers: Required value'],
    ],
    [
      'duplicate container name',
      (p) => {
        p.spec.containers.push({ name: 'web', image: 'i:1' });
      },
      ['spec.containers[1].name: Duplicate value: "web"'],
    ],
    [
      'init container reusing a container name',
      (p) => {
        p.spec.initContainers = [{ name: 'web', image: 'i:1' }];
      },
      ['spec.initContainers[0].name: Duplicate value: "web"'],
    ],
    [
      'missing container name',
      (p) => {
        delete c0(p).name;
      },
      ['spec.containers[0].name: Required value'],
    ],
    [
      'bad container name',
      (p) => {
        c0(p).name = 'Web_1';
      },
      [`spec.containers[0].name: Invalid value: "Web_1": ${L63}`],
    ],
    [
      'missing image',
      (p) => {
        delete c0(p).image;
      },
      ['spec.containers[0].image: Required value'],
    ],
    [
      'image with spaces',
      (p) => {
        c0(p).image = ' busybox';
      },
      ['spec.containers[0].image: Invalid value: " busybox": must not have leading or trailing whitespace'],
    ],
    [
      'bad imagePullPolicy',
      (p) => {
        c0(p).imagePullPolicy = 'Sometimes';
      },
      ['spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"'],
    ],
    [
      'bad restartPolicy',
      (p) => {
        p.spec.restartPolicy = 'Sometimes';
      },
      ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'],
    ],
    [
      'bad dnsPolicy',
      (p) => {
        p.spec.dnsPolicy = 'Google';
      },
      ['spec.dnsPolicy: Unsupported value: "Google": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"'],
    ],
    [
      'dnsPolicy None without dnsConfig',
      (p) => {
        p.spec.dnsPolicy = 'None';
      },
      ['spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
    ],
    [
      'dnsPolicy None with no nameserver',
      (p) => {
        p.spec.dnsPolicy = 'None';
        p.spec.dnsConfig = { searches: ['a.b'] };
      },
      ['spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when DNSPolicy is None'],
    ],
    [
      'dnsPolicy None with dnsConfig',
      (p) => {
        p.spec.dnsPolicy = 'None';
        p.spec.dnsConfig = { nameservers: ['1.2.3.4'], searches: ['a.b.', 'c'], options: [{ name: 'ndots', value: '2' }] };
      },
      [],
    ],
    [
      'dnsConfig: a bad nameserver and search, an option without a name',
      (p) => {
        p.spec.dnsConfig = { nameservers: ['x'], searches: ['A_B'], options: [{ value: '1' }] };
      },
      [
        'spec.dnsConfig.nameservers[0]: Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        `spec.dnsConfig.searches[0]: Invalid value: "A_B": ${SUB}`,
        'spec.dnsConfig.options[0]: Required value: Option.Name must not be empty',
      ],
    ],
    [
      'dnsConfig: 33 search paths',
      (p) => {
        p.spec.dnsConfig = { searches: Array.from({ length: 33 }, (_, i) => `s${i}`) };
      },
      [expect.stringContaining('spec.dnsConfig.searches: Invalid value: ') as unknown as string],
    ],
    [
      'hostAliases',
      (p) => {
        p.spec.hostAliases = [{ ip: '10.0.0.1', hostnames: ['a.b', 'c'] }];
      },
      [],
    ],
    [
      'hostAliases: bad ip and hostname',
      (p) => {
        p.spec.hostAliases = [{ ip: '1.2.3', hostnames: ['A'] }];
      },
      [
        'spec.hostAliases[0].ip: Invalid value: "1.2.3": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        `spec.hostAliases[0].hostnames[0]: Invalid value: "A": ${SUB}`,
      ],
    ],
    [
      'subdomain, setHostnameAsFQDN, hostPID, hostIPC',
      (p) => {
        Object.assign(p.spec, { subdomain: 'sub', setHostnameAsFQDN: true, hostPID: true, hostIPC: true });
      },
      [],
    ],
    [
      'bad subdomain',
      (p) => {
        p.spec.subdomain = 'a.b';
      },
      [`spec.subdomain: Invalid value: "a.b": ${L63}`],
    ],
    [
      'hostPID not a boolean',
      (p) => {
        p.spec.hostPID = 'yes';
      },
      ['spec.hostPID: Invalid value: "yes": must be a boolean'],
    ],
    [
      'a system priority class',
      (p) => {
        p.spec.priorityClassName = 'system-node-critical';
      },
      [],
    ],
    [
      'an unknown priority class',
      (p) => {
        p.spec.priorityClassName = 'high';
      },
      [
        'spec.priorityClassName: Forbidden: no PriorityClass with name high was found (a node without an apiserver knows only system-node-critical and system-cluster-critical)',
      ],
    ],
    [
      "a priority that is not the class's",
      (p) => {
        p.spec.priorityClassName = 'system-cluster-critical';
        p.spec.priority = 7;
      },
      [
        'spec.priority: Forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 2000000000 from the given PriorityClass name',
      ],
    ],
    [
      'bad preemptionPolicy',
      (p) => {
        p.spec.preemptionPolicy = 'Always';
      },
      ['spec.preemptionPolicy: Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"'],
    ],
    [
      'os linux',
      (p) => {
        p.spec.os = { name: 'linux' };
      },
      [],
    ],
    [
      'os plan9',
      (p) => {
        p.spec.os = { name: 'plan9' };
      },
      ['spec.os.name: Unsupported value: "plan9": supported values: "linux", "windows"'],
    ],
    [
      'runtimeClassName',
      (p) => {
        p.spec.runtimeClassName = 'kata';
      },
      [expect.stringContaining('spec.runtimeClassName: Not supported: pod rejected: RuntimeClass "kata" not found') as unknown as string],
    ],
    [
      'empty runtimeClassName and overhead',
      (p) => {
        p.spec.runtimeClassName = '';
        p.spec.overhead = {};
      },
      [],
    ],
    [
      'overhead',
      (p) => {
        p.spec.overhead = { cpu: '10m' };
      },
      ['spec.overhead: Forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'],
    ],
    [
      'command not strings',
      (p) => {
        c0(p).command = ['sh', 1];
      },
      ['spec.containers[0].command[1]: Invalid value: 1: must be a string'],
    ],
    [
      'relative workingDir',
      (p) => {
        c0(p).workingDir = 'tmp';
      },
      ['spec.containers[0].workingDir: Invalid value: "tmp": must be an absolute path'],
    ],
    [
      'bad terminationMessagePolicy',
      (p) => {
        c0(p).terminationMessagePolicy = 'Logs';
      },
      ['spec.containers[0].terminationMessagePolicy: Unsupported value: "Logs": supported values: "File", "FallbackToLogsOnError"'],
    ],
    [
      'restartPolicy on a regular container',
      (p) => {
        c0(p).restartPolicy = 'Always';
      },
      ['spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers'],
    ],
    [
      'init container restartPolicy Never',
      (p) => {
        p.spec.initContainers = [{ name: 'i', image: 'i:1', restartPolicy: 'Never' }];
      },
      ['spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ],
    [
      'probe on a plain init container',
      (p) => {
        p.spec.initContainers = [{ name: 'i', image: 'i:1', livenessProbe: { exec: { command: ['true'] } } }];
      },
      ['spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always'],
    ],
    [
      'probe on a sidecar',
      (p) => {
        p.spec.initContainers = [{ name: 'i', image: 'i:1', restartPolicy: 'Always', livenessProbe: { exec: { command: ['true'] } } }];
      },
      [],
    ],
    // ports
    [
      'port out of range',
      (p) => {
        c0(p).ports[0].containerPort = 70000;
      },
      ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
    ],
    [
      'port missing',
      (p) => {
        delete c0(p).ports[0].containerPort;
      },
      ['spec.containers[0].ports[0].containerPort: Required value'],
    ],
    [
      'hostPort out of range',
      (p) => {
        c0(p).ports[0].hostPort = -1;
      },
      ['spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive'],
    ],
    [
      'bad protocol',
      (p) => {
        c0(p).ports[0].protocol = 'ICMP';
      },
      ['spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'],
    ],
    [
      'port name too long',
      (p) => {
        c0(p).ports[0].name = 'a-very-long-port-name';
      },
      ['spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters'],
    ],
    [
      'port name without a letter',
      (p) => {
        c0(p).ports[0].name = '8080';
      },
      ['spec.containers[0].ports[0].name: Invalid value: "8080": must contain at least one letter (a-z)'],
    ],
    [
      'duplicate port name',
      (p) => {
        c0(p).ports.push({ name: 'http', containerPort: 8081 });
      },
      ['spec.containers[0].ports[1].name: Duplicate value: "http"'],
    ],
    [
      'duplicate hostPort',
      (p) => {
        c0(p).ports[0].hostPort = 80;
        p.spec.containers.push({ name: 'b', image: 'i:1', ports: [{ containerPort: 81, hostPort: 80 }] });
      },
      ['spec.containers[1].ports[0].hostPort: Duplicate value: "80/TCP"'],
    ],
    [
      'hostNetwork hostPort mismatch',
      (p) => {
        p.spec.hostNetwork = true;
        c0(p).ports[0].hostPort = 80;
      },
      ['spec.containers[0].ports[0].hostPort: Invalid value: 80: must match `containerPort` when `hostNetwork` is true'],
    ],
    [
      'hostNetwork defaults hostPort',
      (p) => {
        p.spec.hostNetwork = true;
      },
      [],
    ],
    [
      'hostIP',
      (p) => {
        c0(p).ports[0].hostIP = '127.0.0.1';
      },
      [],
    ],
    [
      'hostIP not an IP',
      (p) => {
        c0(p).ports[0].hostIP = 'localhost';
      },
      ['spec.containers[0].ports[0].hostIP: Invalid value: "localhost": must be a valid IP address'],
    ],
    // env
    [
      'bad env name',
      (p) => {
        c0(p).env.push({ name: '1X', value: 'v' });
      },
      [
        expect.stringMatching(
          /^spec\.containers\[0\]\.env\[1\]\.name: Invalid value: "1X": a valid environment variable name must consist of/,
        ) as unknown as string,
      ],
    ],
    [
      'missing env name',
      (p) => {
        c0(p).env.push({ value: 'v' });
      },
      ['spec.containers[0].env[1].name: Required value'],
    ],
    [
      'value and valueFrom',
      (p) => {
        c0(p).env[0].value = 'x';
      },
      ['spec.containers[0].env[0].valueFrom: Invalid value: "": may not be specified when `value` is not empty'],
    ],
    [
      'empty valueFrom',
      (p) => {
        c0(p).env[0].valueFrom = { fieldRef: null };
      },
      [
        'spec.containers[0].env[0].valueFrom: Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`',
      ],
    ],
    [
      'secretKeyRef',
      (p) => {
        c0(p).env[0].valueFrom = { secretKeyRef: { name: 's', key: 'k' } };
      },
      [],
    ],
    [
      'secretKeyRef without key',
      (p) => {
        c0(p).env[0].valueFrom = { secretKeyRef: { name: 's' } };
      },
      ['spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value'],
    ],
    [
      'configMapKeyRef with a bad key',
      (p) => {
        c0(p).env[0].valueFrom = { configMapKeyRef: { name: 'c', key: 'a b' } };
      },
      [
        expect.stringMatching(
          /^spec\.containers\[0\]\.env\[0\]\.valueFrom\.configMapKeyRef\.key: Invalid value: "a b": a valid config key/,
        ) as unknown as string,
      ],
    ],
    [
      'envFrom',
      (p) => {
        c0(p).envFrom = [{ configMapRef: { name: 'x' }, prefix: 'P_' }, { secretRef: { name: 's', optional: true } }];
      },
      [],
    ],
    [
      'envFrom with both refs',
      (p) => {
        c0(p).envFrom = [{ configMapRef: { name: 'x' }, secretRef: { name: 's' } }];
      },
      ['spec.containers[0].envFrom[0]: Invalid value: "": may not have more than one field specified at a time'],
    ],
    [
      'envFrom without a name',
      (p) => {
        c0(p).envFrom = [{ configMapRef: {} }];
      },
      ['spec.containers[0].envFrom[0].configMapRef.name: Required value'],
    ],
    [
      'envFrom with a bad prefix',
      (p) => {
        c0(p).envFrom = [{ configMapRef: { name: 'x' }, prefix: '1-' }];
      },
      [expect.stringMatching(/^spec\.containers\[0\]\.envFrom\[0\]\.prefix: Invalid value: "1-"/) as unknown as string],
    ],
    [
      'unsupported fieldPath',
      (p) => {
        c0(p).env[0].valueFrom.fieldRef.fieldPath = 'spec.schedulerName';
      },
      [
        `spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "spec.schedulerName": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.podIP", "metadata.labels['<KEY>']", "metadata.annotations['<KEY>']"`,
      ],
    ],
    [
      'label fieldPath',
      (p) => {
        c0(p).env[0].valueFrom.fieldRef.fieldPath = "metadata.labels['app']";
      },
      [],
    ],
    [
      'bad label key in fieldPath',
      (p) => {
        c0(p).env[0].valueFrom.fieldRef.fieldPath = "metadata.labels['-x']";
      },
      [`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "-x": ${QN}`],
    ],
    [
      'fieldRef apiVersion v2',
      (p) => {
        c0(p).env[0].valueFrom.fieldRef.apiVersion = 'v2';
      },
      ['spec.containers[0].env[0].valueFrom.fieldRef.apiVersion: Unsupported value: "v2": supported values: "v1"'],
    ],
    [
      'resourceFieldRef',
      (p) => {
        c0(p).env.push({ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } });
      },
      [],
    ],
    [
      'resourceFieldRef bad resource',
      (p) => {
        c0(p).env.push({ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } });
      },
      [
        'spec.containers[0].env[1].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"',
      ],
    ],
    [
      'resourceFieldRef bad divisor',
      (p) => {
        c0(p).env.push({ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '2' } } });
      },
      [
        'spec.containers[0].env[1].valueFrom.resourceFieldRef.divisor: Invalid value: "2": only divisor\'s values 1m and 1 are supported with the cpu resource',
      ],
    ],
    [
      'resourceFieldRef unknown container',
      (p) => {
        c0(p).env.push({ name: 'X', valueFrom: { resourceFieldRef: { containerName: 'db', resource: 'limits.memory' } } });
      },
      [
        'spec.containers[0].env[1].valueFrom.resourceFieldRef.containerName: Invalid value: "db": must be the name of a container in the pod',
      ],
    ],
    // resources
    [
      'bad quantity',
      (p) => {
        c0(p).resources.limits.cpu = 'lots';
      },
      [
        'spec.containers[0].resources.limits[cpu]: Invalid value: "lots": quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'',
      ],
    ],
    [
      'negative quantity',
      (p) => {
        c0(p).resources.requests.cpu = '-1';
      },
      ['spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
    ],
    [
      'requests above limits',
      (p) => {
        c0(p).resources.requests.cpu = '1';
      },
      ['spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m'],
    ],
    [
      'numeric quantities compare by value',
      (p) => {
        c0(p).resources = { limits: { cpu: 1, memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } };
      },
      [],
    ],
    [
      'unsupported resource',
      (p) => {
        c0(p).resources.limits.storage = '1Gi';
      },
      ['spec.containers[0].resources.limits[storage]: Not supported', 'spec.containers[0].resources.requests[storage]: Not supported'],
    ],
    [
      'ephemeral-storage is accepted (issue #12)',
      (p) => {
        c0(p).resources.limits['ephemeral-storage'] = '1Gi';
      },
      [],
    ],
    [
      'extended resources validate, refused later at admission',
      (p) => {
        c0(p).resources.limits['example.com/foo'] = '2';
      },
      [],
    ],
    [
      'extended resource request must equal its limit',
      (p) => {
        c0(p).resources.limits['example.com/foo'] = '2';
        c0(p).resources.requests['example.com/foo'] = '1';
      },
      ['spec.containers[0].resources.requests[example.com/foo]: Invalid value: "1": must be equal to example.com/foo limit of 2'],
    ],
    [
      'extended resource request needs a limit',
      (p) => {
        c0(p).resources.requests['nvidia.com/gpu'] = '1';
      },
      ['spec.containers[0].resources.requests[nvidia.com/gpu]: Forbidden: Limit must be set for non overcommitable resources'],
    ],
    [
      'extended resource must be an integer',
      (p) => {
        c0(p).resources.limits['example.com/foo'] = '500m';
      },
      [
        'spec.containers[0].resources.limits[example.com/foo]: Invalid value: "500m": must be an integer',
        'spec.containers[0].resources.requests[example.com/foo]: Invalid value: "500m": must be an integer',
      ],
    ],
    [
      'hugepages validate',
      (p) => {
        c0(p).resources.limits['hugepages-2Mi'] = '4Mi';
      },
      [],
    ],
    // volumes and mounts
    [
      'duplicate volume',
      (p) => {
        p.spec.volumes.push({ name: 'data', emptyDir: {} });
      },
      ['spec.volumes[1].name: Duplicate value: "data"'],
    ],
    [
      'bad volume name',
      (p) => {
        p.spec.volumes.push({ name: 'Data', emptyDir: {} });
      },
      [`spec.volumes[1].name: Invalid value: "Data": ${L63}`],
    ],
    [
      'two volume sources',
      (p) => {
        p.spec.volumes[0].hostPath = { path: '/tmp' };
      },
      ['spec.volumes[0].emptyDir: Forbidden: may not specify more than 1 volume type'],
    ],
    [
      'configMap volume',
      (p) => {
        p.spec.volumes.push({
          name: 'cm',
          configMap: { name: 'x', items: [{ key: 'k', path: 'a/k', mode: 0o400 }], defaultMode: 0o644, optional: true },
        });
      },
      [],
    ],
    [
      'configMap item path with ..',
      (p) => {
        p.spec.volumes.push({ name: 'cm', configMap: { name: 'x', items: [{ key: 'k', path: '../k' }] } });
      },
      ['spec.volumes[1].configMap.items[0].path: Invalid value: "../k": must not contain \'..\''],
    ],
    [
      'configMap without name, bad mode',
      (p) => {
        p.spec.volumes.push({ name: 'cm', configMap: { defaultMode: 0o1777 } });
      },
      [
        'spec.volumes[1].configMap.name: Required value',
        'spec.volumes[1].configMap.defaultMode: Invalid value: 1023: must be a number between 0 and 0777 (octal), both inclusive',
      ],
    ],
    [
      'secret volume',
      (p) => {
        p.spec.volumes.push({ name: 's', secret: { secretName: 'x', items: [{ key: 'k', path: 'k' }] } });
      },
      [],
    ],
    [
      'downwardAPI volume',
      (p) => {
        p.spec.volumes.push({
          name: 'd',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'mem', resourceFieldRef: { containerName: 'web', resource: 'limits.memory' } },
            ],
          },
        });
      },
      [],
    ],
    [
      'downwardAPI bad fieldPath and no containerName',
      (p) => {
        p.spec.volumes.push({
          name: 'd',
          downwardAPI: {
            items: [
              { path: 'n', fieldRef: { fieldPath: 'spec.nodeName' } },
              { path: 'm', resourceFieldRef: { resource: 'limits.memory' } },
            ],
          },
        });
      },
      [
        'spec.volumes[1].downwardAPI.items[0].fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.name", "metadata.namespace", "metadata.labels", "metadata.annotations", "metadata.uid"',
        'spec.volumes[1].downwardAPI.items[1].resourceFieldRef.containerName: Required value',
      ],
    ],
    [
      'projected volume',
      (p) => {
        p.spec.volumes.push({
          name: 'pr',
          projected: {
            defaultMode: 0o440,
            sources: [
              { configMap: { name: 'c' } },
              { secret: { name: 's' } },
              { downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
            ],
          },
        });
      },
      [],
    ],
    [
      'projected serviceAccountToken',
      (p) => {
        p.spec.volumes.push({
          name: 'pr',
          projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'vault', expirationSeconds: 600 } }] },
        });
      },
      [],
    ],
    [
      'projected serviceAccountToken too short, no path',
      (p) => {
        p.spec.volumes.push({ name: 'pr', projected: { sources: [{ serviceAccountToken: { expirationSeconds: 599 } }] } });
      },
      [
        'spec.volumes[1].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes',
        'spec.volumes[1].projected.sources[0].serviceAccountToken.path: Required value',
      ],
    ],
    [
      'projected clusterTrustBundle',
      (p) => {
        p.spec.volumes.push({ name: 'pr', projected: { sources: [{ clusterTrustBundle: { path: 'ca' } }] } });
      },
      ['spec.volumes[1].projected.sources[0].clusterTrustBundle: Not supported: there is no apiserver on a lone node to sign or issue it'],
    ],
    [
      'projected duplicate paths',
      (p) => {
        p.spec.volumes.push({
          name: 'pr',
          projected: {
            sources: [
              { configMap: { name: 'c', items: [{ key: 'a', path: 'x' }] } },
              { secret: { name: 's', items: [{ key: 'b', path: 'x' }] } },
            ],
          },
        });
      },
      ['spec.volumes[1].projected.sources[1].secret.items[0].path: Invalid value: "x": conflicting duplicate paths'],
    ],
    [
      'hostPath relative and with ..',
      (p) => {
        p.spec.volumes.push({ name: 'h', hostPath: { path: 'a/../b' } });
      },
      [
        'spec.volumes[1].hostPath.path: Invalid value: "a/../b": must be an absolute path',
        'spec.volumes[1].hostPath.path: Invalid value: "a/../b": must not contain \'..\'',
      ],
    ],
    [
      'hostPath without path',
      (p) => {
        p.spec.volumes.push({ name: 'h', hostPath: { type: 'Directory' } });
      },
      ['spec.volumes[1].hostPath.path: Required value'],
    ],
    [
      'bad hostPath type',
      (p) => {
        p.spec.volumes.push({ name: 'h', hostPath: { path: '/x', type: 'Pipe' } });
      },
      [
        'spec.volumes[1].hostPath.type: Unsupported value: "Pipe": supported values: "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"',
      ],
    ],
    [
      'bad emptyDir medium',
      (p) => {
        p.spec.volumes[0].emptyDir = { medium: 'HugePages' };
      },
      ['spec.volumes[0].emptyDir.medium: Unsupported value: "HugePages": supported values: "", "Memory"'],
    ],
    [
      'mount of a missing volume',
      (p) => {
        c0(p).volumeMounts.push({ name: 'logs', mountPath: '/logs' });
      },
      ['spec.containers[0].volumeMounts[1].name: Not found: "logs"'],
    ],
    [
      'duplicate mountPath',
      (p) => {
        c0(p).volumeMounts.push({ name: 'data', mountPath: '/data', readOnly: true });
      },
      ['spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/data": must be unique'],
    ],
    [
      'relative mountPath',
      (p) => {
        c0(p).volumeMounts[0].mountPath = 'data';
      },
      ['spec.containers[0].volumeMounts[0].mountPath: Invalid value: "data": must be an absolute path'],
    ],
    [
      'missing mountPath',
      (p) => {
        delete c0(p).volumeMounts[0].mountPath;
      },
      ['spec.containers[0].volumeMounts[0].mountPath: Required value'],
    ],
    [
      'subPath',
      (p) => {
        c0(p).volumeMounts[0].subPath = 'x/y';
      },
      [],
    ],
    [
      'subPathExpr',
      (p) => {
        c0(p).volumeMounts[0].subPathExpr = '$(POD_NAME)';
      },
      [],
    ],
    [
      'subPath and subPathExpr',
      (p) => {
        c0(p).volumeMounts[0].subPath = 'x';
        c0(p).volumeMounts[0].subPathExpr = 'y';
      },
      ['spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "y": subPathExpr and subPath are mutually exclusive'],
    ],
    [
      'absolute subPath, subPath with ..',
      (p) => {
        c0(p).volumeMounts[0].subPath = '/x';
        c0(p).volumeMounts.push({ name: 'data', mountPath: '/d2', subPath: 'a/../..' });
      },
      [
        'spec.containers[0].volumeMounts[0].subPath: Invalid value: "/x": must be a relative path',
        'spec.containers[0].volumeMounts[1].subPath: Invalid value: "a/../..": must not contain \'..\'',
      ],
    ],
    [
      'mountPropagation HostToContainer',
      (p) => {
        c0(p).volumeMounts[0].mountPropagation = 'HostToContainer';
      },
      [],
    ],
    [
      'bad mountPropagation',
      (p) => {
        c0(p).volumeMounts[0].mountPropagation = 'Shared';
      },
      [
        'spec.containers[0].volumeMounts[0].mountPropagation: Unsupported value: "Shared": supported values: "None", "HostToContainer", "Bidirectional"',
      ],
    ],
    [
      'Bidirectional needs a privileged container',
      (p) => {
        c0(p).volumeMounts[0].mountPropagation = 'Bidirectional';
      },
      [
        'spec.containers[0].volumeMounts[0].mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers',
      ],
    ],
    [
      'persistentVolumeClaim (a local-path claim)',
      (p) => {
        p.spec.volumes.push({ name: 'pvc', persistentVolumeClaim: { claimName: 'data', readOnly: true } });
      },
      [],
    ],
    [
      'persistentVolumeClaim without claimName',
      (p) => {
        p.spec.volumes.push({ name: 'pvc', persistentVolumeClaim: { readOnly: 'yes' } });
      },
      [
        'spec.volumes[1].persistentVolumeClaim.claimName: Required value',
        'spec.volumes[1].persistentVolumeClaim.readOnly: Invalid value: "yes": must be a boolean',
      ],
    ],
    // pod-level numbers and names
    [
      'negative grace period',
      (p) => {
        p.spec.terminationGracePeriodSeconds = -1;
      },
      ['spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0'],
    ],
    [
      'zero activeDeadlineSeconds',
      (p) => {
        p.spec.activeDeadlineSeconds = 0;
      },
      ['spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive'],
    ],
    [
      'fractional activeDeadlineSeconds',
      (p) => {
        p.spec.activeDeadlineSeconds = 1.5;
      },
      ['spec.activeDeadlineSeconds: Invalid value: 1.5: must be an integer'],
    ],
    [
      'bad hostname',
      (p) => {
        p.spec.hostname = 'a.b';
      },
      [`spec.hostname: Invalid value: "a.b": ${L63}`],
    ],
    [
      'bad nodeName',
      (p) => {
        p.spec.nodeName = 'Node_1';
      },
      [`spec.nodeName: Invalid value: "Node_1": ${SUB}`],
    ],
    [
      'hostNetwork not a boolean',
      (p) => {
        p.spec.hostNetwork = 'yes';
      },
      ['spec.hostNetwork: Invalid value: "yes": must be a boolean'],
    ],
    // probes and lifecycle
    [
      'probe without handler',
      (p) => {
        c0(p).livenessProbe = { periodSeconds: 5 };
      },
      ['spec.containers[0].livenessProbe: Required value: must specify a handler type'],
    ],
    [
      'probe with two handlers',
      (p) => {
        c0(p).readinessProbe.tcpSocket = { port: 8080 };
      },
      ['spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type'],
    ],
    [
      'grpc probe',
      (p) => {
        c0(p).livenessProbe = { grpc: { port: 9000 } };
        c0(p).startupProbe = { grpc: { port: 9000, service: 'my.Service' } };
      },
      [],
    ],
    [
      'grpc probe without port',
      (p) => {
        c0(p).livenessProbe = { grpc: { service: 'x' } };
      },
      ['spec.containers[0].livenessProbe.grpc.port: Required value'],
    ],
    [
      'grpc probe port out of range',
      (p) => {
        c0(p).livenessProbe = { grpc: { port: 0 } };
        c0(p).startupProbe = { grpc: { port: 65536 } };
      },
      [
        'spec.containers[0].livenessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive',
        'spec.containers[0].startupProbe.grpc.port: Invalid value: 65536: must be between 1 and 65535, inclusive',
      ],
    ],
    [
      'grpc probe named port, bad service, unknown field',
      (p) => {
        c0(p).livenessProbe = { grpc: { port: 'grpc', service: 5, host: 'x' } };
      },
      [
        'spec.containers[0].livenessProbe.grpc.host: Not supported',
        'spec.containers[0].livenessProbe.grpc.port: Invalid value: "grpc": must be an integer',
        'spec.containers[0].livenessProbe.grpc.service: Invalid value: 5: must be a string',
      ],
    ],
    [
      'grpc probe with another handler',
      (p) => {
        c0(p).readinessProbe.grpc = { port: 9000 };
      },
      ['spec.containers[0].readinessProbe.grpc: Forbidden: may not specify more than 1 handler type'],
    ],
    [
      'liveness successThreshold',
      (p) => {
        c0(p).livenessProbe = { exec: { command: ['true'] }, successThreshold: 2 };
      },
      ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1'],
    ],
    [
      'startup successThreshold',
      (p) => {
        c0(p).startupProbe = { exec: { command: ['true'] }, successThreshold: 3 };
      },
      ['spec.containers[0].startupProbe.successThreshold: Invalid value: 3: must be 1'],
    ],
    [
      'readiness successThreshold may be more',
      (p) => {
        c0(p).readinessProbe.successThreshold = 3;
      },
      [],
    ],
    [
      'negative failureThreshold',
      (p) => {
        c0(p).readinessProbe.failureThreshold = -1;
      },
      ['spec.containers[0].readinessProbe.failureThreshold: Invalid value: -1: must be greater than or equal to 1'],
    ],
    [
      'negative initialDelaySeconds',
      (p) => {
        c0(p).readinessProbe.initialDelaySeconds = -5;
      },
      ['spec.containers[0].readinessProbe.initialDelaySeconds: Invalid value: -5: must be greater than or equal to 0'],
    ],
    [
      'exec without command',
      (p) => {
        c0(p).livenessProbe = { exec: {} };
      },
      ['spec.containers[0].livenessProbe.exec.command: Required value'],
    ],
    [
      'bad httpGet port and scheme',
      (p) => {
        Object.assign(c0(p).readinessProbe.httpGet, { port: 0, scheme: 'FTP' });
      },
      [
        'spec.containers[0].readinessProbe.httpGet.port: Invalid value: 0: must be between 1 and 65535, inclusive',
        'spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: "FTP": supported values: "HTTP", "HTTPS"',
      ],
    ],
    [
      'bad http header name',
      (p) => {
        c0(p).readinessProbe.httpGet.httpHeaders = [{ name: 'X Y', value: 'v' }];
      },
      [
        "spec.containers[0].readinessProbe.httpGet.httpHeaders[0].name: Invalid value: \"X Y\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
      ],
    ],
    [
      'lifecycle hooks',
      (p) => {
        c0(p).lifecycle = { postStart: { exec: { command: ['true'] } }, preStop: { httpGet: { port: 8080 } } };
      },
      [],
    ],
    [
      'empty lifecycle hook',
      (p) => {
        c0(p).lifecycle = { preStop: {} };
      },
      ['spec.containers[0].lifecycle.preStop: Required value: must specify a handler type'],
    ],
    [
      'lifecycle sleep',
      (p) => {
        c0(p).lifecycle = { preStop: { sleep: { seconds: 5 } } };
      },
      ['spec.containers[0].lifecycle.preStop.sleep: Not supported'],
    ],
    // unsupported fields
    [
      'spec.affinity (issue #12: validated, matched at admission)',
      (p) => {
        p.spec.affinity = { nodeAffinity: {}, podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [] } };
      },
      [],
    ],
    [
      'required node affinity without terms',
      (p) => {
        p.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } };
      },
      [
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term',
      ],
    ],
    [
      'bad node selector requirements',
      (p) => {
        p.spec.affinity = {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchExpressions: [
                    { key: 'a', operator: 'In' },
                    { key: 'b', operator: 'Exists', values: ['x'] },
                    { key: 'c', operator: 'Gt', values: ['1', '2'] },
                    { key: 'd', operator: 'Near' },
                  ],
                  matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['n'] }],
                },
              ],
            },
          },
        };
      },
      [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[2].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].key: Unsupported value: "metadata.labels": supported values: "metadata.name"',
      ],
    ],
    [
      'bad nodeSelector',
      (p) => {
        p.spec.nodeSelector = { 'a b': 'c' };
      },
      [expect.stringMatching(/^spec\.nodeSelector: Invalid value: "a b": /)],
    ],
    [
      'container stdin and tty (issue #12: run)',
      (p) => {
        Object.assign(c0(p), { stdin: true, stdinOnce: true, tty: true });
      },
      [],
    ],
    [
      'automountServiceAccountToken and topologySpreadConstraints are accepted',
      (p) => {
        p.spec.automountServiceAccountToken = true;
        p.spec.topologySpreadConstraints = [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }];
      },
      [],
    ],
    [
      'container securityContext (run since issue #12)',
      (p) => {
        c0(p).securityContext = { privileged: true };
      },
      [],
    ],
    [
      'pod securityContext fields (run since issue #12)',
      (p) => {
        p.spec.securityContext = { runAsUser: 1000 };
      },
      [],
    ],
    [
      'container securityContext typo',
      (p) => {
        c0(p).securityContext = { runAsUsr: 1000 };
      },
      ['spec.containers[0].securityContext.runAsUsr: Not supported'],
    ],
    [
      'pod securityContext seLinuxChangePolicy',
      (p) => {
        p.spec.securityContext = { seLinuxChangePolicy: 'Recursive' };
      },
      ['spec.securityContext.seLinuxChangePolicy: Not supported'],
    ],
    [
      'a top-level typo',
      (p) => {
        p.sepc = { hostNetwork: true };
        p.spec.containers[0].imagee = 'x';
      },
      ['sepc: Not supported', 'spec.containers[0].imagee: Not supported'],
    ],
    [
      'zero values of unsupported fields are tolerated',
      (p) => {
        Object.assign(c0(p), { stdin: false, tty: false, envFrom: [], securityContext: {} });
        p.spec.hostPID = false;
      },
      [],
    ],
    [
      'status is ignored',
      (p) => {
        p.status = { phase: 'Bogus' };
      },
      [],
    ],
    // tolerations: accepted, shape-checked
    [
      'tolerations',
      (p) => {
        p.spec.tolerations = [{ operator: 'Exists' }, { key: 'k', value: 'v', effect: 'NoExecute', tolerationSeconds: 5 }];
      },
      [],
    ],
    [
      'bad toleration',
      (p) => {
        p.spec.tolerations = [{ key: 'k', operator: 'Maybe', effect: 'Never' }];
      },
      [
        'spec.tolerations[0].operator: Unsupported value: "Maybe": supported values: "Equal", "Exists"',
        'spec.tolerations[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    ],
  ])('%s', (_name, mutate, expected) => {
    expect(errorsOf(mutate)).toEqual(expected);
  });

  it('reports every error at once, in field order', () => {
    const errs = errorsOf((p) => {
      p.metadata.name = '';
      p.spec.containers.push({ name: 'web' });
      p.spec.affinity = {};
      p.spec.resourceClaims = [{ name: 'gpu' }];
    });
    expect(errs).toEqual([
      'metadata.name: Required value: name or generateName is required',
      'spec.resourceClaims: Not supported',
      'spec.containers[1].name: Duplicate value: "web"',
      'spec.containers[1].image: Required value',
    ]);
  });

  it('returns structured errors with the offending value', () => {
    const raw = structuredClone(base);
    raw.spec.containers.push({ name: 'web', image: 'i:1' });
    expect(validatePod(applyPodDefaults(raw))).toEqual([{ field: 'spec.containers[1].name', type: 'Duplicate value', value: 'web' }]);
  });

  it('exports allow-lists for the README', () => {
    expect(kSupportedPodSpecFields).toContain('tolerations');
    expect(kSupportedPodSpecFields).toContain('affinity');
    expect(kSupportedPodSpecFields).not.toContain('resourceClaims');
    expect(kSupportedContainerFields).toContain('stdin');
    expect(kSupportedContainerFields).not.toContain('volumeDevices');
  });
});

describe('validatePodForNode', () => {
  it('accepts probes, lifecycle hooks and activeDeadlineSeconds now that the runtime runs them', async () => {
    const { validatePodForNode, kValidatedButNotYetRun } = await import('../../src/shared/validation.js');
    const { formatFieldError } = await import('../../src/shared/errors.js');
    const { applyPodDefaults } = await import('../../src/shared/defaults.js');
    const pod = applyPodDefaults({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        activeDeadlineSeconds: 5,
        containers: [{ name: 'a', image: 'i', livenessProbe: { exec: { command: ['true'] } } }],
      },
    } as never);
    expect(kValidatedButNotYetRun).toEqual([]);
    expect(validatePodForNode(pod as never).map(formatFieldError)).toEqual([]);
    const hooked = applyPodDefaults({
      ...pod,
      spec: {
        containers: [
          {
            name: 'a',
            image: 'i',
            ports: [{ name: 'http', containerPort: 80 }],
            readinessProbe: { httpGet: { path: '/', port: 'http' } },
            startupProbe: { tcpSocket: { port: 80 }, failureThreshold: 30 },
            livenessProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 5 },
            lifecycle: { postStart: { exec: { command: ['true'] } }, preStop: { httpGet: { path: '/stop', port: 80 } } },
          },
        ],
      },
    } as never);
    expect(validatePodForNode(hooked as never).map(formatFieldError)).toEqual([]);
    const plain = applyPodDefaults({ ...pod, spec: { containers: [{ name: 'a', image: 'i' }] } } as never);
    expect(validatePodForNode(plain as never)).toEqual([]);
  });
});

describe('validatePodForNode refusals', () => {
  it('accepts an emptyDir medium and sizeLimit now that the volume manager runs them (issue 12)', async () => {
    const { validatePodForNode } = await import('../../src/shared/validation.js');
    const { formatFieldError } = await import('../../src/shared/errors.js');
    const { applyPodDefaults } = await import('../../src/shared/defaults.js');
    const pod = applyPodDefaults({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default' },
      spec: {
        containers: [{ name: 'a', image: 'i' }],
        volumes: [
          { name: 'plain', emptyDir: {} },
          { name: 'mem', emptyDir: { medium: 'Memory', sizeLimit: '1Mi' } },
        ],
      },
    } as never);
    expect(validatePodForNode(pod as never).map(formatFieldError)).toEqual([]);
  });
});

// End-to-end pod lifecycle against the real dockerd: init containers, sidecars, termination
// (grace period, termination messages, OOMKilled, activeDeadlineSeconds) and runtime failures;
// the role of test/e2e/common/node/init_container.go and runtime.go for kubelet-ts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import type { Pod } from '../../src/shared/api.js';
import { BUSYBOX_IMAGE, waitFor } from '../support/docker.js';
import { isRunningAndReady, waitForPod, useTestNodes } from '../support/agent.js';
import { appContainer, killContainer, podContainers, removeContainer } from '../support/runtime.js';

/** The machine is shared by several engineers' Docker suites: generous waits (never asserted on). */
const kWaitMs = 90_000;

const cond = (pod: Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);

describe.skipIf(!inject('dockerAvailable'))('pod lifecycle in Docker', { timeout: 240_000 }, () => {
  const start = useTestNodes();

  it('runs init containers one at a time, in order, before the app container', async () => {
    const node = await start();
    await node.writeManifest(
      'init.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  terminationGracePeriodSeconds: 1
  initContainers:
    - name: first
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "sleep 1; echo first >> /data/order"]
      volumeMounts: [{name: data, mountPath: /data}]
    - name: second
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "test -f /data/order && echo second >> /data/order"]
      volumeMounts: [{name: data, mountPath: /data}]
  containers:
    - name: app
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "echo app >> /data/order; exec sleep 3600"]
      volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]
`,
    );
    const pending = await waitForPod(node, 'init', (p) => p.status?.initContainerStatuses?.[0]?.state?.running !== undefined, kWaitMs);
    expect(pending.status!.phase).toBe('Pending');
    expect(cond(pending, 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [first second]',
    });
    expect(pending.status!.containerStatuses![0].state!.waiting!.reason).toBe('PodInitializing');

    const pod = await waitForPod(node, 'init', isRunningAndReady, kWaitMs);
    expect(cond(pod, 'Initialized')!.status).toBe('True');
    expect(pod.status!.initContainerStatuses!.map((s) => [s.name, s.state!.terminated?.reason, s.state!.terminated?.exitCode])).toEqual([
      ['first', 'Completed', 0],
      ['second', 'Completed', 0],
    ]);
    const order = join(node.rootDir, 'pods', pod.metadata!.uid!, 'volumes', 'kubernetes.io~empty-dir', 'data', 'order');
    expect(await waitFor(async () => ((await readFile(order, 'utf8')).includes('app') ? readFile(order, 'utf8') : undefined))).toBe(
      'first\nsecond\napp\n',
    );
  });

  it('fails the pod when an init container fails under restartPolicy Never, without starting the app', async () => {
    const node = await start();
    await node.writeManifest(
      'bad-init.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: bad-init}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  initContainers:
    - {name: check, image: ${BUSYBOX_IMAGE}, command: ["sh", "-c", "exit 3"]}
  containers:
    - {name: app, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    const pod = await waitForPod(node, 'bad-init', (p) => p.status?.phase === 'Failed', kWaitMs);
    expect(pod.status!.initContainerStatuses![0].state!.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    expect(cond(pod, 'Initialized')!.status).toBe('False');
    const names = (await podContainers(pod.metadata!.uid!)).map((c) => c.name).sort();
    expect(names).toEqual(['POD', 'check']);
  });

  it('retries a failing init container with restart backoff under restartPolicy Always', async () => {
    const node = await start();
    await node.writeManifest(
      'retry-init.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: retry-init}
spec:
  terminationGracePeriodSeconds: 1
  initContainers:
    - {name: check, image: ${BUSYBOX_IMAGE}, command: ["sh", "-c", "exit 1"]}
  containers:
    - {name: app, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    const pod = await waitForPod(
      node,
      'retry-init',
      (p) => p.status?.initContainerStatuses?.[0]?.state?.waiting?.reason === 'CrashLoopBackOff',
      kWaitMs,
    );
    expect(pod.status!.phase).toBe('Pending');
    expect(pod.status!.initContainerStatuses![0].restartCount).toBeGreaterThanOrEqual(1);
    expect(pod.status!.initContainerStatuses![0].lastState!.terminated!.exitCode).toBe(1);
    expect(pod.status!.containerStatuses![0].state!.waiting!.reason).toBe('PodInitializing');
  });

  it('keeps a sidecar running beside the app container and restarts it when it exits', async () => {
    const node = await start();
    await node.writeManifest(
      'sidecar.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: sidecar}
spec:
  terminationGracePeriodSeconds: 1
  initContainers:
    - name: proxy
      image: ${BUSYBOX_IMAGE}
      restartPolicy: Always
      command: ["sh", "-c", "touch /data/proxy-up; exec sleep 3600"]
      volumeMounts: [{name: data, mountPath: /data}]
  containers:
    - name: app
      image: ${BUSYBOX_IMAGE}
      command: ["sh", "-c", "test -f /data/proxy-up || exit 1; exec sleep 3600"]
      volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, emptyDir: {}}]
`,
    );
    const pod = await waitForPod(
      node,
      'sidecar',
      (p) => isRunningAndReady(p) && p.status?.initContainerStatuses?.[0]?.state?.running !== undefined,
      kWaitMs,
    );
    expect(pod.status!.containerStatuses![0].restartCount).toBe(0);
    expect(pod.status!.initContainerStatuses![0]).toMatchObject({ name: 'proxy', ready: true });
    const proxy = (await appContainer(pod.metadata!.uid!, 'proxy'))!;
    await killContainer(proxy.id);
    const after = await waitForPod(
      node,
      'sidecar',
      (p) => p.status?.initContainerStatuses?.[0]?.restartCount === 1 && p.status.initContainerStatuses[0].state?.running !== undefined,
      kWaitMs,
    );
    expect(after.status!.phase).toBe('Running');
    expect(after.status!.containerStatuses![0]).toMatchObject({ restartCount: 0, ready: true });
    expect(cond(after, 'Initialized')!.status).toBe('True');
  });

  it('fills state.terminated.message from the terminationMessagePath file', async () => {
    const node = await start();
    await node.writeManifest(
      'msg.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: msg}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      terminationMessagePath: /tmp/why
      command: ["sh", "-c", "echo -n 'out of luck' > /tmp/why; exit 4"]
`,
    );
    const pod = await waitForPod(node, 'msg', (p) => p.status?.phase === 'Failed', kWaitMs);
    expect(pod.status!.containerStatuses![0].state!.terminated).toMatchObject({ exitCode: 4, reason: 'Error', message: 'out of luck' });
  });

  it('fills state.terminated.message from the log tail with FallbackToLogsOnError when the file is empty', async () => {
    const node = await start();
    await node.writeManifest(
      'fallback.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: fallback}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      terminationMessagePolicy: FallbackToLogsOnError
      command: ["sh", "-c", "echo first line; echo 'last words' >&2; exit 3"]
`,
    );
    const pod = await waitForPod(node, 'fallback', (p) => p.status?.phase === 'Failed', kWaitMs);
    const terminated = pod.status!.containerStatuses![0].state!.terminated!;
    expect(terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    // stdout and stderr both count; their relative order is not kept by Docker's two pipes.
    expect(terminated.message).toContain('first line\n');
    expect(terminated.message).toContain('last words\n');
  });

  it('reports OOMKilled for a container killed by its memory limit', async () => {
    const node = await start();
    await node.writeManifest(
      'oom.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: oom}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: hog
      image: ${BUSYBOX_IMAGE}
      resources: {limits: {memory: 16Mi}}
      command: ["sh", "-c", "head -c 200m /dev/zero | tail"]
`,
    );
    const pod = await waitForPod(node, 'oom', (p) => p.status?.phase === 'Failed', kWaitMs);
    expect(pod.status!.containerStatuses![0].state!.terminated).toMatchObject({ reason: 'OOMKilled', exitCode: 137 });
  });

  it('fails a pod past its activeDeadlineSeconds with reason DeadlineExceeded and stops its containers', async () => {
    const node = await start();
    await node.writeManifest(
      'deadline.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: deadline}
spec:
  activeDeadlineSeconds: 2
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    const pod = await waitForPod(
      node,
      'deadline',
      (p) => p.status?.phase === 'Failed' && p.status.containerStatuses?.[0]?.state?.terminated !== undefined,
      kWaitMs,
    );
    expect(pod.status).toMatchObject({
      reason: 'DeadlineExceeded',
      message: 'Pod was active on the node longer than the specified deadline',
    });
    // It ran, and was killed (sleep as PID 1 ignores SIGTERM: SIGKILL after the 1 s grace period).
    expect(pod.status!.containerStatuses![0].state!.terminated!.exitCode).toBe(137);
    const live = (await podContainers(pod.metadata!.uid!)).filter((c) => c.running);
    expect(live).toEqual([]);
    expect(node.agent.events.list().some((e) => e.reason === 'DeadlineExceeded')).toBe(true);
  });

  it('stops a container with SIGTERM first and SIGKILL after the grace period', async () => {
    const node = await start();
    const out = join(node.rootDir, 'grace-out');
    await node.writeManifest(
      'grace.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: grace}
spec:
  terminationGracePeriodSeconds: 2
  containers:
    - name: stubborn
      image: ${BUSYBOX_IMAGE}
      # Ignores SIGTERM (records it): only SIGKILL after the grace period ends it.
      command: ["sh", "-c", "trap 'echo TERM >> /out/signals' TERM; echo up > /out/up; while true; do sleep 0.2; done"]
      volumeMounts: [{name: out, mountPath: /out}]
  volumes: [{name: out, hostPath: {path: ${JSON.stringify(out)}, type: DirectoryOrCreate}}]
`,
    );
    const pod = await waitForPod(node, 'grace', isRunningAndReady, kWaitMs);
    await waitFor(() => readFile(join(out, 'up'), 'utf8'));
    const { rm } = await import('node:fs/promises');
    await rm(join(node.manifestDir, 'grace.yaml'));
    await waitFor(async () => (await podContainers(pod.metadata!.uid!)).length === 0, {
      timeoutMs: kWaitMs,
      description: 'containers removed',
    });
    // It saw SIGTERM, survived it, and was still removed: SIGKILL ended it.
    expect(await readFile(join(out, 'signals'), 'utf8')).toBe('TERM\n');
  });

  it('reports CreateContainerConfigError for a bad pod without stalling a good one, and recreates a container removed behind its back', async () => {
    const node = await start();
    await node.writeManifest(
      'bad.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: bad}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      command: ["sleep", "3600"]
      volumeMounts: [{name: f, mountPath: /f}]
  volumes: [{name: f, hostPath: {path: ${JSON.stringify(join(node.rootDir, 'no-such-file'))}, type: File}}]
`,
    );
    await node.writeManifest(
      'good.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: good}
spec:
  terminationGracePeriodSeconds: 1
  containers:
    - {name: main, image: ${BUSYBOX_IMAGE}, command: ["sleep", "3600"]}
`,
    );
    const good = await waitForPod(node, 'good', isRunningAndReady, kWaitMs);
    const bad = await waitForPod(
      node,
      'bad',
      (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError',
      kWaitMs,
    );
    expect(bad.status!.phase).toBe('Pending');
    expect(bad.status!.containerStatuses![0].state!.waiting!.message).toContain('is not a file');
    expect(node.agent.events.list().some((e) => e.reason === 'Failed' && e.involvedObject?.name === bad.metadata!.name)).toBe(true);

    // Someone removes the good pod's container: the agent notices (PLEG) and starts it again.
    const victim = (await appContainer(good.metadata!.uid!, 'main'))!;
    await removeContainer(victim.id);
    const back = await waitForPod(
      node,
      'good',
      (p) => isRunningAndReady(p) && !p.status?.containerStatuses?.[0]?.containerID?.endsWith(`://${victim.id}`),
      kWaitMs,
    );
    expect(back.status!.phase).toBe('Running');
  });

  it('fills downward API env from labels, annotations, node and pod fields and resource limits', async () => {
    const node = await start();
    await node.writeManifest(
      'downward.yaml',
      `apiVersion: v1
kind: Pod
metadata:
  name: downward
  labels: {tier: backend}
  annotations: {owner: team-a}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: main
      image: ${BUSYBOX_IMAGE}
      resources: {limits: {memory: 64Mi, cpu: 500m}}
      terminationMessagePath: /tmp/env
      command: ["sh", "-c", "env | grep '^DW_' | sort > /tmp/env"]
      env:
        - {name: DW_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: DW_NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        - {name: DW_UID, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}
        - {name: DW_LABEL, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
        - {name: DW_ANNOTATION, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['owner']"}}}
        - {name: DW_NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: DW_HOST_IP, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
        - {name: DW_MEM_MI, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
        - {name: DW_CPU_M, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}}
`,
    );
    const pod = await waitForPod(node, 'downward', (p) => p.status?.phase === 'Succeeded', kWaitMs);
    const env = pod.status!.containerStatuses![0].state!.terminated!.message!;
    expect(env.trim().split('\n')).toEqual([
      `DW_ANNOTATION=team-a`,
      `DW_CPU_M=500`,
      `DW_HOST_IP=${node.options.nodeIp}`,
      `DW_LABEL=backend`,
      `DW_MEM_MI=64`,
      `DW_NAME=downward-${node.nodeName}`,
      `DW_NAMESPACE=default`,
      `DW_NODE=${node.nodeName}`,
      `DW_UID=${pod.metadata!.uid}`,
    ]);
  });
});

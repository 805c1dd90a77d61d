/**
 * The runtime domain model: a pod and its containers as the container runtime shows them
 * (pkg/kubelet/container's Pod, PodStatus and Container, the CRI's ContainerStatus state), as the
 * workers read them back and the main thread's pod cache keeps them. Plain data (epoch ms).
 */

/** Observed state of a container as the runtime reports it (the CRI's ContainerStatus state, flattened: CONTAINER_CREATED/RUNNING/EXITED/UNKNOWN). */
export type RuntimeContainerState = 'created' | 'running' | 'exited' | 'unknown';

/** RuntimeContainer is one sandbox or app container of the runtime that carries our labels (kubecontainer.Container + its status). */
export interface RuntimeContainer {
  /** The runtime's container or sandbox ID (64 hex for Docker and containerd). */
  id: string;
  /** Container name in the pod spec; `POD` for the sandbox. */
  name: string;
  /** True for the pod sandbox (Docker: the pause container, `io.kubernetes.docker.type=podsandbox`). */
  sandbox: boolean;
  /** The attempt (CRI metadata.attempt; Docker: the `_<attempt>` of the name); equals restartCount for app containers. */
  attempt: number;
  state: RuntimeContainerState;
  /** The `io.kubernetes.container.hash` annotation (Docker: label `annotation.io.kubernetes.container.hash`): hash of the spec it was created from. */
  hash: string;
  /** The `io.kubernetes.container.restartCount` annotation (Docker: label `annotation.…`). */
  restartCount: number;
  /** Image as named in the spec, e.g. `busybox:latest`. */
  image: string;
  /** The image's ID as the runtime reports it (CRI image_ref), e.g. `sha256:…`. */
  imageId: string;
  /** Epoch ms. */
  createdAtMs: number;
  /** Epoch ms; 0 if never started. */
  startedAtMs: number;
  /** Epoch ms; 0 while running or never started. */
  finishedAtMs: number;
  /** Exit code once exited. */
  exitCode: number;
  /** The runtime's reason once exited: `Completed`, `Error`, `OOMKilled`, `StartError`, … */
  reason: string;
  /** The runtime's message, if any (then the termination message). */
  message: string;
  /** The sandbox this container belongs to (`io.kubernetes.sandbox.id`); '' for a sandbox. */
  sandboxId: string;
}

/** RuntimePod is everything of one pod UID found in the runtime (the kubecontainer.PodStatus). */
export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  /** Sandboxes, newest first. */
  sandboxes: RuntimeContainer[];
  /** App containers, newest first (several per name: current and dead attempts). */
  containers: RuntimeContainer[];
  /** Pod IP: '' with network `none`; the host's address for hostNetwork (filled by main). */
  podIp: string;
  /** The grace period recorded on the containers' label, used to stop a pod whose spec is gone. */
  terminationGracePeriodSeconds: number;
}

/**
 * What the port-forward endpoint (port-forward-ws.ts) asks of the agent, beside AgentHost's
 * other streaming methods: the pod's sandbox and how to reach it (the kubelet's GetPortForward:
 * find the running pod, hand the sandbox ID to the runtime's PortForward), and one forwarded
 * connection at a time. Types only.
 */
import type { PortForwardReach, PortForwardSpec } from '../../shared/port-forward-protocol.js';

/** PortForwardTarget: the running sandbox a port-forward of a pod enters. */
export interface PortForwardTarget {
  /** The pod's UID (streams are counted per pod; `/portForward/{ns}/{pod}/{uid}` must match it). */
  podUid: string;
  /** The sandbox (pause) container's runtime ID: the "pod" of the kubelet's error messages. */
  sandboxId: string;
  /** How the worker reaches the pod's ports. */
  reach: PortForwardReach;
}

/**
 * PortForwardSession: one forwarded connection, on the main thread. The server sets the callbacks
 * right after opening (nothing arrives before the next turn); `onEnd` runs exactly once: with no
 * error when the pod's side closed, with the error (Go's words) that ended or prevented it, and
 * not at all after close(). Output is credit-based: ack each chunk once the client's socket took it.
 */
export interface PortForwardSession {
  onData(fn: (chunk: Uint8Array) => void): void;
  onEnd(fn: (error?: string) => void): void;
  /** write forwards client bytes; false once more than kPortForwardMaxPendingBytes wait for the pod (the caller closes). */
  write(chunk: Uint8Array): boolean;
  /** ack returns `bytes` of output credit. */
  ack(bytes: number): void;
  /** closeWrite: the client sends nothing more; the pod's side is half-closed after what was written. */
  closeWrite(): void;
  /** close tears the connection down. Idempotent. */
  close(): void;
}

/** PortForwardOpen: AgentHost.openPortForward's signature. */
export type PortForwardOpen = (spec: PortForwardSpec) => PortForwardSession;

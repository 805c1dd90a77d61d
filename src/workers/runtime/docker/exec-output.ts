// Counterpart of the kubelet's probe output limit (pkg/kubelet/prober: maxProbeOutputLength; the exec output read through a limited writer).
/**
 * The capped collector of an exec's output (docker-runtime.ts execInContainer): combined and per stream.
 */

/** Most bytes of exec output kept (the kubelet's probe output limit, maxProbeOutputLength). */
export const kMaxExecOutputBytes = 10 * 1024;

/** CappedOutput: the first kMaxExecOutputBytes bytes of an exec's output; `add` chunks as they come, `text` the UTF-8 of what was kept. */
export class CappedOutput {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  add(chunk: Buffer): void {
    if (this.#size >= kMaxExecOutputBytes) return;
    this.#chunks.push(chunk.subarray(0, kMaxExecOutputBytes - this.#size));
    this.#size += chunk.length;
  }
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

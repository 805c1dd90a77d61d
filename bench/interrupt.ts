// A bench stopped by SIGINT or SIGTERM (Ctrl-C, a CI timeout, `kill`) removes what it made before it
// exits: Node runs no `finally` on a signal, and a cut-off run used to leave its pods and floor
// sandboxes in the runtime (37 floor sandboxes of earlier runs were still on containerd's CNI bridge
// on 2026-12-07, which a Linux bridge caps at 1,024 ports). Not used by src/.

const cleanups = new Set<() => Promise<unknown>>();
let installed = false;

/**
 * onInterrupt registers `cleanup` (remove a run's containers, stop its agent) to run once if the
 * process gets SIGINT or SIGTERM; returns the function that unregisters it (call it in the
 * `finally` that cleans up on the ordinary path). On a signal every registered cleanup runs at
 * once (each one's error printed, not thrown), then the process exits with 128 + the signal's
 * number; a second signal exits at once.
 */
export function onInterrupt(cleanup: () => Promise<unknown>): () => void {
  cleanups.add(cleanup);
  if (!installed) {
    installed = true;
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      process.on(signal, () => {
        if (cleanups.size === 0) process.exit(code);
        const pending = [...cleanups];
        cleanups.clear();
        process.stderr.write(
          `\nbench: ${signal}: removing what this run made (${pending.length} cleanup(s)); ${signal} again exits at once\n`,
        );
        process.once(signal, () => process.exit(code));
        void Promise.allSettled(pending.map((fn) => fn())).then((results) => {
          for (const r of results) if (r.status === 'rejected') process.stderr.write(`bench: cleanup failed: ${String(r.reason)}\n`);
          process.exit(code);
        });
      });
    }
  }
  return () => cleanups.delete(cleanup);
}

// The values test/support/global-setup.ts provides to every suite (vitest's `inject`). Kept apart
// from docker.ts so that bench/ scripts, which the build compiles, can import Docker helpers
// (bench/slow-engine.ts → own-dockerd.ts → docker.ts) without vitest's types.
declare module 'vitest' {
  export interface ProvidedContext {
    /**
     * dockerAvailable is true when test/support/global-setup.ts found dockerd answering on
     * DOCKER_SOCKET (docker.ts) and both local images present. Docker-backed suites use
     * `describe.skipIf(!inject('dockerAvailable'))`. Under tools/test it is always true (or the run fails).
     */
    dockerAvailable: boolean;
  }
}

export {};

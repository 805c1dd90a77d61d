// Counterpart of the kubelet's generated CRI stubs (k8s.io/cri-api/pkg/apis/runtime/v1 api.pb.go), loaded at run time from the vendored api.proto.
/**
 * The CRI v1 protocol loaded with `@grpc/proto-loader` from ./api.proto (vendored from
 * kubernetes/cri-api v0.32.13; see its header). No generated code and no hand-written framing:
 * grpc-js encodes and decodes through protobufjs.
 *
 * Loader options, and why (the shapes ./types.ts describes):
 * - `keepCase`: the proto's own field names (`pod_sandbox_id`, `log_directory`), as the CRI's docs
 *   and the runtimes' messages spell them.
 * - `longs: Number`: 64-bit integers as numbers. The largest the kubelet reads are nanosecond
 *   timestamps (~1.8e18), which keep 256 ns of precision — the API status shows seconds.
 * - `enums: String`: `'CONTAINER_EXITED'` rather than 2 in every state the syncer compares.
 * - `defaults`, `arrays`, `objects`: every scalar, list and map present in an answer; unset
 *   message fields are `null`.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** kCriProtoFile: the vendored api.proto (beside this file under tsx/vitest; in src/ when run from dist/). */
export const kCriProtoFile = fileURLToPath(
  import.meta.url.endsWith('.ts')
    ? new URL('./api.proto', import.meta.url)
    : new URL('../../../../../src/workers/runtime/cri/api.proto', import.meta.url),
);

/** kCriLoaderOptions: the @grpc/proto-loader options the CRI messages are decoded with (see the file's docstring). */
export const kCriLoaderOptions: protoLoader.Options = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
});

/** CriServiceConstructors: the grpc-js client classes of the CRI's two services. */
export interface CriServiceConstructors {
  RuntimeService: grpc.ServiceClientConstructor;
  ImageService: grpc.ServiceClientConstructor;
}

let loaded: CriServiceConstructors | undefined;

/**
 * loadCriServices loads api.proto once per thread and returns the `runtime.v1.RuntimeService` and
 * `runtime.v1.ImageService` client classes. Throws if the file is missing or does not parse (a
 * broken install: the message names the file).
 */
export function loadCriServices(): CriServiceConstructors {
  if (loaded) return loaded;
  let definition: protoLoader.PackageDefinition;
  try {
    // Read first so that a missing file is reported with its path, not protobufjs' ENOENT alone.
    readFileSync(kCriProtoFile);
    definition = protoLoader.loadSync(kCriProtoFile, kCriLoaderOptions);
  } catch (err) {
    throw new Error(`cannot load the CRI protocol from ${kCriProtoFile}: ${(err as Error).message}`, { cause: err });
  }
  const pkg = grpc.loadPackageDefinition(definition) as unknown as { runtime: { v1: CriServiceConstructors } };
  loaded = { RuntimeService: pkg.runtime.v1.RuntimeService, ImageService: pkg.runtime.v1.ImageService };
  return loaded;
}

// Counterpart of the kubelet's endpoint parsing (pkg/kubelet/util/util_unix.go parseEndpoint / GetAddressAndDialer) for --container-runtime-endpoint.
/**
 * A CRI endpoint as the kubelet's `--container-runtime-endpoint` and `--image-service-endpoint`
 * take it: `unix:///absolute/path/to.sock`. The kubelet also accepts `tcp://` (deprecated) and
 * `npipe://` (Windows); kubelet-ts refuses them by name, and refuses a bare path (the kubelet's
 * old fallback that it logs as deprecated) so that a typo is never dialled as something else.
 */
import { isAbsolute } from 'node:path';
import { InvalidArgumentError } from '../../../shared/errors.js';

/** CriEndpoint: a parsed endpoint; `target` is what grpc-js dials (`unix:///path`), `path` the socket file. */
export interface CriEndpoint {
  readonly target: string;
  readonly path: string;
}

/**
 * parseCriEndpoint parses `unix:///path` (the path absolute, no host part, no query). `flag` names
 * the setting in errors (default `--container-runtime-endpoint`). Throws InvalidArgumentError naming
 * the flag and the value for any other form.
 */
export function parseCriEndpoint(value: string, flag = '--container-runtime-endpoint'): CriEndpoint {
  const bad = (why: string): InvalidArgumentError =>
    new InvalidArgumentError(`${flag} ${JSON.stringify(value)}: ${why} (expected unix:///path/to/runtime.sock)`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) throw bad('no scheme');
  if (scheme !== 'unix') throw bad(`protocol "${scheme}" not supported; only unix is`);
  const path = value.slice('unix://'.length);
  if (!path.startsWith('/')) throw bad('the socket path must be absolute (three slashes: unix:///…)');
  if (!isAbsolute(path) || /[?#]/.test(path) || path.includes('\0')) throw bad('not a socket path');
  if (Buffer.byteLength(path) > 107) throw bad('the socket path is longer than a unix socket allows (107 bytes)');
  return { target: `unix://${path}`, path };
}

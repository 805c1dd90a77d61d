// Counterpart of the kubelet's endpoint parsing (pkg/kubelet/util/util_unix.go parseEndpoint / GetAddressAndDialer) for --container-runtime-endpoint.
/**
 * A CRI endpoint as the kubelet's `--container-runtime-endpoint` and `--image-service-endpoint`
 * take it: `unix:///absolute/path/to.sock`. The parser lives in src/shared/runtime-endpoint.ts,
 * where the main thread checks the flags with it too; this module keeps the CRI client's import path.
 */
export { parseCriEndpoint, type CriEndpoint } from '../../../shared/runtime-endpoint.js';

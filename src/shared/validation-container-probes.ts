// Counterpart of pkg/apis/core/validation/validation.go validateProbe / validateLifecycle / validateHandler.
/**
 * The checks of a container's liveness, readiness and startup probes and of its lifecycle hooks
 * (validation-container.ts calls them): one handler each, its ports, timings and thresholds. Pure
 * functions over decoded JSON, safe in any thread.
 */
import { httpHeaderNameErrors, inclusiveRangeError, portNameErrors } from './names.js';
import { child, enumField, ErrorList, index, type Obj } from './validation-util.js';

/** Probe fields kubelet-ts implements (all of core/v1's). */
export const kSupportedProbeFields: readonly string[] = [
  'exec',
  'httpGet',
  'tcpSocket',
  'grpc',
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
];
/** Lifecycle hook handler fields kubelet-ts implements (tcpSocket, which the kubelet ignores, and sleep are not). */
export const kSupportedLifecycleHandlerFields: readonly string[] = ['exec', 'httpGet'];

const kSchemes = ['HTTP', 'HTTPS'];

/**
 * validateProbe checks a probe at `path` (validateProbe): exactly one handler, int32 timings and
 * thresholds (seconds), a positive grace period; `successThreshold` must be 1 when `successMustBeOne`
 * (liveness and startup probes).
 */
export function validateProbe(el: ErrorList, path: string, v: unknown, successMustBeOne: boolean): void {
  const probe = el.obj(path, v);
  if (!probe) return;
  el.checkFields(path, probe, kSupportedProbeFields);
  validateHandler(el, path, probe, ['exec', 'httpGet', 'tcpSocket', 'grpc'], []);
  // The timings and thresholds are int32 (seconds); the probe's grace period is an int64 and, when set, positive.
  el.nonNegative(child(path, 'initialDelaySeconds'), probe.initialDelaySeconds, 'int32');
  for (const f of ['timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'])
    el.atLeast(child(path, f), probe[f], 1, 'int32');
  const tgpPath = child(path, 'terminationGracePeriodSeconds');
  const tgp = el.int(tgpPath, probe.terminationGracePeriodSeconds);
  if (tgp !== undefined && tgp <= 0) el.invalid(tgpPath, tgp, 'must be greater than 0');
  if (successMustBeOne && typeof probe.successThreshold === 'number' && probe.successThreshold !== 1) {
    el.invalid(child(path, 'successThreshold'), probe.successThreshold, 'must be 1');
  }
}

/** validateLifecycle checks a container's `lifecycle` at `path` (validateLifecycle): postStart and preStop, each one exec or httpGet handler. */
export function validateLifecycle(el: ErrorList, path: string, v: unknown): void {
  const lc = el.obj(path, v);
  if (!lc) return;
  el.checkFields(path, lc, ['postStart', 'preStop']);
  for (const hook of ['postStart', 'preStop']) {
    const hp = child(path, hook);
    const h = el.obj(hp, lc[hook]);
    if (!h) continue;
    el.checkFields(hp, h, kSupportedLifecycleHandlerFields);
    validateHandler(el, hp, h, kSupportedLifecycleHandlerFields, ['tcpSocket', 'sleep']);
  }
}

/**
 * validateHandler: exactly one of `kinds` (validateHandler / validateLifecycleHandler). `others`
 * are handler kinds reported `Not supported` elsewhere; their presence suppresses `Required value`.
 */
function validateHandler(el: ErrorList, path: string, h: Obj, kinds: readonly string[], others: readonly string[]): void {
  const present = kinds.filter((k) => h[k] !== undefined && h[k] !== null);
  if (present.length === 0 && !others.some((k) => h[k] !== undefined && h[k] !== null)) el.required(path, 'must specify a handler type');
  for (const k of present.slice(1)) el.forbidden(child(path, k), 'may not specify more than 1 handler type');

  const exPath = child(path, 'exec');
  const ex = el.obj(exPath, h.exec);
  if (ex) {
    el.checkFields(exPath, ex, ['command']);
    const cmd = el.strList(child(exPath, 'command'), ex.command);
    if (!cmd || cmd.length === 0) el.required(child(exPath, 'command'));
  }
  const hgPath = child(path, 'httpGet');
  const hg = el.obj(hgPath, h.httpGet);
  if (hg) {
    el.checkFields(hgPath, hg, ['path', 'port', 'host', 'scheme', 'httpHeaders']);
    const pathPath = child(hgPath, 'path');
    if (!el.str(pathPath, hg.path)) el.required(pathPath);
    validatePortNumOrName(el, child(hgPath, 'port'), hg.port);
    el.str(child(hgPath, 'host'), hg.host);
    enumField(el, child(hgPath, 'scheme'), hg.scheme, kSchemes);
    const hdrPath = child(hgPath, 'httpHeaders');
    el.list(hdrPath, hg.httpHeaders)?.forEach((raw, i) => {
      const hp = index(hdrPath, i);
      const hdr = el.obj(hp, raw);
      if (!hdr) return;
      el.checkFields(hp, hdr, ['name', 'value']);
      const np = child(hp, 'name');
      const n = el.str(np, hdr.name);
      if (!n) el.required(np);
      else for (const m of httpHeaderNameErrors(n)) el.invalid(np, n, m);
      el.str(child(hp, 'value'), hdr.value);
    });
  }
  const tsPath = child(path, 'tcpSocket');
  const ts = kinds.includes('tcpSocket') ? el.obj(tsPath, h.tcpSocket) : undefined;
  if (ts) {
    el.checkFields(tsPath, ts, ['port', 'host']);
    validatePortNumOrName(el, child(tsPath, 'port'), ts.port);
    el.str(child(tsPath, 'host'), ts.host);
  }
  // validateGRPCAction: the port is an int32 number (no names) in 1–65535; the service is any string.
  const gPath = child(path, 'grpc');
  const g = kinds.includes('grpc') ? el.obj(gPath, h.grpc) : undefined;
  if (g) {
    el.checkFields(gPath, g, ['port', 'service']);
    const portPath = child(gPath, 'port');
    const port = el.int(portPath, g.port, 'int32');
    if (g.port === undefined || g.port === null) el.required(portPath);
    else if (port !== undefined && (port < 1 || port > 65535)) el.invalid(portPath, port, inclusiveRangeError(1, 65535));
    el.str(child(gPath, 'service'), g.service);
  }
}

/** ValidatePortNumOrName: an integer 1–65535 or an IANA_SVC_NAME. */
function validatePortNumOrName(el: ErrorList, path: string, v: unknown): void {
  if (v === undefined || v === null || v === '') el.required(path);
  else if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 1 || v > 65535) el.invalid(path, v, inclusiveRangeError(1, 65535));
  } else if (typeof v === 'string') {
    for (const m of portNameErrors(v)) el.invalid(path, v, m);
  } else el.invalid(path, v, 'must be an integer or a string');
}

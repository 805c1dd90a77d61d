// Counterpart of libcni's invoke package (pkg/invoke: exec.go ExecPluginWithResult / ExecPluginWithoutResult, args.go) and api.go buildOneConfig.
/**
 * Runs one CNI plugin binary as the CNI specification (SPEC.md "Execution protocol") says: the
 * command and parameters in `CNI_*` environment variables, the plugin's network configuration
 * on stdin (with `name`, `cniVersion`, `prevResult` and `runtimeConfig` injected as libcni does),
 * the result or the error object on stdout. Runs on a worker thread; every call spawns one child
 * process, killed by its PID when it outlives the timeout.
 *
 * Errors: AgentError `ERR_NETWORK` whose message names the plugin, the command and the network,
 * and carries the plugin's `msg` and `details` (and its error `code`).
 */
import { spawn } from 'node:child_process';
import { realClock, type Clock } from '../../shared/clock.js';
import { AgentError } from '../../shared/errors.js';
import { findPluginBinary, type CniPluginConf } from '../../io/cni-config.js';

/** CniCommand: the CNI operations this client issues (GC and STATUS are spec 1.1.0: not in plugins 1.1.1). */
export type CniCommand = 'ADD' | 'DEL' | 'CHECK' | 'VERSION';

/** kCniExecTimeoutMs: the default time one plugin run may take, milliseconds (then it is killed). */
export const kCniExecTimeoutMs = 60_000;
/** kCniMaxOutputBytes: stdout (the result) kept at most, bytes; more is an error. */
export const kCniMaxOutputBytes = 1024 * 1024;
/** kCniMaxStderrBytes: stderr kept for the error message, bytes (the rest dropped). */
const kCniMaxStderrBytes = 16 * 1024;

/** CniExecRequest: one plugin run. */
export interface CniExecRequest {
  command: CniCommand;
  /** CNI_PATH: where the plugin (and the ipam plugin it delegates to) are looked up. */
  binDirs: string[];
  /** The plugin's configuration from the list (its `type` is the binary). */
  plugin: CniPluginConf;
  /** The list's name and cniVersion, injected into the plugin's config. */
  networkName: string;
  cniVersion: string;
  /** CNI_CONTAINERID (the sandbox's ID). Ignored for VERSION. */
  containerId: string;
  /** CNI_NETNS: the netns path, '' for a DEL after the netns is gone. */
  netns: string;
  /** CNI_IFNAME, e.g. `eth0`. */
  ifName: string;
  /** CNI_ARGS, `K=V;K=V` (see {@link cniArgsString}). */
  args: string;
  /** The previous plugin's result (ADD of a chained plugin) or the cached result (DEL, CHECK). */
  prevResult?: unknown;
  /** Capability arguments by capability name (e.g. `portMappings`): only the ones the plugin declares go in its `runtimeConfig`. */
  capabilityArgs?: Record<string, unknown>;
  /** Milliseconds before the child is killed (default {@link kCniExecTimeoutMs}). */
  timeoutMs?: number;
}

/**
 * cniArgsString: CNI_ARGS from pairs, as the kubelet passes them (`IgnoreUnknown=1;K8S_POD_NAMESPACE=…;…`).
 * Pure. A value with `;` or `=` (impossible for validated pod names and UIDs) is dropped from the pair list.
 */
export function cniArgsString(pairs: [string, string][]): string {
  return pairs
    .filter(([k, v]) => !/[;=]/.test(k) && !/[;=]/.test(v))
    .map(([k, v]) => `${k}=${v}`)
    .join(';');
}

/**
 * pluginStdin: the configuration a plugin reads on stdin — its own conf plus the list's `name` and
 * `cniVersion`, `runtimeConfig` with only the capabilities it declares `true` in `capabilities`
 * and has an argument for, and `prevResult` when given (libcni buildOneConfig / injectRuntimeConfig). Pure.
 */
export function pluginStdin(
  req: Pick<CniExecRequest, 'plugin' | 'networkName' | 'cniVersion' | 'prevResult' | 'capabilityArgs'>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...req.plugin, name: req.networkName, cniVersion: req.cniVersion };
  const caps = req.plugin.capabilities as Record<string, unknown> | undefined;
  const rc: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req.capabilityArgs ?? {})) if (caps?.[k] === true) rc[k] = v;
  if (Object.keys(rc).length > 0) out.runtimeConfig = { ...((req.plugin.runtimeConfig as Record<string, unknown>) ?? {}), ...rc };
  if (req.prevResult !== undefined && req.prevResult !== null) out.prevResult = req.prevResult;
  return out;
}

/** CniErrorObject: the spec's error result (`code`, `msg`, `details`). */
export interface CniErrorObject {
  code?: number;
  msg?: string;
  details?: string;
}

function networkError(req: CniExecRequest, what: string, opts: { retriable?: boolean; cause?: unknown } = {}): AgentError {
  return new AgentError(
    'ERR_NETWORK',
    `CNI plugin ${req.plugin.type} ${req.command} (network ${req.networkName}, container ${req.containerId.slice(0, 12)}, ${req.ifName}): ${what}`,
    opts,
  );
}

/**
 * execCniPlugin runs `req.plugin.type` with `req.command` and resolves to its parsed stdout JSON
 * (the result for ADD and VERSION; null for an empty stdout, as DEL and CHECK print). The child gets
 * the agent's environment (PATH: portmap and bridge run iptables) plus the `CNI_*` variables.
 * Never resolves after its timeout (`req.timeoutMs` on `clock`, default realClock): the child is killed by its PID (SIGKILL).
 * @throws AgentError ERR_NETWORK: the binary is not in binDirs (`failed to find plugin`), the plugin
 *   exited non-zero (message `<msg>: <details>` from its error object, else its stderr; retriable
 *   for CNI code 11 "try again later"), timed out (retriable), printed more than
 *   {@link kCniMaxOutputBytes} or printed no JSON for ADD.
 */
export async function execCniPlugin(req: CniExecRequest, clock: Clock = realClock): Promise<unknown> {
  const path = await findPluginBinary(req.binDirs, req.plugin.type);
  if (path === undefined) throw networkError(req, `failed to find plugin "${req.plugin.type}" in path [${req.binDirs.join(' ')}]`);
  const stdin = req.command === 'VERSION' ? { cniVersion: req.cniVersion } : pluginStdin(req);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CNI_COMMAND: req.command,
    CNI_CONTAINERID: req.containerId,
    CNI_NETNS: req.netns,
    CNI_IFNAME: req.ifName,
    CNI_ARGS: req.args,
    CNI_PATH: req.binDirs.join(':'),
  };
  const timeoutMs = req.timeoutMs ?? kCniExecTimeoutMs;
  const { code, stdout, stderr, timedOut, overflow, spawnError } = await new Promise<{
    code: number | null;
    stdout: string;
    stderr: string;
    timedOut: boolean;
    overflow: boolean;
    spawnError?: Error;
  }>((resolve) => {
    const child = spawn(path, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let overflowed = false;
    let timed = false;
    let spawnErr: Error | undefined;
    const kill = (): void => {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    };
    const timer = clock.setTimeout(() => {
      timed = true;
      kill();
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > kCniMaxOutputBytes) {
        overflowed = true;
        kill();
        return;
      }
      out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      if (errBytes < kCniMaxStderrBytes) err.push(b.subarray(0, kCniMaxStderrBytes - errBytes));
      errBytes += b.length;
    });
    child.stdin.on('error', () => {}); // a plugin that exits without reading stdin: EPIPE
    child.on('error', (e) => {
      spawnErr = e;
    });
    child.on('close', (c) => {
      clock.clearTimeout(timer);
      resolve({
        code: c,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut: timed,
        overflow: overflowed,
        spawnError: spawnErr,
      });
    });
    child.stdin.end(JSON.stringify(stdin));
  });
  if (spawnError) throw networkError(req, `cannot run ${path}: ${spawnError.message}`, { cause: spawnError });
  if (timedOut) throw networkError(req, `timed out after ${timeoutMs} ms (killed)`, { retriable: true });
  if (overflow) throw networkError(req, `printed more than ${kCniMaxOutputBytes} bytes`);
  if (code !== 0) {
    const e = parseErrorObject(stdout);
    if (e) {
      const msg = [e.msg ?? 'plugin failed', e.details].filter((s) => s !== undefined && s !== '').join(': ');
      throw networkError(req, `${msg} (CNI error code ${e.code ?? '?'})`, { retriable: e.code === 11 });
    }
    const text = (stderr.trim() || stdout.trim() || `exit status ${code ?? 'killed'}`).slice(0, 2048);
    throw networkError(req, text);
  }
  if (stdout.trim() === '') {
    if (req.command === 'ADD' || req.command === 'VERSION') throw networkError(req, 'printed no result');
    return null;
  }
  try {
    return JSON.parse(stdout) as unknown;
  } catch {
    throw networkError(req, `printed a result that is not JSON: ${stdout.slice(0, 200)}`);
  }
}

function parseErrorObject(stdout: string): CniErrorObject | undefined {
  try {
    const v = JSON.parse(stdout) as unknown;
    if (typeof v === 'object' && v !== null && ('msg' in v || 'code' in v)) {
      const o = v as Record<string, unknown>;
      return {
        ...(typeof o.code === 'number' ? { code: o.code } : {}),
        ...(typeof o.msg === 'string' ? { msg: o.msg } : {}),
        ...(typeof o.details === 'string' ? { details: o.details } : {}),
      };
    }
  } catch {
    // not JSON
  }
  return undefined;
}

/** CniVersionInfo: a plugin's VERSION answer. */
export interface CniVersionInfo {
  cniVersion: string;
  supportedVersions: string[];
}

/**
 * pluginVersionInfo runs VERSION of plugin `type` (libcni GetVersionInfo): which spec versions it
 * speaks, e.g. to know whether it supports GC (1.1.0: none of containernetworking-plugins 1.1.1 do).
 * @throws AgentError ERR_NETWORK as {@link execCniPlugin}, or for an answer without `supportedVersions`.
 */
export async function pluginVersionInfo(binDirs: string[], type: string, cniVersion = '1.0.0'): Promise<CniVersionInfo> {
  const req: CniExecRequest = {
    command: 'VERSION',
    binDirs,
    plugin: { type },
    networkName: '',
    cniVersion,
    containerId: '',
    netns: '',
    ifName: '',
    args: '',
  };
  const v = (await execCniPlugin(req)) as Partial<CniVersionInfo> | null;
  if (!v || !Array.isArray(v.supportedVersions)) throw networkError(req, 'VERSION answer has no supportedVersions');
  return { cniVersion: String(v.cniVersion ?? ''), supportedVersions: v.supportedVersions.map(String) };
}

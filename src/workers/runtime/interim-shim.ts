/**
 * INTERIM (issue #40, until the `dockershim` helper's newDockerNodeRuntime lands): today's
 * Docker-shaped ContainerRuntime (Docker or the fake) behind the {@link NodeRuntime} shape, so that
 * every worker entry already takes its runtime from node-runtime.ts getRuntime. Version and Status
 * are answered from the ContainerRuntime (as dockershim's docker_service.go Version/Status did);
 * logs, streams and events are today's; every other CRI call rejects with ERR_RUNTIME "not
 * implemented for the Docker runtime yet". The lead replaces {@link interimNodeRuntime} with
 * newDockerNodeRuntime at merge; nothing else changes.
 */
import { AgentError } from '../../shared/errors.js';
import { idSchemeOf } from '../../shared/runtime-endpoint.js';
import type { ImageManagerService, RuntimeService } from './cri/services.js';
import type { StatusResponse, VersionResponse } from './cri/types-status.js';
import type { NodeRuntime } from './node-runtime.js';
import type { ContainerRuntime } from './runtime.js';

const kRuntimeMethods = [
  'updateRuntimeConfig', 'runPodSandbox', 'stopPodSandbox', 'removePodSandbox', 'podSandboxStatus', 'listPodSandbox', 'portForward',
  'createContainer', 'startContainer', 'stopContainer', 'removeContainer', 'listContainers', 'containerStatus', 'updateContainerResources',
  'execSync', 'exec', 'attach', 'reopenContainerLog', 'containerStats', 'listContainerStats', 'podSandboxStats', 'listPodSandboxStats',
] as const;
const kImageMethods = ['listImages', 'imageStatus', 'pullImage', 'removeImage', 'imageFsInfo'] as const;

function notYet(method: string, runtimeName: string): () => Promise<never> {
  return () => Promise.reject(new AgentError('ERR_RUNTIME', `${method}: not implemented for the ${runtimeName} runtime yet (issue #40: the Docker CRI implementation)`));
}

/**
 * interimNodeRuntime: `rt` (already node-scoped) as a NodeRuntime: `runtime.version`/`status` from
 * `rt.version()`/`rt.status()` (Status answers RuntimeReady and NetworkReady true when the engine
 * answers), `idScheme` `rt`'s runtime name (`docker`, `fake`; set after the first version call,
 * `defaultScheme` before), logs/streams/events from `rt`; other CRI methods reject (see file doc).
 */
export function interimNodeRuntime(rt: ContainerRuntime, defaultScheme: string): NodeRuntime {
  let scheme = defaultScheme;
  const runtime = Object.fromEntries(kRuntimeMethods.map((m) => [m, notYet(m, defaultScheme)])) as unknown as RuntimeService;
  runtime.version = async (): Promise<VersionResponse> => {
    const v = await rt.version();
    scheme = idSchemeOf(v.runtimeName) || scheme;
    return { version: '0.1.0', runtime_name: v.runtimeName, runtime_version: v.version, runtime_api_version: v.apiVersion };
  };
  runtime.status = async (): Promise<StatusResponse> => {
    await rt.status();
    const ready = (type: string) => ({ type, status: true, reason: '', message: '' });
    return { status: { conditions: [ready('RuntimeReady'), ready('NetworkReady')] }, info: {}, runtime_handlers: [], features: null };
  };
  runtime.close = () => {};
  const images = Object.fromEntries(kImageMethods.map((m) => [m, notYet(m, defaultScheme)])) as unknown as ImageManagerService;
  images.close = () => {};
  return {
    runtime, images,
    get idScheme() { return scheme; },
    logs: { readContainerLogs: (id, opts, h) => rt.readContainerLogs(id, opts, h), tailLogs: (id, lines, bytes) => rt.tailLogs?.(id, lines, bytes) ?? Promise.resolve('') },
    streams: { openContainerStream: (id, opts, h) => rt.openContainerStream(id, opts, h) },
    events: { watchContainerEvents: (filter, h) => rt.watchContainerEvents(filter, h) },
  };
}

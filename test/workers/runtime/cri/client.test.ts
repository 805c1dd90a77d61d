// The CRI client's own rules against a grpc-js server playing the runtime: endpoint parsing (pkg/kubelet/util/util_unix.go), deadlines and errors (pkg/kubelet/cri/remote/remote_runtime.go, remote_image.go).
import * as grpc from '@grpc/grpc-js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AgentError, isNotFound, isRetriable, isUnavailable } from '../../../../src/shared/errors.js';
import { isDeadlineExceeded } from '../../../../src/workers/runtime/cri/deadline.js';
import { parseCriEndpoint } from '../../../../src/workers/runtime/cri/endpoint.js';
import { grpcCodeOf, isCommandTimeout } from '../../../../src/workers/runtime/cri/errors.js';
import { loadCriServices } from '../../../../src/workers/runtime/cri/proto.js';
import { RemoteImageService } from '../../../../src/workers/runtime/cri/remote-image.js';
import { RemoteRuntimeService } from '../../../../src/workers/runtime/cri/remote-runtime.js';
import { FakeClock } from '../../../fakes/fake-clock.js';

/** Every CRI method #40 item 1 names. */
const kRuntimeMethods = [
  'RunPodSandbox',
  'StopPodSandbox',
  'RemovePodSandbox',
  'PodSandboxStatus',
  'ListPodSandbox',
  'CreateContainer',
  'StartContainer',
  'StopContainer',
  'RemoveContainer',
  'ContainerStatus',
  'ListContainers',
  'UpdateContainerResources',
  'ReopenContainerLog',
  'ExecSync',
  'Exec',
  'Attach',
  'PortForward',
  'ContainerStats',
  'ListContainerStats',
  'PodSandboxStats',
  'Status',
  'Version',
];
const kImageMethods = ['PullImage', 'ImageStatus', 'ListImages', 'RemoveImage', 'ImageFsInfo'];

describe('parseCriEndpoint', () => {
  it('takes unix:///absolute/path and gives grpc-js its target', () => {
    expect(parseCriEndpoint('unix:///run/containerd/containerd.sock')).toEqual({
      target: 'unix:///run/containerd/containerd.sock',
      path: '/run/containerd/containerd.sock',
    });
  });

  it.each([
    ['tcp://127.0.0.1:1234', /--container-runtime-endpoint "tcp:\/\/127.0.0.1:1234": protocol "tcp" not supported; only unix is/],
    ['npipe:////./pipe/containerd', /protocol "npipe" not supported/],
    ['/run/containerd/containerd.sock', /: no scheme \(expected unix:\/\/\/path\/to\/runtime.sock\)/],
    ['unix://run/containerd.sock', /the socket path must be absolute/],
    [`unix:///${'x'.repeat(120)}`, /longer than a unix socket allows/],
  ])('refuses %s, naming the flag and the value', (value, message) => {
    expect(() => parseCriEndpoint(value)).toThrow(message);
    expect(() => parseCriEndpoint(value)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARGUMENT' }));
  });

  it('names --image-service-endpoint for the image client', () => {
    expect(() => new RemoteImageService('tcp://127.0.0.1:1')).toThrow(/^--image-service-endpoint "tcp:/);
    expect(() => new RemoteRuntimeService('docker.sock')).toThrow(/^--container-runtime-endpoint "docker.sock": no scheme/);
  });
});

describe('the CRI protocol as loaded', () => {
  it('has every method the kubelet uses, on runtime.v1.RuntimeService and runtime.v1.ImageService', () => {
    const { RuntimeService, ImageService } = loadCriServices();
    expect(Object.keys(RuntimeService.service)).toEqual(expect.arrayContaining(kRuntimeMethods));
    expect(Object.keys(ImageService.service)).toEqual(expect.arrayContaining(kImageMethods));
    expect(RuntimeService.service.RunPodSandbox!.path).toBe('/runtime.v1.RuntimeService/RunPodSandbox');
  });
});

/** A grpc-js server on a unix socket playing the runtime: each test sets the handlers it needs. */
describe('a CRI client against a runtime that is slow, failing or absent', () => {
  let dir: string;
  let server: grpc.Server;
  let endpoint: string;
  const handlers: Record<string, grpc.handleUnaryCall<unknown, unknown>> = {};
  const seen: Record<string, unknown> = {};
  const later =
    (ms: number, value: unknown): grpc.handleUnaryCall<unknown, unknown> =>
    (call, cb) => {
      setTimeout(() => cb(null, value), ms);
    };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-cri-client-'));
    endpoint = `unix://${join(dir, 'runtime.sock')}`;
    server = new grpc.Server();
    const { RuntimeService, ImageService } = loadCriServices();
    for (const service of [RuntimeService, ImageService]) {
      const impl: grpc.UntypedServiceImplementation = {};
      for (const name of Object.keys(service.service)) {
        impl[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
          seen[name] = call.request;
          const h = handlers[name];
          if (h) h(call, cb);
          else cb({ code: grpc.status.UNIMPLEMENTED, details: `${name} not played` });
        };
      }
      server.addService(service.service, impl);
    }
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(endpoint, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
  });

  afterAll(async () => {
    server?.forceShutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the proto field names and enum names, and reads 64-bit times as numbers and enums as names', async () => {
    handlers.RunPodSandbox = (_call, cb) => cb(null, { pod_sandbox_id: 'sb-1' });
    handlers.ContainerStatus = (_call, cb) => cb(null, { status: { id: 'c-1', state: 2, created_at: 1796633016945253400, exit_code: 3 } });
    const rt = new RemoteRuntimeService(endpoint);
    try {
      const id = await rt.runPodSandbox({
        metadata: { name: 'p', uid: 'u', namespace: 'ns' },
        log_directory: '/var/log/pods/x',
        linux: { security_context: { namespace_options: { network: 'NODE' } } },
      });
      expect(id).toBe('sb-1');
      expect(seen.RunPodSandbox).toMatchObject({
        config: {
          log_directory: '/var/log/pods/x',
          metadata: { name: 'p', uid: 'u', namespace: 'ns', attempt: 0 },
          linux: { security_context: { namespace_options: { network: 'NODE', pid: 'POD' } } },
        },
        runtime_handler: '',
      });
      const s = (await rt.containerStatus('c-1')).status!;
      expect(s).toMatchObject({ id: 'c-1', state: 'CONTAINER_EXITED', exit_code: 3, reason: '', metadata: null, labels: {}, mounts: [] });
      expect(s.created_at).toBeCloseTo(1796633016945253400, -3);
    } finally {
      rt.close();
    }
  });

  it('fails a call past --runtime-request-timeout with "context deadline exceeded", naming the method; retriable', async () => {
    handlers.ListContainers = () => undefined; // never answers
    const rt = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 200 });
    try {
      const err = await rt.listContainers().then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(err).toBeInstanceOf(AgentError);
      expect(err!.message).toBe('ListContainers: context deadline exceeded (--runtime-request-timeout 0.2s)');
      expect(isDeadlineExceeded(err)).toBe(true);
      expect(isRetriable(err)).toBe(true);
      expect(grpcCodeOf(err)).toBe(grpc.status.DEADLINE_EXCEEDED);
    } finally {
      rt.close();
    }
  });

  it("sets each call's gRPC deadline from the client's clock (now + the request timeout)", async () => {
    handlers.Version = (_call, cb) => cb(null, { version: '0.1.0', runtime_name: 'fake', runtime_version: '1', runtime_api_version: 'v1' });
    const inTime = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 60_000, clock: new FakeClock(Date.now()) });
    // A clock ten minutes behind the wall: its deadline (now + 1 min) has passed before the call is sent.
    const behind = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 60_000, clock: new FakeClock(Date.now() - 600_000) });
    try {
      expect((await inTime.version('0.1.0')).runtime_name).toBe('fake');
      const err = await behind.version('0.1.0').then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(isDeadlineExceeded(err)).toBe(true);
    } finally {
      inTime.close();
      behind.close();
    }
  });

  it('gives PullImage no deadline, StopContainer and ExecSync their own timeout on top of the request timeout', async () => {
    handlers.PullImage = later(900, { image_ref: 'sha256:abc' });
    handlers.StopContainer = later(900, {});
    handlers.ExecSync = later(900, { stdout: Buffer.from('hi\n'), exit_code: 0 });
    handlers.ImageStatus = later(900, {});
    const images = new RemoteImageService(endpoint, { requestTimeoutMs: 300 });
    const rt = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 300 });
    try {
      expect(await images.pullImage({ image: 'x' })).toBe('sha256:abc');
      await expect(images.imageStatus({ image: 'x' })).rejects.toThrow(/^ImageStatus: context deadline exceeded/);
      await rt.stopContainer('c-1', 5);
      expect(seen.StopContainer).toEqual({ container_id: 'c-1', timeout: 5 });
      expect((await rt.execSync('c-1', ['echo', 'hi'], 5)).stdout.toString()).toBe('hi\n');
      expect((await rt.execSync('c-1', ['echo', 'hi'], 0)).exit_code).toBe(0); // no timeout: no deadline
    } finally {
      images.close();
      rt.close();
    }
  });

  it('reports a command that outlived its ExecSync timeout as timed out, not as a deadline of the runtime', async () => {
    // containerd ends the command at its timeout and answers DeadlineExceeded, long before the call's own deadline.
    handlers.ExecSync = (_call, cb) =>
      cb({ code: grpc.status.DEADLINE_EXCEEDED, details: 'timeout 1s exceeded: context deadline exceeded' });
    const rt = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 60_000 });
    try {
      const err = await rt.execSync('c-1', ['sleep', '10'], 1).then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(err!.message).toBe('ExecSync: command "sleep 10" timed out after 1s');
      expect([isCommandTimeout(err), isDeadlineExceeded(err), isRetriable(err)]).toEqual([true, false, false]);
      expect(grpcCodeOf(err)).toBe(grpc.status.DEADLINE_EXCEEDED);
    } finally {
      rt.close();
    }
  });

  it("maps the runtime's gRPC codes: NotFound, AlreadyExists, Unknown", async () => {
    handlers.PodSandboxStatus = (_call, cb) =>
      cb({ code: grpc.status.NOT_FOUND, details: 'an error occurred when try to find sandbox "x": not found' });
    handlers.CreateContainer = (_call, cb) => cb({ code: grpc.status.ALREADY_EXISTS, details: 'name "c" is reserved' });
    handlers.StartContainer = (_call, cb) => cb({ code: grpc.status.UNKNOWN, details: 'failed to start' });
    const rt = new RemoteRuntimeService(endpoint);
    try {
      const nf = await rt.podSandboxStatus('x').then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(nf!.message).toBe(
        'PodSandboxStatus: rpc error: code = NotFound desc = an error occurred when try to find sandbox "x": not found',
      );
      expect([isNotFound(nf), isRetriable(nf)]).toEqual([true, false]);
      await expect(rt.createContainer('sb', {}, {})).rejects.toMatchObject({
        code: 'ERR_ALREADY_EXISTS',
        message: 'CreateContainer: rpc error: code = AlreadyExists desc = name "c" is reserved',
      });
      await expect(rt.startContainer('c')).rejects.toMatchObject({
        code: 'ERR_RUNTIME',
        retriable: true,
        message: 'StartContainer: rpc error: code = Unknown desc = failed to start',
      });
    } finally {
      rt.close();
    }
  });

  it('cancels a call when its signal aborts, and refuses calls after close', async () => {
    handlers.Status = () => undefined; // never answers
    delete seen.Status;
    const rt = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 0 });
    const ac = new AbortController();
    const pending = rt.status(false, { signal: ac.signal }).then(
      () => null,
      (e: unknown) => e as AgentError,
    );
    await vi.waitFor(() => expect(seen.Status).toBeDefined()); // the runtime has the call
    ac.abort();
    const err = await pending;
    expect(err!.message).toMatch(/^Status: rpc error: code = Canceled desc = /);
    expect(grpcCodeOf(err)).toBe(grpc.status.CANCELLED);
    rt.close();
    rt.close();
    await expect(rt.version('0.1.0')).rejects.toMatchObject({
      code: 'ERR_RUNTIME_UNAVAILABLE',
      message: expect.stringMatching(/^Version: .*is closed/),
    });
  });

  it("starts each call on the client's channel with the connection's one Metadata and a numeric deadline", async () => {
    // A Metadata and a Date per call were ours (grpc-js copies the Metadata as a call starts); the
    // grpc-js Client layer they went through (makeUnaryRequest) is no longer on the path either.
    handlers.Version = (_call, cb) => cb(null, { version: '0.1.0', runtime_name: 'fake', runtime_version: '1', runtime_api_version: 'v1' });
    const original = grpc.Channel.prototype.createCall;
    const started: { deadline: unknown; metadata: grpc.Metadata }[] = [];
    const createCall = vi.spyOn(grpc.Channel.prototype, 'createCall').mockImplementation(function (this: grpc.Channel, ...args) {
      const call = original.apply(this, args);
      const start = call.start.bind(call);
      call.start = (metadata, listener) => {
        started.push({ deadline: args[1], metadata });
        start(metadata, listener);
      };
      return call;
    });
    const clock = new FakeClock(Date.now());
    const rt = new RemoteRuntimeService(endpoint, { requestTimeoutMs: 60_000, clock });
    try {
      expect((await rt.version('0.1.0')).runtime_name).toBe('fake');
      expect((await rt.version('0.1.0')).runtime_name).toBe('fake');
      expect(createCall).toHaveBeenCalledTimes(2);
      expect(started.map((s) => s.deadline)).toEqual([clock.now() + 60_000, clock.now() + 60_000]);
      expect(started[0]!.metadata).toBe(started[1]!.metadata);
      expect(started[0]!.metadata.getMap()).toEqual({});
    } finally {
      createCall.mockRestore();
      rt.close();
    }
  });

  it('keeps no channelz records of its channel (grpc.enable_channelz 0)', async () => {
    handlers.Version = (_call, cb) => cb(null, { version: '0.1.0', runtime_name: 'fake', runtime_version: '1', runtime_api_version: 'v1' });
    const rt = new RemoteRuntimeService(endpoint);
    try {
      await rt.version('0.1.0');
      const top = await new Promise<{ channel: { ref: { name: string } }[] }>((resolve, reject) =>
        grpc
          .getChannelzHandlers()
          .GetTopChannels(
            { request: { start_channel_id: 0, max_results: 0 } } as unknown as Parameters<
              ReturnType<typeof grpc.getChannelzHandlers>['GetTopChannels']
            >[0],
            (err, value) => (err ? reject(err) : resolve(value as { channel: { ref: { name: string } }[] })),
          ),
      );
      expect(top.channel.map((c) => c.ref.name)).not.toContain(parseCriEndpoint(endpoint).target);
    } finally {
      rt.close();
    }
  });

  /** serveOn: a grpc-js server on `ep` with `definition` played by `impl` (stopped by the caller). */
  async function serveOn(ep: string, definition: grpc.ServiceDefinition, impl: grpc.UntypedServiceImplementation): Promise<grpc.Server> {
    const s = new grpc.Server();
    s.addService(definition, impl);
    await new Promise<void>((resolve, reject) =>
      s.bindAsync(ep, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
    return s;
  }
  const versionAnswer = { version: '0.1.0', runtime_name: 'fake', runtime_version: '1', runtime_api_version: 'v1' };

  it('answers again after the runtime restarts on the same socket: unavailable while it is down, no new client needed', async () => {
    const ep = `unix://${join(dir, 'restarting.sock')}`;
    const serve = () =>
      serveOn(ep, loadCriServices().RuntimeService.service, {
        Version: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, versionAnswer),
      });
    let runtimeServer = await serve();
    const rt = new RemoteRuntimeService(ep, { requestTimeoutMs: 5_000 });
    try {
      expect((await rt.version('0.1.0')).runtime_name).toBe('fake');
      runtimeServer.forceShutdown();
      await expect(rt.version('0.1.0')).rejects.toMatchObject({ code: 'ERR_RUNTIME_UNAVAILABLE' });
      runtimeServer = await serve();
      await vi.waitFor(async () => expect((await rt.version('0.1.0')).runtime_name).toBe('fake'), { timeout: 15_000, interval: 250 });
    } finally {
      rt.close();
      runtimeServer.forceShutdown();
    }
  });

  it('fails an answer that does not decode as grpc-js did: Internal, the parse error in its details', async () => {
    const ep = `unix://${join(dir, 'garbled.sock')}`;
    const raw = (path: string): grpc.MethodDefinition<Buffer, Buffer> => ({
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: (b: Buffer) => b,
      responseDeserialize: (b: Buffer) => b,
    });
    // 0x0f: field 1 with wire type 7, which protobuf does not have.
    const garbled = await serveOn(
      ep,
      { Version: raw('/runtime.v1.RuntimeService/Version') },
      {
        Version: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.from([0x0f])),
      },
    );
    const rt = new RemoteRuntimeService(ep, { requestTimeoutMs: 5_000 });
    try {
      const bad = await rt.version('0.1.0').then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(bad!.message).toMatch(/^Version: rpc error: code = Internal desc = Response message parsing error: /);
      expect(grpcCodeOf(bad)).toBe(grpc.status.INTERNAL);
      expect((bad!.cause as grpc.ServiceError).message).toMatch(/^13 INTERNAL: Response message parsing error: /);
    } finally {
      rt.close();
      garbled.forceShutdown();
    }
  });

  it('reports a runtime that does not listen as unavailable, naming the method; retriable', async () => {
    const rt = new RemoteRuntimeService(`unix://${join(dir, 'nobody.sock')}`, { requestTimeoutMs: 5_000 });
    try {
      const err = await rt.version('0.1.0').then(
        () => null,
        (e: unknown) => e as AgentError,
      );
      expect(err!.message).toMatch(/^Version: rpc error: code = Unavailable desc = /);
      expect([isUnavailable(err), isRetriable(err)]).toEqual([true, true]);
    } finally {
      rt.close();
    }
  });
});

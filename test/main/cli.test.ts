import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kDefaultAgentOptions, resolveAgentOptions } from '../../src/main/options/agent-options.js';
import { CliUsageError, parseCli, parseCommandLine, runCli, type CliIo } from '../../src/main/cli.js';
import { isInvalidInput } from '../../src/shared/errors.js';

function fakeIo() {
  const out: string[] = [];
  const err: string[] = [];
  const exits: number[] = [];
  const io: CliIo = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), exit: (c) => void exits.push(c) };
  return { io, out, err, exits };
}

async function usageError(argv: string[]): Promise<CliUsageError> {
  const err = await parseCli(argv).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CliUsageError);
  const message = (err as CliUsageError).message;
  expect(message).not.toContain('\n');
  return err as CliUsageError;
}

describe('parseCli defaults', () => {
  it('gives the documented defaults for an empty command line', async () => {
    const o = await parseCli([]);
    expect(o).toMatchObject({
      podManifestPath: '',
      fileCheckFrequencyMs: 20_000,
      manifestUrl: '',
      manifestUrlHeaders: {},
      httpCheckFrequencyMs: 20_000,
      syncFrequencyMs: 60_000,
      address: '127.0.0.1',
      port: 10250,
      rootDir: '/var/lib/kubelet-ts',
      dockerEndpoint: 'unix:///var/run/docker.sock',
      dockerSocketPath: '/var/run/docker.sock',
      podInfraContainerImage: 'kubelet-ts/pause:1.0',
      maxPods: 110,
      etcdServers: [],
      etcdPrefix: '/registry',
      nodeStatusUpdateFrequencyMs: 10_000,
      registerNode: true,
      v: 0,
      logLevel: 'info',
      workers: 2,
      runtime: 'docker',
      relistPeriodMs: 60_000,
      nodeIp: '127.0.0.1',
      maximumDeadContainersPerContainer: 1,
    });
    expect(o.nodeName).toBe(kDefaultAgentOptions.nodeName);
    expect(o.nodeName).toBe(o.nodeName.toLowerCase());
  });

  it('maps every kubelet flag onto its option', async () => {
    const o = await parseCli([
      '--pod-manifest-path=/etc/kubelet-ts/manifests',
      '--manifest-url',
      'http://127.0.0.1:8080/pods.yaml',
      '--address',
      '0.0.0.0',
      '--port',
      '10255',
      '--hostname-override',
      'Node-A',
      '--root-dir',
      '/tmp/agent',
      '--docker-endpoint',
      'unix:///run/docker-2.sock',
      '--pod-infra-container-image',
      'example/pause:2',
      '--max-pods',
      '300',
      '--etcd-prefix',
      '/kubelet-ts/',
      '--register-node=false',
      '--v=4',
      '--node-ip',
      '127.0.0.2',
      '--maximum-dead-containers-per-container',
      '0',
      '--workers',
      '4',
      '--runtime',
      'fake',
    ]);
    expect(o).toMatchObject({
      podManifestPath: '/etc/kubelet-ts/manifests',
      manifestUrl: 'http://127.0.0.1:8080/pods.yaml',
      address: '0.0.0.0',
      port: 10255,
      nodeName: 'node-a',
      rootDir: '/tmp/agent',
      dockerEndpoint: 'unix:///run/docker-2.sock',
      dockerSocketPath: '/run/docker-2.sock',
      podInfraContainerImage: 'example/pause:2',
      maxPods: 300,
      etcdPrefix: '/kubelet-ts',
      registerNode: false,
      v: 4,
      logLevel: 'trace',
      nodeIp: '127.0.0.2',
      maximumDeadContainersPerContainer: 0,
      workers: 4,
      runtime: 'fake',
    });
  });

  it('accepts -v N as well as --v=N', async () => {
    expect((await parseCli(['-v', '2'])).logLevel).toBe('debug');
    expect((await parseCli(['--v', '1'])).v).toBe(1);
  });

  it('lets the last value of a repeated scalar flag win, as pflag does', async () => {
    expect((await parseCli(['--port', '1', '--port', '2'])).port).toBe(2);
  });
});

describe('parseCli durations', () => {
  it.each([
    ['--sync-frequency', '1m30s', 'syncFrequencyMs', 90_000],
    ['--file-check-frequency', '500ms', 'fileCheckFrequencyMs', 500],
    ['--http-check-frequency', '1h', 'httpCheckFrequencyMs', 3_600_000],
    ['--node-status-update-frequency', '2.5s', 'nodeStatusUpdateFrequencyMs', 2_500],
    ['--relist-period', '250ms', 'relistPeriodMs', 250],
  ] as const)('parses %s %s as Go syntax', async (flag, value, key, ms) => {
    const o = await parseCli([flag, value]);
    expect(o[key]).toBe(ms);
  });

  it('rejects a malformed duration naming the flag', async () => {
    const err = await usageError(['--sync-frequency', '1x']);
    expect(err.message).toContain('--sync-frequency');
    expect(err.message).toContain('"1x"');
  });

  it('rejects a zero duration', async () => {
    const err = await usageError(['--relist-period', '0s']);
    expect(err.message).toMatch(/^--relist-period must be a positive duration/);
  });
});

describe('parseCli list flags', () => {
  it('collects --manifest-url-header from commas and repetitions', async () => {
    const o = await parseCli([
      '--manifest-url-header',
      'a:hello,b:again',
      '--manifest-url-header=a:world',
      '--manifest-url-header',
      'X-Url:http://x:1',
    ]);
    expect(o.manifestUrlHeaders).toEqual({ a: ['hello', 'world'], b: ['again'], 'X-Url': ['http://x:1'] });
  });

  it('rejects a header without a colon', async () => {
    const err = await usageError(['--manifest-url-header', 'nocolon']);
    expect(err.message).toBe('--manifest-url-header must be Name:Value, got "nocolon"');
  });

  it('collects --etcd-servers from commas and repetitions', async () => {
    const o = await parseCli(['--etcd-servers', 'http://127.0.0.1:2379,http://127.0.0.1:2380', '--etcd-servers=http://127.0.0.1:2381']);
    expect(o.etcdServers).toEqual(['http://127.0.0.1:2379', 'http://127.0.0.1:2380', 'http://127.0.0.1:2381']);
  });
});

describe('parseCli usage errors', () => {
  it('rejects an unknown flag with a one-line CliUsageError naming it', async () => {
    const err = await usageError(['--no-such-flag', '1']);
    expect(err.message).toContain('unknown flag: --no-such-flag');
    expect(isInvalidInput(err)).toBe(true);
  });

  it('rejects a stray positional argument', async () => {
    const err = await usageError(['run-now']);
    expect(err.message).toContain('"run-now"');
  });

  it('rejects a flag without its value', async () => {
    const err = await usageError(['--port']);
    expect(err.message).toBe('--port needs a value (see --help)');
  });

  it.each([
    [['--port', 'x'], '--port must be an integer in 1..65535 (or 0 for any free port), got "x"'],
    [['--port', '70000'], '--port must be an integer in 1..65535 (or 0 for any free port), got 70000'],
    [['--max-pods', '0'], '--max-pods must be an integer >= 1, got 0'],
    [['--workers', '1.5'], '--workers must be an integer in 1..256, got 1.5'],
    [['--runtime', 'rkt'], '--runtime must be one of docker, remote, fake, got "rkt"'],
    [['--address', 'localhost'], '--address must be an IP address, got "localhost"'],
    [['--node-ip', '300.1.1.1'], '--node-ip must be an IP address, got "300.1.1.1"'],
    [
      ['--docker-endpoint', 'tcp://127.0.0.1:2375'],
      '--docker-endpoint must be a unix socket endpoint such as unix:///var/run/docker.sock, got "tcp://127.0.0.1:2375"',
    ],
    [['--etcd-servers', 'ftp://x'], '--etcd-servers must be an http(s) URL, got "ftp://x"'],
    [['--manifest-url', 'not a url'], '--manifest-url must be an http(s) URL, got "not a url"'],
    [['--etcd-prefix', 'registry'], '--etcd-prefix must start with "/", got "registry"'],
    [
      ['--hostname-override', 'bad_name'],
      '--hostname-override must be a DNS-1123 subdomain (lowercase letters, digits, "-" and "."), got "bad_name"',
    ],
  ])('rejects %j', async (argv, message) => {
    const err = await usageError(argv);
    expect(err.message).toBe(message);
  });
});

describe('--config', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('takes values from the file and lets only the flags given override them', async () => {
    const path = join(dir, 'config.yaml');
    await writeFile(
      path,
      [
        'apiVersion: kubelet.config.k8s.io/v1beta1',
        'kind: KubeletConfiguration',
        'staticPodPath: /etc/kubelet-ts/manifests',
        'syncFrequency: 30s',
        'port: 10300',
        'maxPods: 50',
        'registerNode: false',
      ].join('\n'),
    );
    const o = await parseCli(['--config', path, '--port', '10400', '--sync-frequency=2m']);
    expect(o.podManifestPath).toBe('/etc/kubelet-ts/manifests');
    expect(o.maxPods).toBe(50);
    expect(o.registerNode).toBe(false);
    expect(o.port).toBe(10400);
    expect(o.syncFrequencyMs).toBe(120_000);
    // Not in the file, not on the command line: the default.
    expect(o.fileCheckFrequencyMs).toBe(20_000);
  });

  it('lets --register-node=true override registerNode: false', async () => {
    const path = join(dir, 'register.yaml');
    await writeFile(path, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nregisterNode: false\n');
    expect((await parseCli(['--config', path])).registerNode).toBe(false);
    expect((await parseCli(['--config', path, '--register-node'])).registerNode).toBe(true);
  });

  it('turns a bad config file into a one-line CliUsageError naming the file and field', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(path, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nreadOnlyPort: 10255\n');
    const err = await usageError(['--config', path]);
    expect(err.message).toContain(path);
    expect(err.message).toContain('"readOnlyPort"');
  });

  it('reports a missing config file', async () => {
    const err = await usageError(['--config', join(dir, 'missing.yaml')]);
    expect(err.message).toContain('missing.yaml');
  });
});

describe('help and version', () => {
  it('shows every flag with Go-style duration defaults', async () => {
    const inv = await parseCommandLine(['--help']);
    expect(inv.command).toBe('help');
    const text = inv.command === 'help' ? inv.output : '';
    for (const flag of [
      '--config',
      '--pod-manifest-path',
      '--manifest-url-header',
      '--sync-frequency',
      '--hostname-override',
      '--etcd-servers',
      '--register-node',
      '--workers',
      '--runtime',
      '--relist-period',
      '--node-ip',
    ]) {
      expect(text).toContain(flag);
    }
    expect(text).toMatch(/--sync-frequency[\s\S]*?\[default: 1m\]/);
    expect(text).toMatch(/--file-check-frequency[\s\S]*?\[default: 20s\]/);
    expect(text).toMatch(/--max-pods[\s\S]*?\[default: 110\]/);
  });

  it('gives the package version', async () => {
    const inv = await parseCommandLine(['--version']);
    expect(inv).toEqual({ command: 'version', output: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('does not return agent options from parseCli for --help', async () => {
    await usageError(['--help']);
  });
});

describe('runCli', () => {
  it('prints help to stdout and exits 0', async () => {
    const { io, out, err, exits } = fakeIo();
    expect(await runCli(['--help'], {}, io)).toBeUndefined();
    expect(out.join('')).toContain('--pod-manifest-path');
    expect(err).toEqual([]);
    expect(exits).toEqual([0]);
  });

  it('prints "kubelet-ts: <message>" on one line to stderr and exits 2 on a usage error', async () => {
    const { io, out, err, exits } = fakeIo();
    let ran = false;
    await runCli(['--bogus'], { runAgent: async () => void (ran = true) }, io);
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^kubelet-ts: unknown flag: --bogus.*\n$/);
    expect(err[0].trimEnd()).not.toContain('\n');
    expect(out).toEqual([]);
    expect(exits).toEqual([2]);
    expect(ran).toBe(false);
  });

  it('runs the agent command with the resolved options', async () => {
    const { io, exits } = fakeIo();
    const seen: number[] = [];
    const options = await runCli(['--port', '0', '--runtime', 'fake'], { runAgent: async (o) => void seen.push(o.port) }, io);
    expect(seen).toEqual([0]);
    expect(options?.runtime).toBe('fake');
    expect(exits).toEqual([]);
  });

  it('lets an error from the agent reject instead of exiting', async () => {
    const { io, exits } = fakeIo();
    await expect(runCli([], { runAgent: async () => Promise.reject(new Error('boom')) }, io)).rejects.toThrow('boom');
    expect(exits).toEqual([]);
  });
});

describe('resolveAgentOptions', () => {
  it('derives dockerSocketPath from dockerEndpoint and logLevel from v', () => {
    const o = resolveAgentOptions({ dockerEndpoint: 'unix:///tmp/d.sock', v: 2 });
    expect(o.dockerSocketPath).toBe('/tmp/d.sock');
    expect(o.logLevel).toBe('debug');
  });

  it('takes a dockerSocketPath given alone as the endpoint', () => {
    const o = resolveAgentOptions({ dockerSocketPath: '/tmp/e.sock' });
    expect(o.dockerEndpoint).toBe('unix:///tmp/e.sock');
  });

  it('keeps an explicit logLevel', () => {
    expect(resolveAgentOptions({ logLevel: 'silent', v: 4 }).logLevel).toBe('silent');
  });

  it('rejects an unknown option key', () => {
    expect(() => resolveAgentOptions({ prot: 1 } as never)).toThrow('unknown option "prot"');
  });

  it('does not let callers mutate the defaults', () => {
    const o = resolveAgentOptions({});
    o.manifestUrlHeaders.x = ['y'];
    expect(kDefaultAgentOptions.manifestUrlHeaders).toEqual({});
  });
});

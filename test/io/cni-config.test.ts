import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultNetworkConfigList,
  findNetworkConfigFile,
  loadNetworkConfigList,
  missingPluginBinaries,
  parseNetworkConfig,
  scanNetworkConfigDir,
} from '../../src/io/cni-config.js';

const kList = { cniVersion: '1.0.0', name: 'net1', plugins: [{ type: 'bridge', bridge: 'x' }, { type: 'portmap' }] };

describe('parseNetworkConfig', () => {
  it('reads a .conflist as it is', () => {
    expect(parseNetworkConfig(JSON.stringify({ ...kList, disableCheck: true }), '/d/a.conflist')).toEqual({ ...kList, disableCheck: true });
  });

  it('turns a single-plugin .conf into a one-plugin list of the same name and version', () => {
    const conf = { cniVersion: '0.4.0', name: 'single', type: 'bridge', bridge: 'b0', ipam: { type: 'host-local' } };
    expect(parseNetworkConfig(JSON.stringify(conf), '/d/10.conf')).toEqual({
      cniVersion: '0.4.0',
      name: 'single',
      plugins: [{ type: 'bridge', bridge: 'b0', ipam: { type: 'host-local' } }],
    });
  });

  it.each([
    ['{', 'invalid JSON'],
    ['[]', 'must be a JSON object'],
    [JSON.stringify({ ...kList, plugins: [{ type: 'bridge' }, {}] }), 'plugins[1].type: Required value'],
    [JSON.stringify({ ...kList, plugins: [{ type: '../../bin/sh' }] }), 'plugins[0].type: Invalid value'],
    [JSON.stringify({ ...kList, plugins: [] }), 'plugins: Required value'],
    [JSON.stringify({ ...kList, plugins: undefined }), 'plugins: Required value'],
    [JSON.stringify({ ...kList, name: '-bad name' }), 'name: Invalid value: "-bad name"'],
    [JSON.stringify({ ...kList, name: undefined }), 'name: Required value'],
    [JSON.stringify({ ...kList, cniVersion: '1.1.0' }), 'cniVersion: Unsupported value: "1.1.0"'],
    [JSON.stringify({ ...kList, cniVersion: '0.2.0' }), 'cniVersion: Unsupported value: "0.2.0"'],
    [JSON.stringify({ ...kList, disableCheck: 'yes' }), 'disableCheck: Invalid value'],
    [JSON.stringify({ ...kList, plugins: [{ type: 'bridge', ipam: 'host-local' }] }), 'plugins[0].ipam: Invalid value'],
  ])('rejects %s naming the file and the field (%s)', (text, msg) => {
    expect(() => parseNetworkConfig(text, '/etc/cni/net.d/10-x.conflist')).toThrow(`/etc/cni/net.d/10-x.conflist: ${msg}`);
    try {
      parseNetworkConfig(text, '/f.conflist');
    } catch (e) {
      expect((e as { code?: string }).code).toBe('ERR_INVALID_ARGUMENT');
    }
  });

  it('rejects a .conf without type', () => {
    expect(() => parseNetworkConfig(JSON.stringify({ cniVersion: '1.0.0', name: 'n' }), '/d/a.conf')).toThrow(
      '/d/a.conf: (plugin).type: Required value',
    );
  });
});

describe('findNetworkConfigFile and loadNetworkConfigList', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kts-h1-conf-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is undefined for a missing or empty dir', async () => {
    expect(await findNetworkConfigFile(join(dir, 'nope'))).toBeUndefined();
    const empty = join(dir, 'empty');
    await mkdir(empty);
    expect(await findNetworkConfigFile(empty)).toBeUndefined();
  });

  it('picks the first by name that parses, skipping broken files and other extensions', async () => {
    const d = join(dir, 'order');
    await mkdir(d);
    await writeFile(join(d, '00-broken.conflist'), '{ nope');
    await writeFile(join(d, '05-notes.txt'), JSON.stringify(kList));
    await mkdir(join(d, '07-dir.conf'));
    await writeFile(join(d, '10-good.conf'), JSON.stringify({ cniVersion: '1.0.0', name: 'good', type: 'bridge' }));
    await writeFile(join(d, '20-later.conflist'), JSON.stringify(kList));
    expect(await findNetworkConfigFile(d)).toBe(join(d, '10-good.conf'));
    const scan = await scanNetworkConfigDir(d);
    expect(scan.list?.name).toBe('good');
    expect(scan.skipped).toEqual([
      { file: join(d, '00-broken.conflist'), message: expect.stringContaining('00-broken.conflist: invalid JSON') },
    ]);
    expect((await loadNetworkConfigList(join(d, '20-later.conflist'))).name).toBe('net1');
  });

  it('throws naming the file it cannot read', async () => {
    await expect(loadNetworkConfigList(join(dir, 'missing.conflist'))).rejects.toThrow(`${join(dir, 'missing.conflist')}: cannot read`);
  });

  it('names the missing plugin binaries, including loopback and the ipam type', async () => {
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await writeFile(join(bin, 'bridge'), '#!/bin/sh\n');
    await chmod(join(bin, 'bridge'), 0o755);
    await writeFile(join(bin, 'portmap'), '#!/bin/sh\n'); // not executable
    const list = defaultNetworkConfigList({
      name: 'kubelet-ts',
      bridge: 'kts0',
      subnet: '10.250.1.0/24',
      dataDir: '/x',
      masquerade: false,
    });
    expect(await missingPluginBinaries([join(dir, 'nope'), bin], list)).toEqual(['loopback', 'host-local', 'portmap']);
    expect(await missingPluginBinaries(['/nonexistent-dir'], list)).toEqual(['loopback', 'bridge', 'host-local', 'portmap']);
  });
});

describe('defaultNetworkConfigList', () => {
  it('is bridge (gateway, no default route, no masquerade, hairpin) with host-local, then portmap with snat', () => {
    const list = defaultNetworkConfigList({
      name: 'kubelet-ts',
      bridge: 'kts0',
      subnet: '10.250.1.0/24',
      dataDir: '/r/cni/networks',
      masquerade: false,
    });
    expect(list).toEqual({
      cniVersion: '1.0.0',
      name: 'kubelet-ts',
      plugins: [
        {
          type: 'bridge',
          bridge: 'kts0',
          isGateway: true,
          isDefaultGateway: false,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: '10.250.1.0/24' }]], dataDir: '/r/cni/networks' },
        },
        { type: 'portmap', capabilities: { portMappings: true }, snat: true },
      ],
    });
    expect((list.plugins[0]!.ipam as { routes?: unknown }).routes).toBeUndefined();
    // Round trip: what the agent writes, it parses back.
    expect(parseNetworkConfig(JSON.stringify(list), '/r/cni/net.d/kubelet-ts.conflist')).toEqual(list);
  });

  it('turns masquerade on only when asked', () => {
    const list = defaultNetworkConfigList({ name: 'n', bridge: 'b', subnet: '10.0.0.0/24', dataDir: '/d', masquerade: true });
    expect(list.plugins[0]!.ipMasq).toBe(true);
  });

  it.each([
    [{ bridge: 'a-very-long-bridge-name' }, 'bridge: Invalid value'],
    [{ subnet: '10.0.0.0' }, '--pod-cidr: Invalid value'],
    [{ subnet: '10.0.300.0/24' }, '--pod-cidr: Invalid value'],
    [{ dataDir: 'rel' }, 'dataDir: Invalid value'],
    [{ name: 'a b' }, 'name: Invalid value'],
  ])('rejects %o', (over, msg) => {
    expect(() =>
      defaultNetworkConfigList({ name: 'n', bridge: 'b', subnet: '10.0.0.0/24', dataDir: '/d', masquerade: false, ...over }),
    ).toThrow(msg);
  });
});

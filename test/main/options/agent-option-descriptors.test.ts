// Tests of src/main/options/agent-option-descriptors.ts: the one table that the options type, defaults, flags, --help and --config come from.
import { describe, expect, it } from 'vitest';
import { kAgentOptionDescriptors } from '../../../src/main/options/agent-option-descriptors.js';
import { kAgentOptionKeys, kDefaultAgentOptions, kOptionFlags, resolveAgentOptions } from '../../../src/main/options/agent-options.js';
import { parseCommandLine } from '../../../src/main/cli.js';

const entries = Object.entries(kAgentOptionDescriptors);

describe('kAgentOptionDescriptors', () => {
  it('gives every option a default that its own check accepts unchanged', () => {
    expect(resolveAgentOptions({})).toEqual(kDefaultAgentOptions);
    expect(Object.keys(kDefaultAgentOptions)).toEqual(kAgentOptionKeys);
  });

  it('gives every flag one option, and every derived option the flag it comes from', () => {
    const own = entries.filter(([, d]) => d.parse !== 'derived').map(([, d]) => d.flag);
    expect(new Set(own).size).toBe(own.length);
    expect(kOptionFlags.dockerSocketPath).toBe('--docker-endpoint');
    expect(kOptionFlags.logLevel).toBe('--v');
    for (const [key, d] of entries) expect(kOptionFlags[key as keyof typeof kOptionFlags]).toBe(`--${d.flag}`);
  });

  it('maps distinct KubeletConfiguration fields', () => {
    const fields = entries.flatMap(([, d]) => ('config' in d && d.config ? [d.config.field] : []));
    expect(new Set(fields).size).toBe(fields.length);
    expect(fields).toContain('staticPodPath');
  });

  it('lists every flag in --help with its help text and default', async () => {
    const inv = await parseCommandLine(['--help']);
    const text = (inv.command === 'help' ? inv.output : '').replace(/\s+/g, ' ');
    for (const [, d] of entries) {
      if (d.parse === 'derived') continue;
      expect(text).toContain(`--${d.flag}`);
      expect(text).toContain(d.help.replace(/\s+/g, ' ').slice(0, 30));
    }
    expect(text).toMatch(/--etcd-servers .*?\[default: none\]/);
    expect(text).toMatch(/--register-node .*?\[boolean\] \[default: true\]/);
  });
});

describe('--allowed-unsafe-sysctls (issue #12 part A)', () => {
  it('takes namespaced sysctls and patterns, and refuses the others as the kubelet', async () => {
    const { resolveAgentOptions } = await import('../../../src/main/options/agent-options.js');
    expect(resolveAgentOptions({ allowedUnsafeSysctls: ['net.core.*', 'kernel.msgmax'] }).allowedUnsafeSysctls).toEqual([
      'net.core.*',
      'kernel.msgmax',
    ]);
    expect(resolveAgentOptions({}).allowedUnsafeSysctls).toEqual([]);
    expect(() => resolveAgentOptions({ allowedUnsafeSysctls: ['vm.swappiness'] })).toThrow(
      '--allowed-unsafe-sysctls must list namespaced sysctls only ("vm.swappiness" is not known to be namespaced)',
    );
  });
});

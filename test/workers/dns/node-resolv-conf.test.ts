// The node's resolv.conf as a sandbox's DNS config reads it (workers/dns/pod-dns.ts readNodeResolvConf):
// the file's text; '' for a missing file, a directory or one over the kubelet's 10 MiB bound.
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kMaxResolvConfBytes, readNodeResolvConf } from '../../../src/workers/dns/pod-dns.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('readNodeResolvConf', () => {
  it("reads the node's file, and counts a missing one, a directory and one over 10 MiB as empty", () => {
    const d = mkdtempSync(join(tmpdir(), 'kts-node-resolv-'));
    dirs.push(d);
    writeFileSync(join(d, 'resolv.conf'), 'nameserver 10.0.0.2\n');
    expect(readNodeResolvConf(join(d, 'resolv.conf'))).toBe('nameserver 10.0.0.2\n');
    expect(readNodeResolvConf(join(d, 'missing'))).toBe('');
    mkdirSync(join(d, 'dir'));
    expect(readNodeResolvConf(join(d, 'dir'))).toBe('');
    writeFileSync(join(d, 'big'), 'nameserver 10.0.0.3\n');
    truncateSync(join(d, 'big'), kMaxResolvConfBytes + 1);
    expect(readNodeResolvConf(join(d, 'big'))).toBe('');
  });
});

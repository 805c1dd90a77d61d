// examples/kubectl/web.yaml, the README's first pod, applied as a user would: the real kubectl
// (/usr/bin/kubectl, v1.32) against a test agent over TLS and the real dockerd. The file is what the
// README's kubectl lines call `web` (container `main`); this test keeps it runnable as typed there:
// applied, Running and Ready, reached through the pod proxy, without a MissingClusterDNS warning
// (its dnsPolicy is Default), and deleted. The role of the e2e framework's runs of the
// documentation's manifests (test/e2e/testing-manifests upstream).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { useTestNodes, type TestNode } from '../support/agent.js';
import { kHaveKubectl, kubectlFor } from '../support/kubectl.js';
import { kExamplesDir } from '../support/examples.js';

const kTestMs = 180_000;
const kWebExample = join(kExamplesDir, 'kubectl', 'web.yaml');

describe.skipIf(!inject('dockerAvailable') || !kHaveKubectl)('examples/kubectl: the first pod a user applies with kubectl', () => {
  const start = useTestNodes();
  let node: TestNode;
  let dir: string;
  const { kubectl } = kubectlFor(
    () => node,
    () => dir,
  );

  it(
    'kubectl apply -f examples/kubectl/web.yaml runs the pod web (container main): Ready, served through the pod proxy, deleted',
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'kubelet-ts-examples-kubectl-'));
      try {
        node = await start({ tlsPort: 0 });
        await applyAndCheckWeb();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    kTestMs,
  );

  /** The README's steps with examples/kubectl/web.yaml, each checked. */
  async function applyAndCheckWeb(): Promise<void> {
    const applied = await kubectl(['apply', '-f', kWebExample]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout.trim()).toBe('pod/web created');

    const ready = await kubectl(['wait', '--for=condition=Ready', 'pod/web', '--timeout=120s']);
    expect(ready.stderr).toBe('');
    expect(ready.code).toBe(0);
    const shown = await kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.phase} {.spec.containers[*].name}']);
    expect(shown.stdout).toBe('Running main');

    // The README's proxy line, as typed there.
    const page = await kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web:80/proxy/']);
    expect(page.stderr).toBe('');
    expect(page.stdout).toBe(`hello from web on ${node.nodeName}\n`);

    // dnsPolicy Default: the node's resolv.conf, no MissingClusterDNS warning (the agent runs without --cluster-dns).
    const events = await kubectl(['get', 'events', '--field-selector', 'involvedObject.name=web', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.code).toBe(0);
    expect(events.stdout).toContain('Started');
    expect(events.stdout).not.toContain('MissingClusterDNS');

    const deleted = await kubectl(['delete', 'pod', 'web', '--timeout=60s']);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout.trim()).toBe('pod "web" deleted');
    expect((await kubectl(['get', 'pod', 'web'])).stderr).toContain('NotFound');
  }
});

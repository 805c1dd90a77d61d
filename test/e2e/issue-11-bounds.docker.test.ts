// Regression tests of issue 11 finding 4 (memory bounds), against the real agent and dockerd:
// a POSTed batch that cannot be admitted, or that would pass the intake store's byte limit, is
// refused whole with a 403 Status before anything is written; log lines carry bounded fields (a
// 900 KB image name wrote 54 MB of log in a minute); the file source never copies a manifest's
// content into the log (a symlink to /proc/self/environ printed the agent's environment).
// The watch history is bounded by bytes as well as by count (720 changes of 200 KB pods held 270 MiB).
import { readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import type { Pod, PodList, Status } from '../../src/shared/api.js';
import { waitFor } from '../support/docker.js';
import { adminAuthorization, useTestNodes, type TestNode } from '../support/agent.js';
import { intakeFileNames } from '../../src/main/config/intake-pod-files.js';

const intakePod = (name: string, extra: Partial<Pod['metadata']> = {}, image = 'kubelet-ts/busybox:1.35'): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { test: 'issue-11-bounds' }, ...extra },
  spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image, command: ['sleep', '3600'] }] },
});
const list = (items: Pod[]) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
const json = { 'Content-Type': 'application/json' };

/** watchFrames opens WS /watch/pods with `query` and collects its frames. */
function watchFrames(node: TestNode, query = '') {
  const ws = new WebSocket(`ws://127.0.0.1:${node.agent.port}/watch/pods${query}`, { headers: adminAuthorization(node.rootDir) });
  const frames: { type: string; object: Pod & Partial<Status> }[] = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data)) as (typeof frames)[number]));
  return { ws, frames };
}

describe.skipIf(!inject('dockerAvailable'))('issue 11 finding 4: memory bounds', () => {
  const start = useTestNodes();

  it('the watch history drops its oldest changes past --watch-history-bytes: a resume from before them gets 410, a recent one resumes', async () => {
    const node = await start({ watchHistoryBytes: 24 * 1024 });
    const live = watchFrames(node);
    await waitFor(() => live.frames.some((f) => f.type === 'BOOKMARK') || undefined, {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'first bookmark',
    });
    // Each change of these pods is a frame of over 8 KB: the history holds two of them, not 10,000.
    const blob = 'x'.repeat(8 * 1024);
    const body = list(['w1', 'w2'].map((n) => intakePod(n, { annotations: { blob } })));
    expect((await node.api('/pods', { method: 'POST', headers: json, body })).status).toBe(201);
    const changes = () => live.frames.filter((f) => f.type !== 'BOOKMARK');
    await waitFor(() => changes().length >= 4 || undefined, {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: 'four changes of the two pods',
    });
    live.ws.close();
    const versions = changes().map((f) => Number(f.object.metadata?.resourceVersion));

    const old = watchFrames(node, `?resourceVersion=${versions[0]}`);
    await waitFor(() => old.frames.length > 0 || undefined, {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'the answer to an old resume',
    });
    old.ws.close();
    expect(old.frames[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });

    // The newest change is always held: a resume from the current resourceVersion still works.
    const fresh = watchFrames(node);
    const mark = await waitFor(() => fresh.frames.find((f) => f.type === 'BOOKMARK'), {
      timeoutMs: 10_000,
      intervalMs: 50,
      description: 'a bookmark',
    });
    fresh.ws.close();
    const recent = watchFrames(node, `?resourceVersion=${mark.object.metadata?.resourceVersion}`);
    await waitFor(() => recent.frames.length > 0 || undefined, { timeoutMs: 10_000, intervalMs: 50, description: 'a recent resume' });
    recent.ws.close();
    expect(recent.frames.map((f) => f.type)).not.toContain('ERROR');
  });

  it('a List of --max-pods + 1 pods is refused whole with 403 exceeded quota saying how many fit; nothing is listed or written', async () => {
    const node = await start({ maxPods: 2 });
    const podsBefore = ((await (await node.api('/pods')).json()) as PodList).items;
    const intakeDir = join(node.rootDir, 'intake');
    const filesBefore = await readdir(intakeDir);

    const res = await node.api('/pods', { method: 'POST', headers: json, body: list(['a', 'b', 'c'].map((n) => intakePod(n))) });
    expect(res.status).toBe(403);
    const status = (await res.json()) as Status;
    expect(status).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Forbidden', code: 403 });
    expect(status.message).toContain('exceeded quota');
    expect(status.message).toContain('2 of the 3 would fit');

    expect(((await (await node.api('/pods')).json()) as PodList).items).toEqual(podsBefore);
    expect(await readdir(intakeDir)).toEqual(filesBefore);
    expect(node.agent.events.list().filter((e) => e.reason === 'OutOfpods')).toEqual([]);

    // The two that fit are admitted; a third one alone is then refused the same way.
    const ab = await node.api('/pods', { method: 'POST', headers: json, body: list([intakePod('a'), intakePod('b')]) });
    expect(ab.status).toBe(201);
    const abUids = ((await ab.json()) as PodList).items.map((p) => p.metadata!.uid!);
    const third = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(intakePod('c')) });
    expect(third.status).toBe(403);
    expect(((await third.json()) as Status).message).toContain('pods "c" is forbidden: exceeded quota');
    expect((await readdir(intakeDir)).sort()).toEqual(abUids.flatMap((u) => intakeFileNames(u)).sort());
  });

  it('a POST that would take the intake store past --intake-store-bytes is refused with 403 and writes nothing', async () => {
    const node = await start({ intakeStoreBytes: 8 * 1024 });
    const small = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(intakePod('small')) });
    expect(small.status).toBe(201);
    const smallUid = ((await small.json()) as Pod).metadata!.uid!;
    const big = intakePod('big', { annotations: { blob: 'x'.repeat(10 * 1024) } });
    const res = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(big) });
    expect(res.status).toBe(403);
    const status = (await res.json()) as Status;
    expect(status).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(status.message).toContain('--intake-store-bytes');
    expect((await readdir(join(node.rootDir, 'intake'))).sort()).toEqual(intakeFileNames(smallUid).sort());
    expect((await node.pods()).map((p) => p.metadata?.name)).toEqual(['small']);
  });

  it("a 900 KB image name is logged in bounded fields: no log record near the image's size", async () => {
    const node = await start();
    const image = `kubelet-ts/${'a'.repeat(900 * 1024)}:1`;
    const res = await node.api('/pods', { method: 'POST', headers: json, body: JSON.stringify(intakePod('huge-image', {}, image)) });
    expect(res.status).toBe(201);
    // The pull fails (the name is no valid reference): wait for the warnings that say so.
    await waitFor(() => node.warnings.some((w) => JSON.stringify(w).includes('huge-image')) || undefined, {
      timeoutMs: 60_000,
      intervalMs: 200,
      description: 'a warning about pod huge-image',
    });
    const sizes = node.warnings.map((w) => JSON.stringify(w).length);
    expect(Math.max(...sizes)).toBeLessThan(16 * 1024);
    expect(node.warnings.some((w) => JSON.stringify(w).includes('more bytes)'))).toBe(true);
    // The event stored for it is bounded as well (GET /events).
    const events = (await (await node.api('/events')).json()) as { items: { message?: string }[] };
    expect(Math.max(0, ...events.items.map((e) => e.message?.length ?? 0))).toBeLessThan(16 * 1024);
  });

  it('a manifest symlinked to a file with secret-looking content never shows that content in the warnings', async () => {
    const node = await start();
    const secretFile = join(node.rootDir, 'environ');
    const secret = 'AWS_SECRET_ACCESS_KEY=hunter2-do-not-log-me';
    await writeFile(secretFile, `${secret}\0PATH=/usr/bin\0HOME=/root\0`);
    await symlink(secretFile, join(node.manifestDir, 'environ.yaml'));
    const secretPem = join(node.rootDir, 'key.pem');
    await writeFile(secretPem, '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-do-not-log-me\n-----END PRIVATE KEY-----\n');
    await symlink(secretPem, join(node.manifestDir, 'key.yaml'));
    await waitFor(
      () => {
        const files = node.warnings.map((w) => String(w.file ?? ''));
        return (files.some((f) => f.endsWith('environ.yaml')) && files.some((f) => f.endsWith('key.yaml'))) || undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, description: 'warnings about both manifests' },
    );
    const text = JSON.stringify(node.warnings);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('do-not-log-me');
    expect(text).not.toContain('PATH=/usr/bin');
    expect(text).toContain('must be an object');
    expect(node.agent.listPods()).toEqual([]);
  });
});

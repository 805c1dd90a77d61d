// The pods' resourceVersions the API routes read (src/server/kube-api/pod-versions.ts): the agent's
// host keeps the one record of them (AgentHost.podResourceVersion, its watch cache) and the routes
// read it; only a host without one is followed through its watch (issue #41 item 1).
import { describe, expect, it } from 'vitest';
import type { AgentHost } from '../../../src/server/host/agent-host.js';
import { newPodVersions } from '../../../src/server/kube-api/pod-versions.js';
import type { WatchEvent } from '../../../src/server/host/watch-event.js';

describe('newPodVersions', () => {
  it("reads the host's own record and opens no second watch of its own when the host keeps one", () => {
    let watches = 0;
    const own = new Map([['u-a', 7]]);
    const host = {
      podResourceVersion: (uid: string) => own.get(uid),
      watch: () => {
        watches++;
        return () => {};
      },
    } as unknown as AgentHost;
    const v = newPodVersions(host);
    expect([v.get('u-a'), v.get('u-b')]).toEqual([7, undefined]);
    own.set('u-a', 9);
    expect(v.get('u-a')).toBe(9);
    expect(watches).toBe(0);
    v.close();
  });

  it('follows the watch of a host without its own record', () => {
    let onEvent!: (e: WatchEvent) => void;
    const host = {
      watch: (_from: number | undefined, fn: (e: WatchEvent) => void) => {
        onEvent = fn;
        return () => {};
      },
    } as unknown as AgentHost;
    const v = newPodVersions(host);
    onEvent({ type: 'ADDED', object: {} as never, resourceVersion: 3, uid: 'u-a' });
    expect(v.get('u-a')).toBe(3);
    onEvent({ type: 'DELETED', object: {} as never, resourceVersion: 4, uid: 'u-a' });
    expect(v.get('u-a')).toBeUndefined();
    v.close();
  });
});

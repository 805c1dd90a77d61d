// The node's recent core/v1 Events (GET /events, a bounded ring), polled every 3 s: the rows'
// "Last event" and the detail panel's events, matched by involvedObject.uid only (as kubectl
// describe pod's field selector involvedObject.uid: an earlier pod of the same name is not this one).
import { api, session } from './session.js';

/** uid → that pod's events, oldest first. */
const byUid = new Map();

function eventTime(e) {
  return Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '') || 0;
}

/** eventsFor: the events of pod `uid`, oldest first (empty when none). */
export function eventsFor(uid) {
  return byUid.get(uid) ?? [];
}

/** lastEventFor: the newest event of pod `uid`, or undefined. */
export function lastEventFor(uid) {
  const list = byUid.get(uid);
  return list?.[list.length - 1];
}

/** pollEvents fetches /events now and every 3 s; `onUpdate()` runs after each good answer. */
export function pollEvents(onUpdate) {
  const tick = async () => {
    try {
      const res = session.waitingForToken ? undefined : await api('/events');
      if (res?.ok) {
        const list = await res.json();
        byUid.clear();
        for (const e of [...(list.items ?? [])].sort((a, b) => eventTime(a) - eventTime(b))) {
          const uid = e.involvedObject?.uid;
          if (!uid) continue;
          if (!byUid.has(uid)) byUid.set(uid, []);
          byUid.get(uid).push(e);
        }
        onUpdate();
      }
      // 404/405: the agent records no events: the columns stay empty.
    } catch {
      // the agent is down; the watch reconnect shows it
    }
    setTimeout(tick, 3000);
  };
  void tick();
}

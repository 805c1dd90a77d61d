/**
 * Counterpart of `kubectl describe pod` (k8s.io/kubectl/pkg/describe PodDescriber): a pod's
 * identity, status, init containers and containers with their states, conditions, volumes and recent events.
 */
import type { Argv, CommandModule } from 'yargs';
import type { Container, ContainerState, ContainerStatus, Event, Pod } from '../shared/api.js';
import { getPodQOS } from '../shared/qos.js';
import { cliClock, type CliIo } from './io.js';
import {
  addClientFlags,
  apiJson,
  clientFlags,
  formatAge,
  formatTable,
  requirePods,
  clientHandler,
  kNamespaceOption,
  type ClientFlags,
  type SelectClient,
} from './client.js';
import { listItems, pod as asPod } from './decode.js';

function rfc1123(t: string | undefined): string {
  if (!t) return '<unknown>';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? t : d.toUTCString().replace('GMT', '+0000');
}

function kv(map: Record<string, string> | undefined, indent: string): string {
  const entries = Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '<none>';
  return entries.map(([k, v], i) => `${i === 0 ? '' : indent}${k}=${v}`).join('\n');
}

function stateLines(state: ContainerState | undefined, indent: string): string[] {
  if (state?.running) return [`Running`, `${indent}  Started:      ${rfc1123(state.running.startedAt)}`];
  if (state?.waiting)
    return [
      `Waiting`,
      `${indent}  Reason:       ${state.waiting.reason ?? ''}`,
      ...(state.waiting.message ? [`${indent}  Message:      ${state.waiting.message}`] : []),
    ];
  if (state?.terminated) {
    const t = state.terminated;
    return [
      `Terminated`,
      `${indent}  Reason:       ${t.reason ?? ''}`,
      ...(t.message ? [`${indent}  Message:      ${t.message}`] : []),
      `${indent}  Exit Code:    ${t.exitCode}`,
      `${indent}  Started:      ${rfc1123(t.startedAt)}`,
      `${indent}  Finished:     ${rfc1123(t.finishedAt)}`,
    ];
  }
  return ['Waiting'];
}

/**
 * containerLines: one container's block of kubectl's describe (`  NAME:` then its ID, image, ports,
 * command, state, readiness, restarts, limits, environment and mounts), for the Init Containers and
 * the Containers sections alike (kubectl's describe.go describeContainers). Pure.
 */
function containerLines(c: Container, cs: ContainerStatus | undefined): string[] {
  const out: string[] = [];
  const i = '    ';
  out.push(`  ${c.name}:`);
  out.push(`${i}Container ID:   ${cs?.containerID ?? ''}`);
  out.push(`${i}Image:          ${c.image ?? ''}`);
  out.push(`${i}Image ID:       ${cs?.imageID ?? ''}`);
  const ports = (c.ports ?? []).map((p) => `${p.containerPort}/${p.protocol ?? 'TCP'}`);
  const hostPorts = (c.ports ?? []).map((p) => `${p.hostPort ?? 0}/${p.protocol ?? 'TCP'}`);
  out.push(`${i}${ports.length > 1 ? 'Ports:' : 'Port:'}`.padEnd(20) + (ports.join(', ') || '<none>'));
  out.push(`${i}${hostPorts.length > 1 ? 'Host Ports:' : 'Host Port:'}`.padEnd(20) + (hostPorts.join(', ') || '<none>'));
  if (c.command?.length) out.push(`${i}Command:\n${c.command.map((x) => `${i}  ${x}`).join('\n')}`);
  if (c.args?.length) out.push(`${i}Args:\n${c.args.map((x) => `${i}  ${x}`).join('\n')}`);
  const [first, ...rest] = stateLines(cs?.state, i);
  out.push(`${i}State:          ${first}`, ...rest);
  if (cs?.lastState && Object.keys(cs.lastState).length > 0) {
    const [lf, ...lr] = stateLines(cs.lastState, i);
    out.push(`${i}Last State:     ${lf}`, ...lr);
  }
  out.push(`${i}Ready:          ${cs?.ready ? 'True' : 'False'}`);
  out.push(`${i}Restart Count:  ${cs?.restartCount ?? 0}`);
  const env = (c.env ?? []).map((e) => `${i}  ${e.name}:  ${e.value ?? (e.valueFrom ? '<set from a reference>' : '')}`);
  for (const [title, list] of [
    ['Limits', c.resources?.limits],
    ['Requests', c.resources?.requests],
  ] as const) {
    const entries = Object.entries(list ?? {}).sort(([a], [b]) => a.localeCompare(b));
    if (entries.length > 0) out.push(`${i}${title}:`, ...entries.map(([k, v]) => `${i}  ${`${k}:`.padEnd(10)}${String(v)}`));
  }
  out.push(`${i}Environment:${env.length ? `\n${env.join('\n')}` : '    <none>'}`);
  const mounts = (c.volumeMounts ?? []).map(
    (v) =>
      `${i}  ${v.mountPath} from ${v.name}${v.subPath ? ` (${v.readOnly ? 'ro' : 'rw'},path="${v.subPath}")` : ` (${v.readOnly ? 'ro' : 'rw'})`}`,
  );
  out.push(`${i}Mounts:${mounts.length ? `\n${mounts.join('\n')}` : '         <none>'}`);

  return out;
}

/**
 * describePod renders the pod and its events (those whose involvedObject.uid is the pod's — by name
 * and namespace only for a pod without a uid; newest last), with each container's ports, limits,
 * requests and mounts and the pod's QoS class,
 * in kubectl's describe layout. Pure (`nowMs` for the event ages).
 */
export function describePod(pod: Pod, events: Event[], nowMs: number): string {
  const m = pod.metadata ?? {};
  const st = pod.status ?? {};
  const out: string[] = [];
  const line = (k: string, v: string) => out.push(`${`${k}:`.padEnd(18)}${v}`);
  line('Name', m.name ?? '');
  line('Namespace', m.namespace ?? 'default');
  line('Priority', String(pod.spec?.priority ?? 0));
  line('Node', `${pod.spec?.nodeName ?? '<none>'}${st.hostIP ? `/${st.hostIP}` : ''}`);
  line('Start Time', rfc1123(st.startTime));
  line('Labels', kv(m.labels, ' '.repeat(18)));
  line(
    'Annotations',
    Object.entries(m.annotations ?? {})
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v], i) => `${i === 0 ? '' : ' '.repeat(18)}${k}: ${v}`)
      .join('\n') || '<none>',
  );
  if (m.deletionTimestamp) line('Status', `Terminating (lasts ${formatAge(nowMs - Date.parse(m.deletionTimestamp))})`);
  else line('Status', st.phase ?? 'Unknown');
  if (m.deletionGracePeriodSeconds !== undefined) line('Termination Grace Period', `${m.deletionGracePeriodSeconds}s`);
  if (st.reason) line('Reason', st.reason);
  if (st.message) line('Message', st.message);
  line('IP', st.podIP ?? '');
  const sections = [
    ['Init Containers', pod.spec?.initContainers, st.initContainerStatuses],
    ['Containers', pod.spec?.containers, st.containerStatuses],
  ] as const;
  for (const [title, containers, statuses] of sections) {
    // kubectl prints Init Containers only when the pod has some, Containers always.
    if (title === 'Init Containers' && !containers?.length) continue;
    out.push(`${title}:`);
    for (const c of containers ?? [])
      out.push(
        ...containerLines(
          c,
          (statuses ?? []).find((s) => s.name === c.name),
        ),
      );
  }
  out.push('Conditions:');
  const conds = st.conditions ?? [];
  if (conds.length === 0) out.push('  <none>');
  else
    out.push(
      formatTable([['Type', 'Status'], ...conds.map((c) => [c.type, c.status])])
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  out.push('Volumes:');
  const vols = pod.spec?.volumes ?? [];
  if (vols.length === 0) out.push('  <none>');
  for (const v of vols) {
    out.push(`  ${v.name}:`);
    if (v.emptyDir)
      out.push(
        `    Type:       EmptyDir (a temporary directory that shares a pod's lifetime)`,
        `    Medium:     ${v.emptyDir.medium ?? ''}`,
      );
    else if (v.hostPath) out.push(`    Type:          HostPath (bare host directory volume)`, `    Path:          ${v.hostPath.path}`);
  }
  out.push(`${'QoS Class:'.padEnd(18)}${getPodQOS(pod)}`);
  // kubectl asks for involvedObject.name, .namespace and .uid: an earlier pod of the same name is not this one.
  const mine = events.filter((e) =>
    m.uid
      ? e.involvedObject?.uid === m.uid
      : e.involvedObject?.name === m.name && e.involvedObject?.namespace === (m.namespace ?? 'default'),
  );
  if (mine.length === 0) {
    out.push('Events:            <none>');
  } else {
    out.push('Events:');
    const rows = [
      ['Type', 'Reason', 'Age', 'From', 'Message'],
      ['----', '------', '----', '----', '-------'],
    ];
    for (const e of mine) {
      const last = Date.parse(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? '');
      const first = Date.parse(e.firstTimestamp ?? '');
      let age = Number.isNaN(last) ? '<unknown>' : formatAge(nowMs - last);
      if ((e.count ?? 1) > 1 && !Number.isNaN(first)) age = `${age} (x${e.count} over ${formatAge(nowMs - first)})`;
      rows.push([e.type ?? '', e.reason ?? '', age, e.source?.component ?? e.reportingComponent ?? '', (e.message ?? '').trim()]);
    }
    out.push(
      formatTable(rows)
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  }
  return `${out.join('\n')}\n`;
}

/** runDescribePod fetches the pod and /events and prints describePod. Resolves with the exit code. */
export async function runDescribePod(flags: ClientFlags, namespace: string, name: string, io: CliIo): Promise<number> {
  const path = `/pods/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  const pod = asPod(await apiJson<unknown>(flags, 'GET', path), `GET ${path}`);
  let events: Event[] = [];
  try {
    const eventsPath = `/events?namespace=${encodeURIComponent(namespace)}`;
    events = listItems<Event>(await apiJson<unknown>(flags, 'GET', eventsPath), 'EventList', `GET ${eventsPath}`);
  } catch {
    // an agent without events still describes the pod
  }
  io.stdout(describePod(pod, events, cliClock(io).now()));
  return 0;
}

/** describeCommand: the yargs module of `kubelet-ts describe pod NAME`. */
export function describeCommand(select: SelectClient): CommandModule {
  return {
    command: 'describe <resource> <name>',
    describe: 'Show a pod in detail with its recent events (kubectl describe pod)',
    builder: (y: Argv) =>
      addClientFlags(y)
        .positional('resource', { type: 'string', describe: 'Resource type: pod' })
        .positional('name', { type: 'string', describe: 'Pod name' })
        .option('namespace', kNamespaceOption),
    handler: clientHandler(select, async (a, io) => {
      const resource = String(a.resource);
      // TODO(issue-6): `describe node` goes here.
      requirePods(resource);
      return runDescribePod(clientFlags(a), String(a.namespace), String(a.name), io);
    }),
  };
}

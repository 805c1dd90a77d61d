// bench relist: with N pods running, the duration of a full PLEG relist (the list in a pool thread,
// the diff on the main thread), and the status propagation delay from a container dying (docker
// kill of one app container) to the frame with its terminated state reaching a WebSocket watch
// client of the agent, p50/p99. Prints a table, writes bench/results/relist-*.json.
//
//   npm run bench -- relist [--pods 100] [--samples 20] [--relists 10] [--workers 2]
//                           [--restart-policy Always|Never]
//
// restartPolicy Always (the default, the usual case): the killed container will restart, so the
// PLEG publishes its death straight from Docker's `die` event. Never: the death ends the container
// for good, so the sync that reads its termination message publishes it (a longer path).
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { podYaml, positiveInt, startBenchAgent, summary, table, waitUntil, watchDieEvents, writeResult, progress } from './lib.js';

const { values: args } = parseArgs({
  options: {
    pods: { type: 'string', default: '100' },
    samples: { type: 'string', default: '20' },
    relists: { type: 'string', default: '10' },
    workers: { type: 'string', default: '2' },
    'restart-policy': { type: 'string', default: 'Always' },
  },
});
const restartPolicy = args['restart-policy'];
if (restartPolicy !== 'Always' && restartPolicy !== 'Never') {
  throw new Error(`--restart-policy: want Always or Never, got ${JSON.stringify(restartPolicy)}`);
}
const N = positiveInt('pods', args.pods);
const samples = Math.min(positiveInt('samples', args.samples), N);
const relists = positiveInt('relists', args.relists);
const workers = positiveInt('workers', args.workers);
const docker = new Docker({ socketPath: '/var/run/docker.sock' });

const b = await startBenchAgent('relist', { workers, syncFrequencyMs: 600_000 });
try {
  // The frame measured is the first one showing the killed container terminated (see the header).
  await Promise.all(Array.from({ length: N }, (_, i) => b.write(`relist-${i}.yaml`, podYaml(`relist-${i}`, { restartPolicy }))));
  await waitUntil('pods Running', N, () => b.times.running.size);
  await new Promise((r) => setTimeout(r, 2000));

  const relistMs: number[] = [];
  const bar = progress('full relists', relists);
  for (let i = 0; i < relists; i++) {
    const t = performance.now();
    await b.agent.pleg.relist();
    relistMs.push(performance.now() - t);
    bar.update(i + 1);
  }
  bar.end();

  // dockerd's own time of each death (the `die` event's timeNano), from a bench-side events stream.
  const { died: dieAtMs, close: closeDieEvents } = await watchDieEvents(docker, b.nodeName);
  const delays: number[] = [];
  const dieToStatus: number[] = [];
  const bar2 = progress('container deaths observed', samples);
  for (let i = 0; i < samples; i++) {
    const uid = b.times.byName.get(`relist-${i}-${b.nodeName}`)!;
    const [app] = await docker.listContainers({
      filters: { label: [`io.kubernetes.pod.uid=${uid}`, 'io.kubernetes.container.name=main'] },
    });
    let seenEpochMs = 0;
    const seen = new Promise<number>((resolve) => {
      const off = b.onFrame((frame, atMs) => {
        if (frame.object.metadata?.uid !== uid) return;
        if (frame.object.status?.containerStatuses?.[0]?.state?.terminated) {
          off();
          seenEpochMs = Date.now();
          resolve(atMs);
        }
      });
    });
    const t0 = performance.now();
    await docker.getContainer(app.Id).kill();
    delays.push((await seen) - t0);
    await new Promise((r) => setTimeout(r, 200)); // the bench's own stream may trail
    const died = dieAtMs.get(app.Id);
    if (died) dieToStatus.push(Math.max(0, seenEpochMs - died));
    bar2.update(i + 1);
  }
  bar2.end();
  closeDieEvents();
  const pleg = b.agent.pleg.stats();
  const result = {
    date: new Date().toISOString(),
    pods: N,
    containers: 2 * N,
    workers,
    restartPolicy,
    relistMs: summary(relistMs),
    killCallToWatchMs: summary(delays),
    dieEventToWatchMs: summary(dieToStatus),
    eventLagMs: summary(pleg.eventLagsMs),
    streaming: pleg.streaming,
  };
  console.log(
    `\nrelist: ${N} running pods (${2 * N} containers, restartPolicy ${restartPolicy}), ${workers} worker threads, events stream ${pleg.streaming ? 'up' : 'down'}, ${result.date}`,
  );
  console.log(
    table([
      ['measure (ms)', 'p50', 'p99', 'max', 'n'],
      ['full relist', result.relistMs.p50, result.relistMs.p99, result.relistMs.max, result.relistMs.n],
      [
        'docker kill call → WebSocket frame',
        result.killCallToWatchMs.p50,
        result.killCallToWatchMs.p99,
        result.killCallToWatchMs.max,
        result.killCallToWatchMs.n,
      ],
      [
        'container death (die event) → WebSocket frame',
        result.dieEventToWatchMs.p50,
        result.dieEventToWatchMs.p99,
        result.dieEventToWatchMs.max,
        result.dieEventToWatchMs.n,
      ],
      ['Docker event lag', result.eventLagMs.p50, result.eventLagMs.p99, result.eventLagMs.max, result.eventLagMs.n],
    ]),
  );
  console.log(`results: ${writeResult('relist', result)}`);
} finally {
  await Promise.all(Array.from({ length: N }, (_, i) => b.remove(`relist-${i}.yaml`)));
  await waitUntil('pods removed', N, () => b.times.removed.size, 5 * 60_000).catch(() => {});
  await b.stop();
  const list = await docker.listContainers({ all: true, filters: { label: [`kubelet-ts.node-name=${b.nodeName}`] } });
  await Promise.all(
    list.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
}

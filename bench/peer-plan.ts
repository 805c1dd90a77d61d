// The run loop and report of `bench peers` (bench/peers.ts), apart from the peers themselves so
// that a failing peer can be tested without running any. Not used by src/.

/** One timed run of a peer: time to all Running and time to all removed, milliseconds. */
export interface PeerRun {
  allRunningMs: number;
  allRemovedMs: number;
}

/** One failed run of a peer: the rep (1-based) and the error's message. */
export interface PeerFailure {
  rep: number;
  error: string;
}

/** A peer of the plan: its name, one timed run, and what clears up after a failed run (optional). */
export interface PlannedPeer {
  name: string;
  run(): Promise<PeerRun>;
  /** Removes what a failed run left (containers, pods); its own errors are reported, not thrown. */
  cleanup?(): Promise<void>;
}

/** What the plan gave for one peer: its successful runs and its failures, in rep order. */
export interface PeerOutcome {
  runs: PeerRun[];
  failures: PeerFailure[];
}

/** Hooks of runPeerPlan. */
export interface PeerPlanHooks {
  /** Before each run (bench/lib.ts settle); a rejection counts as that run's failure. */
  before?(peer: string, rep: number): Promise<void>;
  /** After each run, failed or not (the progress line). */
  after?(peer: string, rep: number, failure?: PeerFailure): void;
  /** Where failures are said (default stderr). */
  warn?(line: string): void;
}

/** errorLines: the last three lines of an error's message, on one line (a failure as a bench records it). */
export const errorLines = (err: unknown): string => ((err as Error)?.message ?? String(err)).trim().split('\n').slice(-3).join(' | ');

/**
 * runPeerPlan runs every peer of `plan` once per rep, in plan order, `reps` times. A run that
 * rejects (a peer's command timing out under the load the bench made, as `docker-compose up` of
 * 200 services hitting its own 60 s read timeout) is recorded as that peer's failure, said on
 * stderr, cleared up (`cleanup`), and the plan goes on: the other peers' figures are never lost.
 * Resolves with each peer's outcome, by name, in plan order; never rejects for a peer's failure.
 */
export async function runPeerPlan(
  plan: readonly PlannedPeer[],
  reps: number,
  hooks: PeerPlanHooks = {},
): Promise<Map<string, PeerOutcome>> {
  const warn = hooks.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const out = new Map<string, PeerOutcome>(plan.map((p) => [p.name, { runs: [], failures: [] }]));
  for (let rep = 1; rep <= reps; rep++) {
    for (const peer of plan) {
      const outcome = out.get(peer.name)!;
      let failure: PeerFailure | undefined;
      try {
        await hooks.before?.(peer.name, rep);
        outcome.runs.push(await peer.run());
      } catch (err) {
        failure = { rep, error: errorLines(err) };
        outcome.failures.push(failure);
        warn(`bench peers: ${peer.name} failed in rep ${rep}/${reps}, recorded as its failure; going on: ${failure.error}`);
        await peer.cleanup?.().catch((e: unknown) => warn(`bench peers: clearing up after ${peer.name} failed too: ${errorLines(e)}`));
      }
      hooks.after?.(peer.name, rep, failure);
    }
  }
  return out;
}

/** The printed table (rows, header first) and the JSON of each peer, from runPeerPlan's outcomes. */
export interface PeerReport {
  rows: string[][];
  peers: Record<string, { best: PeerRun | null; ratio: number | null; runs: PeerRun[]; failures: PeerFailure[] }>;
}

/**
 * peerReport: per peer, its best run (least time to all Running), its ratio to the best run of
 * `floorPeer` (null when either has no successful run), every run, and its failures. A peer without
 * a successful run reads `failed` in the table, with its last error; one with some failures says
 * how many beside its runs.
 */
export function peerReport(outcomes: Map<string, PeerOutcome>, floorPeer: string): PeerReport {
  const best = (o: PeerOutcome | undefined) =>
    (o?.runs ?? []).reduce<PeerRun | null>((a, b) => (!a || b.allRunningMs < a.allRunningMs ? b : a), null);
  const floor = best(outcomes.get(floorPeer));
  const s = (ms: number) => (ms / 1000).toFixed(2);
  const rows: string[][] = [['', 'time to all Running (s)', 'ratio to the floor', 'every run (s)', 'time to all removed (s)']];
  const peers: PeerReport['peers'] = {};
  for (const [name, o] of outcomes) {
    const b = best(o);
    const ratio = b && floor ? b.allRunningMs / floor.allRunningMs : null;
    const failed = o.failures.length > 0 ? `${o.failures.length} failed` : '';
    if (!b) {
      rows.push([name, 'failed', '-', failed, `last error: ${o.failures.at(-1)?.error ?? 'no run'}`]);
    } else {
      rows.push([
        name,
        s(b.allRunningMs),
        ratio === null ? '-' : ratio.toFixed(2),
        [o.runs.map((r) => s(r.allRunningMs)).join(' '), failed].filter(Boolean).join(', '),
        s(b.allRemovedMs),
      ]);
    }
    peers[name] = { best: b, ratio, runs: o.runs, failures: o.failures };
  }
  return { rows, peers };
}

// A recorder of a pod source's callbacks (onUpdate, onError) and debug logs, for the source tests
// under test/main/config: they wait on what it saw instead of sleeping.
import { pino } from 'pino';
import type { PodUpdate, SourceError } from '../../src/shared/pod-update.js';

const kWaitMs = 10_000;

/** names: the pod names of an update, in order. */
export function names(u: PodUpdate): string[] {
  return u.pods.map((p) => p.metadata?.name ?? '');
}

/** Records a pod source's callbacks and debug logs; tests wait on them instead of sleeping (10 s at most). */
export class SourceRecorder {
  readonly updates: PodUpdate[] = [];
  readonly errors: SourceError[] = [];
  readonly logs: Array<Record<string, unknown>> = [];
  /** Completed full checks (periodic or initial), counted from the source's debug log. */
  checks = 0;
  /** Completed catch-up checks of the file source (kCatchUpMs after watch events), from its debug log. */
  catchUps = 0;
  private updateCursor = 0;
  private errorCursor = 0;
  private waiters = new Set<() => void>();

  readonly logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => {
        const rec = JSON.parse(line) as Record<string, unknown>;
        this.logs.push(rec);
        if (rec.msg === 'Checked pod manifest path') {
          if (rec.kind === 'catch-up') this.catchUps++;
          else this.checks++;
        }
        this.notify();
      },
    },
  );
  readonly onUpdate = (u: PodUpdate): void => {
    this.updates.push(u);
    this.notify();
  };
  readonly onError = (e: SourceError): void => {
    this.errors.push(e);
    this.notify();
  };

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** until resolves once `pred` returns a value other than undefined, or rejects after kWaitMs. */
  until<T>(what: string, pred: () => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const v = pred();
        if (v === undefined) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(v);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}; updates: ${JSON.stringify(this.updates.map(names))}, errors: ${JSON.stringify(this.errors)}`,
          ),
        );
      }, kWaitMs);
      this.waiters.add(check);
      check();
    });
  }

  nextUpdate(): Promise<PodUpdate> {
    return this.until('the next update', () => (this.updates.length > this.updateCursor ? this.updates[this.updateCursor++] : undefined));
  }

  nextError(): Promise<SourceError> {
    return this.until('the next error', () => (this.errors.length > this.errorCursor ? this.errors[this.errorCursor++] : undefined));
  }

  /** moreChecks resolves after `n` more full checks have completed. */
  async moreChecks(n: number): Promise<void> {
    const target = this.checks + n;
    await this.until(`${n} more checks`, () => (this.checks >= target ? true : undefined));
  }
}

/**
 * What a dialect runs to fold: its fold statement over everything pending when called. `wait`: when another
 * replica is folding, wait for it and fold after (a read needs every acknowledged export); otherwise leave the rows
 * to it. `recentlyFailed`: the last fold failed a moment ago (a dialect may then wait for its locks only briefly).
 * Rejects when the fold fails.
 */
export interface Folder {
  foldPending(options: { wait: boolean; recentlyFailed: boolean }): Promise<void>;
}

/** How long after a failed fold {@link Folder.foldPending} is told `recentlyFailed`. */
const RECENT_FAILURE_MS = 2000;

/**
 * The one fold schedule of a store: ingest logs increments, and this moves them into the rollups, at three moments:
 * before every read of the rollups ({@link beforeRead}, see fold-first-reader.ts), when the service asks for
 * everything to be visible ({@link fold}: `StoreLifecycle.flush`, close), and every `intervalMs` between reads (so
 * that few rows are ever pending; with several replicas each one tries, and leaves its turn to one folding already).
 * Concurrent callers share a fold under way, and one more runs after it when any caller arrived during it (what was
 * committed just before that call must be in).
 */
export class FoldSchedule {
  /** Folds that failed since start. */
  failures = 0;
  /** The last fold failed: reads answer from what is folded. */
  failed = false;
  private failedAtMs: number | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private mustWait = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly folder: Folder,
    private readonly warn: (message: string) => void,
    intervalMs: number | undefined,
  ) {
    if (intervalMs !== undefined) {
      this.timer = setInterval(() => {
        this.start(false).catch((error: unknown) =>
          this.warn(`folding pending increments failed (reads answer from what is folded; retried): ${(error as Error).message}`),
        );
      }, intervalMs);
      this.timer.unref();
    }
  }

  /** Folds everything acknowledged before the call, waiting for another replica's fold first. Rejects when it fails. */
  fold(): Promise<void> {
    return this.start(true);
  }

  /**
   * For a read: {@link fold}, except that a failure does not fail the read (it answers from what is folded, and
   * `behind()` says so); the first failure of a run of them is reported.
   */
  beforeRead(): Promise<void> {
    const wasFailed = this.failed;
    return this.fold().catch((error: unknown) => {
      if (!wasFailed) this.warn(`folding pending increments failed (${(error as Error).message}); reads answer from what is folded`);
    });
  }

  /**
   * A fold that a read ran itself, in its own round trip (a dialect that can), failed: counted and reported as
   * {@link beforeRead} reports one, and {@link failed} until a fold succeeds (the reader then folds through
   * {@link beforeRead} again, which waits for locks only briefly just after a failure).
   */
  readFoldFailed(error: unknown): void {
    if (!this.failed) this.warn(`folding pending increments failed (${(error as Error).message}); reads answer from what is folded`);
    this.failures++;
    this.failed = true;
    this.failedAtMs = Date.now();
  }

  /** No more scheduled folds (the store is closing); {@link fold} still folds. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(wait: boolean): Promise<void> {
    if (wait) this.mustWait = true;
    if (this.running !== undefined) {
      if (wait) this.again = true;
      return this.running;
    }
    const fold = (async () => {
      try {
        do {
          const waitNow = this.mustWait;
          this.again = false;
          this.mustWait = false;
          const recentlyFailed = this.failedAtMs !== undefined && Date.now() - this.failedAtMs < RECENT_FAILURE_MS;
          await this.folder.foldPending({ wait: waitNow, recentlyFailed });
        } while (this.again);
        this.failed = false;
        this.failedAtMs = undefined;
      } catch (error) {
        this.failures++;
        this.failed = true;
        this.failedAtMs = Date.now();
        throw error;
      } finally {
        this.running = undefined;
      }
    })();
    this.running = fold;
    return fold;
  }
}

// How much request work one turn of the event loop may start, so that a new connection is accepted
// soon after it arrives however busy the open ones keep the process.
//
// libuv accepts one connection per turn of the loop (it stopped accepting in a loop in 1.45, the
// version under Node 20; libuv pull request 3696). A request read in a turn used to run in that turn,
// and on SQLite (whose driver is synchronous) it runs there from start to finish: with 32 busy
// connections a turn ran 32 requests, and the last of 32 connections opened at once waited 31 turns
// before its first request was even read (measured in docs/benchmarks.md).
//
// So requests are started from setImmediate callbacks (the check phase, after the turn's reads), one
// callback each, in the order they were read: Node runs the microtasks of one callback before the
// next, so on SQLite each start's whole request is done by the time the next callback asks the clock.
// Once the turn has spent its budget, the remaining starts wait for the next turn, ahead of anything
// read in it; the turn ends, and the listening socket gets its next accept. On PostgreSQL a request
// waits for its statements, which are answered in later turns anyway, so starts rarely wait.
//
// Only while connections are arriving: a connection accepted less than BURST_WINDOW_MS ago may
// have others queued behind it (clients open their pools at once). Otherwise a request starts where
// it is read, as Node starts it: a steady keep-alive load, where nobody waits to be accepted, keeps the
// code path it had: the budget always on cost CPU on every uncached read; with the window the cost
// was within the noise.

/** How long one turn may spend starting requests before the rest wait for the next turn. */
const TURN_BUDGET_MS = 5;

/** How long after a connection is accepted the budget applies. */
export const BURST_WINDOW_MS = 250;

/** Runs `start`s in arrival order, at most about `budgetMs` of them per turn of the event loop. */
export class TurnBudget {
  readonly #budgetMs: number;
  readonly #now: () => number;
  /** Starts not yet run, oldest first; each has one runNext callback queued. */
  readonly #waiting: (() => void)[] = [];
  #turnEnds = 0;
  #markQueued = false;
  #burstEnds = Number.NEGATIVE_INFINITY;

  constructor(budgetMs = TURN_BUDGET_MS, now: () => number = () => performance.now()) {
    this.#budgetMs = budgetMs;
    this.#now = now;
  }

  /** A connection was accepted: for the next BURST_WINDOW_MS, starts keep to the budget. */
  noteConnection(): void {
    this.#burstEnds = this.#now() + BURST_WINDOW_MS;
  }

  /**
   * Runs `start` now when no connection arrived lately and nothing waits; else in this turn's check
   * phase if the turn has budget left, else in a later turn.
   */
  admit(start: () => void): void {
    if (this.#waiting.length === 0 && this.#now() >= this.#burstEnds) {
      start();
      return;
    }
    this.#waiting.push(start);
    this.#schedule();
  }

  /** Starts waiting for a turn (for tests and diagnostics). */
  get waiting(): number {
    return this.#waiting.length;
  }

  // The mark is queued before the runNext callbacks of its turn, so it opens the turn's budget first.
  #schedule(): void {
    if (!this.#markQueued) {
      this.#markQueued = true;
      setImmediate(this.#mark);
    }
    setImmediate(this.#runNext);
  }

  readonly #mark = (): void => {
    this.#markQueued = false;
    this.#turnEnds = this.#now() + this.#budgetMs;
  };

  readonly #runNext = (): void => {
    const start = this.#waiting.shift();
    if (!start) return;
    if (this.#now() < this.#turnEnds) {
      start();
      return;
    }
    // Over budget: back to the head of the line, for the next turn.
    this.#waiting.unshift(start);
    this.#schedule();
  };
}

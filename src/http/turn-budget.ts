// libuv accepts one connection per turn, and a SQLite request runs to completion in the turn that read
// it, so a burst of busy connections delayed accepts by many turns. While connections are arriving,
// starts run from setImmediate within a per-turn budget; the rest wait for the next turn.

const TURN_BUDGET_MS = 5;

export const BURST_WINDOW_MS = 250;

export class TurnBudget {
  readonly #budgetMs: number;
  readonly #now: () => number;
  readonly #waiting: (() => void)[] = [];
  #turnEnds = 0;
  #markQueued = false;
  #burstEnds = Number.NEGATIVE_INFINITY;

  constructor(budgetMs = TURN_BUDGET_MS, now: () => number = () => performance.now()) {
    this.#budgetMs = budgetMs;
    this.#now = now;
  }

  noteConnection(): void {
    this.#burstEnds = this.#now() + BURST_WINDOW_MS;
  }

  admit(start: () => void): void {
    if (this.#waiting.length === 0 && this.#now() >= this.#burstEnds) {
      start();
      return;
    }
    this.#waiting.push(start);
    this.#schedule();
  }

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
    this.#waiting.unshift(start);
    this.#schedule();
  };
}

/**
 * Lets at most `perTurn` callers through in one event-loop turn; the others wait for a later turn
 * (setImmediate runs after the I/O of the turn, so requests that arrived meanwhile go first).
 */
export class TurnGate {
  readonly #perTurn: number;
  #used = 0;
  #armed = false;
  readonly #waiting: (() => void)[] = [];

  constructor(perTurn: number) {
    this.#perTurn = perTurn;
  }

  /** Resolves in this turn where there is room, else in the first later turn that has some. */
  pass(): Promise<void> {
    this.#arm();
    if (this.#used < this.#perTurn) {
      this.#used += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** At the end of the turn, the count starts again and the next few waiting go through. */
  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    setImmediate(() => {
      this.#armed = false;
      const next = this.#waiting.splice(0, this.#perTurn);
      this.#used = next.length;
      for (const go of next) go();
      if (this.#waiting.length > 0 || next.length > 0) this.#arm();
    });
  }
}

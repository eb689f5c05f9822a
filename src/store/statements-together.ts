/**
 * Statements asked for together, sent as one. Each round trip to the database costs the node CPU of
 * its own, whatever the statement does: the socket's write and read, the driver's result, the promise
 * turns (bench/RESULTS.md); on SQLite each write is a commit of its own. Calls that ask in the same
 * turn of the event loop are gathered until its check phase (setImmediate: after the sockets that
 * were ready in this turn have all been read), then sent as one statement over all their keys, a key
 * asked twice going in once. The price is that the first call of a turn waits, before its statement
 * is sent, for the rest of that turn's work (the other calls' steps up to their own asking), which
 * is nothing where a call arrives alone. In the proxy's bench at 10 connections, 4 to 5 calls
 * shared a read (0.22 statements a call, counted in pg_stat_database).
 *
 * Used for a proxied call's read on PostgreSQL (audience-repository.ts) where it is not answered from
 * memory (change-feed.ts). Each call's statement is sent after the call asked, so what it reads is
 * what a statement of its own would read at that moment or later: every commit acknowledged before
 * the call (a revocation on any node) is seen.
 * And for the guarded write of a credential's lastUsedAt (credentials-repository.ts), which calls
 * spread over a large audience make on nearly every call.
 */

interface Waiting<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

interface Asked<Args, T> {
  args: Args;
  waiting: Waiting<T>[];
}

/** Runs one statement for all of `args`; the values in the order of `args`. */
export type RunAll<Args, T> = (args: readonly Args[]) => Promise<readonly T[]>;

export class StatementsTogether<Args, T> {
  #asked = new Map<string, Asked<Args, T>>();
  #sendScheduled = false;

  constructor(
    private readonly runAll: RunAll<Args, T>,
    /** Keys in one statement at most; more asked in one turn go in as many statements as needed, sent at once. */
    private readonly mostTogether: number,
    /**
     * Whether a statement's failure may be one key's alone (an argument the database refuses), so
     * that each of its keys is sent again by itself: one call's bad argument must not fail the calls
     * that happened to ask with it. False for a failure every statement would meet (the database
     * unreachable), which is then every call's answer at once.
     */
    private readonly mayBeOneKeys: (error: unknown) => boolean,
  ) {
    if (!Number.isInteger(mostTogether) || mostTogether < 1) throw new Error(`mostTogether must be a positive integer, not ${mostTogether}`);
  }

  /** The value for `key` (whose `args` the statement takes), from the next statement sent. */
  get(key: string, args: Args): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const asked = this.#asked.get(key);
      if (asked) asked.waiting.push({ resolve, reject });
      else this.#asked.set(key, { args, waiting: [{ resolve, reject }] });
      if (!this.#sendScheduled) {
        this.#sendScheduled = true;
        setImmediate(this.#send);
      }
    });
  }

  readonly #send = (): void => {
    const asked = [...this.#asked.values()];
    this.#asked = new Map();
    this.#sendScheduled = false;
    for (let start = 0; start < asked.length; start += this.mostTogether) void this.#answer(asked.slice(start, start + this.mostTogether));
  };

  /** Runs the group's statement and settles its calls; never rejects. */
  async #answer(group: Asked<Args, T>[]): Promise<void> {
    let values: readonly T[];
    try {
      // A synchronous throw is a rejection here too.
      values = await this.runAll(group.map((one) => one.args));
      if (values.length !== group.length) throw new Error(`a statement for ${group.length} keys gave ${values.length} values`);
    } catch (error) {
      if (group.length > 1 && this.mayBeOneKeys(error)) {
        for (const one of group) void this.#answer([one]);
        return;
      }
      for (const one of group) for (const waiting of one.waiting) waiting.reject(error);
      return;
    }
    group.forEach((one, i) => {
      for (const waiting of one.waiting) waiting.resolve(values[i]!);
    });
  }
}

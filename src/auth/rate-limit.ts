/**
 * Fixed one-minute windows counted in this process's memory. Each node counts on its own, so with N
 * nodes behind a balancer a key can reach up to N times its limit; the README says so.
 */
export interface WindowState {
  /** Requests still allowed in this window (never below 0). */
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
  limited: boolean;
}

const WINDOW_MS = 60_000;
/** Past this many tracked names, windows that have ended are dropped before a new one is added. */
const PRUNE_AT = 10_000;

export class WindowCounter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(readonly limit: number) {}

  /** Counts one hit for `name` and says whether it went over the limit. */
  hit(name: string, nowMs: number): WindowState {
    const window = this.#current(name, nowMs);
    window.count += 1;
    return this.#state(window, nowMs);
  }

  #current(name: string, nowMs: number) {
    let window = this.#windows.get(name);
    if (!window || nowMs - window.start >= WINDOW_MS) {
      window = { start: nowMs, count: 0 };
      if (this.#windows.size >= PRUNE_AT) this.#prune(nowMs);
      this.#windows.set(name, window);
    }
    return window;
  }

  #state(window: { start: number; count: number }, nowMs: number): WindowState {
    return {
      remaining: Math.max(0, this.limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.start + WINDOW_MS - nowMs) / 1000)),
      limited: window.count > this.limit,
    };
  }

  #prune(nowMs: number) {
    for (const [name, window] of this.#windows) {
      if (nowMs - window.start >= WINDOW_MS) this.#windows.delete(name);
    }
  }
}

/**
 * A job `keyward serve` runs on its own: once soon after start, then at a fixed interval, never two
 * runs at once (a slow run is not doubled up by the next tick). The sweeps and the background refresh
 * are both one.
 */

export interface Periodic {
  /** Stops the schedule, signals a run under way to stop early, and resolves once it has ended. */
  stop(): Promise<void>;
}

export function runPeriodically(run: (signal: AbortSignal) => Promise<void>, timing: { firstDelayMs: number; intervalMs: number }): Periodic {
  const stopping = new AbortController();
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = run(stopping.signal).finally(() => {
      running = null;
    });
  };
  const first = setTimeout(tick, timing.firstDelayMs);
  const every = setInterval(tick, timing.intervalMs);
  // Neither keeps the process alive: serve's server does, and a CLI command must be free to exit.
  first.unref();
  every.unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(every);
      stopping.abort();
      await running;
    },
  };
}

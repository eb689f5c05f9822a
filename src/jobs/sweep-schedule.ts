/** `keyward serve`'s sweeps (services/retention/sweeps.ts): one run soon after start, then one every few minutes. */
import type { Logger } from 'pino';
import type { ServiceContext } from '../services/context.js';
import { runSweeps, type Sweep } from '../services/retention/sweeps.js';
import { type Periodic, runPeriodically } from './periodic.js';

/** Often enough that SWEEP_BATCHES_PER_RUN × SWEEP_BATCH_ROWS a run outpaces any real growth. */
export const SWEEP_INTERVAL_MS = 5 * 60_000;
/** The first run waits a little, so that start-up and its first requests do not share the write lock with it. */
const FIRST_RUN_DELAY_MS = 1000;

export function scheduleSweeps(ctx: ServiceContext, sweeps: Sweep[], logger: Logger): Periodic {
  const run = () =>
    runSweeps(ctx, sweeps)
      .then((report) => {
        if (!report) logger.debug('sweep skipped: another node is sweeping');
        else if (Object.values(report).some((deleted) => deleted > 0)) logger.info({ swept: report }, 'swept ended rows');
      })
      .catch((error: Error) => logger.warn({ err: { message: error.message } }, 'sweep failed'));
  return runPeriodically(run, { firstDelayMs: FIRST_RUN_DELAY_MS, intervalMs: SWEEP_INTERVAL_MS });
}

/**
 * `keyward serve`'s expiry notices (services/expiry-notices/expiry-notices.ts): a run soon after start,
 * then one every RUN_INTERVAL_MS. Every node schedules runs; each kind's lease lets one at a time do it.
 */
import type { Logger } from 'pino';
import type { ServiceContext } from '../services/context.js';
import { type ExpiryNoticeLimits, runExpiryNotices } from '../services/expiry-notices/expiry-notices.js';
import { type Periodic, runPeriodically } from './periodic.js';

/** A notice is due within a minute of its expiry (CONTRACT 10): a run every 30 s leaves room for a slow one. */
export const RUN_INTERVAL_MS = 30_000;
/** Soon after start (a restart must not push notices past their minute), after the sweep's first run (1 s). */
const FIRST_RUN_DELAY_MS = 5_000;

export interface ExpiryNoticesScheduleOptions {
  firstRunDelayMs?: number;
  intervalMs?: number;
  limits?: Partial<ExpiryNoticeLimits>;
}

export function scheduleExpiryNotices(ctx: ServiceContext, options: ExpiryNoticesScheduleOptions, logger: Logger): Periodic {
  const run = (signal: AbortSignal) =>
    runExpiryNotices(ctx, {
      limits: options.limits,
      signal,
      onError: (error) => logger.warn({ err: { message: error.message } }, 'expiry notice of a flow or form failed on our side'),
    })
      .then((report) => {
        const kinds = Object.values(report);
        if (kinds.every((kind) => kind === null)) logger.debug('expiry notices skipped: another node is running them');
        else if (kinds.some((kind) => kind !== null && kind.picked > 0)) logger.info({ expiryNotices: report }, 'expiry notices ran');
      })
      .catch((error: Error) => logger.warn({ err: { message: error.message } }, 'expiry notices failed'));
  return runPeriodically(run, { firstDelayMs: options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS, intervalMs: options.intervalMs ?? RUN_INTERVAL_MS });
}

/**
 * `keyward serve`'s background refresh (services/oauth/background-refresh.ts): a run soon after start, then
 * one every RUN_INTERVAL_MS. Every node schedules runs; the job's lease lets one at a time do it.
 */
import type { Logger } from 'pino';
import type { ServiceContext } from '../services/context.js';
import { type BackgroundRefreshLimits, runBackgroundRefresh } from '../services/oauth/background-refresh.js';
import { type Periodic, runPeriodically } from './periodic.js';

/** 288 runs a day: with the run's 5,000 credentials, 1,440,000 a day (the sums are in background-refresh.ts). */
export const RUN_INTERVAL_MS = 5 * 60_000;
/** The first run waits until start-up and its first requests are done. */
const FIRST_RUN_DELAY_MS = 30_000;

export interface BackgroundRefreshScheduleOptions {
  /** KEYWARD_BACKGROUND_REFRESH_HOURS: 0 schedules nothing. */
  hours: number;
  firstRunDelayMs?: number;
  intervalMs?: number;
  limits?: Partial<BackgroundRefreshLimits>;
}

/** The schedule, or null when the background refresh is off (hours 0). */
export function scheduleBackgroundRefresh(ctx: ServiceContext, options: BackgroundRefreshScheduleOptions, logger: Logger): Periodic | null {
  if (options.hours === 0) return null;
  const run = (signal: AbortSignal) =>
    runBackgroundRefresh(ctx, {
      hours: options.hours,
      limits: options.limits,
      signal,
      onError: (error) => logger.warn({ err: { message: error.message } }, 'background refresh of a credential failed on our side'),
    })
      .then((report) => {
        if (!report) logger.debug('background refresh skipped: another node is running it');
        else if (report.picked > 0) logger.info({ backgroundRefresh: report }, 'background refresh ran');
      })
      .catch((error: Error) => logger.warn({ err: { message: error.message } }, 'background refresh failed'));
  return runPeriodically(run, { firstDelayMs: options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS, intervalMs: options.intervalMs ?? RUN_INTERVAL_MS });
}

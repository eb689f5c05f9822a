/**
 * `keyward serve`'s background check of static credentials (services/checks/background-checks.ts): a
 * run soon after start, then one every RUN_INTERVAL_MS. Every node schedules runs; the job's lease lets
 * one at a time do it.
 */
import type { Logger } from 'pino';
import { type CredentialCheckLimits, runCredentialChecks } from '../services/checks/background-checks.js';
import type { ServiceContext } from '../services/context.js';
import { type Periodic, runPeriodically } from './periodic.js';

/** 288 runs a day, as the background refresh's (the sums are in background-checks.ts). */
export const RUN_INTERVAL_MS = 5 * 60_000;
/** After the background refresh's first run (30 s), so the two do not start together. */
const FIRST_RUN_DELAY_MS = 60_000;

export interface CredentialChecksScheduleOptions {
  /** KEYWARD_VERIFY_HOURS: 0 schedules nothing. */
  hours: number;
  firstRunDelayMs?: number;
  intervalMs?: number;
  limits?: Partial<CredentialCheckLimits>;
}

/** The schedule, or null when the background check is off (hours 0). */
export function scheduleCredentialChecks(ctx: ServiceContext, options: CredentialChecksScheduleOptions, logger: Logger): Periodic | null {
  if (options.hours === 0) return null;
  const run = (signal: AbortSignal) =>
    runCredentialChecks(ctx, {
      hours: options.hours,
      limits: options.limits,
      signal,
      onError: (error) => logger.warn({ err: { message: error.message } }, 'background check of a credential failed on our side'),
    })
      .then((report) => {
        if (!report) logger.debug('background check skipped: another node is running it');
        else if (report.picked > 0) logger.info({ credentialChecks: report }, 'background check ran');
      })
      .catch((error: Error) => logger.warn({ err: { message: error.message } }, 'background check failed'));
  return runPeriodically(run, { firstDelayMs: options.firstRunDelayMs ?? FIRST_RUN_DELAY_MS, intervalMs: options.intervalMs ?? RUN_INTERVAL_MS });
}

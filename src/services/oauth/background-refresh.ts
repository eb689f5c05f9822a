/**
 * The background refresh (CONTRACT 5, KEYWARD_BACKGROUND_REFRESH_HOURS): an active OAuth credential
 * whose last refresh attempt (or, never attempted, its connection) is older than the configured hours
 * is refreshed by the service itself. Refresh tokens that expire when unused stay alive, and a grant
 * the end user revoked at the provider turns to needs_reauth (and its webhook) before the customer's
 * backend needs the token.
 *
 * One run, on one node at a time (a lease in job_leases; a node that finds it taken skips the run):
 * at most BATCHES_PER_RUN batches of BATCH_SIZE due credentials, oldest due first, each refreshed by
 * refreshInBackground with at most CONCURRENCY provider calls in flight. That takes the same lease in
 * the credential's row as readers and keeps to the refresh cooldown, so a reader and the run never
 * refresh one credential twice; a credential a reader holds, or refreshed since it was picked, is
 * `busy` and left alone. Every attempt stamps the credential (or moves it out of the due set:
 * needs_reauth), so it is not picked again before its next turn.
 *
 * The figures, for 1,000,000 OAuth credentials and the default 24 hours: about 41,700 fall due an hour,
 * 3,500 every 5 minutes (the run interval, jobs/background-refresh-schedule.ts). A run takes up to
 * 10 × 500 = 5,000, so a day of runs (288) covers 1,440,000: 44% to spare, and after a first start on
 * a full table everything is caught up within 17 hours. 16 calls in flight at 0.5 s a provider call
 * make 32 a second: 5,000 in about 160 s, well inside the 5 minutes.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import type { ServiceContext } from '../context.js';
import { type BatchLimits, runLeasedBatches } from '../leased-batches.js';
import { refreshInBackground } from './token-refresh.js';

/** Credentials one batch picks (one read of the due index). */
export const BATCH_SIZE = 500;
/** Batches a run makes at most; the next run goes on with what is still due. */
export const BATCHES_PER_RUN = 10;
/** Provider calls in flight at once on the node that runs: a provider sees at most this many from the run. */
export const CONCURRENCY = 16;

/** The job's name in job_leases. */
export const BACKGROUND_REFRESH_JOB = 'background-refresh';
/** Beyond a provider call's timeout, the time its outcome may take to be written (as token-refresh.ts allows). */
const CALL_MARGIN_SECONDS = 5;
/** Beyond the provider calls of a batch, time for the statements around them. */
const BATCH_MARGIN_SECONDS = 60;

export type BackgroundRefreshLimits = BatchLimits;

/** What a run came to, per credential it picked. */
export interface BackgroundRefreshReport {
  /** Credentials picked from the due index. */
  picked: number;
  refreshed: number;
  /** The provider refused the grant (invalid_grant): now needs_reauth. */
  rejected: number;
  /** An outage at the provider: the stored tokens stay, the next turn is a period away. */
  failed: number;
  /** A reader (or another node) held its lease, or refreshed it since it was picked. */
  busy: number;
  /** Nothing to refresh with (GitHub's tokens, say): stamped, so it waits for its next turn. */
  noRefreshToken: number;
  /** Its provider is no longer enabled on the server. */
  notEnabled: number;
  /** An error on our side (the database, say); passed to onError. */
  errors: number;
}

export interface BackgroundRefreshOptions {
  /** KEYWARD_BACKGROUND_REFRESH_HOURS; at least 1 (0 schedules no run at all). */
  hours: number;
  limits?: Partial<BackgroundRefreshLimits>;
  /** Once aborted, no new credential is started; those in flight end, and the run returns its report. */
  signal?: AbortSignal;
  onError?: (error: Error) => void;
}

function emptyReport(): BackgroundRefreshReport {
  return { picked: 0, refreshed: 0, rejected: 0, failed: 0, busy: 0, noRefreshToken: 0, notEnabled: 0, errors: 0 };
}

const COUNTED = {
  refreshed: 'refreshed',
  rejected: 'rejected',
  failed: 'failed',
  busy: 'busy',
  no_refresh_token: 'noRefreshToken',
  not_enabled: 'notEnabled',
} as const;

/**
 * One run as of the context's clock; null when another node holds the run. The limits are the
 * production ones unless a caller asks for smaller.
 */
export async function runBackgroundRefresh(ctx: ServiceContext, options: BackgroundRefreshOptions): Promise<BackgroundRefreshReport | null> {
  if (!Number.isInteger(options.hours) || options.hours < 1) throw new RangeError('the background refresh needs a period of at least one hour');
  const limits: BackgroundRefreshLimits = { batchSize: BATCH_SIZE, batches: BATCHES_PER_RUN, concurrency: CONCURRENCY, ...options.limits };
  // A batch's worst case: every round of calls waits out the provider timeout.
  const callSeconds = Math.ceil(ctx.providerTimeoutMs / 1000) + CALL_MARGIN_SECONDS;
  const leaseSeconds = Math.ceil(limits.batchSize / limits.concurrency) * callSeconds + BATCH_MARGIN_SECONDS;
  const start = ctx.clock.now();
  // Due: not attempted (or, never attempted, not connected) since this moment.
  const cutoff = iso(addSeconds(start, -options.hours * 3600));
  const report = emptyReport();
  const ran = await runLeasedBatches(ctx, {
    job: BACKGROUND_REFRESH_JOB,
    start,
    leaseSeconds,
    limits,
    signal: options.signal,
    due: (after, size) => ctx.store.jobs.dueCredentials(cutoff, after, size),
    turn: async (row) => {
      try {
        report[COUNTED[await refreshInBackground(ctx, row, cutoff)]] += 1;
      } catch (error) {
        report.errors += 1;
        options.onError?.(error instanceof Error ? error : new Error(String(error)));
      }
    },
  });
  if (!ran) return null;
  report.picked = ran.picked;
  return report;
}

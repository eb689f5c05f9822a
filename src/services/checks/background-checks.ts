/**
 * The background check (CONTRACT 8.3, KEYWARD_VERIFY_HOURS): an active static credential not checked
 * for the configured hours (a never-checked one first of all) is checked again at its provider, so a
 * key revoked there turns to needs_reauth (and its webhook) before the customer's backend finds out.
 *
 * One run, on one node at a time (a lease in job_leases; a node that finds it taken skips the run),
 * exactly as the background refresh (oauth/background-refresh.ts): at most BATCHES_PER_RUN batches of
 * BATCH_SIZE due credentials, checked longest ago first (one range of credentials_check_due,
 * migration 016), each checked with at most CONCURRENCY provider calls in flight. Every credential a
 * run picks is stamped (its check, or, where its provider has no verify request, a pass), so it is
 * not picked again before its next turn; one that turns needs_reauth leaves the due set.
 *
 * The figures, for 1,000,000 static credentials and the default 24 hours: as the refresh's, 5,000 a
 * run, 288 runs a day, 1,440,000 a day. A check waits at most 10 s (gateway/verify-request.ts), so a
 * batch's worst case is 32 rounds of 15 s: 8 minutes, which its lease covers.
 */
import type { StaticProvider } from '../../catalog/provider-definition.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import type { DueCredential } from '../../store/jobs-repository.js';
import type { ServiceContext } from '../context.js';
import { CHECK_TIMEOUT_MS, checkableApi } from '../gateway/verify-request.js';
import { type BatchLimits, runLeasedBatches } from '../leased-batches.js';
import { checkStoredCredential, passOver, staticProviderOf } from './credential-checks.js';

export const BATCH_SIZE = 500;
export const BATCHES_PER_RUN = 10;
export const CONCURRENCY = 16;

/** The job's name in job_leases. */
export const CREDENTIAL_CHECKS_JOB = 'credential-checks';
/** Beyond a check's bound, the time its outcome may take to be written. */
const CALL_MARGIN_SECONDS = 5;
/** Beyond the checks of a batch, time for the statements around them. */
const BATCH_MARGIN_SECONDS = 60;

export type CredentialCheckLimits = BatchLimits;

/** What a run came to, per credential it picked. */
export interface CredentialCheckReport {
  picked: number;
  valid: number;
  /** Refused by the provider: now needs_reauth (unless it already was). */
  rejected: number;
  /** Nothing said about the values (an outage, a timeout, another status): checked again next turn. */
  unreachable: number;
  /** Its provider has no verify request (or is gone): stamped, nothing sent. */
  notCheckable: number;
  /** An error on our side (the database, a secret that would not open); passed to onError. */
  errors: number;
}

export interface CredentialCheckOptions {
  /** KEYWARD_VERIFY_HOURS; at least 1 (0 schedules no run at all). */
  hours: number;
  limits?: Partial<CredentialCheckLimits>;
  /** Once aborted, no new credential is started; those in flight end, and the run returns its report. */
  signal?: AbortSignal;
  onError?: (error: Error) => void;
}

/** One run as of the context's clock; null when another node holds the run. */
export async function runCredentialChecks(ctx: ServiceContext, options: CredentialCheckOptions): Promise<CredentialCheckReport | null> {
  if (!Number.isInteger(options.hours) || options.hours < 1) throw new RangeError('the background check needs a period of at least one hour');
  const limits: CredentialCheckLimits = { batchSize: BATCH_SIZE, batches: BATCHES_PER_RUN, concurrency: CONCURRENCY, ...options.limits };
  const callSeconds = Math.ceil(CHECK_TIMEOUT_MS / 1000) + CALL_MARGIN_SECONDS;
  const leaseSeconds = Math.ceil(limits.batchSize / limits.concurrency) * callSeconds + BATCH_MARGIN_SECONDS;
  const start = ctx.clock.now();
  const cutoff = iso(addSeconds(start, -options.hours * 3600));
  const report: CredentialCheckReport = { picked: 0, valid: 0, rejected: 0, unreachable: 0, notCheckable: 0, errors: 0 };
  // A run meets the same few providers again and again: each is looked up once per run.
  const providers = new Map<string, Promise<StaticProvider | null>>();
  const providerOf = (row: DueCredential) => {
    const key = `${row.server_id}|${row.provider}`;
    if (!providers.has(key)) {
      // A failed lookup is not kept: the next credential of that provider asks again.
      const lookup = staticProviderOf(ctx, row);
      lookup.catch(() => providers.delete(key));
      providers.set(key, lookup);
    }
    return providers.get(key)!;
  };
  const turn = async (row: DueCredential) => {
    try {
      const provider = await providerOf(row);
      if (!provider || !checkableApi(provider)) {
        await passOver(ctx, row);
        report.notCheckable += 1;
        return;
      }
      const { outcome } = await checkStoredCredential(ctx, row, provider);
      report[outcome] += 1;
    } catch (error) {
      report.errors += 1;
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const ran = await runLeasedBatches(ctx, {
    job: CREDENTIAL_CHECKS_JOB,
    start,
    leaseSeconds,
    limits,
    signal: options.signal,
    due: (after, size) => ctx.store.jobs.checkDueCredentials(cutoff, after, size),
    turn,
  });
  if (!ran) return null;
  report.picked = ran.picked;
  return report;
}

/**
 * The expiry notices (CONTRACT 10, last paragraph): an OAuth flow, hosted form or connect session
 * nobody finished sends `connect.failed` with `error: "expired"` (and its `flowId` or `sessionId`)
 * within a minute of its expiry, once, from one node. The customer's backend learns that the end user
 * gave up without asking.
 *
 * One run (jobs/expiry-notices-schedule.ts, every 30 s) takes each kind (expiring-kinds.ts) under its
 * own lease in job_leases, as the background refresh does (leased-batches.ts): a node that finds it
 * taken skips that kind. It reads the kind's pending rows that expired in the window, in expiry
 * order, in bounded batches (one range of a partial index each, migrations 022 and 021), and for each,
 * in one transaction, marks the row with a guarded UPDATE and writes the event to the outbox. The
 * guard, not the lease, is what makes a notice single: two nodes, or the end user finishing at the
 * last moment, meet on the row, and only the first to change it goes on (a flow completed or a form
 * used is not notified; a notified flow or form can no longer complete). A Connect session is the
 * exception: its page's flows end no later than it does (connect-page-actions.ts), but a static
 * connection whose provider check began before the expiry may still be stored just after the notice.
 *
 * A flow or form already ended when it expires (completed, failed, cancelled by a revocation) is not
 * notified: its outcome was told, or asked for, already. One whose callback arrives after its expiry
 * but before the notice ends as today (`failed`, `flow_expired`, with its own `connect.failed`) and is
 * not notified again.
 *
 * NOTICE_WINDOW_SECONDS bounds how late a notice may come: after an outage of every node the run
 * catches up on a day's expiries, but not on the older ones (the week the sweep keeps them for), which
 * a backend would receive long after anyone could act on them; the same holds on the upgrade that
 * brings this job. The figures: a run takes up to 10 × 500 = 5,000 rows of each kind, 10,000 a minute,
 * each one short transaction; a busy instance's unfinished flows are a small share of that.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { EXPIRED_ERROR, type ExpiredRow } from '../../store/expiry-notices-repository.js';
import type { ServiceContext } from '../context.js';
import { type BatchLimits, runLeasedBatches } from '../leased-batches.js';
import { recordEvent } from '../webhooks/webhook-events.js';
import { EXPIRING_KINDS, type ExpiringKind } from './expiring-kinds.js';

export const BATCH_SIZE = 500;
export const BATCHES_PER_RUN = 10;
/** Transactions under way at once on the node that runs (each a few statements, no outside call). */
export const CONCURRENCY = 4;

/** How long after its expiry a row is still notified (see above). */
export const NOTICE_WINDOW_SECONDS = 24 * 3600;

/** The jobs' names in job_leases: one per kind. */
export const EXPIRY_NOTICES_JOB = 'expiry-notices';
/**
 * A batch's worst case (500 short transactions, 4 at a time), renewed before each batch. Short because a
 * node that dies holding it keeps the others off until it lapses, and a notice is due within a minute
 * of its expiry (CONTRACT 10): 30 s of lease and a run every 30 s. A batch that ran over would let
 * another node take the kind meanwhile: wasted reads, never a second notice (the guard).
 */
const LEASE_SECONDS = 30;

export type ExpiryNoticeLimits = BatchLimits;

/** What a run came to for one kind. */
export interface KindReport {
  /** Rows read as expired and unnotified. */
  picked: number;
  /** Marked, with their `connect.failed` written. */
  notified: number;
  /** Finished, cancelled or notified by someone else between the read and the mark: nothing sent. */
  finished: number;
  /** An error on our side (the database); passed to onError, and the row stays due. */
  errors: number;
}

/** Each kind's report, or null where another node holds that kind's run. */
export type ExpiryNoticeReport = Record<string, KindReport | null>;

export interface ExpiryNoticeOptions {
  /** The kinds to notify: every one unless a test asks for fewer. */
  kinds?: readonly ExpiringKind[];
  limits?: Partial<ExpiryNoticeLimits>;
  /** Once aborted, no new row is started; those under way end, and the run returns its report. */
  signal?: AbortSignal;
  onError?: (error: Error) => void;
}

/** `connect.failed` for a row just marked, on the caller's transaction. Never a secret: ids, slug, code. */
function recordExpiry(ctx: ServiceContext, kind: ExpiringKind, row: ExpiredRow, at: string): Promise<string[]> {
  return recordEvent(ctx, {
    type: 'connect.failed',
    serverId: row.server_id,
    at,
    data: {
      externalUserId: row.external_user_id,
      ...(row.provider === null ? {} : { provider: row.provider }),
      [kind.idField]: row.id,
      error: EXPIRED_ERROR,
    },
  });
}

/** One kind's run; null where another node holds it. */
async function notifyKind(ctx: ServiceContext, kind: ExpiringKind, start: Date, limits: ExpiryNoticeLimits, options: ExpiryNoticeOptions) {
  const cutoff = iso(start);
  const floor = iso(addSeconds(start, -NOTICE_WINDOW_SECONDS));
  const report: KindReport = { picked: 0, notified: 0, finished: 0, errors: 0 };
  const turn = async (row: ExpiredRow) => {
    try {
      const now = iso(ctx.clock.now());
      const notified = await ctx.store.transaction(async () => {
        if (!(await kind.mark(ctx, row.id, now))) return false;
        await recordExpiry(ctx, kind, row, now);
        return true;
      });
      report[notified ? 'notified' : 'finished'] += 1;
    } catch (error) {
      report.errors += 1;
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const ran = await runLeasedBatches(ctx, {
    job: `${EXPIRY_NOTICES_JOB}:${kind.name}`,
    start,
    leaseSeconds: LEASE_SECONDS,
    limits,
    signal: options.signal,
    due: (after, size) => kind.expired(ctx, floor, cutoff, after, size),
    turn,
  });
  if (!ran) return null;
  report.picked = ran.picked;
  return report;
}

/** One run as of the context's clock. The limits are the production ones unless a caller asks for smaller. */
export async function runExpiryNotices(ctx: ServiceContext, options: ExpiryNoticeOptions = {}): Promise<ExpiryNoticeReport> {
  const limits: ExpiryNoticeLimits = { batchSize: BATCH_SIZE, batches: BATCHES_PER_RUN, concurrency: CONCURRENCY, ...options.limits };
  const start = ctx.clock.now();
  const report: ExpiryNoticeReport = {};
  for (const kind of options.kinds ?? EXPIRING_KINDS) {
    if (options.signal?.aborted) break;
    report[kind.name] = await notifyKind(ctx, kind, start, limits, options);
  }
  return report;
}

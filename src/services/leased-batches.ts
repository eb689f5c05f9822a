/**
 * One run of a background job over due rows (the background refresh's and the background check's
 * credentials, the expiry notices' flows and forms),
 * one node at a time: the job's lease in job_leases is taken first (none taken: another node runs it,
 * and this run does nothing), renewed before each batch (a node that lost it stops), and released at
 * the end. Batches follow each other in due order, each starting after the last one's end, so a row
 * left due by its turn is not picked twice in a run; within a batch at most `concurrency` rows are
 * under way, and none is started once `signal` is aborted.
 */
import { randomUUID } from 'node:crypto';
import { addSeconds, iso } from '../primitives/clock.js';
import type { DueCredential, DuePosition } from '../store/jobs-repository.js';
import type { ServiceContext } from './context.js';

export interface BatchLimits {
  batchSize: number;
  batches: number;
  concurrency: number;
}

/** What a job's due query gives: rows in (due time, id) order, so a batch can start after the last one. */
export interface DueRow {
  id: string;
  due_at: string;
}

export interface LeasedRun<Row extends DueRow = DueCredential> {
  /** The job's name in job_leases. */
  job: string;
  /** When the run began: the lease is taken as of it. */
  start: Date;
  /** A batch's worst case: how long each lease (the first, and each renewal) lasts. */
  leaseSeconds: number;
  limits: BatchLimits;
  signal?: AbortSignal;
  /** The next batch: at most `size` due rows after `after`, in due order. */
  due(after: DuePosition | null, size: number): Promise<Row[]>;
  /** One row's turn; it handles its own errors. */
  turn(row: Row): Promise<void>;
}

/** Runs the batches under the job's lease; the rows picked, or null where another node holds the run. */
export async function runLeasedBatches<Row extends DueRow>(ctx: ServiceContext, run: LeasedRun<Row>): Promise<{ picked: number } | null> {
  const leaseUntil = () => iso(addSeconds(ctx.clock.now(), run.leaseSeconds));
  const holder = randomUUID();
  if (!(await ctx.store.jobs.takeLease(run.job, holder, iso(run.start), leaseUntil()))) return null;
  let picked = 0;
  try {
    let after: DuePosition | null = null;
    for (let batch = 0; batch < run.limits.batches && !run.signal?.aborted; batch++) {
      if (batch > 0 && !(await ctx.store.jobs.renewLease(run.job, holder, leaseUntil()))) break;
      const due = await run.due(after, run.limits.batchSize);
      picked += due.length;
      await eachBounded(due, run.limits.concurrency, run.signal, run.turn);
      if (due.length < run.limits.batchSize) break;
      const last = due.at(-1)!;
      after = [last.due_at, last.id];
    }
  } finally {
    await ctx.store.jobs.releaseLease(run.job, holder);
  }
  return { picked };
}

/** Runs `work` on each item with at most `limit` under way, starting none once `signal` is aborted. */
async function eachBounded<T>(items: readonly T[], limit: number, signal: AbortSignal | undefined, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal?.aborted) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

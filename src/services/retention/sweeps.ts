/**
 * Sweeps of the tables that only grow: rows nothing needs any more are deleted on a schedule
 * (jobs/sweep-schedule.ts), in bounded batches, so that a busy instance neither fills its disk nor holds a
 * long write lock while catching up.
 *
 * The sweeps are a list: a kind of row is added with one `expiredRows(…)` entry. Each keeps rows for a
 * while past their end where a row still changes an answer (a used form link answers 410, not 400; a
 * rotated-out server key is refused as `service_key_revoked`, not `service_key_invalid`).
 *
 * On PostgreSQL a run is one transaction under an advisory lock: a node that does not get it skips the
 * run, since another node is sweeping (store/maintenance-repository.ts); the run is small enough (at
 * most SWEEP_BATCHES_PER_RUN statements per kind) to hold one. On SQLite there is one node, and each
 * batch commits alone so that requests interleave with the run.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import type { Database } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';

export interface Sweep {
  /** Names the kind of row in the run's report. */
  name: string;
  /** Deletes at most `limit` rows that nothing needs any more at `now`; resolves to how many it deleted. */
  sweep(ctx: ServiceContext, now: Date, limit: number): Promise<number>;
}

/** Rows a statement deletes at most. */
export const SWEEP_BATCH_ROWS = 500;
/** Statements a run makes at most for each kind of row; the next run goes on where it stopped. */
export const SWEEP_BATCHES_PER_RUN = 10;

const DAY = 86_400;
/** Ended hosted forms and OAuth flows are kept a week past their expiry: a used link still answers 410. */
export const ENDED_LINK_KEEP_SECONDS = 7 * DAY;
/** Rotated-out server keys are kept 30 days past their grace period: they are refused as rotated out. */
export const ROTATED_KEY_KEEP_SECONDS = 30 * DAY;
/** Delivered and failed webhook messages, and every attempt, are kept 30 days (CONTRACT 7). */
export const WEBHOOK_HISTORY_KEEP_SECONDS = 30 * DAY;

/**
 * A sweep of `table`'s rows whose `column` (an ISO time) is `keepSeconds` or more in the past. A null
 * `column` (a server key still current) never matches. `key` names the columns that identify a row.
 */
export function expiredRows(input: { name: string; table: keyof Database; column: string; keepSeconds: number; key?: string[] }): Sweep {
  const rows = { table: input.table, column: input.column, key: input.key ?? ['id'] };
  return {
    name: input.name,
    sweep: (ctx, now, limit) => ctx.store.maintenance.deleteEnded(rows, iso(addSeconds(now, -input.keepSeconds)), limit),
  };
}

/** The sweeps `keyward serve` runs. Audit events are swept only when a retention is configured. */
export function standardSweeps(options: { auditRetentionDays: number | null }): Sweep[] {
  const sweeps = [
    expiredRows({ name: 'static_form_sessions', table: 'static_form_sessions', column: 'expires_at', keepSeconds: ENDED_LINK_KEEP_SECONDS }),
    expiredRows({ name: 'oauth_flows', table: 'oauth_flows', column: 'expires_at', keepSeconds: ENDED_LINK_KEEP_SECONDS }),
    // An expired Connect page link still answers 410 for a week; its flows are swept on their own expiry.
    expiredRows({ name: 'connect_sessions', table: 'connect_sessions', column: 'expires_at', keepSeconds: ENDED_LINK_KEEP_SECONDS }),
    expiredRows({ name: 'dashboard_sessions', table: 'dashboard_sessions', column: 'expires_at', keepSeconds: 0 }),
    expiredRows({ name: 'server_keys', table: 'server_keys', column: 'expires_at', keepSeconds: ROTATED_KEY_KEEP_SECONDS }),
    expiredRows({ name: 'idempotency_records', table: 'idempotency_records', column: 'expires_at', keepSeconds: 0, key: ['server_id', 'idempotency_key'] }),
    // A used form nonce matters while its session could still send the form again.
    expiredRows({ name: 'dashboard_form_uses', table: 'dashboard_form_uses', column: 'expires_at', keepSeconds: 0, key: ['nonce'] }),
    // A sign-in count whose window ended locks nothing any more.
    expiredRows({ name: 'sign_in_attempts', table: 'sign_in_attempts', column: 'window_ends', keepSeconds: 0, key: ['email_mac'] }),
    // A key's rate-limit window sizes the next window's leases for a minute after it ends, then nothing.
    expiredRows({ name: 'rate_limit_windows', table: 'rate_limit_windows', column: 'window_start', keepSeconds: 120, key: ['key_id'] }),
    // A message's attempts go with it; a pending message has no end, and is never swept.
    expiredRows({ name: 'webhook_messages', table: 'webhook_messages', column: 'ended_at', keepSeconds: WEBHOOK_HISTORY_KEEP_SECONDS }),
    expiredRows({ name: 'webhook_attempts', table: 'webhook_attempts', column: 'attempted_at', keepSeconds: WEBHOOK_HISTORY_KEEP_SECONDS }),
    // A signing secret past its grace period signs nothing any more.
    expiredRows({ name: 'webhook_secrets', table: 'webhook_secrets', column: 'expires_at', keepSeconds: 0 }),
  ];
  if (options.auditRetentionDays !== null) {
    sweeps.push(expiredRows({ name: 'audit_events', table: 'audit_events', column: 'created_at', keepSeconds: options.auditRetentionDays * DAY }));
  }
  return sweeps;
}

/** How many rows of each kind a run deleted. */
export type SweepReport = Record<string, number>;

async function sweepAll(ctx: ServiceContext, sweeps: Sweep[], now: Date, rows: number, batches: number): Promise<SweepReport> {
  const report: SweepReport = {};
  for (const { name, sweep } of sweeps) {
    report[name] = 0;
    for (let batch = 0; batch < batches; batch++) {
      const deleted = await sweep(ctx, now, rows);
      report[name] += deleted;
      if (deleted < rows) break;
    }
  }
  return report;
}

/**
 * One run of `sweeps` as of the context's clock. Null when another node holds the run (PostgreSQL).
 * The limits are the production ones unless a caller asks for smaller.
 */
export async function runSweeps(ctx: ServiceContext, sweeps: Sweep[], limits: { rows?: number; batches?: number } = {}): Promise<SweepReport | null> {
  const now = ctx.clock.now();
  const rows = limits.rows ?? SWEEP_BATCH_ROWS;
  const batches = limits.batches ?? SWEEP_BATCHES_PER_RUN;
  return ctx.store.maintenance.asTheOnlySweep(() => sweepAll(ctx, sweeps, now, rows, batches));
}

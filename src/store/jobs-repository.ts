/**
 * Background jobs: the leases that let one node at a time run a job (job_leases), what the
 * background refresh picks (services/oauth/background-refresh.ts; migration 011 made both), and what
 * the background check picks (services/checks/background-checks.ts; migration 016).
 */
import { sql } from 'kysely';
import { Repository } from './repository.js';
import type { CredentialRow } from './schema.js';

/**
 * When an active OAuth credential is next due: its last refresh attempt, or its connection. Written
 * exactly as the index credentials_refresh_due is, so both engines read the index for it.
 */
const DUE_AT = sql<string>`coalesce(refresh_attempted_at, connected_at)`;
/** The index's condition as literals: a plan made for any parameter values (PostgreSQL's generic plan of a prepared statement) could not use the partial index. */
const REFRESHABLE = sql<boolean>`type = 'oauth2' and status = 'active'`;

/** A place in the order of the due credentials: (due time, id). */
export type DuePosition = readonly [dueAt: string, id: string];

export type DueCredential = CredentialRow & { due_at: string };

/**
 * When an active static credential is next due for a check: its last check, or, never checked, before
 * any time at all. Written exactly as the index credentials_check_due is.
 */
const CHECK_DUE_AT = sql<string>`coalesce(last_check_at, '')`;
/** That index's condition as literals (see REFRESHABLE). */
const CHECKABLE = sql<boolean>`type = 'static' and status = 'active'`;

export class JobsRepository extends Repository {
  /**
   * Takes the job's lease for `holder` until `until`, unless another holder's lease is still live at
   * `now`; true when taken. One statement: two nodes asking at once meet on the primary key, and the
   * second finds the first's live lease.
   */
  async takeLease(name: string, holder: string, now: string, until: string): Promise<boolean> {
    const taken = await this.db
      .insertInto('job_leases')
      .values({ name, holder, lease_until: until })
      .onConflict((oc) => oc.column('name').doUpdateSet({ holder, lease_until: until }).where('job_leases.lease_until', '<=', now))
      .returning('holder')
      .executeTakeFirst();
    return taken !== undefined;
  }

  /** Moves the end of `holder`'s lease to `until`; false where it is no longer theirs (it ran out and another node took it). */
  async renewLease(name: string, holder: string, until: string): Promise<boolean> {
    const renewed = await this.db
      .updateTable('job_leases')
      .set({ lease_until: until })
      .where('name', '=', name)
      .where('holder', '=', holder)
      .executeTakeFirst();
    return renewed.numUpdatedRows > 0n;
  }

  /** Ends `holder`'s lease, so that the next run of the job, on any node, need not wait for it to run out. */
  async releaseLease(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('job_leases').where('name', '=', name).where('holder', '=', holder).execute();
  }

  /**
   * The active OAuth credentials due at or before `cutoff`, oldest first, after `after` in that order
   * (the last one of the previous batch), at most `limit`: one range of credentials_refresh_due.
   */
  dueQuery(cutoff: string, after: DuePosition | null, limit: number) {
    let query = this.db.selectFrom('credentials').selectAll().select(DUE_AT.as('due_at')).where(REFRESHABLE).where(sql<boolean>`${DUE_AT} <= ${cutoff}`);
    // Not a row value (due, id) > (…): SQLite would then bound the index's range only from above.
    if (after) query = query.where(sql<boolean>`${DUE_AT} >= ${after[0]} and (${DUE_AT} > ${after[0]} or id > ${after[1]})`);
    return query.orderBy(DUE_AT).orderBy('id').limit(limit);
  }

  dueCredentials(cutoff: string, after: DuePosition | null, limit: number): Promise<DueCredential[]> {
    return this.dueQuery(cutoff, after, limit).execute();
  }

  /**
   * The active static credentials last checked at or before `cutoff` (never-checked first), checked
   * longest ago first, after `after` in that order, at most `limit`: one range of credentials_check_due.
   */
  checkDueQuery(cutoff: string, after: DuePosition | null, limit: number) {
    let query = this.db
      .selectFrom('credentials')
      .selectAll()
      .select(CHECK_DUE_AT.as('due_at'))
      .where(CHECKABLE)
      .where(sql<boolean>`${CHECK_DUE_AT} <= ${cutoff}`);
    if (after) query = query.where(sql<boolean>`${CHECK_DUE_AT} >= ${after[0]} and (${CHECK_DUE_AT} > ${after[0]} or id > ${after[1]})`);
    return query.orderBy(CHECK_DUE_AT).orderBy('id').limit(limit);
  }

  checkDueCredentials(cutoff: string, after: DuePosition | null, limit: number): Promise<DueCredential[]> {
    return this.checkDueQuery(cutoff, after, limit).execute();
  }
}

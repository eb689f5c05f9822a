/**
 * What the expiry notices (services/expiry-notices/) read and write: the pending OAuth flows, hosted
 * forms and connect sessions whose expiry passed and that were not notified yet, each kind one range
 * of its partial index (migrations 022 and 021), and the guarded UPDATE that marks one, so that of two
 * nodes (or the job and the end user finishing at the last moment) exactly one changes it.
 */
import { sql } from 'kysely';
import type { DuePosition } from './jobs-repository.js';
import { Repository } from './repository.js';

/** A flow, form or session past its expiry, as its notice needs it; `due_at` is its expiry (the job's order). */
export interface ExpiredRow {
  id: string;
  server_id: string;
  external_user_id: string;
  /** Null for a connect session: it offers several. */
  provider: string | null;
  due_at: string;
}

/** The error code an expired flow ends with, and the one its notice carries (CONTRACT 10). */
export const EXPIRED_ERROR = 'expired';

/**
 * Each index's condition as literals: a plan made for any parameter values (PostgreSQL's generic plan
 * of a prepared statement) could not use a partial index (as in jobs-repository.ts).
 */
const PENDING = sql<boolean>`status = 'pending'`;
const UNFINISHED_SESSION = sql<boolean>`connected_at is null and expiry_notified_at is null`;

/** Expired in (`floor`, `cutoff`], after `after` in (expires_at, id) order. Not a row value (see jobs-repository.ts dueQuery). */
function expiredBetween(floor: string, cutoff: string, after: DuePosition | null) {
  const window = sql<boolean>`expires_at > ${floor} and expires_at <= ${cutoff}`;
  return after ? sql<boolean>`${window} and expires_at >= ${after[0]} and (expires_at > ${after[0]} or id > ${after[1]})` : window;
}

export class ExpiryNoticesRepository extends Repository {
  /** The pending flows that expired in (`floor`, `cutoff`], oldest expiry first, after `after`, at most `limit`. */
  expiredFlowsQuery(floor: string, cutoff: string, after: DuePosition | null, limit: number) {
    return this.#expiredPendingQuery('oauth_flows', floor, cutoff, after, limit);
  }

  expiredFlows(floor: string, cutoff: string, after: DuePosition | null, limit: number): Promise<ExpiredRow[]> {
    return this.expiredFlowsQuery(floor, cutoff, after, limit).execute();
  }

  /**
   * Ends a flow still pending and expired at `now` as failed with EXPIRED_ERROR; false where it is not
   * (a callback claimed it first, it was cancelled, or another node ended it).
   */
  async expireFlow(id: string, now: string): Promise<boolean> {
    const ended = await this.db
      .updateTable('oauth_flows')
      .set({ status: 'failed', error_code: EXPIRED_ERROR, completed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return ended.numUpdatedRows > 0n;
  }

  /** The pending forms that expired in (`floor`, `cutoff`], oldest expiry first, after `after`, at most `limit`. */
  expiredFormsQuery(floor: string, cutoff: string, after: DuePosition | null, limit: number) {
    return this.#expiredPendingQuery('static_form_sessions', floor, cutoff, after, limit);
  }

  /** Flows and forms alike: the same columns, the same `pending` status, a partial index of the same shape (migration 022). */
  #expiredPendingQuery(table: 'oauth_flows' | 'static_form_sessions', floor: string, cutoff: string, after: DuePosition | null, limit: number) {
    return this.db
      .selectFrom(table as 'oauth_flows')
      .select(['id', 'server_id', 'external_user_id', 'provider', 'expires_at as due_at'])
      .where(PENDING)
      .where(expiredBetween(floor, cutoff, after))
      .orderBy('expires_at')
      .orderBy('id')
      .limit(limit);
  }

  expiredForms(floor: string, cutoff: string, after: DuePosition | null, limit: number): Promise<ExpiredRow[]> {
    return this.expiredFormsQuery(floor, cutoff, after, limit).execute();
  }

  /**
   * Ends a form still pending and expired at `now` as `expired`; false where it is not (used at the
   * last moment, cancelled, or another node ended it).
   */
  async expireForm(id: string, now: string): Promise<boolean> {
    const marked = await this.db
      .updateTable('static_form_sessions')
      .set({ status: 'expired', completed_at: now })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return marked.numUpdatedRows > 0n;
  }

  /**
   * The connect sessions through which nobody connected anything and that expired in (`floor`,
   * `cutoff`], oldest expiry first, after `after`, at most `limit`: one range of connect_sessions_expiry_due.
   */
  expiredSessionsQuery(floor: string, cutoff: string, after: DuePosition | null, limit: number) {
    return this.db
      .selectFrom('connect_sessions')
      .select(['id', 'server_id', 'external_user_id', sql<string | null>`null`.as('provider'), 'expires_at as due_at'])
      .where(UNFINISHED_SESSION)
      .where(expiredBetween(floor, cutoff, after))
      .orderBy('expires_at')
      .orderBy('id')
      .limit(limit);
  }

  expiredSessions(floor: string, cutoff: string, after: DuePosition | null, limit: number): Promise<ExpiredRow[]> {
    return this.expiredSessionsQuery(floor, cutoff, after, limit).execute();
  }

  /**
   * Marks a session nobody connected through, unnotified and expired at `now`, as notified; false where
   * it is not (a connection was made through it at the last moment, or another node notified it).
   */
  async markSessionNotified(id: string, now: string): Promise<boolean> {
    const marked = await this.db
      .updateTable('connect_sessions')
      .set({ expiry_notified_at: now })
      .where('id', '=', id)
      .where('connected_at', 'is', null)
      .where('expiry_notified_at', 'is', null)
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return marked.numUpdatedRows > 0n;
  }
}

/**
 * The per-key rate limit shared by every node on one database: one row per account key holding its
 * current window and how much of the limit the nodes have leased in it (auth/key-quota.ts spends the
 * leases in memory). Each statement is one guarded upsert or update, so concurrent nodes never grant
 * more than the limit between them, whatever the interleaving.
 */
import { sql } from 'kysely';
import { Repository } from './repository.js';

export interface LeaseRequest {
  keyId: string;
  /** The caller's time (ISO): a new window starts here. */
  now: string;
  /** A window that started at or before this (ISO) is over, and the lease opens a new one. */
  endedIfStartedBy: string;
  /** The window the caller leased in last for this key, if any: a node is counted once a window. */
  knownWindow: string | null;
  wanted: number;
  limit: number;
}

export interface Lease {
  /** The window the grant belongs to (ISO). */
  windowStart: string;
  /** What this statement granted: 0 to `wanted`. */
  grant: number;
  /** Leased in this window so far, this grant included. */
  granted: number;
  /** Nodes that leased in this window, and in the window before it. */
  nodes: number;
  previousNodes: number;
}

const column = (name: string) => sql.ref(`rate_limit_windows.${name}`);
/** Casts give PostgreSQL the parameter types that CASE alone does not. */
const whole = (n: number) => sql<number>`cast(${n} as integer)`;
const text = (s: string | null) => sql<string>`cast(${s} as text)`;

export class RateLimitsRepository extends Repository {
  /**
   * Leases up to `wanted` of the key's remaining quota in one statement: min(wanted, limit − granted),
   * never below 0, in the current window, or in a new one when the row's window is over (then what
   * was granted before is forgotten: nothing needs returning when a window ends).
   */
  async lease(request: LeaseRequest): Promise<Lease> {
    const { keyId, now, wanted, limit } = request;
    const ended = sql<boolean>`${column('window_start')} <= ${text(request.endedIfStartedBy)}`;
    const room = sql<number>`(${whole(limit)} - ${column('granted')})`;
    const grant = sql<number>`case when ${room} <= 0 then 0 when ${room} < ${whole(wanted)} then ${room} else ${whole(wanted)} end`;
    const opening = Math.max(0, Math.min(wanted, limit));
    const row = await this.db
      .insertInto('rate_limit_windows')
      .values({ key_id: keyId, window_start: now, granted: opening, last_grant: opening, nodes: 1, previous_nodes: 0, leases: 1 })
      .onConflict((conflict) =>
        conflict.column('key_id').doUpdateSet({
          window_start: sql`case when ${ended} then ${text(now)} else ${column('window_start')} end`,
          granted: sql`case when ${ended} then ${whole(opening)} else ${column('granted')} + ${grant} end`,
          last_grant: sql`case when ${ended} then ${whole(opening)} else ${grant} end`,
          nodes: sql`case when ${ended} then 1 when ${column('window_start')} = ${text(request.knownWindow)} then ${column('nodes')} else ${column('nodes')} + 1 end`,
          previous_nodes: sql`case when ${ended} then ${column('nodes')} else ${column('previous_nodes')} end`,
          leases: sql`case when ${ended} then 1 else ${column('leases')} + 1 end`,
        }),
      )
      .returning(['window_start', 'granted', 'last_grant', 'nodes', 'previous_nodes'])
      .executeTakeFirstOrThrow();
    return {
      windowStart: row.window_start,
      grant: Number(row.last_grant),
      granted: Number(row.granted),
      nodes: Number(row.nodes),
      previousNodes: Number(row.previous_nodes),
    };
  }

  /**
   * Gives `unused` back to the key's window, if that window is still the current one (once it is
   * over there is nothing to give back). Guarded, so a return can never push the count below 0.
   */
  async giveBack(keyId: string, windowStart: string, unused: number): Promise<void> {
    await this.db
      .updateTable('rate_limit_windows')
      .set((eb) => ({ granted: eb('granted', '-', unused) }))
      .where('key_id', '=', keyId)
      .where('window_start', '=', windowStart)
      .where('granted', '>=', unused)
      .execute();
  }
}

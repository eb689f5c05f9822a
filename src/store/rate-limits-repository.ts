/**
 * The per-key rate limit shared by every node on one database: one row per account key holding its
 * current window and how much of the limit the nodes have leased in it (auth/key-quota.ts spends the
 * leases in memory). Each statement is one guarded upsert or update, so concurrent nodes never grant
 * more than the limit between them, whatever the interleaving.
 */
import { type Expression, sql } from 'kysely';
import { Repository } from './repository.js';

export interface LeaseRequest {
  keyId: string;
  /** The caller's time (ISO): a new window starts here. */
  now: string;
  /** A window that started at or before this (ISO) is over, and the lease opens a new one. */
  endedIfStartedBy: string;
  /** The window the caller leased in last for this key, if any: a node is counted once a window. */
  knownWindow: string | null;
  /** What a lease is divided from (see lease): unspent leases hold at most twice this between them. */
  pool: number;
  /** A lease is at least this (the requests about to spend it at once). */
  atLeast: number;
  limit: number;
}

export interface Lease {
  /** The window the grant belongs to (ISO). */
  windowStart: string;
  /** What this statement granted: 0 when the window's quota is spent. */
  grant: number;
  /** Leased in this window so far, this grant included. */
  granted: number;
}

const column = (name: string) => sql.ref(`rate_limit_windows.${name}`);
/** Casts give PostgreSQL the parameter types that CASE alone does not. */
const whole = (n: number) => sql<number>`cast(${n} as integer)`;
const text = (s: string | null) => sql<string>`cast(${s} as text)`;

export class RateLimitsRepository extends Repository {
  /**
   * Leases part of the key's remaining quota in one statement, in the current window or in a new one
   * when the row's window is over (what was granted before is then forgotten: nothing needs returning
   * when a window ends). The grant is max(atLeast, pool / d, 1), never more than limit − granted.
   *
   * d comes from the nodes the statement sees, the caller counted (n this window, p the last). While
   * n ≤ p (the nodes of the last window coming back) d = p: each holds at most pool / p, p of them
   * at most pool. A node beyond them (the k-th, k > p: a key's first window, or a node added) gets
   * d = k(k+1): those hold at most pool × Σ 1/(k(k+1)) < pool / (p+1) between them, however many
   * join at once. So what all nodes hold unspent stays under 2 × pool, even while nodes join; a
   * window later, every node's lease is pool / p again.
   */
  async lease(request: LeaseRequest): Promise<Lease> {
    const { keyId, now, limit } = request;
    // The largest and smallest of their arguments: greatest/least on PostgreSQL, max/min on SQLite.
    const [largest, smallest] = this.connections.engine === 'postgres' ? ['greatest', 'least'] : ['max', 'min'];
    const larger = (...values: Expression<number>[]) => sql<number>`${sql.raw(largest)}(${sql.join(values)})`;
    const smaller = (...values: Expression<number>[]) => sql<number>`${sql.raw(smallest)}(${sql.join(values)})`;
    const ended = sql<boolean>`${column('window_start')} <= ${text(request.endedIfStartedBy)}`;
    const nodes = sql<number>`case when ${ended} then 1 when ${column('window_start')} = ${text(request.knownWindow)} then ${column('nodes')} else ${column('nodes')} + 1 end`;
    const previousNodes = sql<number>`case when ${ended} then ${column('nodes')} else ${column('previous_nodes')} end`;
    const divisor = sql<number>`case when ${nodes} <= ${previousNodes} then ${previousNodes} else ${nodes} * (${nodes} + 1) end`;
    const share = sql<number>`(${whole(request.pool)} / ${divisor})`;
    const wanted = larger(share, whole(request.atLeast), whole(1));
    const room = sql<number>`case when ${ended} then ${whole(limit)} else ${whole(limit)} - ${column('granted')} end`;
    const grant = larger(smaller(wanted, room), whole(0));
    // A key's first window, its first node: d = 1 × 2.
    const opening = Math.max(0, Math.min(Math.max(Math.floor(request.pool / 2), request.atLeast, 1), limit));
    const row = await this.db
      .insertInto('rate_limit_windows')
      .values({ key_id: keyId, window_start: now, granted: opening, last_grant: opening, nodes: 1, previous_nodes: 0, leases: 1 })
      .onConflict((conflict) =>
        conflict.column('key_id').doUpdateSet({
          window_start: sql`case when ${ended} then ${text(now)} else ${column('window_start')} end`,
          granted: sql`case when ${ended} then ${grant} else ${column('granted')} + ${grant} end`,
          last_grant: grant,
          nodes,
          previous_nodes: previousNodes,
          leases: sql`case when ${ended} then 1 else ${column('leases')} + 1 end`,
        }),
      )
      .returning(['window_start', 'granted', 'last_grant'])
      .executeTakeFirstOrThrow();
    return { windowStart: row.window_start, grant: Number(row.last_grant), granted: Number(row.granted) };
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

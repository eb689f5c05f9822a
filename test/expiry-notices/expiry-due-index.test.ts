/**
 * What the expiry notices pick (store/expiry-notices-repository.ts; migrations 022 and 021), on both
 * engines: for each kind, one range of its partial index read in order, never a scan or a sort, on
 * tables where most rows are outside the window or already ended or notified, so the pick stays cheap
 * at any table size; and its batches, in expiry order, continue one another to exactly the due rows.
 *
 * The tables are shaped as in production, where a run every 30 s leaves almost nothing open past its
 * expiry. (Where a large share of a window is due, after an outage, PostgreSQL may rather read the
 * sweep's index on expires_at with an incremental sort: then a range read of mostly due rows too.)
 */
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExpiredRow } from '../../src/store/expiry-notices-repository.js';
import type { DuePosition } from '../../src/store/jobs-repository.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, placeholderBytes, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const ROWS = 20_000;
const at = (second: number) => new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString();
/** The run's window: a day's expiries against the week the sweep keeps, as in production. */
const FLOOR = at(17_000);
const CUTOFF = at(19_940);
/**
 * Row i of each table expires at second i. It is open (pending, nobody finished it, not notified) when
 * it is still in flight (past the cutoff) or, 1 in 50, in the window; every other row ended or was
 * notified, as nearly every row is when a run every 30 s keeps up.
 */
const isOpen = (i: number) => (i % 50 === 0 && i > 17_000) || i > 19_940;
const OPEN = sql`((i % 50 = 0 and i > 17000) or i > 19940)`;
const isDue = (i: number) => isOpen(i) && at(i) > FLOOR && at(i) <= CUTOFF;

const KINDS = [
  { table: 'oauth_flows', index: 'oauth_flows_expiry_due', prefix: 'oflow_' },
  { table: 'static_form_sessions', index: 'static_form_sessions_expiry_due', prefix: 'cfs_' },
  /**
   * Its condition is on two columns (connected_at, expiry_notified_at: migration 021), which PostgreSQL
   * takes as independent: it may read the partial index as a bitmap and sort the window's few rows.
   */
  { table: 'connect_sessions', index: 'connect_sessions_expiry_due', prefix: 'csn_', bitmapOnPostgres: true },
] as const;

describe.each(ENGINES)('the expiry notices’ pick on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    const started = await startWithTenant(engine);
    t = started.t;
    const db = t.ctx.store.db;
    const serverId = started.tenant.serverId;
    const series = numbersUpTo(engine, ROWS);
    const time = (seconds: RawBuilder<unknown>) => secondsAfter2026(engine, seconds);
    // Placeholder verifiers: nothing here opens one. Ids zero-padded, so their text order is i's order.
    const secret = placeholderBytes(engine);
    const padded = engine === 'sqlite' ? sql`substr('00000' || i, -5)` : sql`lpad(i::text, 5, '0')`;
    await sql`insert into oauth_flows (id, server_id, external_user_id, provider, state_digest, verifier, scopes, status, expires_at, created_at)
      select 'oflow_' || ${padded}, ${serverId}, 'user-' || i, 'acme', 'state-' || i, ${secret}, '[]',
        case when ${OPEN} then 'pending' when i % 2 = 0 then 'completed' else 'failed' end,
        ${time(sql`i`)}, ${time(sql`i`)}
      from (${series}) as s`.execute(db);
    await sql`insert into static_form_sessions (id, server_id, external_user_id, provider, token_digest, status, expires_at, created_at)
      select 'cfs_' || ${padded}, ${serverId}, 'user-' || i, 'openai', 'token-' || i,
        case when ${OPEN} then 'pending' when i % 2 = 0 then 'completed' else 'expired' end,
        ${time(sql`i`)}, ${time(sql`i`)}
      from (${series}) as s`.execute(db);
    await sql`insert into connect_sessions (id, server_id, external_user_id, token_digest, allowed_origins, expires_at, created_at, connected_at, expiry_notified_at)
      select 'csn_' || ${padded}, ${serverId}, 'user-' || i, 'session-' || i, '[]',
        ${time(sql`i`)}, ${time(sql`i`)},
        case when not ${OPEN} and i % 2 = 0 then ${time(sql`i`)} end,
        case when not ${OPEN} and i % 2 = 1 then ${time(sql`i`)} end
      from (${series}) as s`.execute(db);
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  const repository = () => t.ctx.store.expiryNotices;
  const queries = {
    oauth_flows: (after: DuePosition | null, limit: number) => repository().expiredFlowsQuery(FLOOR, CUTOFF, after, limit),
    static_form_sessions: (after: DuePosition | null, limit: number) => repository().expiredFormsQuery(FLOOR, CUTOFF, after, limit),
    connect_sessions: (after: DuePosition | null, limit: number) => repository().expiredSessionsQuery(FLOOR, CUTOFF, after, limit),
  };

  for (const kind of KINDS) {
    it(`reads a range of ${kind.index} from the window's start and from a position, never a scan`, async () => {
      for (const after of [null, [at(18_000), `${kind.prefix}18000`] as const]) {
        const plan = await queryPlan(t.ctx.store, queries[kind.table](after, 500));
        if (engine === 'sqlite') expect(plan).toMatch(new RegExp(`SEARCH ${kind.table} USING INDEX ${kind.index} \\(expires_at>\\? AND expires_at<\\?\\)`));
        else if ('bitmapOnPostgres' in kind) {
          expect(plan).toMatch(new RegExp(`(Bitmap )?Index Scan (using|on) ${kind.index}`));
          expect(plan).not.toMatch(/Seq Scan|Index Scan using (?!connect_sessions_expiry_due)/);
        } else {
          expect(plan).toMatch(new RegExp(`Index Scan using ${kind.index} on ${kind.table}`));
          expect(plan).not.toMatch(/Sort|Seq Scan/);
        }
        if (engine === 'postgres') {
          const bounds = plan.match(/Index Cond: (.*)/)![1]!;
          expect(bounds).toContain('expires_at >');
          expect(bounds).toContain('expires_at <=');
        }
        expect(plan).not.toMatch(/TEMP B-TREE|SCAN \w+\b(?! USING)/);
      }
    });

    it(`picks exactly the ${kind.table} due in the window, in expiry order, batch after batch`, async () => {
      const want = Array.from({ length: ROWS }, (_, n) => n + 1)
        .filter(isDue)
        .map((i) => `${kind.prefix}${String(i).padStart(5, '0')}`);
      expect(want.length).toBe(58);
      const seen: ExpiredRow[] = [];
      let after: DuePosition | null = null;
      for (;;) {
        const batch: ExpiredRow[] = await queries[kind.table](after, 29).execute();
        seen.push(...batch);
        if (batch.length < 29) break;
        after = [batch.at(-1)!.due_at, batch.at(-1)!.id];
      }
      expect(seen.map((row) => row.id)).toEqual(want);
      expect(seen[0]).toEqual({
        id: want[0],
        server_id: expect.stringMatching(/^srv_/),
        external_user_id: `user-${Number(want[0]!.slice(kind.prefix.length))}`,
        provider: kind.table === 'oauth_flows' ? 'acme' : kind.table === 'static_form_sessions' ? 'openai' : null,
        due_at: at(Number(want[0]!.slice(kind.prefix.length))),
      });
    });
  }
});

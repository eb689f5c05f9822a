/**
 * What the background check picks (store/jobs-repository.ts checkDueQuery, migration 016), on both
 * engines: one range of credentials_check_due read in order, never a scan or a sort of the
 * credentials, on a table where most rows are not due, not static or not active, so the pick stays
 * cheap at any table size; and its batches, never-checked first, continue one another.
 */
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuePosition } from '../../src/store/jobs-repository.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, placeholderBytes, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const CREDENTIALS = 20_000;
const at = (second: number) => new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString();
/** Credential i: every 2nd is OAuth, every 5th needs the end user, every 7th was never checked, the rest checked at second i. */
const kind = (i: number) => ({ oauth: i % 2 === 0, needsReauth: i % 5 === 0, neverChecked: i % 7 === 0 });
const dueAt = (i: number) => (kind(i).neverChecked ? '' : at(i));
const CUTOFF = at(8_000);

describe.each(ENGINES)('the background check’s pick on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    const started = await startWithTenant(engine);
    t = started.t;
    const db = t.ctx.store.db;
    const series = numbersUpTo(engine, CREDENTIALS);
    const time = (seconds: RawBuilder<unknown>) => secondsAfter2026(engine, seconds);
    // Placeholder secrets: nothing here opens one.
    const secret = placeholderBytes(engine);
    await sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
      select 'mem_' || i, ${started.tenant.serverId}, 'user-' || i, ${time(sql`i`)}, ${time(sql`i`)} from (${series}) as s`.execute(db);
    await sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, last_check_at, last_check_outcome, member_created_at, external_user_id)
      select 'cred_' || i, ${started.tenant.serverId}, 'mem_' || i, 'keyapi',
        case when i % 2 = 0 then 'oauth2' else 'static' end,
        case when i % 5 = 0 then 'needs_reauth' else 'active' end,
        ${secret}, ${time(sql`i`)}, ${time(sql`i`)},
        case when i % 7 <> 0 then ${time(sql`i`)} end,
        case when i % 7 <> 0 then 'valid' end,
        ${time(sql`i`)}, 'user-' || i
      from (${series}) as s`.execute(db);
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  const explain = (after: DuePosition | null) => queryPlan(t.ctx.store, t.ctx.store.jobs.checkDueQuery(CUTOFF, after, 500));

  it('reads the check index in order from the start and from a position, with no scan or sort', async () => {
    for (const after of [null, [at(5_001), 'cred_5001'] as const]) {
      const plan = await explain(after);
      if (engine === 'sqlite') expect(plan).toContain(`SEARCH credentials USING INDEX credentials_check_due (${after ? '<expr>>? AND ' : ''}<expr><?)`);
      else {
        expect(plan).toMatch(/Index Scan using credentials_check_due on credentials/);
        const bounds = plan.match(/Index Cond: (.*)/)![1]!;
        expect(bounds).toContain("COALESCE(last_check_at, ''::text) <=");
        if (after) expect(bounds).toContain("COALESCE(last_check_at, ''::text) >=");
      }
      expect(plan).not.toMatch(/TEMP B-TREE|Sort|Seq Scan|SCAN credentials\b/);
    }
  });

  it('picks the active static credentials checked by the cutoff, never-checked first, then oldest check, batch after batch', async () => {
    const want = Array.from({ length: CREDENTIALS }, (_, n) => n + 1)
      .filter((i) => !kind(i).oauth && !kind(i).needsReauth && dueAt(i) <= CUTOFF)
      .sort((a, b) => (dueAt(a) < dueAt(b) ? -1 : dueAt(a) > dueAt(b) ? 1 : `cred_${a}` < `cred_${b}` ? -1 : 1))
      .map((i) => `cred_${i}`);
    expect(want.length).toBeGreaterThan(2_000);
    expect(kind(Number(want[0]!.slice('cred_'.length))).neverChecked).toBe(true); // never-checked first
    const seen: string[] = [];
    let after: DuePosition | null = null;
    for (;;) {
      const batch = await t.ctx.store.jobs.checkDueCredentials(CUTOFF, after, 999);
      seen.push(...batch.map((row) => row.id));
      if (batch.length < 999) break;
      after = [batch.at(-1)!.due_at, batch.at(-1)!.id];
    }
    expect(seen).toEqual(want);
  });
});

/**
 * The background jobs' statements on both engines (store/jobs-repository.ts, migration 011): the due
 * query of the background refresh reads one range of credentials_refresh_due in order, never a scan
 * or a sort of the credentials, on a table where most rows are not due or not refreshable; its
 * batches continue one another; and a job's lease is held by one holder at a time.
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
/** Credential i connected at second i; every 4th is static, every 5th needs the end user, every 3rd was attempted 10,000 s later. */
const kind = (i: number) => ({ static: i % 4 === 0, needsReauth: i % 5 === 0, attempted: i % 3 === 0 });
const dueAt = (i: number) => at(kind(i).attempted ? i + 10_000 : i);
const CUTOFF = at(8_000);

describe.each(ENGINES)('the background jobs statements on %s', (engine) => {
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
    await sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at, refresh_attempted_at, member_created_at, external_user_id)
      select 'cred_' || i, ${started.tenant.serverId}, 'mem_' || i, 'acme',
        case when i % 4 = 0 then 'static' else 'oauth2' end,
        case when i % 5 = 0 then 'needs_reauth' else 'active' end,
        ${secret}, ${time(sql`i`)}, ${time(sql`i`)},
        case when i % 3 = 0 then ${time(sql`i + 10000`)} end,
        ${time(sql`i`)}, 'user-' || i
      from (${series}) as s`.execute(db);
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  const explain = (after: DuePosition | null) => queryPlan(t.ctx.store, t.ctx.store.jobs.dueQuery(CUTOFF, after, 500));

  it('reads the due index in order from the start and from a position, with no scan or sort', async () => {
    for (const after of [null, [at(5_000), 'cred_5000'] as const]) {
      const plan = await explain(after);
      // From a position, the range is bounded on both sides: earlier entries are not read again.
      if (engine === 'sqlite') expect(plan).toContain(`SEARCH credentials USING INDEX credentials_refresh_due (${after ? '<expr>>? AND ' : ''}<expr><?)`);
      else {
        expect(plan).toMatch(/Index Scan using credentials_refresh_due on credentials/);
        const bounds = plan.match(/Index Cond: (.*)/)![1]!;
        expect(bounds).toContain('COALESCE(refresh_attempted_at, connected_at) <=');
        if (after) expect(bounds).toContain('COALESCE(refresh_attempted_at, connected_at) >=');
      }
      expect(plan).not.toMatch(/TEMP B-TREE|Sort|Seq Scan|SCAN credentials\b/);
    }
  });

  it('picks the active OAuth credentials due by the cutoff, oldest due first, batch after batch', async () => {
    const want = Array.from({ length: CREDENTIALS }, (_, n) => n + 1)
      .filter((i) => !kind(i).static && !kind(i).needsReauth && dueAt(i) <= CUTOFF)
      .sort((a, b) => (dueAt(a) < dueAt(b) ? -1 : dueAt(a) > dueAt(b) ? 1 : `cred_${a}` < `cred_${b}` ? -1 : 1))
      .map((i) => `cred_${i}`);
    expect(want.length).toBeGreaterThan(2_000);
    const seen: string[] = [];
    let after: DuePosition | null = null;
    for (;;) {
      const batch = await t.ctx.store.jobs.dueCredentials(CUTOFF, after, 999);
      seen.push(...batch.map((row) => row.id));
      if (batch.length < 999) break;
      after = [batch.at(-1)!.due_at, batch.at(-1)!.id];
    }
    expect(seen).toEqual(want);
  });

  it('gives a job to one holder at a time, until its lease is released or runs out', async () => {
    const jobs = t.ctx.store.jobs;
    expect(await jobs.takeLease('test-job', 'a', at(0), at(60))).toBe(true);
    expect(await jobs.takeLease('test-job', 'b', at(30), at(90))).toBe(false);
    expect(await jobs.renewLease('test-job', 'b', at(90))).toBe(false);
    expect(await jobs.renewLease('test-job', 'a', at(120))).toBe(true);
    expect(await jobs.takeLease('test-job', 'b', at(60), at(180))).toBe(false); // renewed: still a's
    expect(await jobs.takeLease('test-job', 'b', at(120), at(180))).toBe(true); // ran out
    expect(await jobs.renewLease('test-job', 'a', at(240))).toBe(false); // a lost it
    await jobs.releaseLease('test-job', 'a'); // not a's to release: b keeps it
    expect(await jobs.takeLease('test-job', 'c', at(150), at(200))).toBe(false);
    await jobs.releaseLease('test-job', 'b');
    expect(await jobs.takeLease('test-job', 'c', at(150), at(200))).toBe(true);
    expect(await jobs.takeLease('another-job', 'b', at(150), at(200))).toBe(true);
  });
});

/**
 * "Cost per page must not grow with the audience size": on a large audience, the page query must be
 * an index range scan in list order, never a scan-and-sort of the whole audience, on both engines.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memberPageQuery } from '../../src/services/audience.js';
import { ENGINES } from '../helpers/databases.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const AUDIENCE = 20_000;

describe.each(ENGINES)('the audience page query on %s', (engine) => {
  let t: TestApp, tenant: Tenant;

  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
    const db = t.ctx.store.db;
    // Members made in bulk by the database itself (ids and times need only be distinct and ordered),
    // each with a credential row of one provider, so that filter matches most of the audience. The
    // credentials' secret is a placeholder: this suite never reads one.
    if (engine === 'sqlite') {
      await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${AUDIENCE})
        insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
        select 'mem_' || i, ${tenant.serverId}, 'user-' || i,
               strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'), '2026-01-01T00:00:00.000Z' from n`.execute(db);
      await sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at)
        select 'cred_' || substr(id, 5), server_id, id, 'openai', 'static', 'active', x'00', created_at, created_at
        from audience_members where server_id = ${tenant.serverId}`.execute(db);
      await sql`analyze`.execute(db);
    } else {
      await sql`insert into audience_members (id, server_id, external_user_id, created_at, updated_at)
        select 'mem_' || i, ${tenant.serverId}, 'user-' || i,
               to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), '2026-01-01T00:00:00.000Z'
        from generate_series(1, ${AUDIENCE}) as i`.execute(db);
      await sql`insert into credentials (id, server_id, member_id, provider, type, status, secret, connected_at, updated_at)
        select 'cred_' || substr(id, 5), server_id, id, 'openai', 'static', 'active', '\\x00'::bytea, created_at, created_at
        from audience_members where server_id = ${tenant.serverId}`.execute(db);
      await sql`analyze audience_members`.execute(db);
      await sql`analyze credentials`.execute(db);
    }
  });
  afterAll(() => t.close());

  async function plan(query: Parameters<typeof memberPageQuery>[2], after: [string, string] | null): Promise<string> {
    const compiled = memberPageQuery(t.ctx.store.db, tenant.serverId, query, after).compile();
    const explain = engine === 'sqlite' ? 'explain query plan ' : 'explain (format text) ';
    const { rows } = await t.ctx.store.db.executeQuery<Record<string, string>>({
      ...compiled,
      sql: explain + compiled.sql,
    });
    return rows.map((row) => row.detail ?? row['QUERY PLAN']).join('\n');
  }

  it('walks the page index in order, with no sort, from the start and from deep in the audience', async () => {
    for (const after of [null, ['2026-01-01T04:00:00.000Z', 'user-14400'] as [string, string]]) {
      const text = await plan({ limit: 20 }, after);
      expect(text).toContain('audience_members_page');
      expect(text).not.toMatch(/TEMP B-TREE|Sort|Seq Scan/i);
    }
  });

  it('keeps the same plan with the provider and prefix filters', async () => {
    const text = await plan({ limit: 20, provider: 'openai', prefix: 'user-1' }, ['2026-01-01T04:00:00.000Z', 'user-14400']);
    expect(text).toContain('audience_members_page');
    expect(text).not.toMatch(/TEMP B-TREE|Sort|Seq Scan on audience_members/i);
  });

  it('answers a page from deep in the audience with the next members in order', async () => {
    const rows = await memberPageQuery(t.ctx.store.db, tenant.serverId, { limit: 3 }, ['2026-01-01T04:00:00.000Z', 'user-14400']).execute();
    // limit + 1 rows: the last one only tells the service that there is a next page.
    expect(rows.map((r) => r.external_user_id)).toEqual(['user-14401', 'user-14402', 'user-14403', 'user-14404']);
  });
});

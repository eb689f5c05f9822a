/**
 * What the Connect page's status answer reads (store/connect-sessions-repository.ts newestPopupFlow;
 * migration 023), on both engines: the newest flow a session's page started in connect.js's popup, as
 * one range of oauth_flows_connect_session read backwards from the session's newest flow, never a scan
 * or a sort, on a table where most flows were started by the API (no session) and the rest belong to
 * many sessions. It is read about once a second for each company page waiting on a severed popup.
 */
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, placeholderBytes, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const ROWS = 20_000;
/** Flows i ≤ API_FLOWS were started by the API; each later one belongs to session (i mod SESSIONS). */
const API_FLOWS = 12_000;
const SESSIONS = 1_000;

describe.each(ENGINES)('the status answer’s read of a session’s newest popup flow on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    const started = await startWithTenant(engine);
    t = started.t;
    const db = t.ctx.store.db;
    const series = numbersUpTo(engine, ROWS);
    const time = (seconds: RawBuilder<unknown>) => secondsAfter2026(engine, seconds);
    // Placeholder verifiers: nothing here opens one. Every third flow of a session was started outside the popup.
    const secret = placeholderBytes(engine);
    await sql`insert into oauth_flows (id, server_id, external_user_id, provider, state_digest, verifier, scopes, status, expires_at, created_at,
        connect_session_id, connect_popup)
      select 'oflow_' || i, ${serverId(started)}, 'user-' || (i % ${sql.lit(SESSIONS)}), case when i % 2 = 0 then 'acme' else 'github' end, 'state-' || i,
        ${secret}, '[]', case when i % 5 = 0 then 'pending' else 'completed' end, ${time(sql`i + 600`)}, ${time(sql`i`)},
        case when i > ${sql.lit(API_FLOWS)} then 'csn_' || (i % ${sql.lit(SESSIONS)}) end,
        case when i > ${sql.lit(API_FLOWS)} then (case when i % 3 = 0 then 0 else 1 end) end
      from (${series}) as s`.execute(db);
    await sql`analyze`.execute(db);
  });
  afterAll(() => t.close());

  const serverId = (started: Awaited<ReturnType<typeof startWithTenant>>) => started.tenant.serverId;
  const repository = () => t.ctx.store.connectSessions;

  it('reads one range of oauth_flows_connect_session backwards, never a scan or a sort', async () => {
    const plan = await queryPlan(t.ctx.store, repository().newestPopupFlowQuery('csn_7'));
    if (engine === 'sqlite') {
      expect(plan).toMatch(/SEARCH oauth_flows USING INDEX oauth_flows_connect_session \(connect_session_id=\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE|SCAN \w+\b(?! USING)/);
    } else {
      expect(plan).toMatch(/Index Scan Backward using oauth_flows_connect_session on oauth_flows/);
      expect(plan.match(/Index Cond: (.*)/)![1]).toContain('connect_session_id =');
      expect(plan).not.toMatch(/Sort|Seq Scan|Bitmap/);
    }
  });

  it('picks the session’s newest flow started in the popup, past a newer one started outside it', async () => {
    // Session csn_998's flows are i = 12998, 13998, …, 19998; the newest, 19998 (i mod 3 = 0), was started outside the popup.
    expect(await repository().newestPopupFlow('csn_998')).toEqual({
      id: 'oflow_18998',
      provider: 'acme',
      status: 'completed',
      error_code: null,
      credential_id: null,
      expires_at: '2026-01-01T05:26:38.000Z',
    });
    // Session csn_7's newest, 19007, is in the popup.
    expect((await repository().newestPopupFlow('csn_7'))?.expires_at).toBe('2026-01-01T05:26:47.000Z');
    expect(await repository().newestPopupFlow('csn_none')).toBeUndefined();
  });
});

/**
 * A revoke and a hosted form completing for the same member at the same moment, on PostgreSQL (on
 * SQLite one writer runs them one after the other). The form's transaction must run wholly before or
 * wholly after the revoke's: the revoke then erases, reports and tells of every credential it
 * removed, the form's new one included, each once. A held row lock (another connection) queues the
 * two transactions behind each other in a known order.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createForm } from '../helpers/form-session.js';
import { connectStatic, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { listedCredential, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const KEY_OLD = 'sk-proj-OLDVALUEabcdefghijklmnopqrstuvw';
const KEY_NEW = 'sk-proj-NEWVALUEabcdefghijklmnopqrstuvw';

describe('a revoke racing a hosted form on postgres', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let all: Subscriber;
  let locker: pg.Client;
  beforeAll(async () => {
    let tenant: Tenant;
    ({ t, tenant, headers } = await startWithTenant('postgres'));
    all = await subscribe(t, tenant.serverId);
    locker = new pg.Client(t.database.url);
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await all.close();
    await t.close();
  });

  /** Resolves once `count` sessions of the database wait on a lock. */
  async function waiters(count: number) {
    for (let tries = 0; tries < 400; tries++) {
      // Statistics are read once per transaction unless cleared, and the locker is inside one.
      await locker.query('select pg_stat_clear_snapshot()');
      const { rows } = await locker.query<{ n: string }>(
        `select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
      );
      if (Number(rows[0]!.n) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`fewer than ${count} sessions ever waited on a lock`);
  }

  it.each(['without', 'with'])('erases and tells of the credential a form stored just before the revoke, %s ?provider=', async (mode) => {
    const user = `u_race_${mode}`;
    await connectStatic(t.app, headers, { externalUserId: user, values: { apiKey: KEY_OLD } });
    const old = await listedCredential(t.app, headers, user, 'openai');
    const form = await createForm(t.app, headers, { externalUserId: user });
    const visit = await openHostedForm(t.app, form.url);

    // Hold the form session's row: the form's POST and the revoke both queue behind it, the form first.
    await locker.query('begin');
    await locker.query('select id from static_form_sessions where id = $1 for update', [form.id]);
    const posted = postHostedForm(t.app, visit, { apiKey: KEY_NEW });
    await waiters(1);
    const revoked = t.app.inject({ method: 'DELETE', url: `/v1/end-users/${user}${mode === 'with' ? '?provider=openai' : ''}`, headers });
    await waiters(2);
    await locker.query('commit');

    expect((await posted).statusCode).toBe(200);
    const answer = await revoked;
    expect(answer.statusCode, answer.body).toBe(200);
    const ids = (answer.json() as { revoked: { id: string }[] }).revoked.map((r) => r.id);
    // The old credential was replaced by the form (its own revoked event); the revoke erased the new one.
    expect(ids).toHaveLength(1);
    expect(ids[0]).not.toBe(old.id);
    expect((await t.app.inject({ method: 'GET', url: `/v1/end-users/${user}`, headers })).statusCode).toBe(mode === 'with' ? 200 : 404);

    const events = (await all.events(user)).map((e) => [e.type, e.data.credential.id, e.data.reason ?? null]);
    expect(events.sort()).toEqual(
      [
        ['credential.connected', old.id, null],
        ['credential.connected', ids[0], null],
        ['credential.revoked', old.id, 'replaced'],
        ['credential.revoked', ids[0], 'revoked'],
      ].sort(),
    );
    const audit = await t.ctx.store.db.selectFrom('audit_events').select(['action', 'target_id']).where('target_id', 'in', [old.id, ids[0]!]).execute();
    expect(audit.filter((a) => a.action === 'credential.revoked').map((a) => a.target_id)).toEqual([ids[0]]);
  });
});

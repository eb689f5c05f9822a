/**
 * The sweeps of tables that only grow (services/retention/sweeps.ts), on both engines: a run as of a TestClock
 * deletes exactly the rows past their retention, in bounded batches; what users meet (a used form
 * link, a rotated-out key) keeps its answer until its row goes. Which node runs them:
 * sweeps-nodes.test.ts.
 *
 * Rows are made by the real services (a form, a flow, an idempotency record, a rotation), then copied
 * with other ids and times: each kind gets rows one second on each side of its boundary.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addSeconds, iso } from '../../src/primitives/clock.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import {
  ENDED_LINK_KEEP_SECONDS,
  ROTATED_KEY_KEEP_SECONDS,
  runSweeps,
  standardSweeps,
  WEBHOOK_HISTORY_KEEP_SECONDS,
} from '../../src/services/retention/sweeps.js';
import { rotateServerKey } from '../../src/services/servers/servers.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, readEndUser } from '../helpers/form-session.js';
import { connectStatic, formPath } from '../helpers/hosted-form.js';
import { keys, type Tenant, type TestApp } from '../helpers/test-app.js';
import { DAY, NOTHING_SWEPT, type SweepRows, startSweepRows } from './sweep-rows.js';

describe.each(ENGINES)('sweeps on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let db: SweepRows['db'];
  let ids: SweepRows['ids'];
  let copy: SweepRows['copy'];
  let copies: SweepRows['copies'];
  let baseRows: SweepRows['baseRows'];
  beforeEach(async () => {
    ({ t, tenant, headers, db, ids, copy, copies, baseRows } = await startSweepRows(engine));
  });
  afterEach(() => t.close());

  it('deletes exactly the rows past their retention, of every kind, and keeps what is still needed', async () => {
    await baseRows();
    const currentKey = (await db().selectFrom('server_keys').select('id').where('expires_at', 'is', null).executeTakeFirstOrThrow()).id as string;
    t.clock.advance(100 * DAY); // every row made above is long past its retention
    const now = t.clock.now();
    const at = (seconds: number) => addSeconds(now, seconds);
    const link = ENDED_LINK_KEEP_SECONDS;
    // [gone, kept, kept…] for each kind: one second past the boundary, one second before it, and live rows.
    const forms = await copies('static_form_sessions', 'expires_at', [at(-link - 1), at(-link + 1), at(60)]);
    const flows = await copies('oauth_flows', 'expires_at', [at(-link - 1), at(-link + 1), at(60)]);
    const connectSessions = await copies('connect_sessions', 'expires_at', [at(-link - 1), at(-link + 1), at(60)]);
    const sessions = await copies('dashboard_sessions', 'expires_at', [at(-1), at(1)]);
    const serverKeys = await copies('server_keys', 'expires_at', [at(-ROTATED_KEY_KEEP_SECONDS - 1), at(-ROTATED_KEY_KEEP_SECONDS + 1), at(3600)]);
    const records = await copies('idempotency_records', 'expires_at', [at(-1), at(1)]);
    const events = await copies('audit_events', 'created_at', [at(-90 * DAY - 1), at(-90 * DAY + 1)]);
    const nonces = await copies('dashboard_form_uses', 'expires_at', [at(-1), at(1)]);
    const attempts = await copies('sign_in_attempts', 'window_ends', [at(-1), at(1)]);
    const windows = await copies('rate_limit_windows', 'window_start', [at(-121), at(-119)]);
    const history = WEBHOOK_HISTORY_KEEP_SECONDS;
    const message = await db().selectFrom('webhook_messages').selectAll().executeTakeFirstOrThrow();
    const messages = [
      await copy('webhook_messages', message, { status: 'delivered', ended_at: iso(at(-history - 1)) }),
      await copy('webhook_messages', message, { status: 'failed', ended_at: iso(at(-history + 1)) }),
    ];
    const webhookAttempts = await copies('webhook_attempts', 'attempted_at', [at(-history - 1), at(-history + 1)]);
    const currentSecret = (await db().selectFrom('webhook_secrets').select('id').where('expires_at', 'is', null).executeTakeFirstOrThrow()).id as string;
    const secrets = await copies('webhook_secrets', 'expires_at', [at(-1), at(1)]);

    // Without a retention configured, audit events are kept forever, even 100 days old.
    const auditBefore = await ids('audit_events');
    const withoutRetention = await runSweeps(t.ctx, standardSweeps({ auditRetentionDays: null }));
    expect(withoutRetention).toEqual({
      static_form_sessions: 2,
      oauth_flows: 2,
      connect_sessions: 2,
      dashboard_sessions: 2,
      server_keys: 2,
      idempotency_records: 2,
      dashboard_form_uses: 2,
      sign_in_attempts: 2,
      rate_limit_windows: 2,
      webhook_messages: 1,
      webhook_attempts: 2,
      webhook_secrets: 2,
    });
    expect(await ids('audit_events')).toEqual(auditBefore);
    expect(await ids('static_form_sessions')).toEqual(forms.slice(1).sort());
    expect(await ids('oauth_flows')).toEqual(flows.slice(1).sort());
    expect(await ids('connect_sessions')).toEqual(connectSessions.slice(1).sort());
    expect(await ids('dashboard_sessions')).toEqual(sessions.slice(1).sort());
    expect(await ids('server_keys')).toEqual([currentKey, ...serverKeys.slice(1)].sort());
    expect(await ids('idempotency_records')).toEqual(records.slice(1).sort());
    expect(await ids('dashboard_form_uses')).toEqual(nonces.slice(1).sort());
    expect(await ids('sign_in_attempts')).toEqual(attempts.slice(1).sort());
    expect(await ids('rate_limit_windows')).toEqual(windows.slice(1).sort());
    // A pending message has no end and is never swept; the attempts go by their own time.
    expect(await ids('webhook_messages')).toEqual([message.id as string, messages[1]!].sort());
    expect(await ids('webhook_attempts')).toEqual(webhookAttempts.slice(1).sort());
    expect(await ids('webhook_secrets')).toEqual([currentSecret, secrets[1]!].sort());

    const withRetention = await runSweeps(t.ctx, standardSweeps({ auditRetentionDays: 90 }));
    expect(withRetention).toEqual({
      ...NOTHING_SWEPT,
      audit_events: auditBefore.length - 1,
    });
    expect(await ids('audit_events')).toEqual([events[1]]);
  });

  it('deletes at most the bound in a run: more stale rows than a run may take are gone after enough runs', async () => {
    await baseRows();
    t.clock.advance(2 * DAY);
    const base = await db().selectFrom('idempotency_records').selectAll().executeTakeFirstOrThrow();
    const stale = Array.from({ length: 1234 }, (_, i) => ({ ...base, idempotency_key: `stale-${i}` }));
    for (let i = 0; i < stale.length; i += 100)
      await db()
        .insertInto('idempotency_records')
        .values(stale.slice(i, i + 100))
        .execute();
    const kept = await copy('idempotency_records', base, { expires_at: iso(addSeconds(t.clock.now(), 1)) });

    const sweeps = standardSweeps({ auditRetentionDays: null }).filter((sweep) => sweep.name === 'idempotency_records');
    const runs: number[] = [];
    for (;;) {
      const report = await runSweeps(t.ctx, sweeps, { rows: 500, batches: 2 });
      runs.push(report!.idempotency_records!);
      if (!runs.at(-1)) break;
    }
    expect(runs).toEqual([1000, 235, 0]); // 1234 copies and the base row, at most 2 × 500 a run
    expect(await ids('idempotency_records')).toEqual([kept]);
  });

  it('keeps a used form link answering 410 and a rotated-out key refused as such until their rows go; the credential stays', async () => {
    await connectStatic(t.app, headers, { externalUserId: 'u_form', values: { apiKey: 'sk-proj-SWEEPSabcdefghijklmnopqrstuvwx' } });
    const form = await createForm(t.app, headers, { externalUserId: 'u_other' });
    const oldHeaders = headers;
    const rotated = await rotateServerKey(t.ctx, tenant.serverId, 60, CLI_ACTOR);
    const newHeaders = keys({ ...tenant, serverKey: rotated.serverKey });
    const sweeps = standardSweeps({ auditRetentionDays: null });
    const problemCode = async (h: Record<string, string>) => (await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: h })).json().code;

    // The form made for u_other expires in 30 minutes; its link is kept a week past that.
    t.clock.advance(1800 + ENDED_LINK_KEEP_SECONDS - 1);
    await runSweeps(t.ctx, sweeps);
    expect((await t.app.inject({ method: 'GET', url: formPath(form.url) })).statusCode).toBe(410);
    t.clock.advance(2);
    await runSweeps(t.ctx, sweeps);
    expect((await t.app.inject({ method: 'GET', url: formPath(form.url) })).statusCode).toBe(404);
    expect(await db().selectFrom('static_form_sessions').select('id').execute()).toEqual([]);
    // The completed form's row is gone too; the credential it made is not.
    const member = await readEndUser(t.app, newHeaders, 'u_form');
    expect(member.status).toBe(200);
    expect(member.body.credentials).toEqual([
      expect.objectContaining({ provider: 'openai', status: 'active', values: { apiKey: 'sk-proj-SWEEPSabcdefghijklmnopqrstuvwx' } }),
    ]);

    // The old server key: refused as rotated out for 30 days past its 60 s of grace, then unknown.
    const keyGone = 60 + ROTATED_KEY_KEEP_SECONDS;
    t.clock.advance(keyGone - 1800 - ENDED_LINK_KEEP_SECONDS - 2);
    await runSweeps(t.ctx, sweeps);
    expect(await problemCode(oldHeaders)).toBe('service_key_revoked');
    t.clock.advance(1);
    await runSweeps(t.ctx, sweeps);
    expect(await problemCode(oldHeaders)).toBe('service_key_invalid');
    expect((await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: newHeaders })).statusCode).toBe(200);
  });
});

/**
 * The Audit page's filters (CONTRACT 9), on both engines: by user, by action, by days, and together;
 * a page of any filter is one range of its index read in order, never a scan or a sort of the trail
 * (so a page costs the same at a million events); the pager keeps the filters and continues without
 * a repeat or a gap; another account's events never appear; a filter our form would not send is
 * refused with one clear message.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/services/users/accounts.js';
import { hashPassword } from '../../src/services/users/passwords.js';
import type { AuditFilter, AuditPosition } from '../../src/store/audit-repository.js';
import { type DashboardClient, signUpUser, userByEmail, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { queryPlan } from '../helpers/query-plans.js';
import { numbersUpTo, secondsAfter2026 } from '../helpers/sql-fill.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const EVENTS = 20_000;
/** Ten minutes apart from 2026-01-01: event i happens at second 600·i. */
const START = Date.UTC(2026, 0, 1);
const timeOf = (i: number) => new Date(START + i * 600_000).toISOString();
const ACTIONS = ['account_key.created', 'account_key.revoked', 'webhook.added', 'server.created'] as const;
/** Event i: its action, and who made it (the owner, the developer, or the CLI, in turn). */
const actionOf = (i: number) => ACTIONS[i % ACTIONS.length]!;
const whoOf = (i: number) => (['owner', 'developer', 'cli'] as const)[i % 3]!;

/** The event numbers a page shows, in its order: each event's detail names it `ev-<i>`. */
const shown = (body: string) => [...visible(body, ' ').matchAll(/\bev-(\d+)\b/g)].map((m) => Number(m[1]));

describe.each(ENGINES)('the Audit page’s filters on %s', (engine) => {
  let t: TestApp;
  let owner: DashboardClient;
  let accountId: string;
  let actors: Record<'owner' | 'developer' | 'cli', string>;

  beforeAll(async () => {
    t = await startTestApp(engine);
    owner = await signUpUser(t.app, { email: 'owner@acme.example' });
    const db = t.ctx.store.db;
    const ownerRow = await userByEmail(db, 'owner@acme.example');
    accountId = ownerRow.account_id;
    await t.ctx.store.accounts.addUser({
      id: 'usr_0000000000000000000000000d01',
      account_id: accountId,
      email: 'dev@acme.example',
      password_hash: await hashPassword('correct horse battery staple'),
      created_at: timeOf(0),
      role: 'developer',
      last_sign_in_at: null,
    });
    actors = { owner: `user:${ownerRow.id}`, developer: 'user:usr_0000000000000000000000000d01', cli: 'cli' };
    const other = await createAccount(t.ctx, { name: 'Other', email: 'other@elsewhere.example' });

    const series = numbersUpTo(engine, EVENTS);
    const time = secondsAfter2026(engine, sql`i * 600`);
    const id = (prefix: string) => (engine === 'sqlite' ? sql`${prefix} || printf('%024x', i)` : sql`${prefix} || lpad(to_hex(i), 24, '0')`);
    const pick = (list: readonly string[]) =>
      sql`case ${sql.join(
        list.map((value, k) => sql`when i % ${list.length} = ${k} then ${value}`),
        sql` `,
      )} end`;
    const detail = sql`'{"label":"ev-' || i || '","url":"ev-' || i || '","name":"ev-' || i || '"}'`;
    // This account's trail, and the same again in another account (ids evt_f…), which no page may show.
    for (const [account, prefix] of [
      [accountId, 'evt_0000'],
      [other.accountId, 'evt_ffff'],
    ] as const) {
      await sql`insert into audit_events (id, account_id, server_id, actor, action, target_id, detail, created_at)
        select ${id(prefix)}, ${account}, null, ${pick([actors.owner, actors.developer, actors.cli])}, ${pick(ACTIONS)}, 'x', ${detail}, ${time}
        from (${series}) as s`.execute(db);
    }
    await sql`analyze`.execute(db);
  }, 120_000);
  afterAll(() => t?.close());

  /** Event numbers of this account matching a filter, newest first. */
  const expected = (keep: (i: number) => boolean) =>
    Array.from({ length: EVENTS }, (_, n) => EVENTS - n)
      .filter(keep)
      .slice(0, 50);

  it('reads each filter’s index in order, from the start and from a position, with no scan or sort', async () => {
    const filters: [AuditFilter, string][] = [
      [{}, 'audit_events_account'],
      [{ actor: 'cli' }, 'audit_events_actor'],
      [{ action: 'webhook.added' }, 'audit_events_action'],
      [{ actor: 'cli', action: 'webhook.added' }, 'audit_events_actor_action'],
      [{ action: 'server.created', since: timeOf(100), until: timeOf(5_000) }, 'audit_events_action'],
    ];
    const position: AuditPosition = { at: timeOf(10_000), id: 'evt_0000000000000000000000002710' };
    for (const [filter, index] of filters) {
      for (const before of [null, position]) {
        const plan = await queryPlan(t.ctx.store, t.ctx.store.audit.pageOfAccountQuery(accountId, filter, before, 51));
        const label = `${JSON.stringify(filter)} ${before ? 'from a position' : 'from the start'}:\n${plan}`;
        if (engine === 'sqlite') expect(plan, label).toMatch(new RegExp(`SEARCH e USING (COVERING )?INDEX ${index} \\(`));
        else expect(plan, label).toMatch(new RegExp(`Index Scan Backward using ${index} on audit_events e`));
        expect(plan, label).not.toMatch(/TEMP B-TREE|Sort|Seq Scan on audit_events|SCAN e\b/);
      }
    }
    // A position bounds the range itself, also beside a day bound on the same side (with both, each
    // page once read from the day on); the export is one statement, read in the index's order.
    const exported = await queryPlan(t.ctx.store, t.ctx.store.audit.exportQuery(accountId, { since: timeOf(10), until: timeOf(15_000) }), { asCursor: true });
    const untilThere = await queryPlan(t.ctx.store, t.ctx.store.audit.pageOfAccountQuery(accountId, { until: timeOf(15_000) }, position, 51));
    if (engine === 'sqlite') {
      expect(exported).toContain('SEARCH e USING INDEX audit_events_account (account_id=? AND created_at>? AND created_at<?)');
      expect(untilThere).toContain('SEARCH e USING INDEX audit_events_account (account_id=? AND (created_at,id)<(?,?))');
    } else {
      expect(exported).toMatch(
        /Index Scan using audit_events_account on audit_events e[^\n]*\n\s+Index Cond: \(\(account_id = .*\) AND \(created_at >= .*\) AND \(created_at < /,
      );
      expect(untilThere).toMatch(
        /Index Scan Backward using audit_events_account on audit_events e[^\n]*\n\s+Index Cond: \(\(account_id = .*\) AND \(ROW\(created_at, id\) < ROW/,
      );
    }
    expect(exported + untilThere).not.toMatch(/TEMP B-TREE|Sort|Seq Scan on audit_events/);
  });

  it('shows one user’s changes, page after page, keeping the filter and never repeating an event', async () => {
    const first = await owner.get(`/dashboard/audit?user=${encodeURIComponent(actors.developer)}`);
    expect(first.statusCode).toBe(200);
    expect(shown(first.body)).toEqual(expected((i) => whoOf(i) === 'developer'));
    const older = /href="([^"]*before=[^"]*)"/.exec(first.body)![1]!.replaceAll('&amp;', '&');
    expect(older).toContain(`user=${encodeURIComponent(actors.developer)}`);
    const second = await owner.get(older);
    const both = [...shown(first.body), ...shown(second.body)];
    expect(both).toEqual(
      Array.from({ length: EVENTS }, (_, n) => EVENTS - n)
        .filter((i) => whoOf(i) === 'developer')
        .slice(0, 100),
    );
    // The way back to the newest events keeps the filter too.
    expect(second.body).toContain(`href="/dashboard/audit?user=${encodeURIComponent(actors.developer)}"`);
  });

  it('filters by action, by days, and by all of them together', async () => {
    const byAction = await owner.get('/dashboard/audit?action=webhook.added');
    expect(shown(byAction.body)).toEqual(expected((i) => actionOf(i) === 'webhook.added'));

    // Events 1 to 143 fall on 2026-01-01 (600 s apart: i·600 < 86,400 for i < 144); 144 to 287 on the 2nd.
    const oneDay = await owner.get('/dashboard/audit?from=2026-01-02&to=2026-01-02');
    expect(shown(oneDay.body)).toEqual(expected((i) => i >= 144 && i <= 287));

    const together = await owner.get(`/dashboard/audit?user=cli&action=server.created&from=2026-01-02&to=2026-01-05`);
    expect(shown(together.body)).toEqual(expected((i) => whoOf(i) === 'cli' && actionOf(i) === 'server.created' && i >= 144 && i < 144 * 5));

    const nothing = await owner.get('/dashboard/audit?from=2030-01-01');
    expect(visible(nothing.body)).toContain('No event matches these filters.');
  });

  it('never shows another account’s events', async () => {
    for (const url of ['/dashboard/audit', '/dashboard/audit?user=cli', '/dashboard/audit?action=server.created&from=2026-01-01']) {
      expect((await owner.get(url)).body).not.toContain('evt_ffff');
    }
    // Their events read the same `ev-<i>` details: were they shown, the numbers would repeat.
    const page = shown((await owner.get('/dashboard/audit')).body);
    expect(new Set(page).size).toBe(page.length);
  });

  it('answers a filter it cannot use with one clear message, and one our form never sends with the 400 page', async () => {
    const cases: [string, number, string][] = [
      ['from=2026-02-30', 422, 'Enter a date that exists, such as 2026-01-31.'],
      ['from=2026-03-02&to=2026-03-01', 422, 'The "To" day must be on or after the "From" day.'],
      ['action=nothing.happened', 422, 'Choose an action from the list.'],
      ['user=somebody', 400, 'This request could not be read.'],
      ['from=yesterday', 400, 'This request could not be read.'],
      ['before=evt_1', 400, 'This request could not be read.'],
    ];
    for (const [query, status, message] of cases) {
      const response = await owner.get(`/dashboard/audit?${query}`);
      expect(response.statusCode, query).toBe(status);
      expect(visible(response.body), query).toContain(message);
    }
  });
});

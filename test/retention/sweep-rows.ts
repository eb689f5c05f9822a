/**
 * The rows the sweep tests work on (sweeps.test.ts, sweeps-nodes.test.ts): a tenant on a fresh app,
 * one row of each swept kind made by the real services (a form, a flow, an idempotency record, a
 * rotation…), and copies of a row with other ids and times.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import { addSeconds, iso } from '../../src/primitives/clock.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { rotateServerKey } from '../../src/services/servers/servers.js';
import { addWebhookEndpoint, rotateWebhookSecret } from '../../src/services/webhooks/webhook-endpoints.js';
import { recordEvent } from '../../src/services/webhooks/webhook-events.js';
import type { Database } from '../../src/store/schema.js';
import type { Engine } from '../../src/store/store.js';
import { createForm } from '../helpers/form-session.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

export type Row = Record<string, unknown>;
export type Table = keyof Database;
export const DAY = 86_400;

/** What a run answers when it finds nothing to delete in any table it sweeps (audit events apart: their retention is optional). */
export const NOTHING_SWEPT = {
  static_form_sessions: 0,
  oauth_flows: 0,
  connect_sessions: 0,
  dashboard_sessions: 0,
  server_keys: 0,
  idempotency_records: 0,
  dashboard_form_uses: 0,
  sign_in_attempts: 0,
  rate_limit_windows: 0,
  webhook_messages: 0,
  webhook_attempts: 0,
  webhook_secrets: 0,
} as const;

/** The column that identifies a row, and the unique columns a copy must change. */
const IDENTITY: Partial<Record<Table, { id: string; unique: string[] }>> = {
  static_form_sessions: { id: 'id', unique: ['token_digest'] },
  oauth_flows: { id: 'id', unique: ['state_digest'] },
  connect_sessions: { id: 'id', unique: ['token_digest'] },
  dashboard_sessions: { id: 'id', unique: ['token_digest'] },
  server_keys: { id: 'id', unique: ['digest'] },
  idempotency_records: { id: 'idempotency_key', unique: [] },
  audit_events: { id: 'id', unique: [] },
  dashboard_form_uses: { id: 'nonce', unique: [] },
  sign_in_attempts: { id: 'email_mac', unique: [] },
  rate_limit_windows: { id: 'key_id', unique: [] },
  webhook_messages: { id: 'id', unique: [] },
  webhook_attempts: { id: 'id', unique: [] },
  webhook_secrets: { id: 'id', unique: [] },
};

export interface SweepRows {
  t: TestApp;
  tenant: Tenant;
  headers: Record<string, string>;
  /** The store's database, untyped: rows are copied whatever their columns. */
  db(): Kysely<Record<string, Row>>;
  /** The identities of every row of `table`, sorted. */
  ids(table: Table): Promise<string[]>;
  /** A copy of `base` in `table` with a new identity and `changes`; its id. */
  copy(table: Table, base: Row, changes: Row): Promise<string>;
  /** Copies of the first row of `table` with `column` at each of `times`; their ids, in order. */
  copies(table: Table, column: string, times: Date[]): Promise<string[]>;
  /** One row of each kind made as users make them, all now (the TestClock's now). */
  baseRows(): Promise<void>;
}

/** A tenant on `engine` whose server has GitHub enabled (for OAuth flows), and the row helpers over its store. */
export async function startSweepRows(engine: Engine): Promise<SweepRows> {
  const { t, tenant, headers } = await startWithTenant(engine);
  await enableProvider(t.ctx, { serverId: tenant.serverId, slug: 'github', clientId: 'Iv1.sweeps', clientSecret: 'sweeps-secret', actor: CLI_ACTOR });
  const db = () => t.ctx.store.db as unknown as Kysely<Record<string, Row>>;

  async function ids(table: Table): Promise<string[]> {
    const id = IDENTITY[table]!.id;
    return (await db().selectFrom(table).select(id).execute()).map((row) => String(row[id])).sort();
  }

  async function copy(table: Table, base: Row, changes: Row): Promise<string> {
    const { id, unique } = IDENTITY[table]!;
    const fresh = `${table}-${randomBytes(8).toString('hex')}`;
    const row: Row = { ...base, [id]: fresh, ...changes };
    for (const column of unique) row[column] = randomBytes(32).toString('hex');
    await db().insertInto(table).values(row).execute();
    return fresh;
  }

  async function copies(table: Table, column: string, times: Date[]): Promise<string[]> {
    const base = await db().selectFrom(table).selectAll().executeTakeFirstOrThrow();
    const made: string[] = [];
    for (const time of times) made.push(await copy(table, base, { [column]: iso(time) }));
    return made;
  }

  async function baseRows() {
    await createForm(t.app, { ...headers, 'idempotency-key': 'base' }, { externalUserId: 'u_base' });
    const flow = await t.app.inject({ method: 'POST', url: '/v1/oauth/github/start', headers, payload: { externalUserId: 'u_base' } });
    expect(flow.statusCode, flow.body).toBe(201);
    const session = await t.app.inject({ method: 'POST', url: '/v1/connect-sessions', headers, payload: { externalUserId: 'u_base' } });
    expect(session.statusCode, session.body).toBe(201);
    const now = t.clock.now();
    await db()
      .insertInto('dashboard_sessions')
      .values({ id: 'ses_base', token_digest: 'base', user_id: tenant.userId, created_at: iso(now), expires_at: iso(addSeconds(now, 3600)) })
      .execute();
    await db()
      .insertInto('dashboard_form_uses')
      .values({ nonce: 'base', used_at: iso(now), expires_at: iso(addSeconds(now, 3600)) })
      .execute();
    await db()
      .insertInto('sign_in_attempts')
      .values({ email_mac: 'base', attempts: 1, window_ends: iso(addSeconds(now, 900)) })
      .execute();
    // The key rotated with an hour of grace: the headers above keep working meanwhile.
    await rotateServerKey(t.ctx, tenant.serverId, 3600, CLI_ACTOR);
    // A webhook endpoint nothing listens on: an event is attempted once (a network error) and stays
    // pending; a rotation leaves a secret in its grace period.
    const { webhookId } = await addWebhookEndpoint(t.ctx, { serverId: tenant.serverId, url: 'http://127.0.0.1:9/hooks', actor: CLI_ACTOR });
    const event = { type: 'connect.failed' as const, serverId: tenant.serverId, at: iso(now), data: { externalUserId: 'u_base', error: 'access_denied' } };
    await t.ctx.store.transaction(() => recordEvent(t.ctx, event));
    await t.webhooks.drain();
    await rotateWebhookSecret(t.ctx, { webhookId, graceSeconds: 3600, actor: CLI_ACTOR });
  }

  return { t, tenant, headers, db, ids, copy, copies, baseRows };
}

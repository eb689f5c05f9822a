/**
 * Changing the audience (CONTRACT 2.7, 2.4, 2.2): revoking erases credential rows and cancels pending
 * forms, a second connection replaces the first, and Idempotency-Key replays the first form session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, readEndUser, requestForm } from '../helpers/form-session.js';
import { connectStatic, formPath, snapshotTables } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { createTenant, keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const openaiKey = (tag: string) => `sk-proj-${tag}-openaiopenaiopenaiopenai`;
const anthropicKey = (tag: string) => `sk-ant-${tag}-anthropicanthropicanthropic`;

describe.each(ENGINES)('revoking and replacing credentials on %s', (engine) => {
  let t: TestApp, a: Tenant, b: Tenant;
  beforeAll(async () => {
    ({ t, tenant: a } = await startWithTenant(engine, {}, { providers: ['openai', 'anthropic'] }));
    b = await createTenant(t.ctx);
  });
  afterAll(() => t.close());

  const connectBoth = async (id: string) => {
    await connectStatic(t.app, keys(a), { externalUserId: id, values: { apiKey: openaiKey(id) } });
    await connectStatic(t.app, keys(a), { provider: 'anthropic', externalUserId: id, values: { apiKey: anthropicKey(id) } });
    const { body } = await readEndUser(t.app, keys(a), id);
    return Object.fromEntries(body.credentials.map((c) => [c.provider, c.id])) as { openai: string; anthropic: string };
  };
  const revoke = (id: string, provider?: string, tenant = a) =>
    t.app.inject({ method: 'DELETE', url: `/v1/end-users/${encodeURIComponent(id)}${provider ? `?provider=${provider}` : ''}`, headers: keys(tenant) });
  const credentialRow = (id: string) => t.ctx.store.db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
  const memberRow = (tenant: Tenant, id: string) =>
    t.ctx.store.db.selectFrom('audience_members').select('id').where('server_id', '=', tenant.serverId).where('external_user_id', '=', id).executeTakeFirst();
  const revokedEvents = (credentialId: string) =>
    t.ctx.store.db.selectFrom('audit_events').selectAll().where('action', '=', 'credential.revoked').where('target_id', '=', credentialId).execute();
  const formStatus = async (url: string) => (await t.app.inject({ method: 'GET', url: formPath(url) })).statusCode;

  it('with provider erases only that credential and keeps the member', async () => {
    const ids = await connectBoth('one');
    t.clock.advance(5);
    const response = await revoke('one', 'anthropic');
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      externalUserId: 'one',
      revoked: [{ id: ids.anthropic, provider: 'anthropic', revokedAt: iso(t.clock.now()), providerRevocation: 'not_supported' }],
    });
    expect(await credentialRow(ids.anthropic)).toBeUndefined();
    expect(await credentialRow(ids.openai)).toBeDefined();
    const { status, body } = await readEndUser(t.app, keys(a), 'one');
    expect(status).toBe(200);
    expect(body.credentials.map((c) => c.provider)).toEqual(['openai']);

    const [event, ...more] = await revokedEvents(ids.anthropic);
    expect(more).toEqual([]);
    expect(event).toMatchObject({ account_id: a.accountId, server_id: a.serverId, actor: `api:${a.accountKeyId}` });
    expect(event!.detail).not.toContain(anthropicKey('one'));
  });

  it('answers credential_not_found, changing nothing, when the member has no credential of that provider', async () => {
    for (const provider of ['anthropic', 'stripe', 'no-such-provider']) {
      const before = await snapshotTables(t.ctx);
      expectProblem(await revoke('one', provider), 404, 'credential_not_found');
      expect(await snapshotTables(t.ctx)).toEqual(before);
    }
  });

  it('without provider erases every credential and the member leaves the audience', async () => {
    const ids = await connectBoth('two');
    const member = await memberRow(a, 'two');
    const response = await revoke('two');
    expect(response.statusCode).toBe(200);
    const body = response.json() as { externalUserId: string; revoked: Record<string, string>[] };
    expect(body.externalUserId).toBe('two');
    expect(body.revoked).toEqual([
      { id: ids.anthropic, provider: 'anthropic', revokedAt: iso(t.clock.now()), providerRevocation: 'not_supported' },
      { id: ids.openai, provider: 'openai', revokedAt: iso(t.clock.now()), providerRevocation: 'not_supported' },
    ]);
    expect(await credentialRow(ids.openai)).toBeUndefined();
    expect(await credentialRow(ids.anthropic)).toBeUndefined();
    expect(await memberRow(a, 'two')).toBeUndefined();
    expect(await revokedEvents(ids.openai)).toHaveLength(1);
    expect(await revokedEvents(ids.anthropic)).toHaveLength(1);
    // The member's leaving is audited too, after its credentials' revocations.
    const removed = await t.ctx.store.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'end_user.removed')
      .where('target_id', '=', member!.id)
      .execute();
    expect(removed.map((e) => [e.actor, JSON.parse(e.detail)])).toEqual([[`api:${a.accountKeyId}`, { externalUserId: 'two', credentials: 2 }]]);

    expectProblem(await t.app.inject({ method: 'GET', url: '/v1/end-users/two', headers: keys(a) }), 404, 'end_user_not_found');
    expectProblem(await revoke('two'), 404, 'end_user_not_found');
    const listed = await t.app.inject({ method: 'GET', url: '/v1/end-users?limit=100', headers: keys(a) });
    expect(listed.json().data.map((m: { externalUserId: string }) => m.externalUserId)).not.toContain('two');
  });

  it("cancels the member's pending forms of the revoked provider only, then all of them", async () => {
    await connectStatic(t.app, keys(a), { externalUserId: 'three', values: { apiKey: openaiKey('three') } });
    const openaiForm = await createForm(t.app, keys(a), { externalUserId: 'three' });
    const anthropicForm = await createForm(t.app, keys(a), { externalUserId: 'three' }, 'anthropic');
    const neighbourForm = await createForm(t.app, keys(a), { externalUserId: 'four' });
    expect(await formStatus(openaiForm.url)).toBe(200);

    expect((await revoke('three', 'openai')).statusCode).toBe(200);
    expect(await formStatus(openaiForm.url)).toBe(410);
    expect(await formStatus(anthropicForm.url)).toBe(200);

    // The member stays with no credential; revoking it entirely now revokes nothing but still cancels.
    const all = await revoke('three');
    expect(all.json()).toEqual({ externalUserId: 'three', revoked: [] });
    expect(await formStatus(anthropicForm.url)).toBe(410);
    expect(await formStatus(neighbourForm.url)).toBe(200);
    const sessions = await t.ctx.store.db
      .selectFrom('static_form_sessions')
      .select(['id', 'status'])
      .where('id', 'in', [openaiForm.id, anthropicForm.id, neighbourForm.id])
      .orderBy('id')
      .execute();
    const status = Object.fromEntries(sessions.map((s) => [s.id, s.status]));
    expect(status).toEqual({ [openaiForm.id]: 'cancelled', [anthropicForm.id]: 'cancelled', [neighbourForm.id]: 'pending' });
  });

  it("cannot reach another server's member", async () => {
    await connectStatic(t.app, keys(b), { externalUserId: 'shared', values: { apiKey: openaiKey('b') } });
    const before = await snapshotTables(t.ctx);
    expectProblem(await revoke('shared'), 404, 'end_user_not_found');
    expectProblem(await revoke('shared', 'openai'), 404, 'end_user_not_found');
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, keys(b), 'shared')).body.credentials).toHaveLength(1);
  });

  it('a second connection of the same provider replaces the first: one credential, the new values', async () => {
    await connectStatic(t.app, keys(a), { externalUserId: 'five', values: { apiKey: openaiKey('first') } });
    const first = (await readEndUser(t.app, keys(a), 'five')).body.credentials[0]!;
    t.clock.advance(1);
    await connectStatic(t.app, keys(a), { externalUserId: 'five', values: { apiKey: openaiKey('second') } });

    const { body } = await readEndUser(t.app, keys(a), 'five');
    expect(body.credentials).toHaveLength(1);
    expect(body.credentials[0]!.values).toEqual({ apiKey: openaiKey('second') });
    expect(body.credentials[0]!.id).not.toBe(first.id);
    const member = await memberRow(a, 'five');
    const rows = await t.ctx.store.db.selectFrom('credentials').select('id').where('member_id', '=', member!.id).execute();
    expect(rows.map((r) => r.id)).toEqual([body.credentials[0]!.id]);
    const replaced = await t.ctx.store.db.selectFrom('audit_events').select('action').where('target_id', '=', first.id).orderBy('created_at').execute();
    expect(replaced.map((e) => e.action)).toEqual(['credential.connected', 'credential.replaced']);
  });
});

describe.each(ENGINES)('Idempotency-Key on POST /v1/credentials/static/{slug}/connect on %s', (engine) => {
  let t: TestApp, a: Tenant, b: Tenant;
  beforeAll(async () => {
    ({ t, tenant: a } = await startWithTenant(engine, {}, { providers: ['openai', 'anthropic'] }));
    b = await createTenant(t.ctx);
  });
  afterAll(() => t.close());

  const post = (key: string, body: Record<string, unknown>, provider = 'openai', tenant = a) =>
    requestForm(t.app, { ...keys(tenant), 'idempotency-key': key }, provider, body);
  const sessionCount = async (externalUserId: string) =>
    (await t.ctx.store.db.selectFrom('static_form_sessions').select('id').where('external_user_id', '=', externalUserId).execute()).length;

  it('replays the identical 201 for the same key and body, creating nothing more', async () => {
    const first = await post('key-1', { externalUserId: 'idem', expiresIn: 600 });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const before = await snapshotTables(t.ctx);
    // The same fields in another order are the same body.
    for (const body of [
      { externalUserId: 'idem', expiresIn: 600 },
      { expiresIn: 600, externalUserId: 'idem' },
    ]) {
      const again = await post('key-1', body);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect(await sessionCount('idem')).toBe(1);
  });

  it('refuses the same key with another body or another provider, changing nothing', async () => {
    const before = await snapshotTables(t.ctx);
    expectProblem(await post('key-1', { externalUserId: 'idem', expiresIn: 601 }), 422, 'idempotency_key_reused');
    expectProblem(await post('key-1', { externalUserId: 'someone-else', expiresIn: 600 }), 422, 'idempotency_key_reused');
    expectProblem(await post('key-1', { externalUserId: 'idem', expiresIn: 600 }, 'anthropic'), 422, 'idempotency_key_reused');
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('keeps no record of a refused request, and keys belong to one server', async () => {
    expectProblem(await post('key-2', { externalUserId: 'idem-2' }, 'stripe'), 422, 'provider_not_enabled');
    const retried = await post('key-2', { externalUserId: 'idem-2' });
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();

    const elsewhere = await post('key-1', { externalUserId: 'idem', expiresIn: 600 }, 'openai', b);
    expect(elsewhere.statusCode).toBe(201);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
  });

  it('creates exactly one session for 10 simultaneous requests with one key', async () => {
    const responses = await Promise.all(Array.from({ length: 10 }, () => post('burst', { externalUserId: 'burst' })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.json().id)).size).toBe(1);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await sessionCount('burst')).toBe(1);
  });

  it('replays for 24 hours, then the key is free again', async () => {
    const first = await post('key-day', { externalUserId: 'day' });
    t.clock.advance(24 * 3600 - 1);
    const late = await post('key-day', { externalUserId: 'day' });
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect(late.body).toBe(first.body);
    expectProblem(await post('key-day', { externalUserId: 'day-other' }), 422, 'idempotency_key_reused');

    t.clock.advance(2);
    const fresh = await post('key-day', { externalUserId: 'day-other' });
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.json().id).not.toBe(first.json().id);
    const replay = await post('key-day', { externalUserId: 'day-other' });
    expect(replay.body).toBe(fresh.body);
    expect(await sessionCount('day')).toBe(1);
    expect(await sessionCount('day-other')).toBe(1);
  });
});

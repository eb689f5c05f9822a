/**
 * A credential's lastUsedAt and lastCheck (CONTRACT 8.4) on both engines: null for a credential never
 * used or never checked; written by a read that hands out its secrets (not by a write-only server's
 * withheld read, nor by a check), at most once a minute, by a guarded UPDATE that a reader holding an
 * older row cannot undo, with no statement at all within the minute; and shown the same in the list,
 * the read, the webhook bodies and the dashboard's Audience tab.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { noteUse } from '../../src/services/credentials/usage.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { createServer, setSecretsReadable } from '../../src/services/servers/servers.js';
import { newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm } from '../helpers/form-session.js';
import { openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { addKeyApiProvider, KEY_API, type ProviderApiStandIn, startProviderApi } from '../helpers/provider-api-stand-in.js';
import { keys, startSecondNode, startTestApp, type TestApp } from '../helpers/test-app.js';
import { listedCredential, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const API_KEY = 'kk_live_usage_0123456789';

describe.each(ENGINES)('usage of credentials on %s', (engine) => {
  let t: TestApp;
  let api: ProviderApiStandIn;
  let hooks: Subscriber;
  let serverId: string;
  let headers: Record<string, string>;
  let dashboard: Awaited<ReturnType<typeof newSignedInUser>>['client'];

  beforeEach(async () => {
    t = await startTestApp(engine);
    api = await startProviderApi();
    // A tenant whose user signed up through the dashboard, so that its Audience tab can be read.
    const user = await newSignedInUser(t.app, t.ctx.store.db, 'Usage');
    dashboard = user.client;
    const server = await createServer(t.ctx, { accountId: user.accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    serverId = server.serverId;
    const { key } = await createAccountKey(t.ctx, { accountId: user.accountId, label: 'backend', actor: CLI_ACTOR });
    headers = keys({ accountKey: key, serverKey: server.serverKey });
    await addKeyApiProvider(t.ctx, serverId, api);
    hooks = await subscribe(t, serverId);
  });
  afterEach(async () => {
    await hooks.close();
    await api.close();
    await t.close();
  });

  async function connect(externalUserId: string) {
    const form = await createForm(t.app, headers, { externalUserId }, KEY_API.slug);
    const posted = await postHostedForm(t.app, await openHostedForm(t.app, form.url), { apiKey: API_KEY, account: 'acct-1' });
    expect(posted.statusCode).toBe(200);
  }
  const readMember = async (externalUserId: string) => {
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(externalUserId)}`, headers });
    expect(response.statusCode).toBe(200);
    return response.json().credentials[0];
  };
  const listed = (externalUserId: string) => listedCredential(t.app, headers, externalUserId, KEY_API.slug);
  const now = () => t.clock.now().toISOString();

  it('is null for a credential never used, and a read with secrets writes it once a minute, not on every read', async () => {
    await connect('u_reader');
    const connectedAt = now();
    expect(await listed('u_reader')).toMatchObject({ lastUsedAt: null, lastCheck: { at: connectedAt, outcome: 'valid' } });

    t.clock.advance(5);
    const firstUse = now();
    const writes = vi.spyOn(t.ctx.store.credentials, 'recordUse');
    const first = await readMember('u_reader');
    expect(first).toMatchObject({ values: { apiKey: API_KEY, account: 'acct-1' }, lastUsedAt: firstUse, lastCheck: { at: connectedAt, outcome: 'valid' } });
    expect(await listed('u_reader')).toMatchObject({ lastUsedAt: firstUse });
    expect(writes).toHaveBeenCalledTimes(1);

    // Within the minute: the row read already shows a recent use, so no statement is sent at all.
    t.clock.advance(59);
    expect(await readMember('u_reader')).toMatchObject({ lastUsedAt: firstUse });
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await listed('u_reader')).toMatchObject({ lastUsedAt: firstUse });

    // A minute after the last write: the next read writes again.
    t.clock.advance(1);
    expect(await readMember('u_reader')).toMatchObject({ lastUsedAt: now() });
    expect(await listed('u_reader')).toMatchObject({ lastUsedAt: now() });
    expect(writes).toHaveBeenCalledTimes(2);
    writes.mockRestore();
  });

  it('is written by a guarded UPDATE: a node holding an older row cannot move it within the minute, nor back', async () => {
    await connect('u_race');
    const stale = await t.ctx.store.db.selectFrom('credentials').select(['id', 'last_used_at']).executeTakeFirstOrThrow();
    expect(stale.last_used_at).toBeNull();
    const second = await startSecondNode(t);
    try {
      t.clock.advance(10);
      second.clock.advance(10);
      const usedAt = now();
      await readMember('u_race');
      // The other node read the row before that use: its noteUse finds the guard shut, and answers
      // the use that shut it, read from the database once.
      second.clock.advance(30);
      const reads = vi.spyOn(second.ctx.store.db, 'selectFrom');
      expect(await noteUse(second.ctx, stale)).toBe(usedAt);
      expect(await listed('u_race')).toMatchObject({ lastUsedAt: usedAt });
      expect(reads).toHaveBeenCalledTimes(1);
      // Within that minute the node remembers it: its stale row sends nothing more.
      second.clock.advance(10);
      expect(await noteUse(second.ctx, stale)).toBe(usedAt);
      expect(reads).toHaveBeenCalledTimes(1);
      reads.mockRestore();
      // A minute after that use, the same stale row writes (its own time, never an older one).
      second.clock.advance(20);
      await noteUse(second.ctx, stale);
      expect(await listed('u_race')).toMatchObject({ lastUsedAt: second.clock.now().toISOString() });
    } finally {
      await second.close();
    }
  });

  it('records uses asked together in one statement, each credential under its guard', async () => {
    for (const externalUserId of ['u_one', 'u_two', 'u_three']) await connect(externalUserId);
    t.clock.advance(5);
    const earlier = now();
    await readMember('u_three');
    t.clock.advance(30);
    // Rows as a node that read them before any use holds them: the uses of u_one and u_two go in one
    // statement, which writes them; u_three's use within the minute was written by this node, which
    // answers it and sends nothing.
    const rows = await t.ctx.store.db.selectFrom('credentials').select(['id', 'external_user_id']).orderBy('external_user_id').execute();
    expect(rows.map((row) => row.external_user_id)).toEqual(['u_one', 'u_three', 'u_two']);
    const answered = await Promise.all(rows.map((row) => noteUse(t.ctx, { id: row.id, last_used_at: null })));
    expect(answered).toEqual([now(), earlier, now()]);
    expect(await listed('u_one')).toMatchObject({ lastUsedAt: now() });
    expect(await listed('u_two')).toMatchObject({ lastUsedAt: now() });
    expect(await listed('u_three')).toMatchObject({ lastUsedAt: earlier });
  });

  it('records the uses asked in one turn at the latest of their times, sixteen credentials to a statement', async () => {
    for (const externalUserId of ['u_early', 'u_late', 'u_next']) await connect(externalUserId);
    const ids = new Map(
      (await t.ctx.store.db.selectFrom('credentials').select(['id', 'external_user_id']).execute()).map((row) => [row.external_user_id, row.id]),
    );
    const at = (seconds: number) => new Date(Date.parse('2031-01-01T00:00:00.000Z') + seconds * 1000).toISOString();
    const use = (id: string, seconds: number) => t.ctx.store.credentials.recordUse(id, at(seconds), at(seconds - 60));
    const absent = Array.from({ length: 14 }, (_, i) => `cred_absent_${i}`);
    // The first statement: u_early at 1 s, u_late at 3 s (asked twice: the second goes in with the
    // first's time), fourteen ids of no credential at 0 s. The second: u_next at 2 s, one more at 4 s.
    const answers = await Promise.all([
      use(ids.get('u_early')!, 1),
      use(ids.get('u_late')!, 3),
      use(ids.get('u_late')!, 9),
      ...absent.map((id) => use(id, 0)),
      use(ids.get('u_next')!, 2),
      use('cred_absent_last', 4),
    ]);
    expect(answers).toEqual([...Array(17).fill(at(3)), at(4), at(4)]);
    expect(await listed('u_early')).toMatchObject({ lastUsedAt: at(3) });
    expect(await listed('u_late')).toMatchObject({ lastUsedAt: at(3) });
    expect(await listed('u_next')).toMatchObject({ lastUsedAt: at(4) });
    // Asked from inside a transaction, a use is refused, and only that one: the others asked in the
    // same turn are written outside it.
    const [inside, outside] = await Promise.allSettled([t.ctx.store.transaction(() => use(ids.get('u_early')!, 100)), use(ids.get('u_next')!, 100)]);
    expect(inside).toMatchObject({ status: 'rejected', reason: { message: 'recordUse was called inside a transaction' } });
    expect(outside).toEqual({ status: 'fulfilled', value: at(100) });
    expect(await listed('u_next')).toMatchObject({ lastUsedAt: at(100) });
    expect(await listed('u_early')).toMatchObject({ lastUsedAt: at(3) });
  });

  it('is not written by a write-only server’s withheld read, nor by a check', async () => {
    await connect('u_unused');
    await setSecretsReadable(t.ctx, serverId, false, CLI_ACTOR);
    t.clock.advance(120);
    const withheld = await readMember('u_unused');
    expect(withheld).toMatchObject({ secretsWithheld: true, lastUsedAt: null });
    expect(withheld).not.toHaveProperty('values');
    const checked = await t.app.inject({ method: 'POST', url: `/v1/end-users/u_unused/verify?provider=${KEY_API.slug}`, headers });
    expect(checked.json()).toMatchObject({ outcome: 'valid', at: now() });
    expect(await listed('u_unused')).toMatchObject({ lastUsedAt: null, lastCheck: { at: now(), outcome: 'valid' } });
  });

  it('is the same in the list, the read, the webhook bodies and the Audience tab', async () => {
    await connect('u_shown');
    const checkedAt = now();
    t.clock.advance(90);
    const usedAt = now();
    const read = await readMember('u_shown');
    const inList = await listed('u_shown');
    expect(inList).toEqual({
      id: read.id,
      provider: KEY_API.slug,
      type: 'static',
      status: 'active',
      connectedAt: checkedAt,
      updatedAt: checkedAt,
      lastUsedAt: usedAt,
      lastCheck: { at: checkedAt, outcome: 'valid' },
    });
    expect(read).toMatchObject(inList);

    // A webhook carries them as they stood at the change: revoking the credential now.
    t.clock.advance(1);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_shown', headers })).statusCode).toBe(200);
    const events = await hooks.events('u_shown');
    const connected = events.find((e) => e.type === 'credential.connected');
    const revoked = events.find((e) => e.type === 'credential.revoked');
    expect(connected!.data.credential).toMatchObject({ lastUsedAt: null, lastCheck: { at: checkedAt, outcome: 'valid' } });
    expect(revoked!.data.credential).toMatchObject({ status: 'revoked', lastUsedAt: usedAt, lastCheck: { at: checkedAt, outcome: 'valid' } });

    // The Audience tab: another member, used and checked, and one never used.
    await connect('u_page');
    const pageCheckedAt = now();
    t.clock.advance(60);
    await readMember('u_page');
    const pageUsedAt = now();
    await connect('u_page_unused');
    const page = await dashboard.get(`/dashboard/servers/${serverId}/audience`);
    expect(page.statusCode).toBe(200);
    const text = visible(page.body, ' ');
    const minute = (at: string) => `${at.slice(0, 10)} ${at.slice(11, 16)} UTC`;
    expect(text).toContain('Last used Last check');
    expect(text).toContain(`Key API Static Active ${minute(pageCheckedAt)} ${minute(pageCheckedAt)} ${minute(pageUsedAt)} Valid, ${minute(pageCheckedAt)}`);
    expect(text).toMatch(/u_page_unused .* Key API Static Active \S+ \S+ UTC \S+ \S+ UTC — Valid, /);
  });
});

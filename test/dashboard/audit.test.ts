/**
 * The "Audit" page over app.inject: who did what, newest first, named as a reader knows them (a
 * user's email, "CLI", an API key's label, "End user"), 50 a page with "Older events" that neither
 * skips nor repeats, and nothing from another account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { recordAudit } from '../../src/services/audit/audit.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey, listAccountKeys, revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer, rotateServerKey, setServerMode } from '../../src/services/servers/servers.js';
import { csrfOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const KEYS = '/dashboard/developer/api-keys';
/** How the Audit page tells the sign-in of every test's user (app.inject's browser, from 127.0.0.1). */
const SIGNED_IN = 'Signed in on Unknown device from 127.0.0.1';

/** The rows of the audit table, each as its visible text. */
function rows(body: string): string[] {
  const tbody = /<tbody>([\s\S]*)<\/tbody>/.exec(body)?.[1] ?? '';
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => visible(m[1]!).trim());
}

describe.each(ENGINES)('the Audit page on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  async function newUser() {
    return newSignedInUser(t.app, t.ctx.store.db, 'Audit');
  }

  it("lists a key generated and revoked on the dashboard with the user's email, newest first, and hides them from another account", async () => {
    const { client, email, accountId } = await newUser();
    // The user's sign-in is the account's first event (CONTRACT 9).
    const first = await client.get('/dashboard/audit');
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('<a href="/dashboard/audit" aria-current="page">Audit</a>');
    expect(rows(first.body)).toEqual([expect.stringMatching(new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC ${email} ${SIGNED_IN} —$`))]);
    expect(first.body).not.toContain('Older events');

    expect((await client.submit(KEYS, KEYS, { label: 'Deploy bot', environment: 'production' })).statusCode).toBe(200);
    const [key] = await listAccountKeys(t.ctx, accountId);
    t.clock.advance(5);
    const confirm = await client.get(`${KEYS}/${key!.id}/revoke`);
    expect((await client.post(`${KEYS}/${key!.id}/revoke`, { csrf: csrfOf(confirm.body) })).statusCode).toBe(303);

    const page = await client.get('/dashboard/audit');
    expect(page.body).toContain('<th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Server</th>');
    const [revoked, generated, signedIn, ...rest] = rows(page.body);
    expect(signedIn).toContain(`${email} ${SIGNED_IN}`);
    expect(rest).toEqual([]);
    expect(revoked).toMatch(
      new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC ${email} Revoked account API key Deploy bot \\(service_acct_…[0-9a-f]{4}\\) —$`),
    );
    expect(generated).toMatch(
      new RegExp(`^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC ${email} Generated account API key Deploy bot \\(service_acct_…[0-9a-f]{4}\\) —$`),
    );
    expect(page.body).not.toMatch(/service_acct_[0-9a-f]{8}/);

    const other = await newUser();
    const theirs = await other.client.get('/dashboard/audit');
    expect(theirs.statusCode).toBe(200);
    expect(theirs.body).not.toContain('Deploy bot');
    expect(theirs.body).not.toContain(email);
    expect(rows(theirs.body)).toEqual([expect.stringContaining(`${other.email} ${SIGNED_IN}`)]);
  });

  it('names the CLI, an API key, an end user and a former user, and says what happened to servers, providers and credentials', async () => {
    const { client, email, accountId } = await newUser();
    const { serverId } = await createServer(t.ctx, { accountId, name: 'Checkout', mode: 'business', actor: CLI_ACTOR });
    t.clock.advance(1);
    await setServerMode(t.ctx, serverId, 'personal', CLI_ACTOR);
    t.clock.advance(1);
    await rotateServerKey(t.ctx, serverId, 3600, CLI_ACTOR);
    t.clock.advance(1);
    await enableProvider(t.ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    // Events of the same instant are ordered by id, whose random tail decides within one millisecond.
    t.clock.advance(1);
    const { keyId } = await createAccountKey(t.ctx, { accountId, label: 'Ops backend', actor: CLI_ACTOR });
    const hint = (await listAccountKeys(t.ctx, accountId))[0]!.hint;
    // The API and the hosted pages write these actors; recorded here directly to check how they are named.
    t.clock.advance(1);
    const at = iso(t.clock.now());
    await recordAudit(t.ctx, {
      accountId,
      serverId,
      actor: 'end_user:cfs_1',
      action: 'credential.connected',
      targetId: 'cred_1',
      detail: { provider: 'openai', externalUserId: 'user-<42>', type: 'static' },
      at,
    });
    t.clock.advance(1);
    await recordAudit(t.ctx, {
      accountId,
      serverId,
      actor: `api:${keyId}`,
      action: 'credential.revoked',
      targetId: 'cred_1',
      detail: { provider: 'openai', externalUserId: 'user-<42>', type: 'static' },
      at: iso(t.clock.now()),
    });
    // A dashboard user the account no longer has (or never had): named without a lookup elsewhere.
    t.clock.advance(1);
    await recordAudit(t.ctx, {
      accountId,
      serverId,
      actor: 'user:usr_gone',
      action: 'credential.revoked',
      targetId: 'cred_1',
      detail: { provider: 'openai', externalUserId: 'user-<42>', type: 'static' },
      at: iso(t.clock.now()),
    });

    const page = await client.get('/dashboard/audit');
    const texts = rows(page.body).map((r) => r.replace(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC /, ''));
    expect(texts).toEqual([
      'A former user Revoked the OpenAI credential of end user user-<42> Checkout',
      `API key Ops backend (${hint}) Revoked the OpenAI credential of end user user-<42> Checkout`,
      'End user Connected the OpenAI credential of end user user-<42> Checkout',
      expect.stringMatching(/^CLI Generated account API key Ops backend \(service_acct_…[0-9a-f]{4}\) —$/),
      'CLI Enabled provider OpenAI Checkout',
      expect.stringMatching(/^CLI Rotated the server key of Checkout \(service_srv_…[0-9a-f]{4}\); the old key stayed valid for 1 hour Checkout$/),
      'CLI Changed mode to personal (was business) Checkout',
      expect.stringMatching(/^CLI Created server Checkout \(business mode\) Checkout$/),
      `${email} ${SIGNED_IN} —`,
    ]);
    expect(page.body).toContain('user-&lt;42&gt;');
    expect(page.body).toContain(`<a href="/dashboard/servers/${serverId}">Checkout</a>`);
  });

  it('names a user written as member:usr_… (the spelling before migration 012, read defensively) by their email', async () => {
    const { client, email, userId, accountId } = await newUser();
    const { serverId } = await createServer(t.ctx, { accountId, name: 'Upgrade', mode: 'business', actor: CLI_ACTOR });
    t.clock.advance(1);
    await recordAudit(t.ctx, {
      accountId,
      serverId,
      actor: `member:${userId}`,
      action: 'credential.revoked',
      targetId: 'cred_1',
      detail: { provider: 'openai', externalUserId: 'u_1', type: 'static' },
      at: iso(t.clock.now()),
    });
    const [newest] = rows((await client.get('/dashboard/audit')).body).map((r) => r.replace(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC /, ''));
    expect(newest).toBe(`${email} Revoked the OpenAI credential of end user u_1 Upgrade`);
  });

  it('pages 50 events at a time through "Older events", none skipped or repeated, even in the same millisecond', async () => {
    const { client, accountId } = await newUser();
    // 61 events: the user's sign-in, then 30 keys made and revoked, in groups sharing one timestamp, so the id breaks the ties.
    for (let i = 0; i < 30; i++) {
      if (i % 4 === 0) t.clock.advance(1);
      const { keyId } = await createAccountKey(t.ctx, { accountId, label: `batch ${String(i).padStart(2, '0')}`, actor: CLI_ACTOR });
      await revokeAccountKey(t.ctx, keyId, CLI_ACTOR);
    }
    const ids = (await t.ctx.store.db.selectFrom('audit_events').select(['id', 'created_at']).where('account_id', '=', accountId).execute())
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1))
      .map((e) => e.id);
    expect(ids).toHaveLength(61);

    const first = await client.get('/dashboard/audit');
    expect(rows(first.body)).toHaveLength(50);
    const older = /<a href="(\/dashboard\/audit\?before=[^"]+)">Older events<\/a>/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(older).toBeDefined();
    const second = await client.get(older!);
    expect(second.statusCode).toBe(200);
    expect(rows(second.body)).toHaveLength(11);
    expect(second.body).not.toContain('Older events');
    expect(second.body).toContain('<a href="/dashboard/audit">Newest events</a>');

    // The rows shown, in order, are exactly the account's events newest first (each row names its key).
    const shown = [...rows(first.body), ...rows(second.body)].map((r) => /(Generated|Revoked) account API key (batch \d\d)|Signed in/.exec(r)![0]);
    const expected = await Promise.all(
      ids.map(async (id) => {
        const e = await t.ctx.store.db.selectFrom('audit_events').select(['action', 'detail']).where('id', '=', id).executeTakeFirstOrThrow();
        if (e.action === 'user.signed_in') return 'Signed in';
        return `${e.action === 'account_key.created' ? 'Generated' : 'Revoked'} account API key ${(JSON.parse(e.detail) as { label: string }).label}`;
      }),
    );
    expect(shown).toEqual(expected);
  });

  it('refuses a cursor it did not make', async () => {
    const { client } = await newUser();
    for (const before of ['nonsense', "2026-01-01T00:00:00.000Z~evt_x' OR 1=1"]) {
      const response = await client.get(`/dashboard/audit?before=${encodeURIComponent(before)}`);
      expect(response.statusCode).toBe(400);
      expect(visible(response.body)).toContain('This request could not be read.');
    }
  });
});

/**
 * A server's Audience tab over app.inject: end users connected through the API are listed with their
 * credentials' provider, type, status and dates but never a secret, 20 a page; "Revoke" goes through a
 * confirmation and erases the credential (asking an OAuth provider to revoke its tokens); a
 * personal-mode server has no audience; CSRF and other accounts' users change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer, type ServerMode } from '../../src/services/servers/servers.js';
import { type AuthorizationServer, startAuthorizationServer } from '../helpers/authorization-server.js';
import { csrfOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic, snapshotTables } from '../helpers/hosted-form.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';

const OPENAI_KEY = 'sk-proj-audienceSecretValue0123456789';
const EMPTY = 'No end users yet. Your backend adds them with POST /v1/oauth/{provider}/start or POST /v1/credentials/static/{provider}/connect.';

/** The href of the link with this text, unescaped. */
function linkTo(body: string, text: string): string | null {
  const match = new RegExp(`<a href="([^"]+)">${text}</a>`).exec(body);
  return match ? match[1]!.replace(/&amp;/g, '&') : null;
}

describe.each(ENGINES)('a server’s Audience tab on %s', (engine) => {
  let t: TestApp;
  let as: AuthorizationServer;
  beforeAll(async () => {
    t = await startTestApp(engine);
    as = await startAuthorizationServer({ redirectUri: `${t.ctx.publicUrl}/oauth/callback` });
  });
  afterAll(async () => {
    await as.close();
    await t.close();
  });

  /** A new account with its signed-in user, a server with OpenAI enabled, and an account key made by the services. */
  async function newUser(mode: ServerMode = 'business') {
    const { client, userId, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Audience');
    const { serverId, serverKey } = await createServer(t.ctx, { accountId, name: 'Production', mode, actor: CLI_ACTOR });
    await enableProvider(t.ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    const { key } = await createAccountKey(t.ctx, { accountId, label: 'backend', actor: CLI_ACTOR });
    const page = `/dashboard/servers/${serverId}/audience`;
    return { client, userId, serverId, page, headers: keys({ accountKey: key, serverKey }) };
  }
  const readEndUser = (headers: Record<string, string>, id: string) => t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(id)}`, headers });

  it('says a personal-mode server has no audience and links to its Overview', async () => {
    const { client, page, serverId } = await newUser('personal');
    const response = await client.get(page);
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain(`<a href="${page}" aria-current="page">Audience</a>`);
    expect(visible(response.body, ' ')).toContain(
      'This server is in personal mode, so it has no audience: only a business-mode server keeps credentials for the end users of your product. Change its mode on the Overview tab .',
    );
    expect(response.body).toContain(`<a href="/dashboard/servers/${serverId}">Change its mode on the Overview tab</a>`);
    expect(response.body).not.toContain('External user id');
    expect((await client.get(`${page}/revoke?externalUserId=alice&provider=openai`)).statusCode).toBe(404);
  });

  it('lists end users with provider, type, status and dates, never a secret, and filters them', async () => {
    const { client, page, headers } = await newUser();
    const empty = await client.get(page);
    expect(empty.statusCode).toBe(200);
    expect(empty.headers['content-security-policy']).toContain("script-src 'self'");
    expect(visible(empty.body, ' ')).toContain(EMPTY);

    await connectStatic(t.app, headers, { externalUserId: 'alice', values: { apiKey: OPENAI_KEY, organizationId: 'org-audience01' } });
    await connectStatic(t.app, headers, { externalUserId: 'bob', values: { apiKey: OPENAI_KEY } });
    await t.ctx.store.db
      .updateTable('credentials')
      .set({ status: 'needs_reauth' })
      .where('provider', '=', 'openai')
      .where('member_id', 'in', t.ctx.store.db.selectFrom('audience_members').select('id').where('external_user_id', '=', 'bob'))
      .execute();
    const listed = await client.get(page);
    const text = visible(listed.body, ' ');
    expect(text).toContain('External user id Added Updated Provider Type Status Connected Credential updated Last used Last check Actions');
    expect(text).toMatch(/alice \d{4}-\d\d-\d\d \d\d:\d\d UTC \d{4}-\S+ \d\d:\d\d UTC OpenAI Static Active \d{4}-/);
    expect(text).toMatch(/bob \d{4}-\S+ \d\d:\d\d UTC \d{4}-\S+ \d\d:\d\d UTC OpenAI Static Needs re-authorisation \d{4}-/);
    expect(listed.body).toContain('aria-label="Revoke the OpenAI credential of alice">Revoke</button>');
    expect(listed.body).not.toContain(OPENAI_KEY);
    expect(listed.body).not.toContain('org-audience01');
    expect(text).not.toContain(EMPTY);

    const byPrefix = visible((await client.get(`${page}?provider=&prefix=ali`)).body, ' ');
    expect(byPrefix).toContain('alice');
    expect(byPrefix).not.toContain('bob');
    // The provider filter keeps end users with an active credential of it: bob's needs re-authorisation.
    const byProvider = visible((await client.get(`${page}?provider=openai&prefix=`)).body, ' ');
    expect(byProvider).toContain('alice');
    expect(byProvider).not.toContain('bob');
    const none = await client.get(`${page}?prefix=zed`);
    expect(visible(none.body, ' ')).toContain('No end users match this filter. Clear the filter to see them all.');
  });

  it('shows 20 end users a page with a "Next page" link carrying the cursor', async () => {
    const { client, page, headers } = await newUser();
    for (let i = 0; i <= 20; i++) {
      await connectStatic(t.app, headers, { externalUserId: `user-${String(i).padStart(2, '0')}`, values: { apiKey: OPENAI_KEY } });
    }
    const first = await client.get(page);
    expect(first.body).toContain('<code>user-19</code>');
    expect(first.body).not.toContain('<code>user-20</code>');
    expect(linkTo(first.body, 'First page')).toBeNull();
    const next = linkTo(first.body, 'Next page');
    expect(next).toMatch(new RegExp(`^${page}\\?cursor=`));
    const second = await client.get(next!);
    expect(second.statusCode).toBe(200);
    expect(second.body).toContain('<code>user-20</code>');
    expect(second.body).not.toContain('<code>user-00</code>');
    expect(linkTo(second.body, 'Next page')).toBeNull();
    expect(linkTo(second.body, 'First page')).toBe(page);
  });

  it('revokes a static credential through the confirmation; the audit trail names the user', async () => {
    const { client, page, headers, userId } = await newUser();
    await connectStatic(t.app, headers, { externalUserId: 'alice', values: { apiKey: OPENAI_KEY } });
    const listed = await client.get(page);
    expect(listed.body).toContain(`<form method="get" action="${page}/revoke">`);
    const confirm = await client.get(`${page}/revoke?externalUserId=alice&provider=openai`);
    expect(confirm.statusCode).toBe(200);
    // A static credential: its values are erased here, and nothing is asked of the provider.
    expect(visible(confirm.body, ' ')).toContain(
      'Revoke the OpenAI credential of alice? Keyward erases the stored values. Nothing is sent to OpenAI: the values stay valid there until they are revoked at OpenAI.',
    );
    expect(confirm.body).not.toContain('asks the provider');
    // The page's title is its one heading.
    expect(confirm.body.match(/<h\d[^>]*>Revoke credential<\/h\d>/g)).toEqual(['<h1>Revoke credential</h1>']);
    expect(confirm.body).toContain(`<a href="${page}">Cancel</a>`);
    expect(confirm.body).toContain('<button type="submit" class="danger">Revoke</button>');

    const revoked = await client.post(`${page}/revoke`, { csrf: csrfOf(confirm.body), externalUserId: 'alice', provider: 'openai' });
    expect(revoked.statusCode).toBe(303);
    expect(revoked.headers.location).toBe(`${page}?notice=credential-revoked&revocation=not_supported`);
    const after = await client.get(revoked.headers.location!);
    expect(after.body).toContain(
      '<p class="notice" role="status">Credential revoked. Keyward erased it; this provider offers no way to revoke tokens, so nothing more was sent to it.</p>',
    );
    expect(visible(after.body, ' ')).toMatch(/alice \d{4}-\S+ \d\d:\d\d UTC \d{4}-\S+ \d\d:\d\d UTC No credentials/);
    expect(after.body).not.toContain('Revoke the OpenAI credential of alice');
    // Revoking one credential keeps the end user (with none left), as DELETE /v1/end-users/{id}?provider= does.
    const read = await readEndUser(headers, 'alice');
    expect(read.statusCode).toBe(200);
    expect(read.json().credentials).toEqual([]);
    const audit = await t.ctx.store.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'credential.revoked')
      .where('actor', '=', `user:${userId}`)
      .execute();
    expect(audit).toHaveLength(1);
    expect((await client.get(`${page}/revoke?externalUserId=alice&provider=openai`)).statusCode).toBe(404);
  });

  it('revokes an OAuth credential and says the provider confirmed its tokens are revoked', async () => {
    const { client, serverId, page, headers } = await newUser();
    const providers = `/dashboard/servers/${serverId}/providers`;
    const added = await client.submit(providers, `${providers}/custom-oauth`, {
      oauthSlug: 'acme',
      oauthName: 'Acme',
      authorizationUrl: as.authorizationUrl,
      tokenUrl: as.tokenUrl,
      revocationUrl: as.revocationUrl,
      oauthClientId: as.clients.basic.id,
      oauthClientSecret: as.clients.basic.secret,
      oauthScopes: 'api:read',
      tokenAuth: 'client_secret_basic',
    });
    expect(added.statusCode).toBe(303);
    const start = await t.app.inject({ method: 'POST', url: '/v1/oauth/acme/start', headers, payload: { externalUserId: 'carol' } });
    expect(start.statusCode).toBe(201);
    const back = new URL(await as.approve(start.json().authorizationUrl));
    expect((await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` })).statusCode).toBe(200);
    const token: string = (await readEndUser(headers, 'carol')).json().credentials[0].accessToken;
    expect(await as.isActive(token)).toBe(true);

    const listed = await client.get(page);
    expect(visible(listed.body, ' ')).toMatch(/carol .* Acme OAuth Active \d{4}-/);
    expect(listed.body).not.toContain(token);
    expect(listed.body).not.toContain(as.clients.basic.secret);
    const confirm = await client.get(`${page}/revoke?externalUserId=carol&provider=acme`);
    expect(visible(confirm.body, ' ')).toContain(
      'Revoke the Acme credential of carol? Keyward erases its tokens and, where Acme offers a way, asks it to revoke them.',
    );
    expect(confirm.body.match(/<h\d[^>]*>Revoke credential<\/h\d>/g)).toEqual(['<h1>Revoke credential</h1>']);
    const revoked = await client.post(`${page}/revoke`, { csrf: csrfOf(confirm.body), externalUserId: 'carol', provider: 'acme' });
    expect(revoked.headers.location).toBe(`${page}?notice=credential-revoked&revocation=succeeded`);
    expect((await client.get(revoked.headers.location!)).body).toContain(
      '<p class="notice" role="status">Credential revoked. Keyward erased it and the provider confirmed that its tokens are revoked.</p>',
    );
    expect(await as.isActive(token)).toBe(false);
  });

  it('removes an end user without credentials through a confirmation, cancelling their pending forms, audited', async () => {
    const { client, page, headers, userId } = await newUser();
    await connectStatic(t.app, headers, { externalUserId: 'dora', values: { apiKey: OPENAI_KEY } });
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/dora?provider=openai', headers })).statusCode).toBe(200);
    const pending = await t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers, payload: { externalUserId: 'dora' } });
    expect(pending.statusCode).toBe(201);

    const listed = await client.get(page);
    expect(visible(listed.body, ' ')).toMatch(/dora .* No credentials/);
    expect(listed.body).toContain(`<form method="get" action="${page}/remove">`);
    expect(listed.body).toContain('aria-label="Remove end user dora">Remove</button>');
    const confirm = await client.get(`${page}/remove?externalUserId=dora`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body.match(/<h\d[^>]*>Remove end user<\/h\d>/g)).toEqual(['<h1>Remove end user</h1>']);
    expect(visible(confirm.body, ' ')).toContain(
      'Remove dora from the audience of Production? They have no credentials. Keyward deletes the end user and cancels their pending connection links; nothing is sent to any provider.',
    );
    expect(confirm.body).toContain(`<a href="${page}">Cancel</a>`);

    const before = await snapshotTables(t.ctx);
    expect((await client.post(`${page}/remove`, { externalUserId: 'dora' })).statusCode).toBe(403);
    expect(await snapshotTables(t.ctx)).toEqual(before);
    const removed = await client.post(`${page}/remove`, { csrf: csrfOf(confirm.body), externalUserId: 'dora' });
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(`${page}?notice=member-removed`);
    const after = await client.get(removed.headers.location!);
    expect(after.body).toContain('<p class="notice" role="status">End user removed. Their pending connection links were cancelled.</p>');
    expect(after.body).not.toContain('<code>dora</code>');
    // The same removal as DELETE /v1/end-users/dora: gone from the API, its pending form cancelled.
    expect((await readEndUser(headers, 'dora')).statusCode).toBe(404);
    const form = await t.ctx.store.db.selectFrom('static_form_sessions').select('status').where('id', '=', pending.json().id).executeTakeFirstOrThrow();
    expect(form.status).toBe('cancelled');
    const audit = await t.ctx.store.db
      .selectFrom('audit_events')
      .selectAll()
      .where('action', '=', 'end_user.removed')
      .where('actor', '=', `user:${userId}`)
      .execute();
    expect(audit.map((e) => JSON.parse(e.detail))).toEqual([{ externalUserId: 'dora', credentials: 0 }]);
    expect(visible((await client.get('/dashboard/audit')).body, ' ')).toContain('Removed end user dora from the audience');
    expect((await client.get(`${page}/remove?externalUserId=dora`)).statusCode).toBe(404);
    expect((await client.post(`${page}/remove`, { csrf: csrfOf(confirm.body), externalUserId: 'dora' })).statusCode).toBe(404);
  });

  it('removes no end user who has a credential, and no one of another account', async () => {
    const owner = await newUser();
    await connectStatic(t.app, owner.headers, { externalUserId: 'erin', values: { apiKey: OPENAI_KEY } });
    const listed = await owner.client.get(owner.page);
    expect(listed.body).not.toContain('Remove end user erin');
    const asked = await owner.client.get(`${owner.page}/remove?externalUserId=erin`);
    expect(asked.statusCode).toBe(303);
    expect(asked.headers.location).toBe(`${owner.page}?notice=member-has-credentials`);
    expect(visible((await owner.client.get(asked.headers.location!)).body, ' ')).toContain(
      'That end user has a credential now, so it was not removed. Revoke its credentials first.',
    );
    const before = await snapshotTables(t.ctx);
    const csrf = csrfOf(listed.body);
    const posted = await owner.client.post(`${owner.page}/remove`, { csrf, externalUserId: 'erin' });
    expect(posted.headers.location).toBe(`${owner.page}?notice=member-has-credentials`);
    expect((await owner.client.post(`${owner.page}/remove`, { csrf, externalUserId: '' })).statusCode).toBe(404);
    expect((await owner.client.post(`${owner.page}/remove`, { csrf, externalUserId: 'nobody' })).statusCode).toBe(404);
    expect(await snapshotTables(t.ctx)).toEqual(before);

    const other = await newUser();
    await t.app.inject({ method: 'DELETE', url: '/v1/end-users/erin?provider=openai', headers: owner.headers });
    const otherCsrf = csrfOf((await other.client.get(other.page)).body);
    expect((await other.client.get(`${owner.page}/remove?externalUserId=erin`)).statusCode).toBe(404);
    expect((await other.client.post(`${owner.page}/remove`, { csrf: otherCsrf, externalUserId: 'erin' })).statusCode).toBe(404);
    expect((await readEndUser(owner.headers, 'erin')).statusCode).toBe(200);
  });

  it('shows only fixed notice texts, never the query', async () => {
    const { client, page } = await newUser();
    const forged = await client.get(`${page}?notice=credential-revoked&revocation=%3Cb%3Eowned%3C%2Fb%3E`);
    expect(forged.body).toContain('<p class="notice" role="status">Credential revoked.</p>');
    expect(forged.body).not.toContain('owned');
    expect((await client.get(`${page}?notice=hello`)).body).not.toContain('class="notice"');
  });

  it('refuses a revoke without CSRF (403), without a provider or of an unknown credential (404), changing nothing', async () => {
    const { client, page, headers } = await newUser();
    await connectStatic(t.app, headers, { externalUserId: 'alice', values: { apiKey: OPENAI_KEY } });
    const before = await snapshotTables(t.ctx);
    const missing = await client.post(`${page}/revoke`, { externalUserId: 'alice', provider: 'openai' });
    expect(missing.statusCode).toBe(403);
    expect((await client.post(`${page}/revoke`, { csrf: 'A'.repeat(43), externalUserId: 'alice', provider: 'openai' })).statusCode).toBe(403);
    const csrf = csrfOf((await client.get(page)).body);
    // Without a provider the service would erase every credential of the end user: the page never asks it to.
    expect((await client.post(`${page}/revoke`, { csrf, externalUserId: 'alice', provider: '' })).statusCode).toBe(404);
    expect((await client.post(`${page}/revoke`, { csrf, externalUserId: 'alice' })).statusCode).toBe(404);
    expect((await client.post(`${page}/revoke`, { csrf, externalUserId: 'nobody', provider: 'openai' })).statusCode).toBe(404);
    expect((await client.get(`${page}/revoke?externalUserId=alice&provider=github`)).statusCode).toBe(404);
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(headers, 'alice')).json().credentials).toHaveLength(1);
  });

  it("gives another account's user a 404 for every Audience URL and lets them revoke nothing", async () => {
    const owner = await newUser();
    await connectStatic(t.app, owner.headers, { externalUserId: 'alice', values: { apiKey: OPENAI_KEY } });
    const other = await newUser();
    const before = await snapshotTables(t.ctx);
    const seen = await other.client.get(owner.page);
    expect(seen.statusCode).toBe(404);
    expect(seen.body).not.toContain('alice');
    expect((await other.client.get(`${owner.page}/revoke?externalUserId=alice&provider=openai`)).statusCode).toBe(404);
    const csrf = csrfOf((await other.client.get(other.page)).body);
    expect((await other.client.post(`${owner.page}/revoke`, { csrf, externalUserId: 'alice', provider: 'openai' })).statusCode).toBe(404);
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(owner.headers, 'alice')).json().credentials).toHaveLength(1);
  });
});

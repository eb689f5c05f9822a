/**
 * Connect sessions (CONTRACT 10) on both engines, over HTTP: POST /v1/connect-sessions (what it
 * answers and stores, Idempotency-Key, every bad input changing nothing), then the Connect page as a
 * browser drives it: unknown and expired links saying nothing of whose, each provider's state, a
 * static provider's values checked at a stand-in of its API before they are stored, Disconnect behind
 * a confirmation (credential.revoked verified with the standardwebhooks package), the redirect URI,
 * and the OAuth flow it starts through a real authorization server (oidc-provider), bound to the
 * browser that started it: the callback in a browser without its cookie is a 400 page and leaves the
 * flow pending; the same consent in the right browser then completes it and returns to the page.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession, pageData, pagePath, pageText, providerItem, requestSession } from '../helpers/connect-page.js';
import { DashboardClient, hiddenFieldsOf } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { APP_REDIRECT, type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { addKeyApiProvider, KEY_API, type ProviderApiStandIn, startProviderApi } from '../helpers/provider-api-stand-in.js';
import { eventTimestamp, listedCredential, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const GOOD_KEY = 'kk_live_good_0123456789';
const REFUSED_KEY = 'kk_live_revoked_0123456789';
const OPENAI_KEY = 'sk-proj-ConnectPage0123456789abcdef';

describe.each(ENGINES)('connect sessions on %s', (engine) => {
  let o: OAuthTenant;
  let api: ProviderApiStandIn;
  let hooks: Subscriber;
  let h: Record<string, string>;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    h = o.headers;
    api = await startProviderApi();
    api.answer = (request) => (request.headers.authorization === `Bearer ${REFUSED_KEY}` ? 401 : 200);
    await addKeyApiProvider(o.t.ctx, o.tenant.serverId, api);
    hooks = await subscribe(o.t, o.tenant.serverId);
  });
  afterAll(async () => {
    await hooks.close();
    await api.close();
    await o.close();
  });

  const uid = (name: string) => `${name}_${randomBytes(3).toString('hex')}`;
  const member = (externalUserId: string) => o.t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(externalUserId)}`, headers: h });

  describe('POST /v1/connect-sessions', () => {
    it('answers 201 with the session, a 256-bit URL of the Connect page and its expiry, makes the member, and audits it', async () => {
      const externalUserId = uid('u_create');
      const response = await requestSession(o.t.app, h, { externalUserId });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['createdAt', 'expiresAt', 'externalUserId', 'id', 'url']);
      expect(body.id).toMatch(/^csn_[0-9a-f]{28}$/);
      expect(body.externalUserId).toBe(externalUserId);
      const url = new URL(body.url);
      expect(url.origin).toBe('http://keyward.test');
      const token = /^\/connect\/s\/([^/]+)$/.exec(url.pathname)?.[1] ?? '';
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
      expect(body.createdAt).toBe(o.t.clock.now().toISOString());
      expect(Date.parse(body.expiresAt) - Date.parse(body.createdAt)).toBe(1800 * 1000);

      // Only the token's digest is kept.
      const rows = JSON.stringify(await snapshotTables(o.t.ctx));
      expect(rows).not.toContain(token);
      const row = await o.t.ctx.store.db.selectFrom('connect_sessions').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ external_user_id: externalUserId, providers: null, redirect_uri: null, allowed_origins: '[]', connected_at: null });

      const read = await member(externalUserId);
      expect(read.statusCode).toBe(200);
      expect(read.json().credentials).toEqual([]);
      const audit = await o.t.ctx.store.db.selectFrom('audit_events').selectAll().where('target_id', '=', body.id).execute();
      expect(audit).toEqual([expect.objectContaining({ action: 'connect_session.created', actor: `api:${o.tenant.accountKeyId}` })]);
      expect(JSON.parse(audit[0]!.detail)).toEqual({ externalUserId, providers: null, expiresAt: body.expiresAt });
    });

    it('takes the providers, redirect URI, origins, a lifetime from 60 s to 4 hours, and the end user', async () => {
      const body = {
        externalUserId: uid('u_full'),
        providers: ['acme', 'openai'],
        redirectUri: APP_REDIRECT,
        allowedOrigins: ['https://app.example', 'http://localhost:5173', 'https://app.example:8443'],
        expiresIn: 14400,
        endUser: { displayName: 'Ada Lovelace', email: 'ada@example.test' },
      };
      const created = await createSession(o.t.app, h, body);
      expect(Date.parse(created.expiresAt) - Date.parse(created.createdAt)).toBe(14400 * 1000);
      const row = await o.t.ctx.store.db.selectFrom('connect_sessions').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.providers!)).toEqual(['acme', 'openai']);
      expect(JSON.parse(row.allowed_origins)).toEqual(body.allowedOrigins);
      expect(row.redirect_uri).toBe(APP_REDIRECT);
      const short = await createSession(o.t.app, h, { externalUserId: body.externalUserId, expiresIn: 60 });
      expect(Date.parse(short.expiresAt) - Date.parse(short.createdAt)).toBe(60 * 1000);
      expect(short.url).not.toBe(created.url);
    });

    it('replays the first answer for the same Idempotency-Key and body, and refuses the key with another body', async () => {
      const externalUserId = uid('u_idem');
      const key = `idem-${externalUserId}`;
      const first = await requestSession(o.t.app, h, { externalUserId }, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const again = await requestSession(o.t.app, h, { externalUserId }, { 'idempotency-key': key });
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(first.json());
      const rows = await o.t.ctx.store.db.selectFrom('connect_sessions').select('id').where('external_user_id', '=', externalUserId).execute();
      expect(rows).toHaveLength(1);
      expectProblem(await requestSession(o.t.app, h, { externalUserId, expiresIn: 60 }, { 'idempotency-key': key }), 422, 'idempotency_key_reused');
    });

    const refusals: [string, Record<string, unknown>, number, string, string?][] = [
      ['an unknown provider', { providers: ['no-such-provider'] }, 404, 'provider_not_found'],
      ['a provider not enabled on the server', { providers: ['openai', 'github'] }, 422, 'provider_not_enabled'],
      ['a redirect URI not allowed', { redirectUri: 'https://evil.example/back' }, 400, 'redirect_uri_not_allowed'],
      ['an empty provider list', { providers: [] }, 400, 'validation_failed', '/body/providers'],
      ['a provider slug that is not one', { providers: ['Not A Slug'] }, 400, 'validation_failed', '/body/providers/0'],
      ['expiresIn under 60', { expiresIn: 59 }, 400, 'validation_failed', '/body/expiresIn'],
      ['expiresIn over 14400', { expiresIn: 14401 }, 400, 'validation_failed', '/body/expiresIn'],
      ['expiresIn not an integer', { expiresIn: 90.5 }, 400, 'validation_failed', '/body/expiresIn'],
      ['an unknown field', { scopes: ['x'] }, 400, 'validation_failed'],
      ['an unknown field of endUser', { endUser: { name: 'Ada' } }, 400, 'validation_failed'],
      ['an end user email that is not one', { endUser: { email: 'not an email' } }, 400, 'validation_failed', '/body/endUser/email'],
      ['an end user name over 200 characters', { endUser: { displayName: 'n'.repeat(201) } }, 400, 'validation_failed', '/body/endUser/displayName'],
      ['more than 10 origins', { allowedOrigins: Array.from({ length: 11 }, (_, i) => `https://app${i}.example`) }, 400, 'validation_failed'],
    ];
    it.each(refusals)('refuses %s with %i %s and changes nothing', async (_name, extra, status, code, path) => {
      const externalUserId = uid('u_bad');
      const before = await snapshotTables(o.t.ctx);
      expectProblem(await requestSession(o.t.app, h, { externalUserId, ...extra }), status, code as never, path);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
      expect((await member(externalUserId)).statusCode).toBe(404);
    });

    const badOrigins = [
      'https://app.example/',
      'https://app.example/path',
      'https://app.example?x=1',
      'http://app.example',
      'http://127.0.0.1:3000',
      'http://localhost',
      'https://APP.example',
      'https://app.example:443',
      'https://user@app.example',
      'ftp://app.example',
      '*',
      'app.example',
    ];
    it.each(badOrigins)('refuses the allowed origin %j, saying where and what an origin is', async (origin) => {
      const before = await snapshotTables(o.t.ctx);
      const problem = expectProblem(
        await requestSession(o.t.app, h, { externalUserId: uid('u_origin'), allowedOrigins: ['https://ok.example', origin] }),
        400,
        'validation_failed',
        '/body/allowedOrigins/1',
      );
      expect(problem.errors![0]!.message).toMatch(/^allowedOrigins\[1\] must (be an origin written as scheme:\/\/host\[:port\]|use https:\/\/)/);
      // What was refused is not repeated back (only the rule, with its own example).
      if (origin.includes('://')) expect(problem.detail).not.toContain(origin);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
    });

    it.each([
      ['a control character', 'u\u0007bell'],
      ['a lone surrogate', 'u\ud800x'],
      ['256 characters', 'u'.repeat(256)],
      ['an empty id', ''],
    ])('refuses an externalUserId with %s', async (_name, externalUserId) => {
      const before = await snapshotTables(o.t.ctx);
      expectProblem(await requestSession(o.t.app, h, { externalUserId }), 400, 'validation_failed', '/body/externalUserId');
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
    });
  });

  describe('the Connect page', () => {
    it('answers an unknown token 404 and an expired one 410, to every route, saying nothing of whose it was', async () => {
      const externalUserId = uid('u_secret_name');
      const session = await createSession(o.t.app, h, {
        externalUserId,
        redirectUri: APP_REDIRECT,
        allowedOrigins: ['https://secret-origin.example'],
        endUser: { displayName: 'Hidden Person' },
      });
      const path = pagePath(session);
      const routes = (base: string) => [
        { method: 'GET' as const, url: base },
        { method: 'GET' as const, url: `${base}/done` },
        { method: 'GET' as const, url: `${base}/disconnect/openai` },
        { method: 'POST' as const, url: `${base}/connect/openai` },
        { method: 'POST' as const, url: `${base}/disconnect/openai` },
      ];
      const anonymous = (response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number) => {
        expect(response.statusCode).toBe(status);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(String(response.headers['content-security-policy'])).not.toContain('script-src');
        for (const secret of [externalUserId, 'Hidden Person', 'secret-origin', 'app.example', 'OpenAI', 'Acme', session.id])
          expect(response.body).not.toContain(secret);
      };
      for (const token of [randomBytes(32).toString('base64url'), 'not-a-token', 'A'.repeat(44)]) {
        for (const route of routes(`/connect/s/${token}`))
          anonymous(await o.t.app.inject({ ...route, payload: route.method === 'POST' ? {} : undefined }), 404);
      }
      o.t.clock.advance(1799);
      expect((await o.t.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
      o.t.clock.advance(1);
      const before = await snapshotTables(o.t.ctx);
      for (const route of routes(path)) {
        const response = await o.t.app.inject({ ...route, payload: route.method === 'POST' ? {} : undefined });
        anonymous(response, 410);
        expect(pageText(response.body)).toContain('This link has expired');
      }
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
    });

    it('greets the end user by name and shows each offered provider with its state, under the hosted form headers', async () => {
      const externalUserId = uid('u_page');
      const session = await createSession(o.t.app, h, {
        externalUserId,
        providers: ['acme', 'openai'],
        allowedOrigins: ['https://app.example'],
        endUser: { displayName: 'Ada <Lovelace>' },
      });
      const browser = new DashboardClient(o.t.app);
      const page = await browser.get(pagePath(session));
      expect(page.statusCode).toBe(200);
      expect(page.headers['cache-control']).toBe('no-store');
      expect(page.headers['referrer-policy']).toBe('no-referrer');
      expect(page.headers['x-frame-options']).toBe('DENY');
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toMatch(/default-src 'none'/);
      expect(csp).toMatch(/script-src 'self'/);
      expect(csp).not.toContain('unsafe-inline');
      // The nonce cookie: HttpOnly, SameSite=Lax (it must ride along with the provider's redirect), on every path.
      expect(String(page.headers['set-cookie'])).toMatch(/^keyward_connect=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
      // Escaped: the name is text, never markup.
      expect(page.body).toContain('Connecting as <strong>Ada &lt;Lovelace&gt;</strong>');
      expect(page.body).not.toContain(externalUserId);
      expect(pageText(providerItem(page.body, 'acme')!)).toBe('Acme Not connected Connect');
      expect(pageText(providerItem(page.body, 'openai')!)).toBe('OpenAI Not connected API key Organization ID (optional) Connect');
      expect(providerItem(page.body, 'openai')).toMatch(/<input id="field-openai-apiKey" name="apiKey" type="password"/);
      // Only the offered providers: keyapi is enabled on the server, but not in the session's list.
      expect(providerItem(page.body, KEY_API.slug)).toBeNull();
      expect(pageData(page.body)).toEqual({ origins: ['https://app.example'], events: [], popup: false });
      expect(page.body).toContain('<script src="/assets/connect-page.js" defer></script>');

      // Every provider enabled on the server, read when the page is, where the session named none; an id without a name is shown as it is.
      const all = await createSession(o.t.app, h, { externalUserId: uid('u_all') });
      const allPage = await browser.get(pagePath(all));
      for (const slug of ['acme', 'openai', KEY_API.slug]) expect(providerItem(allPage.body, slug)).not.toBeNull();
      expect(pageText(allPage.body)).toContain(`Connecting as ${all.externalUserId}`);
    });

    it('checks a static provider’s values at its API and stores them, refusing what the provider refuses', async () => {
      const externalUserId = uid('u_static');
      const session = await createSession(o.t.app, h, { externalUserId, providers: [KEY_API.slug, 'openai'] });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const page = await browser.get(path);
      const action = `${path}/connect/${KEY_API.slug}`;
      const fields = hiddenFieldsOf(page.body, action);
      expect(Object.keys(fields).sort()).toEqual(['csrf', 'popup']);

      // A missing field: 422, its message beside it, nothing sent to the provider or stored.
      const before = await snapshotTables(o.t.ctx);
      const missing = await browser.post(action, { ...fields, apiKey: GOOD_KEY, account: '' });
      expect(missing.statusCode).toBe(422);
      expect(missing.body).toContain(`<p class="error" id="field-${KEY_API.slug}-account-error">Account is required.</p>`);
      expect(api.requests).toHaveLength(0);
      // Refused by the provider: 422, the contract's sentence, the non-secret value kept, the secret never sent back.
      const refused = await browser.post(action, { ...fields, apiKey: REFUSED_KEY, account: 'acct-keep' });
      expect(refused.statusCode).toBe(422);
      expect(pageText(refused.body)).toContain('Key API refused these credentials (HTTP 401). Check them and try again.');
      expect(refused.body).toMatch(/<input id="field-keyapi-account"[^>]*value="acct-keep"/);
      expect(refused.body).not.toContain(REFUSED_KEY);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);

      // Accepted: stored, checked valid, shown connected, told to connect.js, sent as credential.connected with the session's id.
      const stored = await browser.post(action, { ...fields, apiKey: ` ${GOOD_KEY}\n`, account: 'acct-1' });
      expect(stored.statusCode).toBe(200);
      expect(pageText(stored.body)).toContain('Key API connected.');
      expect(pageText(providerItem(stored.body, KEY_API.slug)!)).toBe('Key API Connected Disconnect');
      const credential = await listedCredential(o.t.app, h, externalUserId, KEY_API.slug);
      expect(credential).toMatchObject({ type: 'static', status: 'active', lastCheck: { outcome: 'valid' } });
      expect(pageData(stored.body).events).toEqual([{ type: 'connected', provider: KEY_API.slug, credentialId: credential.id }]);
      expect((await member(externalUserId)).json().credentials[0].values).toEqual({ apiKey: GOOD_KEY, account: 'acct-1' });
      const events = await hooks.events(externalUserId);
      expect(events).toEqual([expect.objectContaining({ type: 'credential.connected', data: expect.objectContaining({ sessionId: session.id, credential }) })]);
      const row = await o.t.ctx.store.db.selectFrom('connect_sessions').selectAll().where('id', '=', session.id).executeTakeFirstOrThrow();
      expect(row.connected_at).toBe(o.t.clock.now().toISOString());

      // The link stays usable: another provider on the same page, any number of times.
      const again = await browser.post(`${path}/connect/openai`, { ...fields, apiKey: OPENAI_KEY });
      expect(again.statusCode).toBe(200);
      expect(pageText(providerItem(again.body, 'openai')!)).toBe('OpenAI Connected Disconnect');
    });

    it('refuses a POST without this browser’s CSRF token, and a provider the session does not offer', async () => {
      const externalUserId = uid('u_csrf');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['openai'] });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const fields = hiddenFieldsOf((await browser.get(path)).body, `${path}/connect/openai`);
      const before = await snapshotTables(o.t.ctx);
      const stranger = new DashboardClient(o.t.app);
      await stranger.get(path);
      expect((await stranger.post(`${path}/connect/openai`, { ...fields, apiKey: OPENAI_KEY })).statusCode).toBe(403);
      expect((await new DashboardClient(o.t.app).post(`${path}/connect/openai`, { ...fields, apiKey: OPENAI_KEY })).statusCode).toBe(403);
      expect((await browser.post(`${path}/connect/openai`, { ...fields, csrf: 'x', apiKey: OPENAI_KEY })).statusCode).toBe(403);
      const notOffered = await browser.post(`${path}/connect/${KEY_API.slug}`, { ...fields, apiKey: GOOD_KEY, account: 'a' });
      expect(notOffered.statusCode).toBe(404);
      expect(pageText(notOffered.body)).toContain('That provider is not offered on this page.');
      expect((await browser.get(`${path}/disconnect/acme`)).statusCode).toBe(404);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
    });

    it('disconnects behind a confirmation: the 2.7 revocation, audited, sent as credential.revoked', async () => {
      const externalUserId = uid('u_disconnect');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['openai'] });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const fields = hiddenFieldsOf((await browser.get(path)).body, `${path}/connect/openai`);
      expect((await browser.post(`${path}/connect/openai`, { ...fields, apiKey: OPENAI_KEY })).statusCode).toBe(200);
      await hooks.events(externalUserId);

      const confirm = await browser.get(`${path}/disconnect/openai`);
      expect(confirm.statusCode).toBe(200);
      expect(pageText(confirm.body)).toContain('Disconnect OpenAI?');
      // Showing the confirmation changed nothing.
      expect((await member(externalUserId)).json().credentials).toHaveLength(1);
      const credential = await listedCredential(o.t.app, h, externalUserId, 'openai');
      o.t.clock.advance(1);
      const done = await browser.post(`${path}/disconnect/openai`, hiddenFieldsOf(confirm.body, `${path}/disconnect/openai`));
      expect(done.statusCode).toBe(200);
      expect(pageText(done.body)).toContain('OpenAI disconnected.');
      expect(pageText(providerItem(done.body, 'openai')!)).toMatch(/^OpenAI Not connected/);
      expect(pageData(done.body).events).toEqual([{ type: 'disconnected', provider: 'openai', credentialId: credential.id }]);
      expect((await member(externalUserId)).json().credentials).toEqual([]);

      const revoked = (await hooks.events(externalUserId)).filter((e) => e.type === 'credential.revoked');
      const at = o.t.clock.now();
      expect(revoked).toEqual([
        {
          messageId: expect.stringMatching(/^msg_/),
          type: 'credential.revoked',
          timestamp: eventTimestamp(at),
          data: expect.objectContaining({
            serverId: o.tenant.serverId,
            externalUserId,
            credential: { ...credential, status: 'revoked', revokedAt: at.toISOString() },
            reason: 'revoked',
            providerRevocation: 'not_supported',
          }),
        },
      ]);
      const audit = await o.t.ctx.store.db
        .selectFrom('audit_events')
        .selectAll()
        .where('target_id', '=', credential.id)
        .where('action', '=', 'credential.revoked')
        .execute();
      expect(audit).toEqual([expect.objectContaining({ actor: `end_user:${session.id}` })]);

      // A second POST (a reload) finds nothing to revoke and says so.
      const twice = await browser.post(`${path}/disconnect/openai`, hiddenFieldsOf(confirm.body, `${path}/disconnect/openai`));
      expect(twice.statusCode).toBe(200);
      expect(pageText(twice.body)).toContain('OpenAI is not connected.');
    });

    it('ends at the redirect URI after a connection, and on "Done", unless the page runs in the popup', async () => {
      const externalUserId = uid('u_redirect');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['openai'], redirectUri: APP_REDIRECT });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const page = await browser.get(path);
      // The CSP lets the page's forms end at the app's origin.
      expect(String(page.headers['content-security-policy'])).toContain("form-action 'self' https://app.example;");
      const done = new URL(/<a class="button secondary" href="([^"]+)" data-keyward-done>Done<\/a>/.exec(page.body)![1]!.replace(/&amp;/g, '&'));
      expect(`${done.origin}${done.pathname}`).toBe(APP_REDIRECT);
      expect(Object.fromEntries(done.searchParams)).toEqual({ status: 'done', sessionId: session.id });

      const fields = hiddenFieldsOf(page.body, `${path}/connect/openai`);
      const posted = await browser.post(`${path}/connect/openai`, { ...fields, apiKey: OPENAI_KEY });
      expect(posted.statusCode).toBe(303);
      const landed = new URL(String(posted.headers.location));
      expect(`${landed.origin}${landed.pathname}`).toBe(APP_REDIRECT);
      expect(Object.fromEntries(landed.searchParams)).toEqual({ status: 'success', sessionId: session.id, provider: 'openai' });

      // In connect.js's popup the page stays, and tells the opener instead.
      const disconnected = await browser.post(`${path}/disconnect/openai`, fields);
      expect(disconnected.statusCode, disconnected.body).toBeLessThan(400);
      expect((await member(externalUserId)).json().credentials).toEqual([]);
      const inPopup = await browser.post(`${path}/connect/openai`, { ...fields, popup: '1', apiKey: OPENAI_KEY });
      expect(inPopup.statusCode).toBe(200);
      expect(pageData(inPopup.body)).toMatchObject({ popup: true, events: [{ type: 'connected', provider: 'openai' }] });

      // Without a redirect URI, "Done" is the page's own.
      const plain = await createSession(o.t.app, h, { externalUserId });
      const plainPage = await browser.get(pagePath(plain));
      expect(plainPage.body).toContain(`href="${pagePath(plain)}/done" data-keyward-done>Done</a>`);
      expect(pageText((await browser.get(`${pagePath(plain)}/done`)).body)).toContain('All set');
    });

    it('binds its OAuth flow to the browser that started it: elsewhere a 400 page and the flow still pending, then completed in that browser', async () => {
      const externalUserId = uid('u_oauth');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['acme'], allowedOrigins: ['https://app.example'] });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const page = await browser.get(path);
      const started = await browser.post(`${path}/connect/acme`, hiddenFieldsOf(page.body, `${path}/connect/acme`));
      expect(started.statusCode).toBe(200);
      // On by the Refresh header (or the link): a redirect after a form's POST would be held to the page's form-action.
      const refresh = String(started.headers.refresh);
      expect(refresh).toMatch(/^0;url=/);
      const authorizationUrl = refresh.slice('0;url='.length);
      expect(authorizationUrl.startsWith(o.as.authorizationUrl)).toBe(true);
      expect(pageText(started.body)).toContain('Continue to Acme');
      const flow = await o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('connect_session_id', '=', session.id).executeTakeFirstOrThrow();
      expect(flow).toMatchObject({ status: 'pending', external_user_id: externalUserId, redirect_uri: null, connect_popup: 0 });
      expect(flow.browser_binding).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(flow)).not.toContain(browser.cookies.get('keyward_connect'));
      const back = await o.as.approve(authorizationUrl);

      // The consent forwarded to another browser (no cookie, or its own): refused, nothing used up.
      const before = await snapshotTables(o.t.ctx);
      const other = new DashboardClient(o.t.app);
      await other.get(path);
      for (const stranger of [new DashboardClient(o.t.app), other]) {
        const refused = await stranger.get(`${back.pathname}${back.search}`);
        expect(refused.statusCode).toBe(400);
        expect(pageText(refused.body)).toContain('Finish connecting in the browser you started in.');
        expect(refused.body).not.toContain(externalUserId);
      }
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
      expect((await member(externalUserId)).json().credentials).toEqual([]);

      // The same consent in the browser that started it: completed, and back to the page, which reads the flow's outcome.
      const callback = await browser.get(`${back.pathname}${back.search}`);
      expect(callback.statusCode).toBe(303);
      expect(callback.headers.location).toBe(`${path}?flow=${flow.id}`);
      const landed = await browser.get(String(callback.headers.location));
      expect(landed.statusCode).toBe(200);
      expect(pageText(landed.body)).toContain('Acme connected.');
      expect(pageText(providerItem(landed.body, 'acme')!)).toBe('Acme Connected Disconnect');
      const credential = await o.read(externalUserId);
      expect(credential).toMatchObject({ type: 'oauth2', status: 'active' });
      expect(pageData(landed.body)).toEqual({
        origins: ['https://app.example'],
        events: [{ type: 'connected', provider: 'acme', credentialId: credential.id }],
        popup: false,
      });
      const connected = (await hooks.events(externalUserId)).filter((e) => e.type === 'credential.connected');
      expect(connected).toEqual([expect.objectContaining({ data: expect.objectContaining({ flowId: flow.id }) })]);

      // A flow id in the query that is not this page's says nothing.
      const foreign = await o.connect(uid('u_foreign'));
      const spoofed = await browser.get(`${path}?flow=${foreign.flowId}`);
      expect(spoofed.statusCode).toBe(200);
      expect(pageData(spoofed.body).events).toEqual([]);
    });

    it('shows the provider’s refusal on the page and tells connect.js, and the end user may try again', async () => {
      const externalUserId = uid('u_denied');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['acme'], redirectUri: APP_REDIRECT });
      const path = pagePath(session);
      const browser = new DashboardClient(o.t.app);
      const page = await browser.get(path);
      const started = await browser.post(`${path}/connect/acme`, { ...hiddenFieldsOf(page.body, `${path}/connect/acme`), popup: '1' });
      const back = await o.as.approve(String(started.headers.refresh).slice('0;url='.length), { deny: true });
      const callback = await browser.get(`${back.pathname}${back.search}`);
      expect(callback.statusCode).toBe(303);
      const landed = await browser.get(String(callback.headers.location));
      expect(landed.statusCode).toBe(200);
      expect(pageText(landed.body)).toContain('Not connected (access_denied). You can try again.');
      expect(pageData(landed.body)).toMatchObject({ popup: true, events: [{ type: 'error', provider: 'acme', code: 'access_denied' }] });
      expect(pageText(providerItem(landed.body, 'acme')!)).toBe('Acme Not connected Connect');
    });

    it('leaves flows started with POST /v1/oauth/{provider}/start unbound, as before', async () => {
      const { response } = await o.connect(uid('u_api'), { redirectUri: APP_REDIRECT });
      expect(response.statusCode).toBe(303);
      expect(new URL(String(response.headers.location)).searchParams.get('status')).toBe('success');
    });

    it('ends the member’s open sessions when the member is removed: the link answers 410 and brings nobody back', async () => {
      const externalUserId = uid('u_removed');
      const session = await createSession(o.t.app, h, { externalUserId, providers: ['openai'] });
      const other = await createSession(o.t.app, h, { externalUserId: uid('u_kept'), providers: ['openai'] });
      const browser = new DashboardClient(o.t.app);
      expect((await browser.get(pagePath(session))).statusCode).toBe(200);
      const removed = await o.t.app.inject({ method: 'DELETE', url: `/v1/end-users/${encodeURIComponent(externalUserId)}`, headers: h });
      expect(removed.statusCode, removed.body).toBe(200);
      expect((await browser.get(pagePath(session))).statusCode).toBe(410);
      expect((await member(externalUserId)).statusCode).toBe(404);
      // Another member's session is untouched.
      expect((await new DashboardClient(o.t.app).get(pagePath(other))).statusCode).toBe(200);
    });
  });
});

/**
 * The Connect page's status answer (GET /connect/s/{token}/status; CONTRACT 10) on both engines, over
 * HTTP: what connect.js reads once a provider's Cross-Origin-Opener-Policy has severed its popup.
 * The newest flow the page started in the popup (none, pending, connected with its credential, failed
 * with its code, expired, before and after the expiry notice marked it), as JSON under no-store; read
 * across origins only by an origin the session allows (no credentials); an unknown token 404 and an
 * expired session 410 as the page answers them, saying nothing of whose; and nothing in any answer the
 * page does not show its token's holder.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_FLOWS } from '../../src/services/expiry-notices/expiring-kinds.js';
import { runExpiryNotices } from '../../src/services/expiry-notices/expiry-notices.js';
import { createSession, pagePath, pageText } from '../helpers/connect-page.js';
import { DashboardClient, hiddenFieldsOf } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';

const APP_ORIGIN = 'https://app.example';

describe.each(ENGINES)('the Connect page’s status answer on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
  });
  afterAll(() => o.close());

  const uid = (name: string) => `${name}_${randomBytes(3).toString('hex')}`;
  const status = (path: string, origin: string | null = APP_ORIGIN) =>
    o.t.app.inject({ method: 'GET', url: `${path}/status`, headers: origin ? { origin } : {} });

  /** A session offering acme, and a browser on its page. */
  async function openPage(extra: Record<string, unknown> = {}) {
    const externalUserId = uid('u_status');
    const session = await createSession(o.t.app, o.headers, { externalUserId, providers: ['acme', 'openai'], allowedOrigins: [APP_ORIGIN], ...extra });
    const path = pagePath(session);
    const browser = new DashboardClient(o.t.app);
    const page = await browser.get(path);
    return { externalUserId, session, path, browser, fields: hiddenFieldsOf(page.body, `${path}/connect/acme`) };
  }

  /** "Connect" for acme on the page (in the popup, or not): the provider's authorization URL. */
  async function startAcme(opened: Awaited<ReturnType<typeof openPage>>, popup: boolean): Promise<string> {
    // Each flow a moment after the one before: the answer is about the newest.
    o.t.clock.advance(1);
    const started = await opened.browser.post(`${opened.path}/connect/acme`, { ...opened.fields, popup: popup ? '1' : '' });
    expect(started.statusCode).toBe(200);
    return String(started.headers.refresh).slice('0;url='.length);
  }

  /** The provider's answer brought back through the callback in the browser that started the flow, on to its page. */
  async function comeBack(opened: Awaited<ReturnType<typeof openPage>>, authorizationUrl: string, options: { deny?: boolean } = {}) {
    const back = await o.as.approve(authorizationUrl, options);
    const callback = await opened.browser.get(`${back.pathname}${back.search}`);
    expect(callback.statusCode).toBe(303);
    return opened.browser.get(String(callback.headers.location));
  }

  it('answers no flow, then the popup’s newest: pending, then connected with its credential, as no-store JSON', async () => {
    const opened = await openPage();
    const before = await status(opened.path);
    expect(before.statusCode).toBe(200);
    expect(before.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(before.headers['cache-control']).toBe('no-store');
    expect(before.headers['x-content-type-options']).toBe('nosniff');
    expect(before.headers['set-cookie']).toBeUndefined();
    expect(before.json()).toEqual({ status: 'none' });

    // A flow started outside the popup is not connect.js's to follow.
    await startAcme(opened, false);
    expect((await status(opened.path)).json()).toEqual({ status: 'none' });

    const authorizationUrl = await startAcme(opened, true);
    expect((await status(opened.path)).json()).toEqual({ status: 'pending', provider: 'acme', flow: expect.stringMatching(/^[0-9a-f]{22}$/) });
    const landed = await comeBack(opened, authorizationUrl);
    expect(pageText(landed.body)).toContain('Acme connected.');
    const credential = await o.read(opened.externalUserId);
    expect((await status(opened.path)).json()).toEqual({
      status: 'connected',
      provider: 'acme',
      credentialId: credential.id,
      flow: expect.stringMatching(/^[0-9a-f]{22}$/),
    });
  });

  it('answers a refusal with its code, a newer flow pending, then expired, before and after the expiry notice marks it', async () => {
    const opened = await openPage();
    const denied = await startAcme(opened, true);
    const landed = await comeBack(opened, denied, { deny: true });
    expect(pageText(landed.body)).toContain('Not connected (access_denied).');
    expect((await status(opened.path)).json()).toEqual({
      status: 'failed',
      provider: 'acme',
      code: 'access_denied',
      flow: expect.stringMatching(/^[0-9a-f]{22}$/),
    });

    const refused = (await status(opened.path)).json().flow;
    // The end user tries again in the popup: the newer flow is the one told, under a mark of its own.
    await startAcme(opened, true);
    const retried = (await status(opened.path)).json();
    expect(retried).toEqual({ status: 'pending', provider: 'acme', flow: expect.stringMatching(/^[0-9a-f]{22}$/) });
    expect(retried.flow).not.toBe(refused);
    expect((await status(opened.path)).json().flow).toBe(retried.flow);
    o.t.clock.advance(599);
    expect((await status(opened.path)).json()).toEqual({ status: 'pending', provider: 'acme', flow: expect.stringMatching(/^[0-9a-f]{22}$/) });
    o.t.clock.advance(1);
    expect((await status(opened.path)).json()).toEqual({ status: 'expired', provider: 'acme', flow: expect.stringMatching(/^[0-9a-f]{22}$/) });
    // The notice ends it failed with `expired`: still told as expired, not as a refusal.
    o.t.clock.advance(30);
    const report = await runExpiryNotices(o.t.ctx, { kinds: [OAUTH_FLOWS] });
    expect(report[OAUTH_FLOWS.name]?.notified).toBeGreaterThanOrEqual(1);
    const flow = await o.t.ctx.store.db
      .selectFrom('oauth_flows')
      .select(['status', 'error_code'])
      .where('connect_session_id', '=', opened.session.id)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(flow).toEqual({ status: 'failed', error_code: 'expired' });
    expect((await status(opened.path)).json()).toEqual({ status: 'expired', provider: 'acme', flow: expect.stringMatching(/^[0-9a-f]{22}$/) });
  });

  it('lets only an origin the session allows read it across origins, without credentials', async () => {
    const opened = await openPage({ allowedOrigins: [APP_ORIGIN, 'http://localhost:5173'] });
    for (const origin of [APP_ORIGIN, 'http://localhost:5173']) {
      const allowed = await status(opened.path, origin);
      expect(allowed.headers['access-control-allow-origin']).toBe(origin);
      expect(allowed.headers.vary).toMatch(/\bOrigin\b/);
      expect(allowed.headers['access-control-allow-credentials']).toBeUndefined();
    }
    for (const origin of [
      null,
      'https://evil.example',
      'null',
      'https://APP.example',
      'https://app.example:8443',
      'http://app.example',
      `${APP_ORIGIN}.evil.example`,
    ]) {
      const refused = await status(opened.path, origin);
      expect(refused.statusCode).toBe(200);
      expect(refused.headers['access-control-allow-origin'], String(origin)).toBeUndefined();
      expect(refused.headers['access-control-allow-credentials']).toBeUndefined();
    }
    // A session that allows no origin is read by none.
    const closed = await openPage({ allowedOrigins: [] });
    expect((await status(closed.path)).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers an unknown token 404 and an expired session 410 as the page does, saying nothing of whose, to any origin', async () => {
    const opened = await openPage({ endUser: { displayName: 'Hidden Person' }, expiresIn: 60 });
    await startAcme(opened, true);
    const anonymous = (response: Awaited<ReturnType<typeof status>>, code: number) => {
      expect(response.statusCode).toBe(code);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      for (const secret of [opened.externalUserId, 'Hidden Person', 'app.example', 'acme', 'Acme', opened.session.id])
        expect(response.body).not.toContain(secret);
    };
    for (const token of [randomBytes(32).toString('base64url'), 'not-a-token', 'A'.repeat(44)]) anonymous(await status(`/connect/s/${token}`), 404);
    o.t.clock.advance(60);
    const expired = await status(opened.path);
    anonymous(expired, 410);
    expect(pageText(expired.body)).toContain('This link has expired');
  });

  it('tells nothing the page does not show its token’s holder: no token, id, state or secret', async () => {
    const opened = await openPage();
    const authorizationUrl = await startAcme(opened, true);
    const pending = (await status(opened.path)).body;
    await comeBack(opened, authorizationUrl);
    const connected = (await status(opened.path)).body;
    const flow = await o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('connect_session_id', '=', opened.session.id).executeTakeFirstOrThrow();
    const token = opened.path.slice('/connect/s/'.length);
    const state = new URL(authorizationUrl).searchParams.get('state')!;
    for (const body of [pending, connected]) {
      expect(Object.keys(JSON.parse(body)).every((key) => ['status', 'provider', 'flow', 'credentialId', 'code'].includes(key))).toBe(true);
      for (const secret of [token, state, flow.id, flow.state_digest, flow.browser_binding!, opened.session.id, opened.externalUserId, o.tenant.serverId]) {
        expect(body).not.toContain(secret);
      }
    }
    // Another member's credential on the same server, connected outside the page, is nobody's business here.
    await o.connect(uid('u_other'));
    expect((await status(opened.path)).body).toBe(connected);
  });
});

/**
 * Every way GET /oauth/callback can fail (CONTRACT 2.3), against a real authorization server: the end
 * user's refusal, unknown / reused / raced / expired / cancelled states, and a token endpoint that
 * refuses, fails or hangs. Each case checks the page or redirect, and that nothing stored changed but
 * the flow's own row: no credential, no audience member, no audit event.
 */
import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { APP_REDIRECT, type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';

type Snapshot = Record<string, unknown[]>;

/** The snapshot without one flow's row: what must stay equal when only that flow may change. */
function withoutFlow(snapshot: Snapshot, flowId: string): Snapshot {
  return { ...snapshot, oauth_flows: snapshot.oauth_flows!.filter((row) => JSON.parse(row as string).id !== flowId) };
}

/** A callback page: HTML under the strict page headers, naming neither the code nor the state it was sent. */
function expectPage(response: LightMyRequestResponse, status: number, callbackUrl?: URL) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers.location).toBeUndefined();
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-frame-options']).toBe('DENY');
  const csp = String(response.headers['content-security-policy']);
  expect(csp).toMatch(/default-src 'none'/);
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(csp).not.toContain('unsafe-inline');
  for (const name of ['code', 'state']) {
    const value = callbackUrl?.searchParams.get(name);
    if (value) expect(response.body).not.toContain(value);
  }
}

/** The 303 to the app's redirectUri with exactly the error outcome. */
function expectErrorRedirect(response: LightMyRequestResponse, error: string, flowId: string) {
  expect(response.statusCode, response.body).toBe(303);
  const location = new URL(response.headers.location as string);
  expect(`${location.origin}${location.pathname}`).toBe(APP_REDIRECT);
  expect(Object.fromEntries(location.searchParams)).toEqual({ status: 'error', error, flowId, provider: PROVIDER });
}

describe.each(ENGINES)('OAuth callback failures on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
  });
  afterAll(() => o.close());
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  const flowRow = (id: string) => o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const credentialCount = async () => (await o.t.ctx.store.db.selectFrom('credentials').select('id').execute()).length;
  /** Starts and approves a flow: the provider's redirect back, not yet replayed. */
  const approved = async (externalUserId: string, body: Record<string, unknown> = {}, deny = false) => {
    const flow = await o.start({ externalUserId, ...body });
    return { flowId: flow.id, back: await o.as.approve(flow.authorizationUrl, { deny }) };
  };
  /** Replays the callback and checks that only the flow's row changed, to exactly the given end. */
  const failedCallback = async (flowId: string, back: URL, end: { status: string; error_code: string | null }) => {
    const before = await snapshotTables(o.t.ctx);
    const exchanges = o.as.tokenRequests.authorization_code;
    const response = await o.callback(back);
    expect(withoutFlow(await snapshotTables(o.t.ctx), flowId)).toEqual(withoutFlow(before, flowId));
    expect(await flowRow(flowId)).toMatchObject({ ...end, completed_at: o.t.clock.now().toISOString(), credential_id: null });
    return { response, exchanges: o.as.tokenRequests.authorization_code - exchanges };
  };

  describe('the end user denies access', () => {
    it('redirects to the app with error=access_denied when the flow named a redirectUri', async () => {
      const { flowId, back } = await approved('u_deny', { redirectUri: APP_REDIRECT }, true);
      expect(back.searchParams.get('error')).toBe('access_denied');
      const { response, exchanges } = await failedCallback(flowId, back, { status: 'failed', error_code: 'access_denied' });
      expectErrorRedirect(response, 'access_denied', flowId);
      expect(exchanges).toBe(0);
    });

    it('shows a 400 page naming the refusal otherwise', async () => {
      const { flowId, back } = await approved('u_deny', {}, true);
      const { response, exchanges } = await failedCallback(flowId, back, { status: 'failed', error_code: 'access_denied' });
      expectPage(response, 400, back);
      expect(response.body).toContain('Acme not connected');
      expect(response.body).toContain('access_denied');
      expect(exchanges).toBe(0);
    });
  });

  it.each([
    ['a well-formed state no flow has', `?code=abc&state=${randomBytes(32).toString('base64url')}`],
    ['a malformed state', '?code=abc&state=not-a-state%22%3E%3Cb%3E'],
    ['no state at all', '?code=abc'],
    ['no query at all', ''],
  ])('%s: a 400 page, and nothing stored changes', async (_name, query) => {
    await approved('u_unknown'); // a pending flow exists, and must stay pending
    const before = await snapshotTables(o.t.ctx);
    const callbackUrl = new URL(`${o.t.ctx.publicUrl}/oauth/callback${query}`);
    const response = await o.callback(callbackUrl);
    expectPage(response, 400, callbackUrl);
    expect(response.body).toContain('Sign-in link not valid');
    expect(response.body).not.toContain('<b>');
    expect(await snapshotTables(o.t.ctx)).toEqual(before);
  });

  // Issue 8 item 14: these answered 502 provider_unavailable without calling anyone, and used the flow up.
  // Anyone can type such a URL, so it must not end a flow: a 400 page, the flow still pending, and the
  // provider's real redirect still completes it afterwards.
  describe('a malformed callback: a 400 page, no exchange, the flow left pending and still usable', () => {
    const malformations: [string, (back: URL) => string][] = [
      ['state twice', (back) => `${back.search}&state=${back.searchParams.get('state')}`],
      ['code twice', (back) => `${back.search}&code=${back.searchParams.get('code')}`],
      ['an empty code', (back) => `?state=${back.searchParams.get('state')}&code=`],
      ['no code and no error', (back) => `?state=${back.searchParams.get('state')}`],
      ['an unexpected id_token', (back) => `${back.search}&id_token=eyJhbGciOiJub25lIn0.e30.`],
      ['an access_token in the front channel', (back) => `${back.search}&access_token=leaked`],
    ];

    it.each(malformations)('%s', async (_name, query) => {
      const { flowId, back } = await approved('u_malformed', { redirectUri: APP_REDIRECT });
      const before = await snapshotTables(o.t.ctx);
      const exchanges = o.as.tokenRequests.authorization_code;
      const callbackUrl = new URL(`${o.t.ctx.publicUrl}/oauth/callback${query(back)}`);
      const response = await o.callback(callbackUrl);
      expectPage(response, 400, callbackUrl);
      expect(response.body).toContain('Sign-in answer not valid');
      expect(o.as.tokenRequests.authorization_code).toBe(exchanges);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
      expect(await flowRow(flowId)).toMatchObject({ status: 'pending', error_code: null, completed_at: null });

      const genuine = await o.callback(back);
      expect(genuine.statusCode, genuine.body).toBe(303);
      expect(new URL(genuine.headers.location as string).searchParams.get('status')).toBe('success');
      expect(await flowRow(flowId)).toMatchObject({ status: 'completed' });
    });
  });

  it("a completed flow's callback replayed: a 410 page, the credential unchanged, no second code exchange", async () => {
    const { flowId, back } = await approved('u_reuse', { redirectUri: APP_REDIRECT });
    const exchanges = o.as.tokenRequests.authorization_code;
    expect((await o.callback(back)).statusCode).toBe(303);
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges + 1);
    const credential = await o.read('u_reuse');
    const before = await snapshotTables(o.t.ctx);

    const replayed = await o.callback(back);
    expectPage(replayed, 410, back);
    expect(replayed.body).toContain('Sign-in link no longer valid');
    expect(await snapshotTables(o.t.ctx)).toEqual(before);
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges + 1);
    expect(await o.read('u_reuse')).toEqual(credential);
    expect((await flowRow(flowId)).status).toBe('completed');
  });

  it('two simultaneous callbacks with one state: one succeeds, the other gets 410, one credential', async () => {
    const { flowId, back } = await approved('u_race', { redirectUri: APP_REDIRECT });
    const credentials = await credentialCount();
    const exchanges = o.as.tokenRequests.authorization_code;
    const responses = await Promise.all([o.callback(back), o.callback(back)]);
    expect(responses.map((r) => r.statusCode).sort()).toEqual([303, 410]);
    const success = responses.find((r) => r.statusCode === 303)!;
    expect(Object.fromEntries(new URL(success.headers.location as string).searchParams)).toEqual({ status: 'success', flowId, provider: PROVIDER });
    expectPage(responses.find((r) => r.statusCode === 410)!, 410, back);
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges + 1);
    expect(await credentialCount()).toBe(credentials + 1);
    const row = await flowRow(flowId);
    expect(row.status).toBe('completed');
    expect(row.credential_id).toBe((await o.read('u_race')).id);
  });

  it('an expired flow: a 410 page even with a redirectUri, the flow failed with flow_expired, no exchange', async () => {
    const { flowId, back } = await approved('u_expired', { redirectUri: APP_REDIRECT, expiresIn: 60 });
    o.t.clock.advance(61);
    const { response, exchanges } = await failedCallback(flowId, back, { status: 'failed', error_code: 'flow_expired' });
    expectPage(response, 410, back);
    expect(response.body).toContain('Sign-in link expired');
    expect(exchanges).toBe(0);
  });

  describe('the token endpoint does not give tokens', () => {
    it('refused (invalid_grant): error=token_exchange_failed', async () => {
      const { flowId, back } = await approved('u_rejected', { redirectUri: APP_REDIRECT });
      o.as.tokenEndpoint = 'invalid_grant';
      const { response, exchanges } = await failedCallback(flowId, back, { status: 'failed', error_code: 'token_exchange_failed' });
      expectErrorRedirect(response, 'token_exchange_failed', flowId);
      expect(exchanges).toBe(1);
    });

    it('503: error=provider_unavailable', async () => {
      const { flowId, back } = await approved('u_503', { redirectUri: APP_REDIRECT });
      o.as.tokenEndpoint = 'unavailable';
      const { response, exchanges } = await failedCallback(flowId, back, { status: 'failed', error_code: 'provider_unavailable' });
      expectErrorRedirect(response, 'provider_unavailable', flowId);
      expect(exchanges).toBe(1);
    });

    it('without a redirectUri, a 502 page naming the failure', async () => {
      const { flowId, back } = await approved('u_502');
      o.as.tokenEndpoint = 'invalid_grant';
      const { response } = await failedCallback(flowId, back, { status: 'failed', error_code: 'token_exchange_failed' });
      expectPage(response, 502, back);
      expect(response.body).toContain('Acme not connected');
      expect(response.body).toContain('token_exchange_failed');
    });
  });

  it('a flow cancelled by revoking the member: a 410 page, the flow stays cancelled, no exchange', async () => {
    expect((await o.connect('u_cancel', { redirectUri: APP_REDIRECT })).response.statusCode).toBe(303);
    const { flowId, back } = await approved('u_cancel', { redirectUri: APP_REDIRECT });
    const deleted = await o.t.app.inject({ method: 'DELETE', url: `/v1/end-users/u_cancel?provider=${PROVIDER}`, headers: o.headers });
    expect(deleted.statusCode).toBe(200);
    expect(await flowRow(flowId)).toMatchObject({ status: 'cancelled', error_code: null, completed_at: o.t.clock.now().toISOString() });
    const before = await snapshotTables(o.t.ctx);
    const exchanges = o.as.tokenRequests.authorization_code;

    const response = await o.callback(back);
    expectPage(response, 410, back);
    expect(await snapshotTables(o.t.ctx)).toEqual(before);
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges);
    expect(await flowRow(flowId)).toMatchObject({ status: 'cancelled', error_code: null, credential_id: null });
  });
});

describe.each(ENGINES)('OAuth callback against a token endpoint that hangs on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { providerTimeoutMs: 300 });
  });
  afterAll(() => o.close());

  it('gives up after the provider timeout: error=provider_unavailable, the flow failed, nothing else stored', async () => {
    const flow = await o.start({ externalUserId: 'u_hang', redirectUri: APP_REDIRECT });
    const back = await o.as.approve(flow.authorizationUrl);
    o.as.tokenEndpoint = 'hang';
    const before = await snapshotTables(o.t.ctx);
    const started = performance.now();
    const response = await o.callback(back);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(3000);
    expectErrorRedirect(response, 'provider_unavailable', flow.id);
    expect(o.as.tokenRequests.authorization_code).toBe(1);
    expect(withoutFlow(await snapshotTables(o.t.ctx), flow.id)).toEqual(withoutFlow(before, flow.id));
    const row = await o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', flow.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', error_code: 'provider_unavailable', completed_at: o.t.clock.now().toISOString(), credential_id: null });
  });
});

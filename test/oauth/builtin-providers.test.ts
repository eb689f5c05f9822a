/**
 * The built-in GitHub, Slack and Notion entries of the catalog, each with its real authorization URL
 * and its token endpoint answered by a stand-in that behaves as the provider's public docs say. What
 * is checked is each provider's quirk: GitHub's comma-separated scopes, 200-with-error answers,
 * tokens that never expire and revocation through its REST API; Slack's user_scope and authed_user token; Notion's owner=user and HTTP Basic.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { APP_REDIRECT } from '../helpers/oauth-tenant.js';
import {
  catalogWithStandIns,
  type ProviderStandIns,
  type RecordedRequest,
  STAND_IN_SLUGS,
  type StandInSlug,
  startProviderStandIns,
} from '../helpers/provider-stand-ins.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const CALLBACK = 'http://keyward.test/oauth/callback';
const STATE = /^[A-Za-z0-9_-]{43}$/;

describe.each(ENGINES)('built-in OAuth providers against stand-ins of their token endpoints on %s', (engine) => {
  let s: ProviderStandIns;
  let t: TestApp;
  let headers: Record<string, string>;
  beforeAll(async () => {
    s = await startProviderStandIns();
    const started = await startWithTenant(engine, { catalog: catalogWithStandIns(s) });
    ({ t, headers } = started);
    const serverId = started.tenant.serverId;
    for (const slug of STAND_IN_SLUGS) {
      await enableProvider(t.ctx, { serverId, slug, clientId: s.clients[slug].id, clientSecret: s.clients[slug].secret, actor: CLI_ACTOR });
    }
    await allowRedirectUri(t.ctx, serverId, APP_REDIRECT, CLI_ACTOR);
  });
  afterAll(async () => {
    await t?.close();
    await s?.close();
  });

  async function start(slug: StandInSlug, body: Record<string, unknown>): Promise<{ id: string; authorizationUrl: string }> {
    const response = await t.app.inject({ method: 'POST', url: `/v1/oauth/${slug}/start`, headers, payload: body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json();
  }
  const callback = (back: URL) => t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
  /** The redirect back with a code the provider never issued, as a replayed or mistyped one would be. */
  const withBadCode = (authorizationUrl: string) => new URL(`${CALLBACK}?code=bad&state=${new URL(authorizationUrl).searchParams.get('state')}`);
  async function credential(externalUserId: string, slug: StandInSlug, minValiditySeconds?: number) {
    const query = minValiditySeconds === undefined ? '' : `?minValiditySeconds=${minValiditySeconds}`;
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${externalUserId}${query}`, headers });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().credentials.find((c: { provider: string }) => c.provider === slug);
  }
  const revoke = (externalUserId: string) => t.app.inject({ method: 'DELETE', url: `/v1/end-users/${externalUserId}`, headers });
  const query = (url: string) => Object.fromEntries(new URL(url).searchParams);
  const endpoint = (url: string) => `${new URL(url).origin}${new URL(url).pathname}`;
  /** The verifier sent at the token endpoint is the one whose S256 challenge went in the authorization URL. */
  function expectPkceBinding(authorizationUrl: string, tokenRequest: RecordedRequest) {
    const verifier = tokenRequest.body.code_verifier ?? '';
    expect(verifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(query(authorizationUrl).code_challenge);
  }
  const basicOf = (slug: StandInSlug) => ({ id: s.clients[slug].id, secret: s.clients[slug].secret });
  const lastToken = (slug: StandInSlug) => s.issued.filter((i) => i.provider === slug).at(-1)!.token;

  it('GitHub: space-separated scopes in the URL, client_secret_post, a token that never expires and is never refreshed', async () => {
    const flow = await start('github', { externalUserId: 'gh-user', redirectUri: APP_REDIRECT });
    expect(endpoint(flow.authorizationUrl)).toBe('https://github.com/login/oauth/authorize');
    expect(query(flow.authorizationUrl)).toEqual({
      response_type: 'code',
      client_id: s.clients.github.id,
      redirect_uri: CALLBACK,
      scope: 'read:user user:email',
      state: expect.stringMatching(STATE),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });

    const seen = s.requests.length;
    const back = s.approve('github', flow.authorizationUrl);
    const done = await callback(back);
    expect(done.statusCode).toBe(303);
    expect(query(done.headers.location as string)).toEqual({ status: 'success', flowId: flow.id, provider: 'github' });

    const requests = s.requests.slice(seen);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /github/token']);
    const [tokenRequest] = requests as [RecordedRequest];
    // GitHub wants the client's credentials in the body, and JSON only when asked for it.
    expect(tokenRequest.basic).toBeNull();
    expect(tokenRequest.headers.authorization).toBeUndefined();
    expect(tokenRequest.headers.accept).toContain('application/json');
    expect(tokenRequest.body).toEqual({
      grant_type: 'authorization_code',
      code: back.searchParams.get('code'),
      redirect_uri: CALLBACK,
      code_verifier: expect.any(String),
      client_id: s.clients.github.id,
      client_secret: s.clients.github.secret,
    });
    expectPkceBinding(flow.authorizationUrl, tokenRequest);

    const now = t.clock.now().toISOString();
    const stored = await credential('gh-user', 'github');
    expect(stored).toEqual({
      id: expect.stringMatching(/^cred_/),
      provider: 'github',
      type: 'oauth2',
      status: 'active',
      connectedAt: now,
      updatedAt: now,
      accessToken: lastToken('github'),
      tokenType: 'bearer',
      expiresAt: null,
      // GitHub answers "read:user,user:email": commas, not RFC 6749's spaces.
      scopes: ['read:user', 'user:email'],
      refreshedAt: null,
      // This read is the token's first use; it was never checked (only static credentials are).
      lastUsedAt: now,
      lastCheck: null,
    });

    // A year on, a reader wanting an hour of validity still gets the same token and nothing asks GitHub.
    t.clock.advance(365 * 86400);
    const later = await credential('gh-user', 'github', 3600);
    expect(later).toMatchObject({ status: 'active', accessToken: stored.accessToken, expiresAt: null, refreshedAt: null });
    expect(later.error).toBeUndefined();
    expect(s.requests.length).toBe(seen + 1);

    const deleted = await revoke('gh-user');
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({
      externalUserId: 'gh-user',
      revoked: [{ id: stored.id, provider: 'github', revokedAt: t.clock.now().toISOString(), providerRevocation: 'succeeded' }],
    });
    // No RFC 7009 endpoint: GitHub's REST API was asked instead (test/oauth/github-revocation.test.ts has the details).
    expect(s.requests.slice(seen + 1).map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE /applications/${s.clients.github.id}/token`]);
    expect(s.issued.find((i) => i.token === stored.accessToken)?.revoked).toBe(true);
    expect(await t.ctx.store.db.selectFrom('credentials').select('id').where('provider', '=', 'github').execute()).toEqual([]);
  });

  it('GitHub: a bad code, answered 200 with an error, fails the flow with token_exchange_failed and stores nothing', async () => {
    const flow = await start('github', { externalUserId: 'gh-bad', redirectUri: APP_REDIRECT });
    const before = await snapshotTables(t.ctx);
    const seen = s.requests.length;
    const issued = s.issued.length;

    const done = await callback(withBadCode(flow.authorizationUrl));
    expect(done.statusCode).toBe(303);
    expect(endpoint(done.headers.location as string)).toBe(APP_REDIRECT);
    expect(query(done.headers.location as string)).toEqual({ status: 'error', error: 'token_exchange_failed', flowId: flow.id, provider: 'github' });

    // The stand-in did answer 200 (GitHub's way of saying bad_verification_code) and minted nothing.
    expect(s.requests.slice(seen).map((r) => r.path)).toEqual(['/github/token']);
    expect(s.issued.length).toBe(issued);
    const after = await snapshotTables(t.ctx);
    expect({ ...after, oauth_flows: [] }).toEqual({ ...before, oauth_flows: [] });
    const row = await t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', flow.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', error_code: 'token_exchange_failed', credential_id: null });
    const members = await t.ctx.store.db.selectFrom('audience_members').select('id').where('external_user_id', '=', 'gh-bad').execute();
    expect(members).toEqual([]);
  });

  it("Slack: user_scope with commas, HTTP Basic, the authed_user token stored, and revoked with Slack's auth.revoke", async () => {
    const flow = await start('slack', { externalUserId: 'slack-user' });
    expect(endpoint(flow.authorizationUrl)).toBe('https://slack.com/oauth/v2/authorize');
    // `scope` would ask for a bot token, which belongs to the workspace and not to this end user.
    expect(query(flow.authorizationUrl)).toEqual({
      response_type: 'code',
      client_id: s.clients.slack.id,
      redirect_uri: CALLBACK,
      user_scope: 'channels:read,chat:write,users:read',
      state: expect.stringMatching(STATE),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });

    const seen = s.requests.length;
    const back = s.approve('slack', flow.authorizationUrl);
    const done = await callback(back);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Slack connected');

    const [tokenRequest, ...others] = s.requests.slice(seen);
    expect(others).toEqual([]);
    expect(tokenRequest!.path).toBe('/slack/token');
    expect(tokenRequest!.basic).toEqual(basicOf('slack'));
    expect(tokenRequest!.body.client_secret).toBeUndefined();
    expect(tokenRequest!.body).toMatchObject({ grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: CALLBACK });
    expectPkceBinding(flow.authorizationUrl, tokenRequest!);

    const stored = await credential('slack-user', 'slack');
    const userToken = lastToken('slack');
    expect(userToken).toMatch(/^xoxp-/);
    expect(stored).toMatchObject({
      type: 'oauth2',
      status: 'active',
      accessToken: userToken,
      tokenType: 'user',
      expiresAt: null,
      scopes: ['channels:read', 'chat:write', 'users:read'],
    });

    const deleted = await revoke('slack-user');
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().revoked).toEqual([{ id: stored.id, provider: 'slack', revokedAt: t.clock.now().toISOString(), providerRevocation: 'succeeded' }]);
    const revocations = s.requestsTo('/slack/revoke');
    expect(revocations).toHaveLength(1);
    expect(revocations[0]!.body.token).toBe(userToken);
    // The token is auth.revoke's own authentication: the client secret is not sent there.
    expect(revocations[0]!.basic).toBeNull();
    expect(revocations[0]!.body.client_secret).toBeUndefined();
    expect(s.issued.find((i) => i.token === userToken)!.revoked).toBe(true);
  });

  it('Slack: an ok:false answer (200, invalid_code) fails the flow with token_exchange_failed, on a 502 page without a redirectUri', async () => {
    const flow = await start('slack', { externalUserId: 'slack-bad' });
    const before = await snapshotTables(t.ctx);
    const issued = s.issued.length;

    const done = await callback(withBadCode(flow.authorizationUrl));
    expect(done.statusCode).toBe(502);
    expect(done.headers['content-type']).toMatch(/^text\/html/);
    expect(done.body).toContain('token_exchange_failed');
    expect(s.issued.length).toBe(issued);
    const after = await snapshotTables(t.ctx);
    expect({ ...after, oauth_flows: [] }).toEqual({ ...before, oauth_flows: [] });
    const row = await t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', flow.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'failed', error_code: 'token_exchange_failed', credential_id: null });
  });

  // Slack's auth.revoke answers its refusals with a 200 and {"ok":false,"error":…}: not a yes.
  it('Slack: auth.revoke refusing with a 200 and ok:false is a failed revocation, not a succeeded one', async () => {
    const flow = await start('slack', { externalUserId: 'slack-refused' });
    expect((await callback(s.approve('slack', flow.authorizationUrl))).statusCode).toBe(200);
    const stored = await credential('slack-refused', 'slack');
    s.slackRevokeError = 'invalid_auth'; // documented for auth.revoke, e.g. a request from an IP the workspace does not allow
    try {
      const deleted = await revoke('slack-refused');
      expect(deleted.statusCode).toBe(200);
      expect(s.requestsTo('/slack/revoke').at(-1)!.body.token).toBe(stored.accessToken);
      // The token is still live at Slack: the caller must be told, to retry or warn the end user.
      expect(s.issued.find((i) => i.token === stored.accessToken)!.revoked).toBe(false);
      expect(deleted.json().revoked).toEqual([{ id: stored.id, provider: 'slack', revokedAt: t.clock.now().toISOString(), providerRevocation: 'failed' }]);
    } finally {
      s.slackRevokeError = null;
    }
  });

  it('Notion: owner=user and no scope in the URL, HTTP Basic at the token endpoint, a token without expiry, nothing to revoke with', async () => {
    const flow = await start('notion', { externalUserId: 'notion-user', redirectUri: APP_REDIRECT });
    expect(endpoint(flow.authorizationUrl)).toBe('https://api.notion.com/v1/oauth/authorize');
    expect(query(flow.authorizationUrl)).toEqual({
      response_type: 'code',
      client_id: s.clients.notion.id,
      redirect_uri: CALLBACK,
      owner: 'user',
      state: expect.stringMatching(STATE),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });

    const seen = s.requests.length;
    const back = s.approve('notion', flow.authorizationUrl);
    const done = await callback(back);
    expect(done.statusCode).toBe(303);
    expect(query(done.headers.location as string)).toEqual({ status: 'success', flowId: flow.id, provider: 'notion' });

    const [tokenRequest, ...others] = s.requests.slice(seen);
    expect(others).toEqual([]);
    expect(tokenRequest!.path).toBe('/notion/token');
    // The stand-in answers 401 invalid_client without Basic, so a stored token already proves it; checked anyway.
    expect(tokenRequest!.basic).toEqual(basicOf('notion'));
    expect(tokenRequest!.body.client_secret).toBeUndefined();
    expect(tokenRequest!.body).toMatchObject({ grant_type: 'authorization_code', code: back.searchParams.get('code'), redirect_uri: CALLBACK });
    expectPkceBinding(flow.authorizationUrl, tokenRequest!);

    const stored = await credential('notion-user', 'notion', 3600);
    expect(stored).toMatchObject({
      type: 'oauth2',
      status: 'active',
      accessToken: lastToken('notion'),
      tokenType: 'bearer',
      expiresAt: null,
      scopes: [],
      refreshedAt: null,
    });
    expect(s.requests.length).toBe(seen + 1);

    const deleted = await revoke('notion-user');
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().revoked).toEqual([
      { id: stored.id, provider: 'notion', revokedAt: t.clock.now().toISOString(), providerRevocation: 'not_supported' },
    ]);
    expect(s.requests.length).toBe(seen + 1);
  });
});

/**
 * POST /v1/oauth/{provider}/start (CONTRACT 2.3): the 201 and its authorization URL (PKCE S256, a
 * 256-bit state kept only as a digest), expiresIn bounds, every refusal leaving storage untouched,
 * Idempotency-Key replay, and the built-in providers' URL quirks (Google, Slack, Notion).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { APP_REDIRECT, type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { createTenant, keys, type Tenant } from '../helpers/test-app.js';

const secret = () => randomBytes(16).toString('hex');

describe.each(ENGINES)('POST /v1/oauth/{provider}/start on %s', (engine) => {
  let o: OAuthTenant;
  let other: Tenant; // a second server: built-in providers enabled with the catalog's default scopes
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    const serverId = o.tenant.serverId;
    await enableProvider(o.t.ctx, { serverId, slug: 'google', clientId: 'google-client', clientSecret: secret(), actor: CLI_ACTOR });
    await enableProvider(o.t.ctx, { serverId, slug: 'notion', clientId: 'notion-client', clientSecret: secret(), actor: CLI_ACTOR });
    // Per-server scopes chosen at enable time replace Slack's catalog defaults on this server.
    await enableProvider(o.t.ctx, {
      serverId,
      slug: 'slack',
      clientId: 'slack-client',
      clientSecret: secret(),
      scopes: ['channels:history', 'im:read'],
      actor: CLI_ACTOR,
    });
    other = await createTenant(o.t.ctx);
    await enableProvider(o.t.ctx, { serverId: other.serverId, slug: 'slack', clientId: 'slack-other', clientSecret: secret(), actor: CLI_ACTOR });
    // The account key's lastUsedAt is written on its first use (then at most once a minute, and this
    // clock stands still): use it once here so the "nothing changed" snapshots below see no such write.
    await o.start({ externalUserId: 'warm-up' });
  });
  afterAll(() => o.close());

  const post = (slug: string, body: unknown, headers: Record<string, string> = o.headers) =>
    o.t.app.inject({ method: 'POST', url: `/v1/oauth/${slug}/start`, headers, payload: body as object });
  const urlOf = async (slug: string, body: Record<string, unknown>, headers?: Record<string, string>) => {
    const response = await post(slug, body, headers);
    expect(response.statusCode, response.body).toBe(201);
    return new URL(response.json().authorizationUrl);
  };
  const flowRow = (id: string) => o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('answers 201 with exactly the contract fields and a PKCE S256 authorization URL whose verifier stays sealed in storage', async () => {
    const response = await post(PROVIDER, { externalUserId: 'u_start', redirectUri: APP_REDIRECT });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['authorizationUrl', 'createdAt', 'expiresAt', 'externalUserId', 'id', 'provider', 'status']);
    expect(body).toMatchObject({ provider: PROVIDER, externalUserId: 'u_start', status: 'pending' });
    expect(body.id).toMatch(/^oflow_[0-9a-z]+$/);
    expect(body.createdAt).toBe(o.t.clock.now().toISOString());
    expect(Date.parse(body.expiresAt) - Date.parse(body.createdAt)).toBe(600_000);

    const url = new URL(body.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(o.as.authorizationUrl);
    const params = Object.fromEntries(url.searchParams);
    // No other parameter: in particular the verifier and the app's redirectUri never reach the provider.
    expect(Object.keys(params).sort()).toEqual(['client_id', 'code_challenge', 'code_challenge_method', 'redirect_uri', 'response_type', 'scope', 'state']);
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: o.as.clients.basic.id,
      redirect_uri: `${o.t.ctx.publicUrl}/oauth/callback`,
      scope: 'api:read',
      code_challenge_method: 'S256',
    });
    // 43 base64url characters are 256 bits (at least the 128 the contract asks for).
    expect(params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(params.state!, 'base64url').length * 8).toBeGreaterThanOrEqual(128);

    const row = await flowRow(body.id);
    expect(row).toMatchObject({
      server_id: o.tenant.serverId,
      external_user_id: 'u_start',
      provider: PROVIDER,
      redirect_uri: APP_REDIRECT,
      scopes: '["api:read"]',
      status: 'pending',
      error_code: null,
      completed_at: null,
      credential_id: null,
      created_at: body.createdAt,
      expires_at: body.expiresAt,
    });
    // The state is kept only as its SHA-256: a database reader cannot forge a callback.
    expect(row.state_digest).toBe(createHash('sha256').update(params.state!).digest('hex'));
    expect(JSON.stringify(row, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).not.toContain(params.state);
    // The verifier is sealed, bound to this flow and server, and the challenge is its S256.
    const verifier = o.t.ctx.vault.open(row.verifier, `oauth_flows|${row.id}|${row.server_id}`);
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
    expect(Buffer.from(row.verifier).toString('latin1')).not.toContain(verifier);
    expect(params.code_challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
    expect(body.authorizationUrl).not.toContain(verifier);

    // Every flow gets its own state and verifier.
    const second = new URL((await o.start({ externalUserId: 'u_start' })).authorizationUrl);
    expect(second.searchParams.get('state')).not.toBe(params.state);
    expect(second.searchParams.get('code_challenge')).not.toBe(params.code_challenge);
  });

  it("replaces the default scopes with the body's scopes", async () => {
    const url = await urlOf(PROVIDER, { externalUserId: 'u_scopes', scopes: ['api:write', 'openid'] });
    expect(url.searchParams.get('scope')).toBe('api:write openid');
  });

  it.each([60, 3600])('takes expiresIn = %i and sets expiresAt = createdAt + expiresIn', async (expiresIn) => {
    const response = await post(PROVIDER, { externalUserId: 'u_expiry', expiresIn });
    expect(response.statusCode).toBe(201);
    const { id, createdAt, expiresAt } = response.json();
    expect(Date.parse(expiresAt) - Date.parse(createdAt)).toBe(expiresIn * 1000);
    expect((await flowRow(id)).expires_at).toBe(expiresAt);
  });

  describe('refusals change nothing stored', () => {
    const refusals: [string, string, unknown, number, Parameters<typeof expectProblem>[2], string?][] = [
      ['an unknown provider', 'nope', { externalUserId: 'u_refused' }, 404, 'provider_not_found'],
      ['a static provider the server has enabled', 'openai', { externalUserId: 'u_refused' }, 422, 'provider_auth_mismatch'],
      ['a built-in OAuth provider not enabled on this server', 'gitlab', { externalUserId: 'u_refused' }, 422, 'provider_not_enabled'],
      [
        'a redirectUri not on the allowed list',
        PROVIDER,
        { externalUserId: 'u_refused', redirectUri: 'https://evil.example/keyward/done' },
        400,
        'redirect_uri_not_allowed',
      ],
      ['an unknown body field', PROVIDER, { externalUserId: 'u_refused', state: 'mine' }, 400, 'validation_failed', '/body/state'],
      ['expiresIn 59', PROVIDER, { externalUserId: 'u_refused', expiresIn: 59 }, 400, 'validation_failed', '/body/expiresIn'],
      ['expiresIn 3601', PROVIDER, { externalUserId: 'u_refused', expiresIn: 3601 }, 400, 'validation_failed', '/body/expiresIn'],
      ['a scope with a space', PROVIDER, { externalUserId: 'u_refused', scopes: ['api:read api:write'] }, 400, 'validation_failed', '/body/scopes/0'],
      ['a scope with a double quote', PROVIDER, { externalUserId: 'u_refused', scopes: ['api:read', 'a"b'] }, 400, 'validation_failed', '/body/scopes/1'],
      ['an empty scope', PROVIDER, { externalUserId: 'u_refused', scopes: [''] }, 400, 'validation_failed', '/body/scopes/0'],
    ];
    it.each(refusals)('%s: %i %s', async (_name, slug, body, status, code, errorPath) => {
      const before = await snapshotTables(o.t.ctx);
      expectProblem(await post(slug, body), status, code, errorPath);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
    });
  });

  describe('Idempotency-Key', () => {
    const withKey = (key: string) => ({ ...o.headers, 'idempotency-key': key });
    const flowCount = async (externalUserId: string) =>
      (await o.t.ctx.store.db.selectFrom('oauth_flows').select('id').where('external_user_id', '=', externalUserId).execute()).length;

    it('replays the identical 201 for the same key and body, with one flow row', async () => {
      const first = await post(PROVIDER, { externalUserId: 'u_idem', expiresIn: 900 }, withKey('start-1'));
      expect(first.statusCode).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const before = await snapshotTables(o.t.ctx);
      const again = await post(PROVIDER, { expiresIn: 900, externalUserId: 'u_idem' }, withKey('start-1'));
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(first.body);
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
      expect(await flowCount('u_idem')).toBe(1);
    });

    it('refuses the same key with another body, changing nothing', async () => {
      const before = await snapshotTables(o.t.ctx);
      expectProblem(await post(PROVIDER, { externalUserId: 'u_idem', expiresIn: 901 }, withKey('start-1')), 422, 'idempotency_key_reused');
      expectProblem(
        await post(PROVIDER, { externalUserId: 'u_idem', expiresIn: 900, scopes: ['api:write'] }, withKey('start-1')),
        422,
        'idempotency_key_reused',
      );
      expect(await snapshotTables(o.t.ctx)).toEqual(before);
      expect(await flowCount('u_idem')).toBe(1);
    });
  });

  describe('built-in providers put their own parameters in the URL', () => {
    it('Google asks for offline access and consent, with its default scopes', async () => {
      const url = await urlOf('google', { externalUserId: 'u_google' });
      expect(`${url.origin}${url.pathname}`).toBe('https://accounts.google.com/o/oauth2/v2/auth');
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        client_id: 'google-client',
        scope: 'openid email profile',
        access_type: 'offline',
        prompt: 'consent',
        response_type: 'code',
        redirect_uri: `${o.t.ctx.publicUrl}/oauth/callback`,
        code_challenge_method: 'S256',
      });
    });

    it('Slack sends user scopes in user_scope, comma-joined, and no scope parameter', async () => {
      const defaults = await urlOf('slack', { externalUserId: 'u_slack' }, keys(other));
      expect(`${defaults.origin}${defaults.pathname}`).toBe('https://slack.com/oauth/v2/authorize');
      expect(defaults.searchParams.get('user_scope')).toBe('channels:read,chat:write,users:read');
      expect(defaults.searchParams.has('scope')).toBe(false);
      expect(defaults.searchParams.get('client_id')).toBe('slack-other');
    });

    it('Notion sends owner=user and no scope parameter at all', async () => {
      const url = await urlOf('notion', { externalUserId: 'u_notion' });
      expect(`${url.origin}${url.pathname}`).toBe('https://api.notion.com/v1/oauth/authorize');
      expect(url.searchParams.get('owner')).toBe('user');
      expect(url.searchParams.has('scope')).toBe(false);
      expect(url.searchParams.has('user_scope')).toBe(false);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    });

    it("scopes set at enable time replace the catalog defaults; the body's scopes replace both", async () => {
      const perServer = await urlOf('slack', { externalUserId: 'u_slack' });
      expect(perServer.searchParams.get('user_scope')).toBe('channels:history,im:read');
      expect(perServer.searchParams.get('client_id')).toBe('slack-client');
      const fromBody = await urlOf('slack', { externalUserId: 'u_slack', scopes: ['users:read', 'users:read.email'] });
      expect(fromBody.searchParams.get('user_scope')).toBe('users:read,users:read.email');
      expect(fromBody.searchParams.has('scope')).toBe(false);
      const google = await urlOf('google', { externalUserId: 'u_google', scopes: ['https://www.googleapis.com/auth/calendar.readonly'] });
      expect(google.searchParams.get('scope')).toBe('https://www.googleapis.com/auth/calendar.readonly');
      expect(google.searchParams.get('access_type')).toBe('offline');
    });
  });
});

/**
 * After OAuth flows of every ending (connected, refreshed, replaced, failed, denied, abandoned, revoked),
 * no OAuth secret may be found in plaintext in any stored row, in the SQLite file and its write-ahead
 * log, or in the logs: not an access or refresh token ever issued, not an authorization code, a state, a
 * PKCE verifier, nor the OAuth client secret. The values are collected where they can be seen: answers
 * of the API, the provider's redirects, and Keyward's own sealed values, opened before they are erased.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { APP_REDIRECT, type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { leaked, sqliteFilesText, storedRowsText } from '../helpers/secret-scan.js';

describe.each(ENGINES)('OAuth secrets at rest on %s', (engine) => {
  let o: OAuthTenant;
  const found = {
    accessTokens: new Set<string>(),
    refreshTokens: new Set<string>(),
    codes: new Set<string>(),
    states: new Set<string>(),
    verifiers: new Set<string>(),
  };
  const all = () => [...Object.values(found).flatMap((set) => [...set]), o.as.clients.basic.secret];
  let failedFlowId = '';

  /** A flow up to the provider's redirect: its state and code (if any) are recorded. */
  async function authorize(externalUserId: string, options: { deny?: boolean; redirectUri?: string; idempotencyKey?: string } = {}) {
    const response = await o.t.app.inject({
      method: 'POST',
      url: '/v1/oauth/acme/start',
      headers: { ...o.headers, ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}) },
      payload: { externalUserId, ...(options.redirectUri ? { redirectUri: options.redirectUri } : {}) },
    });
    expect(response.statusCode, response.body).toBe(201);
    const flow = response.json() as { id: string; authorizationUrl: string };
    found.states.add(new URL(flow.authorizationUrl).searchParams.get('state')!);
    const back = await o.as.approve(flow.authorizationUrl, { deny: options.deny });
    const code = back.searchParams.get('code');
    if (code) found.codes.add(code);
    return { flowId: flow.id, back };
  }

  /** The member's tokens as the API shows them and as Keyward stores them. */
  async function collectTokens(externalUserId: string, minValiditySeconds?: number) {
    found.accessTokens.add((await o.read(externalUserId, minValiditySeconds)).accessToken);
    const stored = await storedCredential(o, externalUserId);
    found.accessTokens.add(stored.accessToken);
    found.refreshTokens.add(stored.refreshToken);
  }

  beforeAll(async () => {
    o = await startOAuthTenant(engine);

    // Connected, then refreshed on demand (a rotated refresh token), then replaced by a second flow.
    await o.callback((await authorize('u_keeper', { redirectUri: APP_REDIRECT })).back);
    await collectTokens('u_keeper');
    o.t.clock.advance(1);
    await collectTokens('u_keeper', 3600);
    expect(o.as.grants.refresh_token).toBe(1);
    await o.callback((await authorize('u_keeper', { idempotencyKey: 'connect-keeper-again' })).back);
    await collectTokens('u_keeper');

    // A code the token endpoint refuses, a denied consent, and a flow never finished.
    o.as.tokenEndpoint = 'invalid_grant';
    const failed = await authorize('u_failed', { redirectUri: APP_REDIRECT });
    const failedCallback = await o.callback(failed.back);
    expect(new URL(failedCallback.headers.location as string).searchParams.get('error')).toBe('token_exchange_failed');
    failedFlowId = failed.flowId;
    o.as.tokenEndpoint = 'normal';
    const denied = await authorize('u_denied', { deny: true });
    expect((await o.callback(denied.back)).statusCode).toBe(400);
    const abandoned = await o.t.app.inject({ method: 'POST', url: '/v1/oauth/acme/start', headers: o.headers, payload: { externalUserId: 'u_abandoned' } });
    found.states.add(new URL(abandoned.json().authorizationUrl).searchParams.get('state')!);

    // A member connected, then revoked: the tokens are erased here and revoked at the provider.
    await o.callback((await authorize('u_leaver')).back);
    await collectTokens('u_leaver');
    const revoked = await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_leaver', headers: o.headers });
    expect(revoked.json().revoked[0].providerRevocation).toBe('succeeded');

    // Every flow's PKCE verifier, opened as the callback opens it.
    for (const row of await o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().execute()) {
      found.verifiers.add(o.t.ctx.vault.open(row.verifier, `oauth_flows|${row.id}|${row.server_id}`));
    }
  });
  afterAll(() => o.close());

  it('collected every kind of value it looks for', () => {
    // Three tokens each for u_keeper (connected, refreshed, replaced) and one for u_leaver.
    expect(found.accessTokens.size).toBe(4);
    expect(found.refreshTokens.size).toBe(4);
    expect(found.codes.size).toBe(4); // u_keeper twice, u_failed, u_leaver (a denial carries none)
    expect(found.states.size).toBe(6);
    expect(found.verifiers.size).toBe(6);
    for (const value of all()) expect(value.length).toBeGreaterThanOrEqual(20);
  });

  it('keeps them out of every stored row', async () => {
    const rows = await storedRowsText(o.t.ctx);
    expect(leaked(rows, all())).toEqual([]);
    // The search can see plaintext when it is there: external user ids and flow ids are stored as they are.
    expect(rows).toContain('u_keeper');
    expect(rows).toContain(failedFlowId);
  });

  // Only SQLite has a file of its own to read; on PostgreSQL the rows above are the whole store.
  if (engine === 'sqlite') {
    it('keeps them out of the SQLite file and its write-ahead log', () => {
      const files = sqliteFilesText(o.t.database.file!);
      for (const text of files) expect(leaked(text, all())).toEqual([]);
      expect(files.some((text) => text.includes('u_keeper'))).toBe(true);
    });
  }

  it('keeps them out of the logs', () => {
    const logs = o.t.logs.join('\n');
    expect(leaked(logs, all())).toEqual([]);
    // The callback's lines are in there: the failed flow was logged, by id.
    expect(logs).toContain(failedFlowId);
  });
});

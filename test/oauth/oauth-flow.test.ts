/**
 * The whole OAuth flow against a real authorization server (oidc-provider), on both engines:
 * start → sign in and consent → callback → read → forced refresh → revoke, each step checked at the
 * provider itself through RFC 7662 introspection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCredentialSecret } from '../../src/services/credentials/credentials.js';
import { ENGINES } from '../helpers/databases.js';
import { APP_REDIRECT, type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';

describe.each(ENGINES)('OAuth flow end to end on %s', (engine) => {
  for (const clientAuth of ['basic', 'post'] as const) {
    describe(`with client_secret_${clientAuth}`, () => {
      let o: OAuthTenant;
      beforeAll(async () => {
        o = await startOAuthTenant(engine, { clientAuth });
      });
      afterAll(() => o.close());

      it('connects, reads an active token, refreshes it on demand, and revokes it at the provider', async () => {
        const flow = await o.start({ externalUserId: 'u_42', redirectUri: APP_REDIRECT });
        expect(flow).toMatchObject({ provider: PROVIDER, externalUserId: 'u_42', status: 'pending' });
        expect(flow.id).toMatch(/^oflow_/);

        const back = await o.as.approve(flow.authorizationUrl, { accountId: 'alice' });
        expect(back.searchParams.get('code')).toBeTruthy();
        const callback = await o.callback(back);
        expect(callback.statusCode).toBe(303);
        const location = new URL(callback.headers.location as string);
        expect(`${location.origin}${location.pathname}`).toBe(APP_REDIRECT);
        expect(Object.fromEntries(location.searchParams)).toEqual({ status: 'success', flowId: flow.id, provider: PROVIDER });
        expect(o.as.grants.authorization_code).toBe(1);

        const first = await o.read('u_42');
        expect(first).toMatchObject({ provider: PROVIDER, type: 'oauth2', status: 'active', tokenType: 'bearer', scopes: ['api:read'], refreshedAt: null });
        expect(first.id).toMatch(/^cred_/);
        expect(first).not.toHaveProperty('refreshToken');
        expect(Date.parse(first.expiresAt) - o.t.clock.now().getTime()).toBe(3600_000);
        expect(await o.as.isActive(first.accessToken)).toBe(true);

        // A token still valid for an hour is served as it is...
        expect((await o.read('u_42')).accessToken).toBe(first.accessToken);
        expect(o.as.grants.refresh_token).toBe(0);

        // ...unless the reader wants it valid for longer than it is.
        o.t.clock.advance(1);
        const refreshed = await o.read('u_42', 3600);
        expect(o.as.grants.refresh_token).toBe(1);
        expect(refreshed.accessToken).not.toBe(first.accessToken);
        expect(refreshed.refreshedAt).toBe(o.t.clock.now().toISOString());
        expect(await o.as.isActive(refreshed.accessToken)).toBe(true);

        // The rotated refresh token was kept: a second forced refresh, once the 30 s refresh cooldown
        // has passed, succeeds with it.
        o.t.clock.advance(30);
        const again = await o.read('u_42', 3600);
        expect(o.as.grants.refresh_token).toBe(2);
        expect(again.status).toBe('active');
        expect(again.error).toBeUndefined();
        expect(await o.as.isActive(again.accessToken)).toBe(true);

        const stored = openCredentialSecret(o.t.ctx, await o.t.ctx.store.db.selectFrom('credentials').selectAll().executeTakeFirstOrThrow());
        const refreshToken = stored.type === 'oauth2' ? stored.refreshToken! : '';
        expect(await o.as.isActive(refreshToken)).toBe(true);

        const revoked = await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_42', headers: o.headers });
        expect(revoked.statusCode).toBe(200);
        expect(revoked.json()).toEqual({
          externalUserId: 'u_42',
          revoked: [{ id: first.id, provider: PROVIDER, revokedAt: o.t.clock.now().toISOString(), providerRevocation: 'succeeded' }],
        });
        expect(await o.as.isActive(refreshToken)).toBe(false);
        expect(await o.as.isActive(again.accessToken)).toBe(false);
        expect(await o.t.ctx.store.db.selectFrom('credentials').selectAll().execute()).toEqual([]);
      });

      it('shows a success page when the flow named no redirectUri, and makes the member', async () => {
        const { flowId, response } = await o.connect('page-user');
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.headers['cache-control']).toBe('no-store');
        expect(response.body).toContain('Acme connected');
        const flowRow = await o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', flowId).executeTakeFirstOrThrow();
        expect(flowRow).toMatchObject({ status: 'completed', error_code: null });
        expect(flowRow.credential_id).toMatch(/^cred_/);
        expect((await o.read('page-user')).status).toBe('active');
      });
    });
  }
});

/**
 * What DELETE /v1/end-users/{id} (CONTRACT 2.7) and a replacing flow (2.3) tell the provider, on both
 * engines, checked at a real authorization server (oidc-provider) through RFC 7662 introspection:
 * `succeeded` only when the provider really forgot the tokens, and Keyward's own copy erased whatever
 * the provider answered.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { addProviderLikeAcme, connectTo, storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { expectProblem } from '../helpers/problem-assertions.js';

/** A port on 127.0.0.1 where nothing listens any more: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(ENGINES)('provider revocation outcomes on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    // Like acme (same authorization server and client), but revoking fails, or cannot be asked for.
    await addProviderLikeAcme(o, 'broken', { revocationUrl: `${o.as.issuer}/no-such-endpoint` }); // answers 404
    await addProviderLikeAcme(o, 'offline', { revocationUrl: `http://127.0.0.1:${await closedPort()}/revoke` });
    await addProviderLikeAcme(o, 'plain', {}); // no revocation endpoint
  });
  afterAll(() => o.close());

  async function credentialIds(externalUserId: string): Promise<string[]> {
    const rows = await o.t.ctx.store.db
      .selectFrom('credentials as c')
      .innerJoin('audience_members as m', 'm.id', 'c.member_id')
      .select('c.id')
      .where('m.external_user_id', '=', externalUserId)
      .execute();
    return rows.map((r) => r.id);
  }

  it('reports each outcome on DELETE and erases every secret whatever the provider answered', async () => {
    const oauth = ['acme', 'broken', 'offline', 'plain'];
    for (const slug of oauth) await connectTo(o, slug, 'leaver');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'leaver', values: { apiKey: 'sk-proj-LEAVERabcdefghijklmnopqrstuvwx' } });
    const tokens = Object.fromEntries(await Promise.all(oauth.map(async (slug) => [slug, await storedCredential(o, 'leaver', slug)] as const)));
    const before = (await o.t.app.inject({ method: 'GET', url: '/v1/end-users/leaver', headers: o.headers })).json();
    const idOf = Object.fromEntries(before.credentials.map((c: { provider: string; id: string }) => [c.provider, c.id]));
    for (const slug of oauth) expect(await o.as.isActive(tokens[slug]!.refreshToken)).toBe(true);

    o.t.clock.advance(1);
    const response = await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/leaver', headers: o.headers });
    expect(response.statusCode, response.body).toBe(200);
    const revokedAt = o.t.clock.now().toISOString();
    const outcome = (provider: string, providerRevocation: string) => ({ id: idOf[provider], provider, revokedAt, providerRevocation });
    expect(response.json()).toEqual({
      externalUserId: 'leaver',
      revoked: [
        outcome('acme', 'succeeded'),
        outcome('broken', 'failed'), // 404 from the revocation URL
        outcome('offline', 'failed'), // connection refused
        outcome('openai', 'not_supported'), // static
        outcome('plain', 'not_supported'), // no revocation endpoint
      ],
    });

    // succeeded: the provider forgot both tokens. failed and not_supported: it still knows them.
    expect(await o.as.isActive(tokens.acme!.refreshToken)).toBe(false);
    expect(await o.as.isActive(tokens.acme!.accessToken)).toBe(false);
    for (const slug of ['broken', 'offline', 'plain']) expect(await o.as.isActive(tokens[slug]!.refreshToken)).toBe(true);
    // Whatever the provider said, Keyward keeps nothing: no row, no member.
    expect(await credentialIds('leaver')).toEqual([]);
    expectProblem(await o.t.app.inject({ method: 'GET', url: '/v1/end-users/leaver', headers: o.headers }), 404, 'end_user_not_found');
  });

  it('revokes one provider with ?provider= and keeps the member and its other credential', async () => {
    await o.connect('partial');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'partial', values: { apiKey: 'sk-proj-PARTIALabcdefghijklmnopqrstuvw' } });
    const acme = await storedCredential(o, 'partial');
    const response = await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/partial?provider=acme', headers: o.headers });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      externalUserId: 'partial',
      revoked: [{ id: acme.id, provider: 'acme', revokedAt: o.t.clock.now().toISOString(), providerRevocation: 'succeeded' }],
    });
    expect(await o.as.isActive(acme.refreshToken)).toBe(false);
    expect(await o.as.isActive(acme.accessToken)).toBe(false);
    const left = await o.t.app.inject({ method: 'GET', url: '/v1/end-users/partial', headers: o.headers });
    expect(left.json().credentials.map((c: { provider: string }) => c.provider)).toEqual(['openai']);

    const staticOnly = await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/partial?provider=openai', headers: o.headers });
    expect(staticOnly.json().revoked).toEqual([expect.objectContaining({ provider: 'openai', providerRevocation: 'not_supported' })]);
    expect(await credentialIds('partial')).toEqual([]);
  });

  it('keeps one credential when a second flow completes, and revokes the replaced tokens at the provider', async () => {
    await o.connect('twice');
    const old = await storedCredential(o, 'twice');
    const codes = o.as.grants.authorization_code;
    await o.connect('twice');
    expect(o.as.grants.authorization_code).toBe(codes + 1);
    const current = await storedCredential(o, 'twice');
    expect(await credentialIds('twice')).toEqual([current.id]);
    expect(current.id).not.toBe(old.id);
    expect(await o.as.isActive(old.refreshToken)).toBe(false);
    expect(await o.as.isActive(old.accessToken)).toBe(false);
    // The new grant is untouched by the old one's revocation.
    expect(await o.as.isActive(current.refreshToken)).toBe(true);
    expect(await o.as.isActive(current.accessToken)).toBe(true);
    expect((await o.read('twice')).accessToken).toBe(current.accessToken);
  });
});

/**
 * Every SDK operation against a real Keyward listening on a real socket, with a real OAuth provider
 * (oidc-provider) and the hosted form driven as a browser would: what each call sends and what it
 * answers, through the SDK's own types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EndUserSummary, Keyward, KeywardError } from '../../src/sdk/index.js';
import { connectStatic, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { APP_REDIRECT, type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { addKeyApiProvider, KEY_API, startProviderApi } from '../helpers/provider-api-stand-in.js';

const OAUTH_USER = 'auth0|a/b ü';
const openaiKey = (id: string) => `sk-proj-${id}-openaiopenaiopenaiopenai`;

let o: OAuthTenant;
let keyward: Keyward;

beforeAll(async () => {
  o = await startOAuthTenant('sqlite', { listen: true, accessTokenTtlSeconds: 600 });
  keyward = new Keyward({ baseUrl: o.t.ctx.publicUrl, accountKey: o.tenant.accountKey, serverKey: o.tenant.serverKey });
});
afterAll(() => o?.close());

describe('startOAuth and getEndUser', () => {
  it('starts a flow whose authorization URL a real provider completes, then reads and refreshes the token', async () => {
    const flow = await keyward.startOAuth(PROVIDER, { externalUserId: OAUTH_USER, redirectUri: APP_REDIRECT, scopes: ['api:read'], expiresIn: 120 });
    expect(flow).toMatchObject({ provider: PROVIDER, externalUserId: OAUTH_USER, status: 'pending' });
    expect(flow.id).toMatch(/^oflow_/);
    expect(Date.parse(flow.expiresAt) - Date.parse(flow.createdAt)).toBe(120_000);
    const authorization = new URL(flow.authorizationUrl);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('scope')).toBe('api:read');

    const back = await o.as.approve(flow.authorizationUrl);
    const callback = await o.callback(back);
    expect(callback.statusCode).toBe(303);
    expect(callback.headers.location).toContain(`flowId=${flow.id}`);

    // The id travels percent-encoded ('|', '/', ' ' and 'ü' included) and comes back as it was.
    const member = await keyward.getEndUser(OAUTH_USER, { minValiditySeconds: 0 });
    expect(member.externalUserId).toBe(OAUTH_USER);
    const first = member.credentials.find((c) => c.provider === PROVIDER)!;
    expect(first).toMatchObject({ type: 'oauth2', status: 'active', tokenType: 'bearer', refreshedAt: null, scopes: ['api:read'] });
    expect(first.accessToken).toEqual(expect.any(String));
    expect(await o.as.isActive(first.accessToken!)).toBe(true);

    // minValiditySeconds reaches the service: asking for more than the token's 600 s refreshes it.
    o.t.clock.advance(60);
    const refreshed = (await keyward.getEndUser(OAUTH_USER, { minValiditySeconds: 900 })).credentials.find((c) => c.provider === PROVIDER)!;
    expect(refreshed.accessToken).not.toBe(first.accessToken);
    expect(refreshed.refreshedAt).toBe(o.t.clock.now().toISOString());
    // Without it, the default of 60 s leaves a fresh token as it is.
    const again = (await keyward.getEndUser(OAUTH_USER)).credentials.find((c) => c.provider === PROVIDER)!;
    expect(again.accessToken).toBe(refreshed.accessToken);
  });
});

describe('connectStatic', () => {
  it('answers a hosted form that, once filled in, gives the end user a static credential', async () => {
    const session = await keyward.connectStatic('openai', { externalUserId: 'u_static', redirectUri: APP_REDIRECT });
    expect(session).toMatchObject({ provider: 'openai', externalUserId: 'u_static', status: 'pending' });
    expect(session.id).toMatch(/^cfs_/);
    expect(session.fields).toEqual([
      { name: 'apiKey', label: 'API key', secret: true, required: true },
      { name: 'organizationId', label: 'Organization ID', secret: false, required: false },
    ]);
    expect(Date.parse(session.expiresAt) - Date.parse(session.createdAt)).toBe(1800_000);

    const visit = await openHostedForm(o.t.app, session.url);
    expect(visit.status).toBe(200);
    const posted = await postHostedForm(o.t.app, visit, { apiKey: openaiKey('static') });
    expect(posted.statusCode).toBe(303);
    expect(posted.headers.location).toContain(`sessionId=${session.id}`);

    const member = await keyward.getEndUser('u_static');
    expect(member.credentials).toEqual([
      expect.objectContaining({ provider: 'openai', type: 'static', status: 'active', values: { apiKey: openaiKey('static') } }),
    ]);
  });
});

describe('listEndUsers and endUsers', () => {
  const ids = ['list-1', 'list-2', 'list-3', 'list-4', 'list-5'];
  beforeAll(async () => {
    for (const id of ids) {
      // One second apart, so "oldest first" is one order.
      o.t.clock.advance(1);
      await connectStatic(o.t.app, o.headers, { externalUserId: id, values: { apiKey: openaiKey(id) } });
    }
  });

  it('answers one page with its cursor, and the next page from it', async () => {
    const first = await keyward.listEndUsers({ prefix: 'list-', limit: 2 });
    expect(first.data.map((m) => m.externalUserId)).toEqual(['list-1', 'list-2']);
    expect(first.hasMore).toBe(true);
    expect(first.nextCursor).toEqual(expect.any(String));
    // No secret in the list: the summary has no values or tokens.
    expect(first.data[0]!.credentials[0]).not.toHaveProperty('values');
    const second = await keyward.listEndUsers({ prefix: 'list-', limit: 2, cursor: first.nextCursor! });
    expect(second.data.map((m) => m.externalUserId)).toEqual(['list-3', 'list-4']);
  });

  it('iterates over every page, following nextCursor to the last', async () => {
    const seen: EndUserSummary[] = [];
    for await (const member of keyward.endUsers({ prefix: 'list-', limit: 2 })) seen.push(member);
    expect(seen.map((m) => m.externalUserId)).toEqual(ids);
    // The provider filter reaches the service: only the OAuth member holds an acme credential.
    const oauthOnly: string[] = [];
    for await (const member of keyward.endUsers({ provider: PROVIDER })) oauthOnly.push(member.externalUserId);
    expect(oauthOnly).toEqual([OAUTH_USER]);
  });

  it('ends at once on an empty audience', async () => {
    const seen: EndUserSummary[] = [];
    for await (const member of keyward.endUsers({ prefix: 'nobody-' })) seen.push(member);
    expect(seen).toEqual([]);
  });
});

describe('revokeEndUser', () => {
  it('revokes one provider, then every credential, and the end user leaves the audience', async () => {
    await connectStatic(o.t.app, o.headers, { externalUserId: OAUTH_USER, values: { apiKey: openaiKey('both') } });
    const one = await keyward.revokeEndUser(OAUTH_USER, { provider: 'openai' });
    expect(one.externalUserId).toBe(OAUTH_USER);
    expect(one.revoked).toEqual([expect.objectContaining({ provider: 'openai', providerRevocation: 'not_supported' })]);
    expect((await keyward.getEndUser(OAUTH_USER)).credentials.map((c) => c.provider)).toEqual([PROVIDER]);

    const token = (await keyward.getEndUser(OAUTH_USER)).credentials[0]!.accessToken!;
    const all = await keyward.revokeEndUser(OAUTH_USER);
    expect(all.revoked).toEqual([expect.objectContaining({ provider: PROVIDER, providerRevocation: 'succeeded' })]);
    expect(all.revoked[0]!.id).toMatch(/^cred_/);
    // RFC 7009 at the real provider: the token no longer works there.
    expect(await o.as.isActive(token)).toBe(false);
    const gone = await keyward.getEndUser(OAUTH_USER).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(KeywardError);
    expect(gone).toMatchObject({ status: 404, code: 'end_user_not_found' });
  });
});

describe('verify', () => {
  it("checks a static credential at its provider's API, and says which refusal the service answered", async () => {
    const api = await startProviderApi();
    try {
      await addKeyApiProvider(o.t.ctx, o.tenant.serverId, api);
      const form = await keyward.connectStatic(KEY_API.slug, { externalUserId: 'u_verify' });
      expect((await postHostedForm(o.t.app, await openHostedForm(o.t.app, form.url), { apiKey: 'kk_sdk_key', account: 'acct-1' })).statusCode).toBe(200);

      const valid = await keyward.verify({ externalUserId: 'u_verify', provider: KEY_API.slug });
      expect(valid).toEqual({ provider: KEY_API.slug, outcome: 'valid', at: o.t.clock.now().toISOString() });
      expect(api.requests.at(-1)!.headers.authorization).toBe('Bearer kk_sdk_key');

      api.answer = () => 403;
      expect(await keyward.verify({ externalUserId: 'u_verify', provider: KEY_API.slug })).toMatchObject({ outcome: 'rejected' });
      const [credential] = (await keyward.getEndUser('u_verify')).credentials;
      expect(credential).toMatchObject({ status: 'needs_reauth', error: { code: 'credential_rejected' }, lastCheck: { outcome: 'rejected' } });

      const refused = await keyward.verify({ externalUserId: 'nobody', provider: KEY_API.slug }).catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 404, code: 'end_user_not_found' });
    } finally {
      await api.close();
    }
  });
});

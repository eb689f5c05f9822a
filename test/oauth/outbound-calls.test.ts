/**
 * CONTRACT 3 at call time, through the API and the callback as users meet them: a provider stored while
 * private URLs were allowed is never called by a node where they are not (code exchange, refresh,
 * revocation: each fails as a provider error and no request arrives); a name is checked by every
 * address it resolves to (IPv4-compatible IPv6 ones included) and the connection goes to the checked
 * address; redirects are not followed; a body past 1 MiB, a token or scope past 16 KiB or an overlong
 * token_type fails the flow (or the refresh) and nothing is stored.
 */
import type { LookupAddress } from 'node:dns';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addSeconds, iso } from '../../src/primitives/clock.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { storeCredential } from '../../src/services/credentials/credentials.js';
import { addCustomOAuthProvider } from '../../src/services/providers/custom-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { ENGINES } from '../helpers/databases.js';
import { type ScriptedTokenEndpoint, startScriptedTokenEndpoint } from '../helpers/scripted-token-endpoint.js';
import { type SecondNode, startSecondNode, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const APP_REDIRECT = 'https://app.example/keyward/done';

/** A resolver as dns.lookup would answer for names that exist nowhere else; records what it was asked. */
function tableResolver(table: Record<string, LookupAddress[]>) {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { asked, resolve };
}

describe.each(ENGINES)('outbound calls to providers on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let endpoint: ScriptedTokenEndpoint;
  let elsewhere: ScriptedTokenEndpoint;
  const nodes: SecondNode[] = [];
  beforeAll(async () => {
    ({ t, tenant, headers } = await startWithTenant(engine)); // private URLs allowed, as in development
    [endpoint, elsewhere] = await Promise.all([startScriptedTokenEndpoint(), startScriptedTokenEndpoint()]);
    await allowRedirectUri(t.ctx, tenant.serverId, APP_REDIRECT, CLI_ACTOR);
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await endpoint.close();
    await elsewhere.close();
    await t.close();
  });
  beforeEach(() => {
    endpoint.mode = 'tokens';
  });

  const addProvider = (slug: string, tokenUrl: string, revocationUrl?: string) =>
    addCustomOAuthProvider(t.ctx, {
      serverId: tenant.serverId,
      slug,
      authorizationUrl: 'https://idp.example.test/authorize',
      tokenUrl,
      revocationUrl,
      clientId: 'keyward-client',
      clientSecret: 'client-secret-that-must-not-leave-9d2e',
      tokenAuth: 'client_secret_post',
      actor: CLI_ACTOR,
    });
  const secondNode = async (options: Parameters<typeof startSecondNode>[1]) => {
    const node = await startSecondNode(t, options);
    nodes.push(node);
    return node;
  };
  const credentialCount = async () => (await t.ctx.store.db.selectFrom('credentials').select('id').execute()).length;

  /** Starts a flow on `app` and replays the provider's redirect back with a code: the callback's outcome. */
  async function flow(app: FastifyInstance, provider: string, externalUserId: string): Promise<string> {
    const start = await app.inject({ method: 'POST', url: `/v1/oauth/${provider}/start`, headers, payload: { externalUserId, redirectUri: APP_REDIRECT } });
    expect(start.statusCode, start.body).toBe(201);
    const state = new URL(start.json().authorizationUrl).searchParams.get('state')!;
    const back = await app.inject({ method: 'GET', url: `/oauth/callback?code=code-${externalUserId}&state=${encodeURIComponent(state)}` });
    expect(back.statusCode, back.body).toBe(303);
    const location = new URL(back.headers.location as string);
    return location.searchParams.get('status') === 'success' ? 'success' : location.searchParams.get('error')!;
  }

  /**
   * Stores a credential of `provider` as a finished flow would, due within the hour, and reads it on
   * `app` asking for an hour: the refresh's error, whose message says why the call failed.
   */
  async function refreshError(app: FastifyInstance, provider: string, externalUserId: string) {
    const now = t.clock.now();
    await storeCredential(t.ctx, {
      accountId: tenant.accountId,
      serverId: tenant.serverId,
      externalUserId,
      provider,
      secret: { type: 'oauth2', accessToken: 'at_due', refreshToken: 'rt_due', tokenType: 'bearer' },
      accessExpiresAt: iso(addSeconds(now, 60)),
      scopes: ['api:read'],
      actor: CLI_ACTOR,
      now: iso(now),
    });
    const read = await app.inject({ method: 'GET', url: `/v1/end-users/${externalUserId}?minValiditySeconds=3600`, headers });
    expect(read.statusCode, read.body).toBe(200);
    return read.json().credentials[0].error;
  }

  it('a provider stored while private URLs were allowed: exchange, refresh and revocation all fail on a strict node, and nothing reaches it', async () => {
    await addProvider('local-idp', endpoint.tokenUrl, endpoint.revocationUrl);
    expect(await flow(t.app, 'local-idp', 'u_kept')).toBe('success');
    const strict = await secondNode({ allowPrivateUrls: false });
    const arrived = endpoint.requests.length;
    const credentials = await credentialCount();

    expect(await flow(strict.app, 'local-idp', 'u_new')).toBe('provider_unavailable');
    expect(await credentialCount()).toBe(credentials);

    strict.clock.advance(600); // past any refresh cooldown; the token is now due for a reader asking an hour
    const read = await strict.app.inject({ method: 'GET', url: '/v1/end-users/u_kept?minValiditySeconds=3600', headers });
    expect(read.statusCode).toBe(200);
    expect(read.json().credentials[0]).toMatchObject({ provider: 'local-idp', status: 'active', error: { code: 'refresh_failed', retryable: true } });

    const revoked = await strict.app.inject({ method: 'DELETE', url: '/v1/end-users/u_kept', headers });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked).toEqual([expect.objectContaining({ provider: 'local-idp', providerRevocation: 'failed' })]);
    expect(endpoint.requests.length).toBe(arrived);
  });

  it('checks every address a name resolves to, and connects to the address it checked', async () => {
    const { asked, resolve } = tableResolver({
      'idp.example.test': [{ address: '127.0.0.1', family: 4 }],
      // A public address first, a private one after: one private address is enough to refuse.
      'rebind.example.test': [
        { address: '93.184.215.14', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
      // IPv4-compatible IPv6 (::/96, deprecated by RFC 4291): plain unicast to ipaddr.js, yet they carry
      // 127.0.0.1 and 10.0.0.5.
      'compat.example.test': [{ address: '::7f00:1', family: 6 }],
      'compat-private.example.test': [{ address: '::a00:5', family: 6 }],
    });
    await addProvider('named', `https://idp.example.test:${endpoint.port}/token`);
    await addProvider('rebinding', `https://rebind.example.test:${endpoint.port}/token`);
    await addProvider('compat', `https://compat.example.test:${endpoint.port}/token`);
    await addProvider('compat-private', `https://compat-private.example.test:${endpoint.port}/token`);
    await addProvider('named-http', `http://idp.example.test:${endpoint.port}/token`);
    const arrived = endpoint.requests.length;
    const connected = endpoint.connections;

    const strict = await secondNode({ allowPrivateUrls: false, resolve });
    expect(await flow(strict.app, 'named', 'u_named')).toBe('provider_unavailable');
    expect(await flow(strict.app, 'rebinding', 'u_rebind')).toBe('provider_unavailable');
    expect(await flow(strict.app, 'compat', 'u_compat')).toBe('provider_unavailable');
    expect(asked).toEqual(['idp.example.test', 'rebind.example.test', 'compat.example.test']);
    // Not even a connection: had 127.0.0.1 been let through, the socket would have connected and only
    // then failed its TLS handshake (the endpoint speaks plain http), sending no request.
    expect(endpoint.connections).toBe(connected);
    expect(endpoint.requests.length).toBe(arrived);

    // Why each call failed, as a refresh reports it: refused by the policy, not merely unreachable
    // (::7f00:1 and ::a00:5 lead nowhere here, so a request count could not tell the two apart).
    for (const [provider, user] of [
      ['named', 'u_named_due'],
      ['rebinding', 'u_rebind_due'],
      ['compat', 'u_compat_due'],
      ['compat-private', 'u_compat_private_due'],
    ]) {
      expect(await refreshError(strict.app, provider!, user!), provider).toMatchObject({
        code: 'refresh_failed',
        message: expect.stringContaining('the endpoint resolves to an address that is not public'),
      });
    }
    expect(endpoint.connections).toBe(connected);
    asked.length = 0;

    // Where private URLs are allowed the same name connects, to the one address the resolver gave:
    // idp.example.test exists in no DNS, so the request can only have arrived through it.
    const lenient = await secondNode({ allowPrivateUrls: true, resolve });
    expect(await flow(lenient.app, 'named-http', 'u_pinned')).toBe('success');
    expect(asked).toEqual(['idp.example.test']);
    expect(endpoint.requests.slice(arrived)).toEqual([{ method: 'POST', path: '/token', host: `idp.example.test:${endpoint.port}` }]);
  });

  it('does not follow a redirect: a token endpoint answering 307 fails the flow and the other server gets no request', async () => {
    await addProvider('redirecting', endpoint.tokenUrl);
    endpoint.mode = 'redirect';
    endpoint.redirectTo = elsewhere.tokenUrl;
    const credentials = await credentialCount();
    expect(await flow(t.app, 'redirecting', 'u_redirect')).toBe('provider_unavailable');
    expect(elsewhere.requests).toEqual([]);
    expect(await credentialCount()).toBe(credentials);
  });

  it('refuses a body over 1 MiB and a token over 16 KiB: the flow fails and nothing is stored', async () => {
    await addProvider('oversized', endpoint.tokenUrl);
    const credentials = await credentialCount();

    endpoint.mode = 'declared-2mib';
    expect(await flow(t.app, 'oversized', 'u_declared')).toBe('provider_unavailable');

    // No length to go by: the body is read as it streams and the connection dropped past the cap,
    // without waiting for the rest (which the endpoint sends only after 2 s).
    endpoint.mode = 'stream-past-cap';
    const began = Date.now();
    expect(await flow(t.app, 'oversized', 'u_streamed')).toBe('provider_unavailable');
    expect(Date.now() - began).toBeLessThan(1500);
    await expect.poll(() => endpoint.streamEnds).toEqual(['closed-early']);

    endpoint.mode = 'big-token';
    expect(await flow(t.app, 'oversized', 'u_big_token')).toBe('provider_unavailable');
    expect(await credentialCount()).toBe(credentials);

    // The same provider answering normally again works: the refusals were about the answers.
    endpoint.mode = 'tokens';
    expect(await flow(t.app, 'oversized', 'u_fine')).toBe('success');
  });

  it('refuses a scope over 16 KiB and a token_type over 64 characters, at the callback and at refresh: nothing is stored', async () => {
    await addProvider('wordy', endpoint.tokenUrl);
    const credentials = await credentialCount();
    endpoint.mode = 'big-scope';
    expect(await flow(t.app, 'wordy', 'u_big_scope')).toBe('provider_unavailable');
    endpoint.mode = 'long-token-type';
    expect(await flow(t.app, 'wordy', 'u_long_type')).toBe('provider_unavailable');
    expect(await credentialCount()).toBe(credentials);

    endpoint.mode = 'tokens';
    expect(await flow(t.app, 'wordy', 'u_wordy')).toBe('success');
    const read = async () => {
      t.clock.advance(600); // past the refresh cooldown; the token is due for a reader asking an hour
      const response = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_wordy?minValiditySeconds=3600', headers });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().credentials[0];
    };
    endpoint.mode = 'big-scope';
    expect(await read()).toMatchObject({
      scopes: ['api:read'],
      tokenType: 'bearer',
      error: { code: 'refresh_failed', message: expect.stringContaining('a scope over 16384 bytes') },
    });
    endpoint.mode = 'long-token-type';
    expect(await read()).toMatchObject({ scopes: ['api:read'], tokenType: 'bearer', error: { code: 'refresh_failed' } });
  });
});

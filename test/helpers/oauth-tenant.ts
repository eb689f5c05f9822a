/**
 * The usual start of an OAuth suite: Keyward on an engine, a tenant whose server has a custom OAuth
 * provider `acme` pointing at a real oidc-provider on 127.0.0.1, and the steps of a flow as helpers.
 */
import type { LightMyRequestResponse } from 'fastify';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomOAuthProvider, type CustomProviderApiInput } from '../../src/services/providers/custom-providers.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import type { Engine } from '../../src/store/store.js';
import { type AuthorizationServer, startAuthorizationServer } from './authorization-server.js';
import { startWithTenant, type Tenant, type TestApp, type TestAppOptions } from './test-app.js';

export const APP_REDIRECT = 'https://app.example/keyward/done';
export const PROVIDER = 'acme';

export interface OAuthTenant {
  t: TestApp;
  tenant: Tenant;
  headers: Record<string, string>;
  as: AuthorizationServer;
  /** POST /v1/oauth/acme/start; throws unless 201. */
  start(body: Record<string, unknown>): Promise<{ id: string; authorizationUrl: string }>;
  /** The provider's redirect back, replayed against Keyward as the end user's browser would. */
  callback(location: URL | string): Promise<LightMyRequestResponse>;
  /** A whole flow: start, sign in and consent, callback. Returns the flow id and the callback's answer. */
  connect(externalUserId: string, options?: { redirectUri?: string; accountId?: string }): Promise<{ flowId: string; response: LightMyRequestResponse }>;
  /** GET /v1/end-users/{id}: the member's credential of `acme`. */
  read(externalUserId: string, minValiditySeconds?: number): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export async function startOAuthTenant(
  engine: Engine,
  options: TestAppOptions & {
    clientAuth?: 'basic' | 'post';
    accessTokenTtlSeconds?: number;
    listen?: boolean;
    /** The API the gateway proxies `acme` to (CONTRACT 8.5): none unless given. */
    api?: CustomProviderApiInput;
  } = {},
): Promise<OAuthTenant> {
  const { t, tenant, headers } = await startWithTenant(engine, options);
  // A browser needs Keyward on a real socket, and the callback URL is built on the address it gets.
  if (options.listen) t.ctx.publicUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const as = await startAuthorizationServer({
    redirectUri: `${t.ctx.publicUrl}/oauth/callback`,
    accessTokenTtlSeconds: options.accessTokenTtlSeconds,
  });
  const clientAuth = options.clientAuth ?? 'basic';
  await addCustomOAuthProvider(t.ctx, {
    serverId: tenant.serverId,
    slug: PROVIDER,
    name: 'Acme',
    authorizationUrl: as.authorizationUrl,
    tokenUrl: as.tokenUrl,
    revocationUrl: as.revocationUrl,
    clientId: as.clients[clientAuth].id,
    clientSecret: as.clients[clientAuth].secret,
    scopes: ['api:read'],
    tokenAuth: clientAuth === 'basic' ? 'client_secret_basic' : 'client_secret_post',
    ...(options.api ? { api: options.api } : {}),
    actor: CLI_ACTOR,
  });
  await allowRedirectUri(t.ctx, tenant.serverId, APP_REDIRECT, CLI_ACTOR);

  const start: OAuthTenant['start'] = async (body) => {
    const response = await t.app.inject({ method: 'POST', url: `/v1/oauth/${PROVIDER}/start`, headers, payload: body });
    if (response.statusCode !== 201) throw new Error(`start answered ${response.statusCode}: ${response.body}`);
    return response.json();
  };
  const callback: OAuthTenant['callback'] = (location) => {
    const url = new URL(location);
    return t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  };
  return {
    t,
    tenant,
    headers,
    as,
    start,
    callback,
    async connect(externalUserId, connectOptions = {}) {
      const flow = await start({ externalUserId, ...(connectOptions.redirectUri ? { redirectUri: connectOptions.redirectUri } : {}) });
      const back = await as.approve(flow.authorizationUrl, { accountId: connectOptions.accountId });
      return { flowId: flow.id, response: await callback(back) };
    },
    async read(externalUserId, minValiditySeconds) {
      const query = minValiditySeconds === undefined ? '' : `?minValiditySeconds=${minValiditySeconds}`;
      const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(externalUserId)}${query}`, headers });
      if (response.statusCode !== 200) throw new Error(`read answered ${response.statusCode}: ${response.body}`);
      return response.json().credentials.find((c: { provider: string }) => c.provider === PROVIDER);
    },
    async close() {
      await as.close();
      await t.close();
    },
  };
}

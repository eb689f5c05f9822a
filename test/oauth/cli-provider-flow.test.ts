/**
 * The operator sets everything up with the CLI process (account, server, key, redirect URI, and a
 * custom OAuth provider pointing at a real oidc-provider); the service, on the same database and
 * master key, then runs a whole flow with it. This is what proves the CLI sealed the client secret
 * the way the service opens it, and stored a definition the service's OAuth client can use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthorizationServer, startAuthorizationServer } from '../helpers/authorization-server.js';
import { cliEnv, cliJson } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { APP_REDIRECT } from '../helpers/oauth-tenant.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';

const SLOW = 180_000;

describe.each(ENGINES)('a custom OAuth provider added by the CLI process, used by the service on %s', (engine) => {
  let t: TestApp;
  let as: AuthorizationServer;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestApp(engine);
    as = await startAuthorizationServer({ redirectUri: `${t.ctx.publicUrl}/oauth/callback` });
    env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') });
  });
  afterAll(async () => {
    await as?.close();
    await t?.close();
  });

  it('connects, reads and revokes through a provider whose client only the CLI was given', { timeout: SLOW }, async () => {
    const { accountId } = await cliJson(env, ['account', 'create', '--name', 'CLI Co', '--email', 'ops@cli.test']);
    const [server, key] = await Promise.all([
      cliJson(env, ['server', 'create', '--account', accountId as string, '--name', 'Production']),
      cliJson(env, ['key', 'create', '--account', accountId as string, '--label', 'backend']),
    ]);
    const serverId = server.serverId as string;
    await cliJson(env, ['server', 'allow-redirect', '--server', serverId, '--uri', APP_REDIRECT]);
    expect(
      await cliJson(env, [
        'provider',
        'add-oauth',
        '--server',
        serverId,
        '--slug',
        'local-idp',
        '--name',
        'Local IdP',
        '--authorization-url',
        as.authorizationUrl,
        '--token-url',
        as.tokenUrl,
        '--revocation-url',
        as.revocationUrl,
        // Joined with "=": a random secret may begin with "-", which would read as the next option.
        '--client-id',
        as.clients.post.id,
        `--client-secret=${as.clients.post.secret}`,
        '--scopes',
        'api:read,api:write',
        '--token-auth',
        'client_secret_post',
      ]),
    ).toEqual({ serverId, provider: 'local-idp' });
    const headers = keys({ accountKey: key.key as string, serverKey: server.serverKey as string });

    const started = await t.app.inject({
      method: 'POST',
      url: '/v1/oauth/local-idp/start',
      headers,
      payload: { externalUserId: 'u_cli', redirectUri: APP_REDIRECT },
    });
    expect(started.statusCode, started.body).toBe(201);
    const flow = started.json() as { id: string; authorizationUrl: string };
    const url = new URL(flow.authorizationUrl);
    expect(`${url.origin}${url.pathname}`).toBe(as.authorizationUrl);
    expect(url.searchParams.get('client_id')).toBe(as.clients.post.id);
    expect(url.searchParams.get('scope')).toBe('api:read api:write');

    const back = await as.approve(flow.authorizationUrl);
    const done = await t.app.inject({ method: 'GET', url: `${back.pathname}${back.search}` });
    expect(done.statusCode).toBe(303);
    expect(Object.fromEntries(new URL(done.headers.location as string).searchParams)).toEqual({ status: 'success', flowId: flow.id, provider: 'local-idp' });
    // oidc-provider registered this client as client_secret_post: it would have refused any other authentication.
    expect(as.grants.authorization_code).toBe(1);

    const read = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_cli', headers });
    expect(read.statusCode).toBe(200);
    const [credential, ...others] = read.json().credentials;
    expect(others).toEqual([]);
    expect(credential).toMatchObject({ provider: 'local-idp', type: 'oauth2', status: 'active', tokenType: 'bearer', scopes: ['api:read', 'api:write'] });
    expect(await as.isActive(credential.accessToken)).toBe(true);

    const deleted = await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_cli', headers });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().revoked).toEqual([
      { id: credential.id, provider: 'local-idp', revokedAt: t.clock.now().toISOString(), providerRevocation: 'succeeded' },
    ]);
    expect(await as.isActive(credential.accessToken)).toBe(false);
  });
});

/**
 * CONTRACT 3 at configuration time: a custom OAuth provider whose token or revocation URL points at
 * this machine or a private network is refused, through the service and through the dashboard's form,
 * with a message naming the field and the address, and nothing is stored. KEYWARD_ALLOW_PRIVATE_URLS
 * lifts exactly those refusals. The built-in catalog passes the strict policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_PROVIDERS } from '../../src/catalog/catalog.js';
import { browserUrlRefusal, outboundUrlRefusal } from '../../src/outbound/address-policy.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { DomainError } from '../../src/services/domain-error.js';
import { addCustomOAuthProvider } from '../../src/services/providers/custom-providers.js';
import { createServer } from '../../src/services/servers/servers.js';
import { DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { type SecondNode, startSecondNode, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { ALLOW_HINT, REFUSED_TOKEN_URLS } from './refused-urls.js';

const PUBLIC = { authorizationUrl: 'https://sso.acme.example/authorize', tokenUrl: 'https://sso.acme.example/token' };

/** What the service threw, as `code/field: detail`, or 'added'. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'added';
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return `${error.code}/${error.field}: ${error.detail}`;
  }
}

describe.each(ENGINES)('provider URLs at configuration time on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let lenient: SecondNode;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine, { allowPrivateUrls: false }));
    lenient = await startSecondNode(t, { allowPrivateUrls: true });
  });
  afterAll(async () => {
    await lenient.close();
    await t.close();
  });

  let slugs = 0;
  const add = (ctx: TestApp['ctx'], urls: { authorizationUrl?: string; tokenUrl?: string; revocationUrl?: string }) =>
    outcome(
      addCustomOAuthProvider(ctx, {
        serverId: tenant.serverId,
        slug: `custom-${++slugs}`,
        ...PUBLIC,
        ...urls,
        clientId: 'client',
        clientSecret: 'client-secret-never-shown-7f3a',
        actor: CLI_ACTOR,
      }),
    );

  it('refuses every private or loopback spelling of a token URL, naming the field and the address, and stores nothing', async () => {
    const before = await snapshotTables(t.ctx);
    for (const { url, because } of REFUSED_TOKEN_URLS) {
      expect(await add(t.ctx, { tokenUrl: url }), url).toBe(`validation_failed/tokenUrl: the token URL ${because}${ALLOW_HINT}`);
    }
    expect(await add(t.ctx, { revocationUrl: 'https://10.0.0.5/revoke' })).toBe(
      `validation_failed/revocationUrl: the revocation URL points at a private address (10.0.0.5)${ALLOW_HINT}`,
    );
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('accepts a name that does not resolve yet (its addresses are checked when it is called)', async () => {
    expect(await add(t.ctx, { tokenUrl: 'https://auth.acme.test/token', revocationUrl: 'https://127.0.0.1.nip.io/revoke' })).toBe('added');
  });

  it('asks only https of the authorization URL, which the end user’s browser opens and Keyward never calls', async () => {
    expect(await add(t.ctx, { authorizationUrl: 'http://sso.acme.example/authorize' })).toBe(
      `validation_failed/authorizationUrl: the authorization URL must be https${ALLOW_HINT}`,
    );
    expect(await add(t.ctx, { authorizationUrl: 'https://10.0.0.5/authorize' })).toBe('added');
  });

  it('refuses credentials, fragments and other schemes whatever KEYWARD_ALLOW_PRIVATE_URLS says', async () => {
    for (const ctx of [t.ctx, lenient.ctx]) {
      expect(await add(ctx, { tokenUrl: 'https://user:pass@sso.acme.example/token' })).toBe(
        'validation_failed/tokenUrl: the token URL must not carry credentials or a #fragment',
      );
      expect(await add(ctx, { tokenUrl: 'http://127.0.0.1:8080/token#x' })).toBe(
        'validation_failed/tokenUrl: the token URL must not carry credentials or a #fragment',
      );
      expect(await add(ctx, { revocationUrl: 'ftp://127.0.0.1/revoke' })).toBe('validation_failed/revocationUrl: the revocation URL must be https');
      expect(await add(ctx, { tokenUrl: '/token' })).toBe('validation_failed/tokenUrl: the token URL must be an absolute URL');
    }
  });

  it('accepts every one of them, http included, where KEYWARD_ALLOW_PRIVATE_URLS=true', async () => {
    for (const { url } of REFUSED_TOKEN_URLS) {
      expect(await add(lenient.ctx, { tokenUrl: url, revocationUrl: url, authorizationUrl: url.replace('https:', 'http:') }), url).toBe('added');
    }
  });

  it('refuses them in the dashboard’s custom provider form, beside the field, with a 422 and nothing stored', async () => {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Outbound');
    const { serverId } = await createServer(t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    const page = `/dashboard/servers/${serverId}/providers`;
    const submit = (fields: Record<string, string>) =>
      client.submit(page, `${page}/custom-oauth`, {
        oauthSlug: 'acme-sso',
        oauthName: 'Acme SSO',
        ...PUBLIC,
        revocationUrl: '',
        oauthClientId: 'acme-client-id',
        oauthClientSecret: 'acme-client-secret-5f1e9c',
        oauthScopes: '',
        tokenAuth: 'client_secret_post',
        ...fields,
      });
    const errorBeside = (body: string, field: string) => {
      const match = new RegExp(`<p class="error" id="field-${field}-error">([^<]*)</p>`).exec(body);
      return match ? visible(match[1]!, ' ').trim() : null;
    };
    const before = await snapshotTables(t.ctx);
    for (const { url, because } of REFUSED_TOKEN_URLS) {
      const refused = await submit({ tokenUrl: url });
      expect(refused.statusCode, url).toBe(422);
      expect(errorBeside(refused.body, 'tokenUrl'), url).toBe(`The token URL ${because}${ALLOW_HINT}.`);
      expect(refused.body).not.toContain('acme-client-secret-5f1e9c');
    }
    const revocation = await submit({ revocationUrl: 'https://169.254.169.254/revoke' });
    expect(errorBeside(revocation.body, 'revocationUrl')).toBe(`The revocation URL points at a link-local address (169.254.169.254)${ALLOW_HINT}.`);
    expect(await snapshotTables(t.ctx)).toEqual(before);

    // The same user, signed in, on a node where private URLs are allowed (sessions live in the database).
    const onLenient = new DashboardClient(lenient.app);
    for (const [name, value] of client.cookies) onLenient.cookies.set(name, value);
    const added = await onLenient.submit(page, `${page}/custom-oauth`, {
      oauthSlug: 'local-idp',
      oauthName: '',
      authorizationUrl: 'http://localhost:8080/authorize',
      tokenUrl: 'http://127.1:8080/token',
      revocationUrl: 'https://[fd00::1]/revoke',
      oauthClientId: 'local',
      oauthClientSecret: 'local-secret',
      oauthScopes: '',
      tokenAuth: 'client_secret_post',
    });
    expect(added.statusCode, added.body).toBe(303);
    expect(added.headers.location).toBe(`${page}?notice=provider-added`);
  });
});

describe('the built-in catalog', () => {
  it('passes the strict policy: every token and revocation URL is https on a public name, every authorization URL https', () => {
    expect(OAUTH_PROVIDERS.length).toBeGreaterThan(10);
    for (const provider of OAUTH_PROVIDERS) {
      expect(outboundUrlRefusal(provider.tokenUrl, false), provider.tokenUrl).toBeNull();
      if (provider.revocationUrl) expect(outboundUrlRefusal(provider.revocationUrl, false), provider.revocationUrl).toBeNull();
      expect(browserUrlRefusal(provider.authorizationUrl, false), provider.authorizationUrl).toBeNull();
    }
  });
});

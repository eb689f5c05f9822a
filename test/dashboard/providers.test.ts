/**
 * A server's Providers tab over app.inject: a provider enabled on the page works through the API at
 * once; custom OAuth and static providers are added from their forms, with their API for the gateway;
 * each provider shows whether it can be proxied and checked (CONTRACT 8.5); refused forms answer 422
 * with the error beside the field and keep what was typed except secrets; a client secret never
 * appears in a page; CSRF and other accounts' users change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogProvider } from '../../src/catalog/catalog.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { createServer } from '../../src/services/servers/servers.js';
import { csrfOf, type DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { keys, startTestApp, type TestApp } from '../helpers/test-app.js';

/** The error paragraph beside a field, as the page wires it (aria-describedby points at this id). */
function errorBeside(body: string, field: string): string | null {
  const match = new RegExp(`<p class="error" id="field-${field}-error">([^<]*)</p>`).exec(body);
  return match ? visible(match[1]!, ' ').trim() : null;
}

describe.each(ENGINES)('a server’s Providers tab on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  /** A new account with its signed-in user, a business-mode server and an account key made by the services. */
  async function newUser() {
    const { client, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Providers');
    const { serverId, serverKey } = await createServer(t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    const { key } = await createAccountKey(t.ctx, { accountId, label: 'backend', actor: CLI_ACTOR });
    const page = `/dashboard/servers/${serverId}/providers`;
    return { client, accountId, serverId, page, headers: keys({ accountKey: key, serverKey }) };
  }
  const connect = (headers: Record<string, string>, provider: string) =>
    t.app.inject({ method: 'POST', url: `/v1/credentials/static/${provider}/connect`, headers, payload: { externalUserId: 'alice' } });
  const enable = (client: DashboardClient, page: string, fields: Record<string, string>) =>
    client.submit(page, page, { provider: '', clientId: '', clientSecret: '', scopes: '', ...fields });
  const customOAuth = (client: DashboardClient, page: string, fields: Record<string, string>) =>
    client.submit(page, `${page}/custom-oauth`, {
      oauthSlug: 'acme-sso',
      oauthName: 'Acme SSO',
      authorizationUrl: 'https://sso.acme.example/authorize',
      tokenUrl: 'https://sso.acme.example/token',
      revocationUrl: '',
      oauthClientId: 'acme-client-id',
      oauthClientSecret: 'acme-client-secret-5f1e9c',
      oauthScopes: 'read write',
      tokenAuth: 'client_secret_post',
      ...fields,
    });

  it('enables a static provider from the catalog, after which the API connects through it', async () => {
    const { client, page, headers } = await newUser();
    const empty = await client.get(page);
    expect(empty.statusCode).toBe(200);
    expect(empty.headers['content-security-policy']).toContain("script-src 'self'");
    expect(empty.body).not.toMatch(/<script>|\son[a-z]+="/);
    expect(empty.body).toContain(`<a href="${page}" aria-current="page">Providers</a>`);
    expect(visible(empty.body, ' ')).toContain('No providers enabled yet. Enable one from the catalog below, or add a custom provider.');
    expect(visible(empty.body, ' ')).toContain('Register this callback URL in it: http://keyward.test/oauth/callback');
    for (const heading of ['Enable a provider', 'Add a custom OAuth provider', 'Add a custom static provider'])
      expect(empty.body).toContain(`>${heading}</h2>`);
    expect(empty.body).toContain('<option value="github">GitHub (OAuth)</option>');
    expect(empty.body).toContain('<option value="openai">OpenAI (static API key)</option>');
    expect(empty.body).toMatch(/<input id="field-clientSecret" name="clientSecret" type="password"/);
    expect((await connect(headers, 'openai')).statusCode).not.toBe(201);

    const enabled = await enable(client, page, { provider: 'openai' });
    expect(enabled.statusCode).toBe(303);
    expect(enabled.headers.location).toBe(`${page}?notice=provider-enabled`);
    const listed = await client.get(enabled.headers.location!);
    expect(listed.body).toContain('<p class="notice" role="status">Provider enabled on this server.</p>');
    expect(visible(listed.body, ' ')).toMatch(/OpenAI openai Static — — \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(visible(listed.body, ' ')).not.toContain('No providers enabled yet');

    expect((await connect(headers, 'openai')).statusCode).toBe(201);
  });

  it('refuses an OAuth provider without its client id beside Client ID, keeping the typed values but not the secret', async () => {
    const { client, page, serverId } = await newUser();
    const before = await snapshotTables(t.ctx);
    const refused = await enable(client, page, { provider: 'github', clientSecret: 'gh-typed-secret-31d7', scopes: 'repo, read:user' });
    expect(refused.statusCode).toBe(422);
    expect(errorBeside(refused.body, 'clientId')).toBe('GitHub is an OAuth provider: give the OAuth client id and secret of your app.');
    expect(refused.body).toMatch(
      /<input id="field-clientId" name="clientId" type="text" value="" autocomplete="off" aria-invalid="true" aria-describedby="field-clientId-hint field-clientId-error">/,
    );
    expect(errorBeside(refused.body, 'clientSecret')).toBeNull();
    expect(refused.body).toContain('<option value="github" selected>GitHub (OAuth)</option>');
    expect(refused.body).toContain('value="repo, read:user"');
    expect(refused.body).not.toContain('gh-typed-secret-31d7');
    expect(await snapshotTables(t.ctx)).toEqual(before);

    const nothingChosen = await enable(client, page, {});
    expect(nothingChosen.statusCode).toBe(422);
    expect(errorBeside(nothingChosen.body, 'provider')).toBe('Choose a provider.');

    const staticWithClient = await enable(client, page, { provider: 'openai', clientId: 'not-for-static' });
    expect(staticWithClient.statusCode).toBe(422);
    expect(errorBeside(staticWithClient.body, 'clientId')).toBe('OpenAI takes static credentials: it has no OAuth client or scopes.');

    const ok = await enable(client, page, { provider: 'github', clientId: 'Iv1.gh-client', clientSecret: 'gh-typed-secret-31d7', scopes: 'repo, read:user' });
    expect(ok.statusCode).toBe(303);
    const listed = await client.get(page);
    expect(visible(listed.body, ' ')).toMatch(/GitHub github OAuth Iv1\.gh-client repo read:user \d{4}-/);
    expect(listed.body).not.toContain('gh-typed-secret-31d7');
    const row = await t.ctx.store.db
      .selectFrom('server_providers')
      .selectAll()
      .where('server_id', '=', serverId)
      .where('provider', '=', 'github')
      .executeTakeFirstOrThrow();
    expect(row.client_id).toBe('Iv1.gh-client');
    expect(Buffer.from(row.client_secret!).toString('latin1')).not.toContain('gh-typed-secret-31d7');

    expect((await enable(client, page, { provider: 'google', clientId: 'g-client', clientSecret: 'g-secret-77aa' })).statusCode).toBe(303);
    expect(visible((await client.get(page)).body, ' ')).toMatch(/Google google OAuth g-client openid email profile \(defaults\) \d{4}-/);
  });

  it('adds a custom OAuth provider and a custom static one, both listed as Custom; the client secret never shows', async () => {
    const { client, page, serverId, headers } = await newUser();
    const added = await customOAuth(client, page, {});
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(`${page}?notice=provider-added`);

    const staticAdded = await client.submit(page, `${page}/custom-static`, {
      staticSlug: 'acme-crm',
      staticName: 'Acme CRM',
      fields: 'apiKey:API key:secret\r\n\r\nregion:Region:optional',
    });
    expect(staticAdded.statusCode).toBe(303);
    const listed = await client.get(`${page}?notice=provider-added`);
    expect(listed.body).toContain('<p class="notice" role="status">Custom provider added and enabled on this server.</p>');
    const text = visible(listed.body, ' ');
    expect(text).toMatch(/Acme CRM Custom acme-crm Static — — \d{4}-/);
    expect(text).toMatch(/Acme SSO Custom acme-sso OAuth acme-client-id read write \d{4}-/);
    expect((await connect(headers, 'acme-crm')).statusCode).toBe(201);

    for (const url of [page, `/dashboard/servers/${serverId}`, `/dashboard/servers/${serverId}/audience`, '/dashboard/audit']) {
      expect((await client.get(url)).body).not.toContain('acme-client-secret-5f1e9c');
    }
  });

  /** The table's row of one provider, as a reader sees it (cells joined by spaces). */
  const rowOf = (body: string, slug: string) => {
    const row = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].find((m) => m[1]!.includes(`<code>${slug}</code>`));
    return row ? visible(row[1]!, ' ').trim() : null;
  };
  const customStatic = (client: DashboardClient, page: string, fields: Record<string, string>) =>
    client.submit(page, `${page}/custom-static`, {
      staticSlug: 'acme-crm',
      staticName: 'Acme CRM',
      fields: 'apiKey:API key:secret\nregion:Region:optional',
      staticApiBaseUrl: '',
      staticApiHosts: '',
      auth: '',
      verify: '',
      ...fields,
    });
  const storedApi = async (serverId: string, slug: string) => JSON.parse((await t.ctx.store.providers.customDefinition(serverId, slug))!).api;

  it('shows whether each enabled provider can be proxied (Proxy) and checked (Checked)', async () => {
    const { client, page } = await newUser();
    const enabling: Record<string, string>[] = [
      { provider: 'openai' },
      { provider: 'mailgun' },
      { provider: 'github', clientId: 'Iv1.gh', clientSecret: 'gh-secret-1a2b' },
    ];
    for (const fields of enabling) {
      expect((await enable(client, page, fields)).statusCode).toBe(303);
    }
    expect((await customOAuth(client, page, {})).statusCode).toBe(303);
    // The tests' catalog drops every verify request (test-app.ts); this page only lists, so the real one is shown here.
    const testCatalog = t.ctx.catalog;
    t.ctx.catalog = catalogProvider;
    const listed = await client.get(page).finally(() => {
      t.ctx.catalog = testCatalog;
    });
    expect(listed.body).toContain('<th scope="col">Proxy</th><th scope="col">Checked</th></tr></thead>');
    // OpenAI: an API and a verify request; Mailgun: an API, no verify (an EU key would be refused);
    // GitHub: OAuth, proxied, never checked; a custom provider without API fields: neither.
    expect(rowOf(listed.body, 'openai')).toMatch(/ Yes Yes$/);
    expect(rowOf(listed.body, 'mailgun')).toMatch(/ Yes —$/);
    expect(rowOf(listed.body, 'github')).toMatch(/ Yes —$/);
    expect(rowOf(listed.body, 'acme-sso')).toMatch(/ — —$/);
    expect(visible(listed.body, ' ')).toContain('Proxy: calls to the provider’s API can go through Keyward’s gateway with the stored credential.');
  });

  it('adds custom providers with their API fields: stored as the CLI stores them, shown as Proxy and Checked', async () => {
    const { client, page, serverId } = await newUser();
    const form = await client.get(page);
    for (const [name, label] of [
      ['oauthApiBaseUrl', 'API base URL'],
      ['oauthApiHosts', 'API hosts'],
      ['staticApiBaseUrl', 'API base URL'],
      ['staticApiHosts', 'API hosts'],
      ['auth', 'Auth'],
      ['verify', 'Verify request'],
    ]) {
      expect(form.body).toContain(`<label for="field-${name}">${label} <span class="optional">(optional)</span></label>`);
    }

    const staticAdded = await customStatic(client, page, {
      staticApiBaseUrl: 'https://api.acme-crm.example/v2',
      staticApiHosts: 'eu.acme-crm.example,\r\n*.files.acme-crm.example',
      auth: 'header:x-api-key:{apiKey}',
      verify: 'GET /me',
    });
    expect(staticAdded.statusCode, staticAdded.body.slice(0, 300)).toBe(303);
    expect(await storedApi(serverId, 'acme-crm')).toEqual({
      apiBaseUrl: 'https://api.acme-crm.example/v2',
      apiHosts: ['eu.acme-crm.example', '*.files.acme-crm.example'],
      auth: 'header:x-api-key:{apiKey}',
      verify: 'GET /me',
    });

    const oauthAdded = await customOAuth(client, page, { oauthApiBaseUrl: 'https://api.acme.example', oauthApiHosts: 'uploads.acme.example' });
    expect(oauthAdded.statusCode).toBe(303);
    expect(await storedApi(serverId, 'acme-sso')).toEqual({
      apiBaseUrl: 'https://api.acme.example',
      apiHosts: ['uploads.acme.example'],
    });

    // A static one with an API but no verify request: proxied, not checked.
    const unchecked = await customStatic(client, page, { staticSlug: 'acme-mail', staticApiBaseUrl: 'https://api.acme-mail.example', auth: 'bearer:apiKey' });
    expect(unchecked.statusCode).toBe(303);

    const listed = await client.get(page);
    expect(rowOf(listed.body, 'acme-crm')).toMatch(/^Acme CRM Custom acme-crm Static — — .* Yes Yes$/);
    expect(rowOf(listed.body, 'acme-sso')).toMatch(/^Acme SSO Custom acme-sso OAuth acme-client-id read write .* Yes —$/);
    expect(rowOf(listed.body, 'acme-mail')).toMatch(/ Yes —$/);
  });

  it('refuses bad API fields beside their fields, keeping what was typed, and stores nothing', async () => {
    const { client, page } = await newUser();
    const before = await snapshotTables(t.ctx);
    const refusals: [Record<string, string>, string, string | RegExp][] = [
      [
        { staticApiBaseUrl: 'https://api.acme-crm.example', auth: 'bearer {apiKey}' },
        'auth',
        'Auth: auth must start with bearer:, header:, basic: or query:, not "bearer {apiKey}".',
      ],
      [{ staticApiBaseUrl: 'https://api.acme-crm.example', auth: 'bearer:token' }, 'auth', 'Auth: bearer:FIELD names no field of the provider: "token".'],
      [{ staticApiBaseUrl: 'https://api.acme-crm.example', auth: 'header:Host:{apiKey}' }, 'auth', 'Auth: header:NAME:TEMPLATE may not set Host.'],
      [{ staticApiBaseUrl: 'https://api.acme-crm.example' }, 'auth', 'A static provider with an apiBaseUrl needs auth, how its values are sent.'],
      [
        { staticApiBaseUrl: 'https://api.acme-crm.example/v2?key=1', auth: 'bearer:apiKey' },
        'staticApiBaseUrl',
        'The API base URL may not carry a user, a query or a fragment.',
      ],
      [{ staticApiBaseUrl: 'not a url', auth: 'bearer:apiKey' }, 'staticApiBaseUrl', 'The API base URL must be an absolute URL.'],
      [{ auth: 'bearer:apiKey' }, 'staticApiBaseUrl', 'API hosts, auth and verify need an API base URL.'],
      [
        { staticApiBaseUrl: 'https://api.acme-crm.example', auth: 'bearer:apiKey', verify: 'GET /../admin' },
        'verify',
        "Verify's path: the path holds a . or .. segment.",
      ],
      [
        { staticApiBaseUrl: 'https://api.acme-crm.example', auth: 'bearer:apiKey', staticApiHosts: '*.example' },
        'staticApiHosts',
        /"\*\.example" is not a host/,
      ],
    ];
    for (const [fields, field, message] of refusals) {
      const refused = await customStatic(client, page, fields);
      const label = JSON.stringify(fields);
      expect(refused.statusCode, label).toBe(422);
      const beside = errorBeside(refused.body, field);
      if (typeof message === 'string') expect(beside, label).toBe(message);
      else expect(beside, label).toMatch(message);
      // Only that field is marked, and what was typed comes back.
      expect(refused.body.match(/<p class="error" id="field-/g), label).toHaveLength(1);
      for (const value of Object.values(fields))
        expect(refused.body, label).toContain(`${value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}`);
    }
    const oauthRefused = await customOAuth(client, page, { oauthApiBaseUrl: 'https://api.acme.example#x' });
    expect(oauthRefused.statusCode).toBe(422);
    expect(errorBeside(oauthRefused.body, 'oauthApiBaseUrl')).toMatch(/API base URL/);
    expect(oauthRefused.body).not.toContain('acme-client-secret-5f1e9c');
    const oauthHosts = await customOAuth(client, page, { oauthApiHosts: 'uploads.acme.example' });
    expect(errorBeside(oauthHosts.body, 'oauthApiBaseUrl')).toBe('API hosts, auth and verify need an API base URL.');
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('refuses a bad slug, an endpoint carrying credentials and bad field specs beside their fields', async () => {
    const { client, page } = await newUser();
    const before = await snapshotTables(t.ctx);
    const badSlug = await customOAuth(client, page, { oauthSlug: 'Acme SSO' });
    expect(badSlug.statusCode).toBe(422);
    expect(errorBeside(badSlug.body, 'oauthSlug')).toBe('The slug must be 1 to 63 lower-case letters, digits and -, starting with a letter or digit.');
    expect(badSlug.body).toContain('value="https://sso.acme.example/authorize"');
    expect(badSlug.body).not.toContain('acme-client-secret-5f1e9c');

    // Plain http and private addresses are refused only without KEYWARD_ALLOW_PRIVATE_URLS (test/outbound).
    const withCredentials = await customOAuth(client, page, { tokenUrl: 'https://user:pass@sso.acme.example/token' });
    expect(withCredentials.statusCode).toBe(422);
    expect(errorBeside(withCredentials.body, 'tokenUrl')).toBe('The token URL must not carry credentials or a #fragment.');
    expect(errorBeside(withCredentials.body, 'authorizationUrl')).toBeNull();

    const missing = await customOAuth(client, page, { oauthClientId: '', oauthClientSecret: '' });
    expect(missing.statusCode).toBe(422);
    expect(errorBeside(missing.body, 'oauthClientId')).toBe('Enter the client ID.');
    expect(errorBeside(missing.body, 'oauthClientSecret')).toBe('Enter the client secret.');

    const builtIn = await client.submit(page, `${page}/custom-static`, { staticSlug: 'openai', staticName: '', fields: 'apiKey:API key:secret' });
    expect(builtIn.statusCode).toBe(422);
    expect(errorBeside(builtIn.body, 'staticSlug')).toBe('"openai" is a built-in provider: enable it instead, or pick another slug.');

    const badFields = await client.submit(page, `${page}/custom-static`, {
      staticSlug: 'acme-crm',
      staticName: 'Acme CRM',
      fields: 'apiKey:API key:secret\nregion:Region:secrit',
    });
    expect(badFields.statusCode).toBe(422);
    expect(errorBeside(badFields.body, 'fields')).toBe('Line 2: field "region:Region:secrit": "secrit" is neither secret nor optional.');
    expect(badFields.body).toContain(
      'aria-invalid="true" aria-describedby="field-fields-hint field-fields-error">apiKey:API key:secret\nregion:Region:secrit</textarea>',
    );
    expect(badFields.body).toContain('value="Acme CRM"');

    const noFields = await client.submit(page, `${page}/custom-static`, { staticSlug: 'acme-crm', staticName: '', fields: '  \n' });
    // No field at all is the service's refusal, in its words, beside Fields.
    expect(noFields.statusCode).toBe(422);
    expect(errorBeside(noFields.body, 'fields')).toBe('A static provider needs 1 to 20 fields.');
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('answers 403 to a form without its CSRF token or with a wrong one, and changes nothing', async () => {
    const { client, page } = await newUser();
    const before = await snapshotTables(t.ctx);
    const posts: [string, Record<string, string>][] = [
      [page, { provider: 'openai' }],
      [`${page}/custom-static`, { staticSlug: 'acme-crm', fields: 'apiKey:API key:secret' }],
      [
        `${page}/custom-oauth`,
        { oauthSlug: 'acme-sso', authorizationUrl: 'https://a.example/a', tokenUrl: 'https://a.example/t', oauthClientId: 'x', oauthClientSecret: 'y' },
      ],
    ];
    for (const [action, fields] of posts) {
      const missing = await client.post(action, fields);
      expect(missing.statusCode).toBe(403);
      expect(visible(missing.body, ' ')).toContain('This form could not be verified.');
      expect((await client.post(action, { ...fields, csrf: 'A'.repeat(43) })).statusCode).toBe(403);
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it("gives another account's user a 404 for every Providers URL and lets them change nothing", async () => {
    const owner = await newUser();
    const other = await newUser();
    const before = await snapshotTables(t.ctx);
    const seen = await other.client.get(owner.page);
    expect(seen.statusCode).toBe(404);
    expect(visible(seen.body, ' ')).toContain('This page does not exist, or it belongs to another account.');
    const csrf = csrfOf((await other.client.get(other.page)).body);
    const posts: [string, Record<string, string>][] = [
      [owner.page, { provider: 'openai' }],
      [`${owner.page}/custom-static`, { staticSlug: 'acme-crm', fields: 'apiKey:API key:secret' }],
      [
        `${owner.page}/custom-oauth`,
        { oauthSlug: 'acme-sso', authorizationUrl: 'https://a.example/a', tokenUrl: 'https://a.example/t', oauthClientId: 'x', oauthClientSecret: 'y' },
      ],
    ];
    for (const [action, fields] of posts) expect((await other.client.post(action, { csrf, ...fields })).statusCode).toBe(404);
    expect((await other.client.get('/dashboard/servers/srv_unknown/providers')).statusCode).toBe(404);
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });
});

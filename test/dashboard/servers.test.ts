/**
 * Servers over app.inject: a server made on the page gets a key shown once that opens the management
 * API; "Rotate key" with and without grace, a mode change, "Credentials can be read through the API"
 * (CONTRACT 8.2) and the allowed redirect URIs take effect on the API and the page; refused forms answer
 * 422 beside the field; a missing CSRF token and another account's user change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { listRedirectUris } from '../../src/services/servers/servers.js';
import { csrfOf, type DashboardClient, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SERVERS = '/dashboard/servers';
const KEY_IN_PAGE = /id="shown-once-value" class="secret" type="text" readonly value="(service_srv_[0-9a-f]{72})"/;
const SERVER_IN_PAGE = /action="\/dashboard\/servers\/(srv_[0-9a-f]{28})\/mode"/;

describe.each(ENGINES)('Servers pages on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  /** A new account with its signed-in user and an account key (made by the service) to call the API with. */
  async function newUser() {
    const { client, userId, accountId } = await newSignedInUser(t.app, t.ctx.store.db, 'Servers');
    const { key: accountKey } = await createAccountKey(t.ctx, { accountId, label: 'backend', actor: CLI_ACTOR });
    return { client, userId, accountId, accountKey };
  }
  /** Creates a server on the Servers page; returns its id and the key the answer shows once. */
  async function createOnPage(client: DashboardClient, name: string, mode = 'business') {
    const response = await client.submit(SERVERS, SERVERS, { name, mode });
    expect(response.statusCode, response.body.slice(0, 500)).toBe(200);
    return { response, serverId: SERVER_IN_PAGE.exec(response.body)![1]!, serverKey: KEY_IN_PAGE.exec(response.body)![1]! };
  }
  const callApi = (accountKey: string, serverKey: string) =>
    t.app.inject({ method: 'GET', url: '/v1/end-users', headers: { authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey } });
  const rotate = (client: DashboardClient, serverId: string, grace: string) =>
    client.submit(`${SERVERS}/${serverId}`, `${SERVERS}/${serverId}/rotate-key`, { grace });
  const serverRow = (serverId: string) => t.ctx.store.db.selectFrom('servers').selectAll().where('id', '=', serverId).executeTakeFirstOrThrow();
  const keyRows = (serverId: string) => t.ctx.store.db.selectFrom('server_keys').selectAll().where('server_id', '=', serverId).orderBy('created_at').execute();

  it('shows the empty state, creates a business server whose key (shown once) works with an account key, and lists it', async () => {
    const { client, userId, accountKey } = await newUser();
    const empty = await client.get(SERVERS);
    expect(empty.statusCode).toBe(200);
    expect(empty.headers['content-security-policy']).toContain("script-src 'self'");
    expect(visible(empty.body)).toContain('No servers yet. Create one to get its server API key.');
    expect(empty.body).toContain('<label for="field-name">Name</label>');
    expect(empty.body).toContain('<label for="field-mode">Mode</label>');
    expect(visible(empty.body)).toContain('Business mode has an audience of your end users');
    expect(empty.body).toContain('<button type="submit">Create server</button>');

    const { response, serverId, serverKey } = await createOnPage(client, 'Production <EU>');
    const text = visible(response.body);
    expect(text).toContain('Server created.');
    expect(text).toContain('Server API key');
    expect(text).toContain('Copy it now: it will not be shown again.');
    expect(response.body).toContain('data-copy="shown-once-value">Copy</button>');
    expect(response.body).toContain('<h1>Production &lt;EU&gt;</h1>');
    expect(response.body).toContain(`<a href="/dashboard/servers/${serverId}" aria-current="page">Overview</a>`);

    expect((await callApi(accountKey, serverKey)).statusCode).toBe(200);

    const list = await client.get(SERVERS);
    expect(list.body).toContain(`<a href="/dashboard/servers/${serverId}">Production &lt;EU&gt;</a>`);
    expect(list.body).toContain('<span class="badge ok">Business</span>');
    expect(list.body).toContain(`<code>service_srv_…${serverKey.slice(-4)}</code>`);
    expect(visible(list.body)).not.toContain('No servers yet.');

    // Shown once: neither the list nor a later visit of the overview carries the key.
    expect(list.body).not.toContain(serverKey);
    const later = await client.get(`${SERVERS}/${serverId}`);
    expect(later.statusCode).toBe(200);
    expect(later.body).not.toContain(serverKey);
    expect(visible(later.body)).not.toContain('Copy it now');
    expect(later.body).toContain(`service_srv_…${serverKey.slice(-4)}`);

    const event = await t.ctx.store.db.selectFrom('audit_events').selectAll().where('target_id', '=', serverId).executeTakeFirstOrThrow();
    expect(event.action).toBe('server.created');
    expect(event.actor).toBe(`user:${userId}`);
  });

  it('refuses a create form with the error beside its field, keeping what was typed, and makes nothing', async () => {
    const { client, accountId } = await newUser();
    const noName = await client.submit(SERVERS, SERVERS, { name: '  ', mode: 'business' });
    expect(noName.statusCode).toBe(422);
    expect(noName.body).toContain('<p class="error" id="field-name-error">Enter a name for the server.</p>');
    expect(noName.body).toContain('aria-invalid="true" aria-describedby="field-name-error"');

    const badMode = await client.submit(SERVERS, SERVERS, { name: 'Staging', mode: 'team' });
    expect(badMode.statusCode).toBe(422);
    expect(badMode.body).toContain('<p class="error" id="field-mode-error">The mode must be business or personal.</p>');
    expect(badMode.body).toContain('value="Staging"');

    const long = await client.submit(SERVERS, SERVERS, { name: 'x'.repeat(101), mode: 'personal' });
    expect(long.statusCode).toBe(422);
    expect(long.body).toContain('<p class="error" id="field-name-error">The server name must be 1 to 100 characters.</p>');
    expect(long.body).toContain('<option value="personal" selected>Personal</option>');

    const servers = await t.ctx.store.db.selectFrom('servers').select('id').where('account_id', '=', accountId).execute();
    expect(servers).toHaveLength(0);
  });

  it('rotates with no grace: the old key answers 401 service_key_revoked at once, the new one (shown once) works', async () => {
    const { client, accountKey } = await newUser();
    const { serverId, serverKey: oldKey } = await createOnPage(client, 'Rotating');
    const page = await client.get(`${SERVERS}/${serverId}`);
    expect(page.body).toContain('<label for="field-grace">Grace period</label>');
    expect(page.body).toContain('<option value="0">No grace: the old key stops at once</option>');
    expect(page.body).toContain('<button type="submit" class="secondary">Rotate key</button>');

    const rotated = await rotate(client, serverId, '0');
    expect(rotated.statusCode).toBe(200);
    expect(visible(rotated.body)).toContain('The server key was rotated.');
    expect(visible(rotated.body)).toContain('New server API key');
    const newKey = KEY_IN_PAGE.exec(rotated.body)![1]!;
    expect(newKey).not.toBe(oldKey);

    expectProblem(await callApi(accountKey, oldKey), 401, 'service_key_revoked');
    expect((await callApi(accountKey, newKey)).statusCode).toBe(200);

    const later = await client.get(`${SERVERS}/${serverId}`);
    expect(later.body).not.toContain(newKey);
    expect(later.body).toContain(`<code>service_srv_…${newKey.slice(-4)}</code>`);
    expect(visible(later.body)).not.toContain('Old keys still working');
  });

  it('rotates with 1 hour of grace: both keys work, the old one is listed with its end, and stops after the hour', async () => {
    const { client, accountKey } = await newUser();
    const { serverId, serverKey: oldKey } = await createOnPage(client, 'Graceful');
    const rotated = await rotate(client, serverId, '3600');
    expect(rotated.statusCode).toBe(200);
    const newKey = KEY_IN_PAGE.exec(rotated.body)![1]!;

    expect((await callApi(accountKey, oldKey)).statusCode).toBe(200);
    expect((await callApi(accountKey, newKey)).statusCode).toBe(200);
    const [old] = await keyRows(serverId);
    const page = await client.get(`${SERVERS}/${serverId}`);
    expect(visible(page.body)).toContain('Old keys still working');
    expect(page.body).toContain(`<tr><td><code>service_srv_…${oldKey.slice(-4)}</code></td>`);
    expect(page.body).toContain(`<time datetime="${old!.expires_at}">`);

    t.clock.advance(3601);
    expectProblem(await callApi(accountKey, oldKey), 401, 'service_key_revoked');
    expect((await callApi(accountKey, newKey)).statusCode).toBe(200);
  });

  it('refuses a grace period not on the list beside the field and makes no key', async () => {
    const { client } = await newUser();
    const { serverId } = await createOnPage(client, 'Strict');
    const refused = await rotate(client, serverId, '5');
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('<p class="error" id="field-grace-error">Choose a grace period from the list.</p>');
    expect(refused.body).not.toMatch(KEY_IN_PAGE);
    expect(await keyRows(serverId)).toHaveLength(1);
  });

  it('changes the mode: personal mode answers 403 server_not_business_mode on the API, business works again', async () => {
    const { client, accountKey } = await newUser();
    const { serverId, serverKey } = await createOnPage(client, 'Switching');
    const changed = await client.submit(`${SERVERS}/${serverId}`, `${SERVERS}/${serverId}/mode`, { mode: 'personal' });
    expect(changed.statusCode).toBe(303);
    expect(changed.headers.location).toBe(`${SERVERS}/${serverId}?notice=mode-changed`);
    const page = await client.get(changed.headers.location!);
    expect(page.body).toContain('<p class="notice" role="status">The mode was changed.</p>');
    expect(page.body).toContain('<span class="badge">Personal</span>');
    expectProblem(await callApi(accountKey, serverKey), 403, 'server_not_business_mode');

    const bad = await client.submit(`${SERVERS}/${serverId}`, `${SERVERS}/${serverId}/mode`, { mode: 'everyone' });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('<p class="error" id="field-mode-error">The mode must be business or personal.</p>');
    expect((await serverRow(serverId)).mode).toBe('personal');

    const back = await client.submit(`${SERVERS}/${serverId}`, `${SERVERS}/${serverId}/mode`, { mode: 'business' });
    expect(back.statusCode).toBe(303);
    expect((await callApi(accountKey, serverKey)).statusCode).toBe(200);
    // A query text is never echoed: an unknown notice code shows nothing.
    const spoof = await client.get(`${SERVERS}/${serverId}?notice=Your%20account%20is%20closed`);
    expect(spoof.body).not.toContain('class="notice"');
    expect(spoof.body).not.toContain('account is closed');
  });

  it('turns "Credentials can be read through the API" off and on: the read withholds secrets, then gives them back; audited', async () => {
    const { client, userId, accountKey } = await newUser();
    const { serverId, serverKey } = await createOnPage(client, 'Write-only');
    const overview = `${SERVERS}/${serverId}`;
    // A static provider of the server's own (no check request, so nothing is called) and a member's key for it.
    await addCustomStaticProvider(t.ctx, {
      serverId,
      slug: 'acme-keys',
      fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
      actor: CLI_ACTOR,
    });
    const headers = { authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey };
    const secret = 'acme-key-WRITEONLY-7c1d9e';
    await connectStatic(t.app, headers, { provider: 'acme-keys', externalUserId: 'member-1', values: { apiKey: secret } });
    const read = async () => {
      const response = await t.app.inject({ method: 'GET', url: '/v1/end-users/member-1', headers });
      expect(response.statusCode).toBe(200);
      return { body: response.body, credential: response.json().credentials[0] };
    };
    expect((await read()).credential).toMatchObject({ provider: 'acme-keys', values: { apiKey: secret } });

    const page = await client.get(overview);
    expect(page.body).toContain(
      '<label for="field-readable"><input id="field-readable" type="checkbox" name="readable" value="true" checked aria-describedby="field-readable-hint"> Credentials can be read through the API</label>',
    );
    expect(visible(page.body)).toContain('Turned off, GET /v1/end-users/{externalUserId} answers each credential without its secrets');
    expect(visible(page.body)).toContain('used only through the gateway’s proxy');
    expect(visible(page.body, ' ')).toContain('Secrets Readable through the API');
    expect(page.body).toContain('<button type="submit" class="secondary">Save</button>');

    // Unchecked, the box sends nothing: off.
    const off = await client.submit(overview, `${overview}/secrets-readable`, {});
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe(`${overview}?notice=secrets-withheld`);
    const withheld = await read();
    expect(withheld.body).not.toContain(secret);
    expect(withheld.credential).toMatchObject({ provider: 'acme-keys', status: 'active', secretsWithheld: true });
    expect(withheld.credential).not.toHaveProperty('values');
    const offPage = await client.get(off.headers.location!);
    expect(offPage.body).toContain('Credentials can no longer be read through the API: the read withholds their secrets.');
    expect(offPage.body).toContain('name="readable" value="true" aria-describedby="field-readable-hint">');
    expect(visible(offPage.body, ' ')).toContain('Secrets Withheld: write-only');

    // Saved again as it is: nothing changes and nothing is audited.
    const same = await client.submit(overview, `${overview}/secrets-readable`, {});
    expect(same.headers.location).toBe(`${overview}?notice=secrets-unchanged`);

    t.clock.advance(1);
    const on = await client.submit(overview, `${overview}/secrets-readable`, { readable: 'true' });
    expect(on.headers.location).toBe(`${overview}?notice=secrets-readable`);
    expect((await read()).credential).toMatchObject({ values: { apiKey: secret } });
    expect((await read()).credential).not.toHaveProperty('secretsWithheld');
    expect(visible((await client.get(on.headers.location!)).body)).toContain('Credentials can be read through the API again.');

    // A value no checkbox of ours sends is the 400 page, and changes nothing.
    const odd = await client.submit(overview, `${overview}/secrets-readable`, { readable: 'false' });
    expect(odd.statusCode).toBe(400);
    expect((await serverRow(serverId)).secrets_readable).toBe(1);

    const audited = await t.ctx.store.db
      .selectFrom('audit_events')
      .select(['action', 'actor', 'detail', 'target_id'])
      .where('server_id', '=', serverId)
      .where('action', '=', 'server.secrets_readable_changed')
      .orderBy('created_at')
      .execute();
    expect(audited.map((e) => [e.actor, e.target_id, JSON.parse(e.detail)])).toEqual([
      [`user:${userId}`, serverId, { from: true, to: false }],
      [`user:${userId}`, serverId, { from: false, to: true }],
    ]);
    const trail = visible((await client.get('/dashboard/audit')).body, ' ');
    expect(trail).toContain('Made Write-only write-only: credentials can no longer be read through the API');
    expect(trail).toContain('Let credentials of Write-only be read through the API again');
  });

  it('adds and removes allowed redirect URIs, refusing a bad one beside the field, audited', async () => {
    const { client, userId } = await newUser();
    const { serverId } = await createOnPage(client, 'Redirects');
    const overview = `${SERVERS}/${serverId}`;
    const first = await client.get(overview);
    expect(visible(first.body)).toContain('No redirect URIs yet.');
    expect(first.body).toContain('<label for="field-uri">Redirect URI</label>');

    const uri = 'https://app.example.test/connected?from=keyward&x=1';
    const added = await client.submit(overview, `${overview}/redirect-uris`, { uri });
    expect(added.statusCode).toBe(303);
    expect(added.headers.location).toBe(`${overview}?notice=redirect-added`);
    const listed = await client.get(added.headers.location!);
    expect(listed.body).toContain('The redirect URI was added.');
    expect(listed.body).toContain('<code id="redirect-uri-0">https://app.example.test/connected?from=keyward&amp;x=1</code>');
    expect(listed.body).toContain('aria-describedby="redirect-uri-0">Remove</button>');
    expect(await listRedirectUris(t.ctx, serverId)).toEqual([uri]);

    for (const [bad, message] of [
      ['not a url', 'The redirect URI must be an absolute URL.'],
      ['https://app.example.test/#done', 'The redirect URI must not have a fragment.'],
      ['ftp://files.example.test/', 'The redirect URI must be http(s).'],
      ['', 'Enter a redirect URI.'],
    ]) {
      const refused = await client.submit(overview, `${overview}/redirect-uris`, { uri: bad! });
      expect(refused.statusCode, bad).toBe(422);
      expect(refused.body).toContain(`<p class="error" id="field-uri-error">${message}</p>`);
      expect(refused.body).toContain(`id="field-uri" name="uri" type="url" value="${bad}"`);
    }
    expect(await listRedirectUris(t.ctx, serverId)).toEqual([uri]);

    const removed = await client.submit(overview, `${overview}/redirect-uris/remove`, { uri });
    expect(removed.headers.location).toBe(`${overview}?notice=redirect-removed`);
    expect(await listRedirectUris(t.ctx, serverId)).toEqual([]);
    const again = await client.submit(overview, `${overview}/redirect-uris/remove`, { uri });
    expect(again.headers.location).toBe(`${overview}?notice=redirect-missing`);
    expect(visible((await client.get(`${overview}?notice=redirect-missing`)).body)).toContain('That redirect URI was not on the list.');

    // Both changes are audited as the user's, and only real changes: the second remove found nothing.
    const audited = await t.ctx.store.db
      .selectFrom('audit_events')
      .select(['action', 'actor', 'detail'])
      .where('server_id', '=', serverId)
      .where('action', 'like', 'server.redirect_uri_%')
      .execute();
    expect(audited.map((e) => [e.action, e.actor, JSON.parse(e.detail)]).sort()).toEqual([
      ['server.redirect_uri_allowed', `user:${userId}`, { uri }],
      ['server.redirect_uri_removed', `user:${userId}`, { uri }],
    ]);
    const trail = visible((await client.get('/dashboard/audit')).body, ' ');
    expect(trail).toContain('Allowed redirect URI https://app.example.test/connected?from=keyward&x=1 on Redirects');
    expect(trail).toContain('Removed redirect URI https://app.example.test/connected?from=keyward&x=1 from Redirects');
  });

  it('answers 403 to every form posted without the right CSRF token and changes nothing', async () => {
    const { client, accountId } = await newUser();
    const { serverId } = await createOnPage(client, 'Guarded');
    const overview = `${SERVERS}/${serverId}`;
    await client.submit(overview, `${overview}/redirect-uris`, { uri: 'https://kept.example.test/' });
    const before = { server: await serverRow(serverId), keys: await keyRows(serverId) };

    for (const csrf of [undefined, 'wrong-token']) {
      const withToken = (fields: Record<string, string>) => (csrf === undefined ? fields : { csrf, ...fields });
      for (const [action, fields] of [
        [SERVERS, { name: 'Sneaky', mode: 'business' }],
        [`${overview}/mode`, { mode: 'personal' }],
        [`${overview}/secrets-readable`, {}],
        [`${overview}/rotate-key`, { grace: '0' }],
        [`${overview}/redirect-uris`, { uri: 'https://evil.example.test/' }],
        [`${overview}/redirect-uris/remove`, { uri: 'https://kept.example.test/' }],
      ] as const) {
        const response = await client.post(action, withToken(fields));
        expect(response.statusCode, action).toBe(403);
        expect(response.body).toContain('This form could not be verified.');
        expect(response.body).not.toMatch(KEY_IN_PAGE);
      }
    }
    expect(await t.ctx.store.db.selectFrom('servers').select('id').where('account_id', '=', accountId).execute()).toHaveLength(1);
    expect(await serverRow(serverId)).toEqual(before.server);
    expect(await keyRows(serverId)).toEqual(before.keys);
    expect(await listRedirectUris(t.ctx, serverId)).toEqual(['https://kept.example.test/']);
  });

  it("answers 404 to another account's user on every page and form of a server, and changes nothing", async () => {
    const owner = await newUser();
    const { serverId, serverKey } = await createOnPage(owner.client, 'Private server');
    const overview = `${SERVERS}/${serverId}`;
    await owner.client.submit(overview, `${overview}/redirect-uris`, { uri: 'https://owner.example.test/' });
    const before = { server: await serverRow(serverId), keys: await keyRows(serverId) };

    const other = await newUser();
    const list = await other.client.get(SERVERS);
    expect(list.body).not.toContain('Private server');
    expect(list.body).not.toContain(serverId);
    const csrf = csrfOf(list.body);

    const page = await other.client.get(overview);
    expect(page.statusCode).toBe(404);
    expect(visible(page.body)).toContain('This page does not exist, or it belongs to another account.');
    expect(page.body).not.toContain('Private server');
    for (const [action, fields] of [
      [`${overview}/mode`, { mode: 'personal' }],
      [`${overview}/secrets-readable`, {}],
      [`${overview}/rotate-key`, { grace: '0' }],
      [`${overview}/redirect-uris`, { uri: 'https://intruder.example.test/' }],
      [`${overview}/redirect-uris/remove`, { uri: 'https://owner.example.test/' }],
    ] as const) {
      const response = await other.client.post(action, { csrf, ...fields });
      expect(response.statusCode, action).toBe(404);
      expect(response.body).not.toMatch(KEY_IN_PAGE);
    }
    expect((await other.client.get(`${SERVERS}/srv_000000000000ffffffffffffffff`)).statusCode).toBe(404);

    expect(await serverRow(serverId)).toEqual(before.server);
    expect(await keyRows(serverId)).toEqual(before.keys);
    expect(await listRedirectUris(t.ctx, serverId)).toEqual(['https://owner.example.test/']);
    expect((await callApi(owner.accountKey, serverKey)).statusCode).toBe(200);
    // The other account's own key cannot reach this server either.
    expectProblem(await callApi(other.accountKey, serverKey), 403, 'server_access_denied');
  });
});

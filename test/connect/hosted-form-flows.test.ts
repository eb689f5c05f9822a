/**
 * The hosted static form over HTTP (CONTRACT 2.4), continued: CSRF, the redirect back to the
 * company's app, replacing an older credential, two submissions racing, custom static providers, and
 * the API's refusals when a form is asked for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider, parseFieldSpec } from '../../src/services/providers/custom-providers.js';
import { completeForm, openForm } from '../../src/services/providers/static-forms.js';
import { allowRedirectUri } from '../../src/services/servers/servers.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, fieldMessage, inputValue, readEndUser, requestForm } from '../helpers/form-session.js';
import { openHostedForm, postHostedForm, snapshotTables } from '../helpers/hosted-form.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const KEY_A = 'sk-proj-AAAAAAAAAAAAAAAAAAAAAAAA';
const KEY_B = 'sk-proj-BBBBBBBBBBBBBBBBBBBBBBBB';
const REDIRECT = 'https://app.example.com/keyward/done?from=keyward&lang=en';

async function credentialRows(t: TestApp, serverId: string, externalUserId: string) {
  return t.ctx.store.db
    .selectFrom('credentials as c')
    .innerJoin('audience_members as m', 'm.id', 'c.member_id')
    .select(['c.id', 'c.provider'])
    .where('m.server_id', '=', serverId)
    .where('m.external_user_id', '=', externalUserId)
    .execute();
}

describe.each(ENGINES)('hosted form flows on %s', (engine) => {
  let t: TestApp, tenant: Tenant, h: Record<string, string>;
  beforeAll(async () => {
    ({ t, tenant, headers: h } = await startWithTenant(engine));
    await allowRedirectUri(t.ctx, tenant.serverId, REDIRECT, CLI_ACTOR);
  });
  afterAll(() => t.close());

  it("refuses a POST without the cookie, with a wrong token, or with another form's token (403), storing nothing", async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_csrf' });
    const other = await createForm(t.app, h, { externalUserId: 'u_csrf_other' });
    const visit = await openHostedForm(t.app, form.url);
    const otherVisit = await openHostedForm(t.app, other.url);
    const before = await snapshotTables(t.ctx);
    const attempts = [
      { cookie: '' },
      { csrf: 'A'.repeat(43) },
      { csrf: `${visit.csrf.slice(0, -1)}${visit.csrf.endsWith('A') ? 'B' : 'A'}` },
      // A token and cookie that belong together, but to another form.
      { csrf: otherVisit.csrf, cookie: otherVisit.cookie },
      // This form's token sent with the cookie of another browser.
      { cookie: otherVisit.cookie },
    ];
    for (const overrides of attempts) {
      const response = await postHostedForm(t.app, visit, { apiKey: KEY_A }, overrides);
      expect(response.statusCode, JSON.stringify(overrides)).toBe(403);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).not.toContain(KEY_A);
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, h, 'u_csrf')).status).toBe(404);
    // A refused attempt does not spend the link.
    expect((await postHostedForm(t.app, visit, { apiKey: KEY_A })).statusCode).toBe(200);
  });

  it('with an allowed redirectUri: form-action admits its origin, and a good POST 303-redirects there', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_redirect', redirectUri: REDIRECT });
    const page = await t.app.inject({ method: 'GET', url: new URL(form.url).pathname });
    expect(page.statusCode).toBe(200);
    expect(String(page.headers['content-security-policy'])).toMatch(/form-action 'self' https:\/\/app\.example\.com(;|\s)/);

    const visit = await openHostedForm(t.app, form.url);
    // A refusal stays on the page; only success leaves.
    const refused = await postHostedForm(t.app, visit, { apiKey: 'short' });
    expect(refused.statusCode).toBe(422);
    expect(refused.headers.location).toBeUndefined();

    const response = await postHostedForm(t.app, visit, { apiKey: KEY_A });
    expect(response.statusCode).toBe(303);
    const location = new URL(String(response.headers.location));
    expect(`${location.origin}${location.pathname}`).toBe('https://app.example.com/keyward/done');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      from: 'keyward',
      lang: 'en',
      status: 'success',
      sessionId: form.id,
      provider: 'openai',
    });
    expect(String(response.headers.location)).not.toContain(KEY_A);
    expect((await readEndUser(t.app, h, 'u_redirect')).body.credentials[0]?.values).toEqual({ apiKey: KEY_A });
  });

  it('refuses a redirectUri that is not on the allowed list (400 redirect_uri_not_allowed)', async () => {
    const { name } = await t.ctx.store.db.selectFrom('servers').select('name').where('id', '=', tenant.serverId).executeTakeFirstOrThrow();
    const before = await snapshotTables(t.ctx);
    for (const redirectUri of ['https://evil.example.com/keyward/done?from=keyward&lang=en', 'https://app.example.com/keyward/done']) {
      const response = await requestForm(t.app, h, 'openai', { externalUserId: 'u_redirect_bad', redirectUri });
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().code).toBe('redirect_uri_not_allowed');
      // Named where the dashboard shows the list, and never echoing the URI (its query may carry anything).
      expect(response.json().detail).toBe(
        "redirectUri must equal one of this server's allowed redirect URIs, character for character. Add it in the dashboard " +
          `(Servers → "${name}" → Overview → Allowed redirect URIs) or with \`keyward server allow-redirect\`.`,
      );
      expect(response.body).not.toContain('evil.example.com');
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('a second form for the same member and provider replaces the older credential', async () => {
    const first = await openHostedForm(t.app, (await createForm(t.app, h, { externalUserId: 'u_replace' })).url);
    expect((await postHostedForm(t.app, first, { apiKey: KEY_A, organizationId: 'org-first1234' })).statusCode).toBe(200);
    const older = await readEndUser(t.app, h, 'u_replace');

    const second = await openHostedForm(t.app, (await createForm(t.app, h, { externalUserId: 'u_replace' })).url);
    expect((await postHostedForm(t.app, second, { apiKey: KEY_B })).statusCode).toBe(200);
    const newer = await readEndUser(t.app, h, 'u_replace');
    expect(newer.body.credentials).toHaveLength(1);
    expect(newer.body.credentials[0]?.values).toEqual({ apiKey: KEY_B });
    expect(newer.body.credentials[0]?.id).not.toBe(older.body.credentials[0]?.id);
    const rows = await credentialRows(t, tenant.serverId, 'u_replace');
    expect(rows).toEqual([{ id: newer.body.credentials[0]?.id, provider: 'openai' }]);
  });

  it('of two simultaneous good POSTs of one form, exactly one succeeds and the other gets 410', async () => {
    for (let round = 0; round < 3; round++) {
      const externalUserId = `u_race_${round}`;
      const visit = await openHostedForm(t.app, (await createForm(t.app, h, { externalUserId })).url);
      const responses = await Promise.all([postHostedForm(t.app, visit, { apiKey: KEY_A }), postHostedForm(t.app, visit, { apiKey: KEY_B })]);
      expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 410]);
      const winner = responses[0]!.statusCode === 200 ? KEY_A : KEY_B;
      expect(await credentialRows(t, tenant.serverId, externalUserId)).toHaveLength(1);
      expect((await readEndUser(t.app, h, externalUserId)).body.credentials[0]?.values).toEqual({ apiKey: winner });
    }
  });

  it('two submissions that both found the form open still complete it once (the guarded update decides)', async () => {
    // Over HTTP, SQLite's single connection often serialises the two requests entirely; opening the form
    // twice before either completes reproduces the interleaving on both engines.
    const form = await createForm(t.app, h, { externalUserId: 'u_race_service' });
    const token = new URL(form.url).pathname.split('/').pop()!;
    const [first, second] = await Promise.all([openForm(t.ctx, token), openForm(t.ctx, token)]);
    if (first.state !== 'open' || second.state !== 'open') throw new Error('the form should be open');
    const results = await Promise.all([completeForm(t.ctx, first, { apiKey: KEY_A }), completeForm(t.ctx, second, { apiKey: KEY_B })]);
    expect(results.map((r) => r.completed).sort()).toEqual([false, true]);
    const winner = results[0]!.completed ? KEY_A : KEY_B;
    expect(await credentialRows(t, tenant.serverId, 'u_race_service')).toHaveLength(1);
    expect((await readEndUser(t.app, h, 'u_race_service')).body.credentials[0]?.values).toEqual({ apiKey: winner });
  });

  it('a custom static provider works through the form, optional fields included', async () => {
    await addCustomStaticProvider(t.ctx, {
      serverId: tenant.serverId,
      slug: 'acme-api',
      name: 'Acme API',
      fields: [parseFieldSpec('token:Token:secret'), parseFieldSpec('region:Region:optional')],
      actor: CLI_ACTOR,
    });
    const form = await createForm(t.app, h, { externalUserId: 'u_custom' }, 'acme-api');
    expect(form.provider).toBe('acme-api');
    expect(form.fields).toEqual([
      { name: 'token', label: 'Token', secret: true, required: true },
      { name: 'region', label: 'Region', secret: false, required: false },
    ]);
    const visit = await openHostedForm(t.app, form.url);
    expect(visit.status).toBe(200);
    expect(visit.html).toContain('Acme API');
    expect(visit.html).toMatch(/<input id="field-token" name="token" type="password"/);
    expect(visit.html).toMatch(/<input id="field-region" name="region" type="text"/);

    const refused = await postHostedForm(t.app, visit, { token: '', region: 'eu-west-1' });
    expect(refused.statusCode).toBe(422);
    expect(fieldMessage(refused.body, 'token')).toMatch(/Token is required/);
    expect(inputValue(refused.body, 'region')).toBe('eu-west-1');

    expect((await postHostedForm(t.app, visit, { token: ' acme-secret-token ', region: 'eu-west-1' })).statusCode).toBe(200);
    const read = await readEndUser(t.app, h, 'u_custom');
    expect(read.body.credentials).toEqual([
      expect.objectContaining({ provider: 'acme-api', type: 'static', values: { token: 'acme-secret-token', region: 'eu-west-1' } }),
    ]);

    // Leaving the optional field empty stores only what was typed.
    const bare = await openHostedForm(t.app, (await createForm(t.app, h, { externalUserId: 'u_custom_bare' }, 'acme-api')).url);
    expect((await postHostedForm(t.app, bare, { token: 'only-the-token' })).statusCode).toBe(200);
    expect((await readEndUser(t.app, h, 'u_custom_bare')).body.credentials[0]?.values).toEqual({ token: 'only-the-token' });
  });

  it('asking for a form names what is wrong: unknown, not enabled, or an OAuth provider', async () => {
    const before = await snapshotTables(t.ctx);
    const cases = [
      { provider: 'no-such-provider', status: 404, code: 'provider_not_found' },
      { provider: 'anthropic', status: 422, code: 'provider_not_enabled' },
      { provider: 'github', status: 422, code: 'provider_auth_mismatch' },
    ];
    for (const { provider, status, code } of cases) {
      const response = await requestForm(t.app, h, provider, { externalUserId: 'u_refused' });
      expect(response.statusCode, provider).toBe(status);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().code).toBe(code);
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });
});

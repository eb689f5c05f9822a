/**
 * Checking static credentials (CONTRACT 8.3) on both engines, against a stand-in of a provider's API on
 * 127.0.0.1 (a custom static provider with `verify`, as the CLI defines one): the hosted form's check
 * before it stores (valid, rejected, unreachable in its several kinds), POST /v1/end-users/{id}/verify
 * and its refusals, and the background job, its webhooks verified with the standardwebhooks package.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCredentialChecks } from '../../src/services/checks/background-checks.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { storeCredential } from '../../src/services/credentials/credentials.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, inputValue } from '../helpers/form-session.js';
import { openHostedForm, postHostedForm, snapshotTables } from '../helpers/hosted-form.js';
import { addKeyApiProvider, KEY_API, type ProviderApiStandIn, startProviderApi } from '../helpers/provider-api-stand-in.js';
import { startSecondNode, startWithTenant, type Tenant, type TestApp, type TestAppOptions } from '../helpers/test-app.js';
import { eventTimestamp, listedCredential, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const GOOD = 'kk_live_good_0123456789';
const REVOKED = 'kk_live_revoked_0123456789';
const REFUSED_PAGE = 'Key API refused these credentials (HTTP 401). Check them and try again.';
const REJECTED_MESSAGE = 'Key API refused these credentials (HTTP 401) when Keyward checked them: the end user must connect again.';
const DAY = 24 * 3600;

describe.each(ENGINES)('checks of static credentials on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let api: ProviderApiStandIn;
  let hooks: Subscriber;

  async function start(options: TestAppOptions = {}) {
    ({ t, tenant, headers } = await startWithTenant(engine, options, { providers: ['openai'] }));
    api = await startProviderApi();
    // The provider's API refuses the revoked key, and takes any other.
    api.answer = (request) => (request.headers.authorization === `Bearer ${REVOKED}` ? 401 : 200);
    await addKeyApiProvider(t.ctx, tenant.serverId, api);
    hooks = await subscribe(t, tenant.serverId);
  }
  beforeEach(() => start());
  afterEach(async () => {
    await hooks.close();
    await api.close();
    await t.close();
  });

  /** A hosted form of keyapi for the member, opened as a browser would. */
  async function openForm(externalUserId: string) {
    const form = await createForm(t.app, headers, { externalUserId }, KEY_API.slug);
    return { form, visit: await openHostedForm(t.app, form.url) };
  }
  const listed = (externalUserId: string, provider = KEY_API.slug) => listedCredential(t.app, headers, externalUserId, provider);
  const verify = (externalUserId: string, query = `provider=${KEY_API.slug}`) =>
    t.app.inject({ method: 'POST', url: `/v1/end-users/${encodeURIComponent(externalUserId)}/verify?${query}`, headers });
  const read = async (externalUserId: string) => {
    const response = await t.app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(externalUserId)}`, headers });
    return response.json().credentials.find((c: { provider: string }) => c.provider === KEY_API.slug);
  };
  /** Connects the member's keyapi credential through the hosted form (the stand-in's answer decides its check). */
  async function connect(externalUserId: string, apiKey = GOOD, account = 'acct-1') {
    const { visit } = await openForm(externalUserId);
    const posted = await postHostedForm(t.app, visit, { apiKey, account });
    expect(posted.statusCode, posted.body).toBe(200);
  }

  describe('the hosted form', () => {
    it('stores values the provider accepts, with lastCheck valid, after sending the verify request with the injected auth', async () => {
      const { visit } = await openForm('u_valid');
      const posted = await postHostedForm(t.app, visit, { apiKey: GOOD, account: 'acct-1' });
      expect(posted.statusCode).toBe(200);
      expect(posted.body).toContain('Key API connected');

      // The verify path appended to apiBaseUrl, the placeholder filled, the key sent as auth says, nothing else of ours.
      expect(api.requests).toHaveLength(1);
      const [sent] = api.requests;
      expect(sent).toMatchObject({ method: 'GET', url: '/v2/accounts/acct-1/me' });
      expect(sent!.headers.authorization).toBe(`Bearer ${GOOD}`);
      for (const name of ['cookie', 'x-service-key', 'forwarded', 'x-forwarded-for']) expect(sent!.headers).not.toHaveProperty(name);
      expect(JSON.stringify(sent!.headers)).not.toContain(tenant.accountKey);

      const now = t.clock.now().toISOString();
      expect(await listed('u_valid')).toMatchObject({ status: 'active', lastCheck: { at: now, outcome: 'valid' }, lastUsedAt: null });
      // The connected event carries the check too.
      const [connected] = await hooks.events('u_valid');
      expect(connected!.type).toBe('credential.connected');
      expect(connected!.data.credential).toEqual(await listed('u_valid'));
    });

    it.each([401, 403])(
      'refuses values the provider answers %i to: the form again (422) with the message, nothing stored, the link still usable',
      async (status) => {
        api.answer = () => status;
        const { form, visit } = await openForm('u_refused');
        const before = await snapshotTables(t.ctx);
        const refused = await postHostedForm(t.app, visit, { apiKey: REVOKED, account: 'acct-keep' });
        expect(refused.statusCode).toBe(422);
        expect(refused.body).toContain(`<p class="error summary" role="alert">${REFUSED_PAGE.replace('401', String(status))}</p>`);
        // Above the fields, the non-secret value kept, the secret one never sent back.
        expect(refused.body.indexOf('role="alert"')).toBeLessThan(refused.body.indexOf('name="apiKey"'));
        expect(inputValue(refused.body, 'account')).toBe('acct-keep');
        expect(inputValue(refused.body, 'apiKey')).toBe('');
        expect(refused.body).not.toContain(REVOKED);
        expect(await snapshotTables(t.ctx)).toEqual(before);
        expect((await t.app.inject({ method: 'GET', url: '/v1/end-users/u_refused', headers })).statusCode).toBe(404);

        // The end user corrects the key and sends the same form again: accepted, stored, the link used up.
        api.answer = () => 200;
        const again = await postHostedForm(t.app, visit, { apiKey: GOOD, account: 'acct-keep' });
        expect(again.statusCode).toBe(200);
        expect(await listed('u_refused')).toMatchObject({ status: 'active', lastCheck: { outcome: 'valid' } });
        expect((await read('u_refused')).values).toEqual({ apiKey: GOOD, account: 'acct-keep' });
        expect((await postHostedForm(t.app, visit, { apiKey: GOOD, account: 'acct-keep' })).statusCode).toBe(410);
        expect(form.id).toMatch(/^cfs_/);
      },
    );

    it.each([
      ['an outage (500)', 500],
      ['another 4xx (404)', 404],
      ['a redirect, not followed (302)', 302],
    ] as const)('stores the values on %s, with lastCheck unreachable', async (_name, status) => {
      api.answer = () => status;
      await connect('u_unreachable');
      expect(api.requests).toHaveLength(1); // the redirect's target was never asked
      expect(await listed('u_unreachable')).toMatchObject({
        status: 'active',
        lastCheck: { at: t.clock.now().toISOString(), outcome: 'unreachable' },
      });
    });

    it('stores the values as unreachable where the address policy refuses the provider (a node without private URLs)', async () => {
      const strict = await startSecondNode(t, { allowPrivateUrls: false });
      try {
        const form = await createForm(strict.app, headers, { externalUserId: 'u_refused_address' }, KEY_API.slug);
        const visit = await openHostedForm(strict.app, form.url);
        expect((await postHostedForm(strict.app, visit, { apiKey: GOOD, account: 'acct-1' })).statusCode).toBe(200);
      } finally {
        await strict.close();
      }
      expect(api.requests).toEqual([]);
      expect(await listed('u_refused_address')).toMatchObject({ lastCheck: { outcome: 'unreachable' } });
    });

    it('checks nothing for a provider without verify (lastCheck null)', async () => {
      const form = await createForm(t.app, headers, { externalUserId: 'u_openai' });
      const visit = await openHostedForm(t.app, form.url);
      expect((await postHostedForm(t.app, visit, { apiKey: 'sk-proj-NoCheck0123456789abcdef' })).statusCode).toBe(200);
      expect(api.requests).toEqual([]);
      expect(await listed('u_openai', 'openai')).toMatchObject({ status: 'active', lastCheck: null });
    });
  });

  describe('POST /v1/end-users/{externalUserId}/verify', () => {
    it('checks the stored values now: valid, then rejected (needs_reauth, its webhook), and a later valid does not restore it', async () => {
      await connect('u_demand');
      t.clock.advance(60);
      const valid = await verify('u_demand');
      expect(valid.statusCode).toBe(200);
      expect(valid.json()).toEqual({ provider: KEY_API.slug, outcome: 'valid', at: t.clock.now().toISOString() });
      expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${GOOD}`);
      expect(await listed('u_demand')).toMatchObject({ status: 'active', lastCheck: { at: t.clock.now().toISOString(), outcome: 'valid' } });

      // The key is revoked at the provider.
      api.answer = () => 401;
      t.clock.advance(60);
      const rejectedAt = t.clock.now().toISOString();
      const rejected = await verify('u_demand');
      expect(rejected.json()).toEqual({ provider: KEY_API.slug, outcome: 'rejected', at: rejectedAt });
      const credential = await listed('u_demand');
      expect(credential).toMatchObject({ status: 'needs_reauth', updatedAt: rejectedAt, lastCheck: { at: rejectedAt, outcome: 'rejected' } });
      // The read answers why, and hands out nothing.
      const stored = await read('u_demand');
      expect(stored).toMatchObject({ status: 'needs_reauth', error: { code: 'credential_rejected', message: REJECTED_MESSAGE } });
      expect(stored).not.toHaveProperty('values');
      const events = (await hooks.events('u_demand')).filter((e) => e.type === 'credential.needs_reauth');
      expect(events).toEqual([
        {
          messageId: expect.stringMatching(/^msg_/),
          type: 'credential.needs_reauth',
          timestamp: eventTimestamp(t.clock.now()),
          data: {
            serverId: tenant.serverId,
            externalUserId: 'u_demand',
            credential,
            error: { code: 'credential_rejected', message: REJECTED_MESSAGE },
            endUser: { displayName: null, email: null, tags: {} },
          },
        },
      ]);

      // Valid again at the provider: the outcome is recorded, the credential stays needs_reauth, no second event.
      api.answer = () => 200;
      t.clock.advance(60);
      expect((await verify('u_demand')).json()).toMatchObject({ outcome: 'valid' });
      expect(await listed('u_demand')).toMatchObject({ status: 'needs_reauth', lastCheck: { outcome: 'valid' } });
      api.answer = () => 401;
      expect((await verify('u_demand')).json()).toMatchObject({ outcome: 'rejected' });
      expect((await hooks.events('u_demand')).filter((e) => e.type === 'credential.needs_reauth')).toHaveLength(1);

      // Each check on demand is in the audit trail, with who asked.
      const audit = await t.ctx.store.db.selectFrom('audit_events').selectAll().where('action', '=', 'credential.checked').orderBy('created_at').execute();
      expect(audit.map((a) => [a.actor, JSON.parse(a.detail).outcome])).toEqual([
        [`api:${tenant.accountKeyId}`, 'valid'],
        [`api:${tenant.accountKeyId}`, 'rejected'],
        [`api:${tenant.accountKeyId}`, 'valid'],
        [`api:${tenant.accountKeyId}`, 'rejected'],
      ]);
    });

    it('answers unreachable for an outage, leaving the credential active', async () => {
      await connect('u_outage');
      api.answer = () => 503;
      const answer = await verify('u_outage');
      expect(answer.json()).toEqual({ provider: KEY_API.slug, outcome: 'unreachable', at: t.clock.now().toISOString() });
      expect(await listed('u_outage')).toMatchObject({ status: 'active', lastCheck: { outcome: 'unreachable' } });
    });

    it('refuses what it cannot check, in the contract’s codes', async () => {
      await connect('u_has_keyapi');
      const problem = async (response: Awaited<ReturnType<typeof verify>>) => ({ status: response.statusCode, code: response.json().code });
      expect(await problem(await verify('nobody'))).toEqual({ status: 404, code: 'end_user_not_found' });
      expect(await problem(await verify('u_has_keyapi', 'provider=openai'))).toEqual({ status: 404, code: 'credential_not_found' });
      const missing = await verify('u_has_keyapi', '');
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toMatchObject({ code: 'validation_failed', errors: [expect.objectContaining({ path: '/query/provider' })] });
      // The route takes no body: any field in one is unknown (CONTRACT 2.2); an empty object is no field at all.
      const withBody = (payload: string) =>
        t.app.inject({
          method: 'POST',
          url: `/v1/end-users/u_has_keyapi/verify?provider=${KEY_API.slug}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload,
        });
      for (const payload of ['{"unknown":1}', '[1,2]', '"text"']) {
        expect(await problem(await withBody(payload)), payload).toEqual({ status: 400, code: 'validation_failed' });
      }
      expect((await withBody('{}')).statusCode).toBe(200);

      // A provider without verify (the tests' OpenAI has none): nothing to check with.
      const form = await createForm(t.app, headers, { externalUserId: 'u_has_openai' });
      await postHostedForm(t.app, await openHostedForm(t.app, form.url), { apiKey: 'sk-proj-NoCheck0123456789abcdef' });
      expect(await problem(await verify('u_has_openai', 'provider=openai'))).toEqual({ status: 422, code: 'proxy_not_supported' });

      // An OAuth credential: its refresh proves it, not a check.
      await enableProvider(t.ctx, { serverId: tenant.serverId, slug: 'github', clientId: 'id', clientSecret: 'secret', actor: CLI_ACTOR });
      await storeCredential(t.ctx, {
        accountId: tenant.accountId,
        serverId: tenant.serverId,
        externalUserId: 'u_has_oauth',
        provider: 'github',
        secret: { type: 'oauth2', accessToken: 'gho_token', refreshToken: null, tokenType: 'bearer' },
        actor: CLI_ACTOR,
        now: t.clock.now().toISOString(),
      });
      expect(await problem(await verify('u_has_oauth', 'provider=github'))).toEqual({ status: 422, code: 'provider_auth_mismatch' });
      // None of these reached the provider's API but the one with an empty body.
      expect(api.requests).toHaveLength(2);
    });
  });

  describe('the background check', () => {
    const run = (limits?: { batchSize?: number; batches?: number }) => runCredentialChecks(t.ctx, { hours: 24, limits });

    it('checks again what was checked longest ago, turns a refused one needs_reauth with its webhook, and stamps the rest', async () => {
      await connect('u_good', GOOD);
      await connect('u_revoked', REVOKED.replace('revoked', 'soon')); // accepted when connected
      const form = await createForm(t.app, headers, { externalUserId: 'u_openai' });
      await postHostedForm(t.app, await openHostedForm(t.app, form.url), { apiKey: 'sk-proj-NoCheck0123456789abcdef' });
      expect(api.requests).toHaveLength(2);

      // Checked a moment ago: nothing is due but the never-checked OpenAI credential, which has no verify: a pass.
      expect(await run()).toEqual({ picked: 1, valid: 0, rejected: 0, unreachable: 0, notCheckable: 1, errors: 0 });
      expect(api.requests).toHaveLength(2);
      expect(await listed('u_openai', 'openai')).toMatchObject({ lastCheck: null });

      // A day on, the second key has been revoked at the provider.
      api.answer = (request) => (request.headers.authorization === `Bearer ${REVOKED.replace('revoked', 'soon')}` ? 401 : 200);
      t.clock.advance(DAY + 1);
      const at = t.clock.now().toISOString();
      expect(await run()).toEqual({ picked: 3, valid: 1, rejected: 1, unreachable: 0, notCheckable: 1, errors: 0 });
      expect(await listed('u_good')).toMatchObject({ status: 'active', lastCheck: { at, outcome: 'valid' } });
      const revoked = await listed('u_revoked');
      expect(revoked).toMatchObject({ status: 'needs_reauth', lastCheck: { at, outcome: 'rejected' } });
      expect(await read('u_revoked')).toMatchObject({ error: { code: 'credential_rejected', message: REJECTED_MESSAGE } });
      // Its webhook, verified by the standardwebhooks package as every delivery is.
      expect((await hooks.events('u_revoked')).filter((e) => e.type === 'credential.needs_reauth')).toEqual([
        {
          messageId: expect.stringMatching(/^msg_/),
          type: 'credential.needs_reauth',
          timestamp: eventTimestamp(t.clock.now()),
          data: {
            serverId: tenant.serverId,
            externalUserId: 'u_revoked',
            credential: revoked,
            error: { code: 'credential_rejected', message: REJECTED_MESSAGE },
            endUser: { displayName: null, email: null, tags: {} },
          },
        },
      ]);
      // The background check is not audited (the background refresh is not either).
      expect(await t.ctx.store.db.selectFrom('audit_events').select('id').where('action', '=', 'credential.checked').execute()).toEqual([]);

      // Everything was stamped; the refused one left the due set.
      expect(await run()).toEqual({ picked: 0, valid: 0, rejected: 0, unreachable: 0, notCheckable: 0, errors: 0 });
      t.clock.advance(DAY + 1);
      expect(await run()).toMatchObject({ picked: 2, valid: 1, notCheckable: 1 });
    });

    it('takes the never-checked first, then the one checked longest ago, in bounded batches', async () => {
      await connect('u_first_checked', 'kk_first');
      t.clock.advance(60);
      await connect('u_second_checked', 'kk_second');
      // Stored without a check (as before this feature): never checked.
      await storeCredential(t.ctx, {
        accountId: tenant.accountId,
        serverId: tenant.serverId,
        externalUserId: 'u_never_checked',
        provider: KEY_API.slug,
        secret: { type: 'static', values: { apiKey: 'kk_never', account: 'acct-1' } },
        actor: CLI_ACTOR,
        now: t.clock.now().toISOString(),
      });
      t.clock.advance(DAY + 1);
      const order: string[] = [];
      for (let i = 0; i < 4; i++) {
        const sent = api.requests.length;
        const report = await run({ batchSize: 1, batches: 1 });
        order.push(...api.requests.slice(sent).map((r) => String(r.headers.authorization)));
        if (i === 3) expect(report).toMatchObject({ picked: 0 });
      }
      expect(order).toEqual(['Bearer kk_never', 'Bearer kk_first', 'Bearer kk_second']);
    });

    it('is run by one node at a time: a run finds the lease taken and does nothing', async () => {
      await connect('u_leased');
      t.clock.advance(DAY + 1);
      const now = t.clock.now();
      expect(await t.ctx.store.jobs.takeLease('credential-checks', 'another-node', now.toISOString(), new Date(now.getTime() + 60_000).toISOString())).toBe(
        true,
      );
      expect(await run()).toBeNull();
      expect(api.requests).toHaveLength(1);
      t.clock.advance(61);
      expect(await run()).toMatchObject({ picked: 1, valid: 1 });
    });
  });
});

describe('a check that hangs', () => {
  it('is unreachable after its 10 s bound, even where provider calls may take longer, and the credential is stored', { timeout: 30_000 }, async () => {
    const { t, tenant, headers } = await startWithTenant('sqlite', { providerTimeoutMs: 30_000 });
    const api = await startProviderApi();
    try {
      api.answer = () => 'hang';
      await addKeyApiProvider(t.ctx, tenant.serverId, api);
      const form = await createForm(t.app, headers, { externalUserId: 'u_hang' }, KEY_API.slug);
      const visit = await openHostedForm(t.app, form.url);
      const started = Date.now();
      const posted = await postHostedForm(t.app, visit, { apiKey: GOOD, account: 'acct-1' });
      const took = Date.now() - started;
      expect(posted.statusCode).toBe(200);
      expect(took).toBeGreaterThanOrEqual(9_500);
      expect(took).toBeLessThan(20_000);
      expect(await listedCredential(t.app, headers, 'u_hang', KEY_API.slug)).toMatchObject({ status: 'active', lastCheck: { outcome: 'unreachable' } });
    } finally {
      await api.close();
      await t.close();
    }
  });
});

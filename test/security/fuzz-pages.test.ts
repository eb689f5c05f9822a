/**
 * A deterministic fuzz of the pages (issue 8): the hosted form, the OAuth callback and the dashboard's
 * public and signed-in forms, each sent hostile bodies, query strings and headers from a seeded
 * generator. The dashboard's forms are posted with the field names their schemas declare (and now and
 * then one of them twice), so the requests get past the schema to the handlers. Whatever comes in: no
 * 5xx and nothing echoing a planted key (fuzz-checks.ts). Set FUZZ_SEED to replay another run.
 */
import type { TObject } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignInBody, SignUpBody } from '../../src/dashboard/auth-routes.js';
import { RotateKeyBody } from '../../src/dashboard/server-pages.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { DASHBOARD_POSTS, PUBLIC_POSTS, urlOf } from '../helpers/dashboard-forms.js';
import { csrfOf, type DashboardClient, signUpUser, userByEmail } from '../helpers/dashboard-session.js';
import { createForm } from '../helpers/form-session.js';
import { formPath, openHostedForm } from '../helpers/hosted-form.js';
import type { Tenant, TestApp } from '../helpers/test-app.js';
import { expectNoHarm, recorder, startFuzzTenant } from './fuzz-checks.js';
import { encodeText, generator, ODD_TEXT, oddForm, oddHeaders, oddJson, oddQuery, PATH_PIECES, SEED } from './fuzz-input.js';

/** The fields a form's schema declares; the CSRF token is the test's to send or leave out. */
const fieldsOf = (body: { properties: object }) => Object.keys(body.properties).filter((name) => name !== 'csrf');

describe('fuzz: hostile input on the pages (SQLite)', () => {
  let t: TestApp, tenant: Tenant, h: Record<string, string>;
  let planted: string;
  let formUrls: string[];
  let user: DashboardClient;
  let userServerId: string;
  let webhookId: string;
  const { seen, send } = recorder(() => t.app);

  beforeAll(async () => {
    ({ t, tenant, headers: h, planted } = await startFuzzTenant());
    formUrls = [];
    for (let i = 0; i < 3; i += 1) formUrls.push((await createForm(t.app, h, { externalUserId: `u_form_${i}` })).url);
    const email = 'fuzz-user@example.test';
    user = await signUpUser(t.app, { email });
    const { account_id } = await userByEmail(t.ctx.store.db, email);
    userServerId = (await createServer(t.ctx, { accountId: account_id, name: 'Fuzzed', mode: 'business', actor: CLI_ACTOR })).serverId;
    ({ webhookId } = await addWebhookEndpoint(t.ctx, { serverId: userServerId, url: 'https://hooks.fuzz.test/keyward', actor: CLI_ACTOR }));
  });
  afterAll(() => t.close());

  it('answers the hosted form without a 5xx', async () => {
    const g = generator(SEED + 1);
    const visits = await Promise.all(formUrls.map((url) => openHostedForm(t.app, url)));
    for (let i = 0; i < 400; i += 1) {
      const visit = g.pick(visits);
      const path = g.chance(0.7) ? visit.path : `/connect/${g.pick([...PATH_PIECES, planted, formPath(g.pick(formUrls)).slice(9, 20)])}`;
      if (g.chance(0.3)) {
        await send({ method: 'GET', url: path, headers: oddHeaders(g, tenant, planted) });
        continue;
      }
      const asJson = g.chance(0.25);
      const fields = ['csrf', 'apiKey', 'organizationId'];
      const form = oddForm(g, fields, planted);
      const withCsrf = g.chance(0.6) ? `csrf=${encodeURIComponent(visit.csrf)}&${form}` : form;
      await send({
        method: 'POST',
        url: path,
        headers: {
          cookie: g.chance(0.8) ? visit.cookie : `keyward_form_csrf=${planted}`,
          'content-type': asJson ? 'application/json' : 'application/x-www-form-urlencoded',
        },
        payload: asJson ? oddJson(g, planted) : withCsrf,
      });
    }
  });

  it('answers the OAuth callback without a 5xx', async () => {
    const g = generator(SEED + 2);
    const params = ['state', 'code', 'error', 'error_description', 'iss', 'id_token', 'access_token', 'session_state', '__proto__'];
    for (let i = 0; i < 400; i += 1) {
      const pairs = Array.from(
        { length: g.int(5) },
        () => `${g.pick(params)}=${g.chance(0.8) ? encodeText(g.pick(ODD_TEXT)) : g.pick(['%zz', '%ED%A0%80', planted, 'A'.repeat(43)])}`,
      );
      await send({
        method: g.pick(['GET', 'GET', 'POST', 'HEAD'] as const),
        url: `/oauth/callback${g.pick(['', '/', '/%zz', '%2F'])}?${pairs.join('&')}`,
        headers: oddHeaders(g, tenant, planted),
      });
    }
  });

  it("answers the dashboard's public and signed-in forms without a 5xx", async () => {
    const g = generator(SEED + 3);
    // Every signed-in form of the dashboard on the user's own server, and one on a server id that is not one.
    const signedIn: [string, string[]][] = Object.entries(DASHBOARD_POSTS)
      .filter((entry): entry is [string, TObject] => typeof entry[1] !== 'string' && !PUBLIC_POSTS.has(entry[0]))
      .map(([pattern, body]) => [urlOf(pattern, { serverId: userServerId, webhookId }), fieldsOf(body)]);
    signedIn.push([`/dashboard/servers/${g.pick(PATH_PIECES)}/rotate-key`, fieldsOf(RotateKeyBody)]);
    const csrf = csrfOf((await user.get('/dashboard/servers')).body);
    for (let i = 0; i < 360; i += 1) {
      const [url, fields] = g.pick(signedIn);
      // Half are signed in with the form's own fields only, so the handlers themselves are fuzzed.
      const nearly = g.chance(0.5);
      const body = `${nearly || g.chance(0.7) ? `csrf=${encodeURIComponent(csrf)}&` : ''}${oddForm(g, fields, planted, { extras: !nearly })}`;
      const cookie = nearly || g.chance(0.9) ? user.cookieHeader : `keyward_session=${planted}`;
      if (g.chance(0.2)) await send({ method: 'GET', url: `${url}${oddQuery(g, planted)}`, headers: { cookie } });
      else await send({ method: 'POST', url, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: body });
    }
    // The schemas let enough through for the handlers to be fuzzed: answered neither by the schema (400),
    // the CSRF check (403), a refusal to find the target (404) nor the sign-in redirect. The default seed
    // reaches 77 such answers (seeds 1 to 3: 80, 79, 68) in 360 posts, more forms and fields since the
    // gateway's (each field may be sent twice, which the schema refuses); 65 leaves a margin for FUZZ_SEED's other runs.
    const handled = seen.filter(
      ({ method, path, response }) =>
        method === 'POST' &&
        path?.startsWith('/dashboard/') &&
        ![400, 403, 404].includes(response.statusCode) &&
        response.headers.location !== '/dashboard/sign-in',
    );
    expect(handled.length).toBeGreaterThanOrEqual(65);
    // Sign-in and sign-up run scrypt, on purpose slow: a few dozen cover their parsing.
    for (let i = 0; i < 30; i += 1) {
      const url = g.pick(['/dashboard/sign-in', '/dashboard/sign-up']);
      await send({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: oddForm(g, [...new Set([...Object.keys(SignInBody.properties), ...Object.keys(SignUpBody.properties)])], planted),
      });
      await send({ method: 'GET', url: `${url}${oddQuery(g, planted)}` });
    }
  });

  it('found no 5xx and no echo of the planted key', () => {
    expect(seen.length).toBeGreaterThan(1150);
    expectNoHarm(seen, planted, t.logs);
  });
});

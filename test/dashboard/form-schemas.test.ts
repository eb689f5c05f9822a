/**
 * The dashboard's form and query schemas through the real app: a form a person can correct comes back
 * as its page (422) with the form's words beside the field; a request no page of ours makes (an unknown
 * field, a list where one text is expected, a query value past its bound) is the dashboard's 400 page,
 * never a JSON problem; and the session and CSRF checks still come before the schema's answer.
 * Schemas do not touch storage, so one engine is enough.
 */
import type { TSchema } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { DASHBOARD_POSTS, PUBLIC_POSTS, urlOf } from '../helpers/dashboard-forms.js';
import { csrfOf, DashboardClient, hiddenFieldsOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

const SERVERS = '/dashboard/servers';
const SERVER_IN_PAGE = /action="\/dashboard\/servers\/(srv_[0-9a-f]{28})\/mode"/;

function expectBadRequestPage(response: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  expect(response.statusCode).toBe(400);
  expect(String(response.headers['content-type'])).toMatch(/^text\/html/);
  expect(visible(response.body)).toContain('Request not accepted');
  expect(response.body).not.toContain('validation_failed');
}

const TOKENS = new Set(['csrf', 'once']);

/** A value the field's schema takes: a select's first option, else a word. */
function valueFor(schema: TSchema): string {
  const first = (schema.anyOf as TSchema[] | undefined)?.[0];
  return typeof first?.const === 'string' ? first.const : 'typed';
}

/** Whether the field is checkboxes (a list is its normal shape). */
const takesList = (schema: TSchema) => JSON.stringify(schema).includes('"type":"array"');

function expectFormExpired(response: { statusCode: number; body: string }) {
  expect(response.statusCode).toBe(403);
  expect(visible(response.body)).toContain('Form expired');
}

describe('dashboard form and query schemas', () => {
  let t: TestApp;
  let client: DashboardClient;
  let serverId: string;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    ({ client } = await newSignedInUser(t.app, t.ctx.store.db, 'Schemas'));
    const made = await client.submit(SERVERS, SERVERS, { name: 'Schema checks', mode: 'business' });
    expect(made.statusCode).toBe(200);
    serverId = SERVER_IN_PAGE.exec(made.body)![1]!;
  });
  afterAll(() => t.close());

  /** Posts the page's form `action` with its hidden fields and the given body (raw, to send lists and extras). */
  async function postRaw(page: string, action: string, extra: string) {
    const hidden = new URLSearchParams(hiddenFieldsOf((await client.get(page)).body, action)).toString();
    return t.app.inject({
      method: 'POST',
      url: action,
      headers: { cookie: client.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `${hidden}&${extra}`,
    });
  }

  it('re-renders a form whose required field was left empty, with its own words beside the field', async () => {
    const webhooks = `/dashboard/servers/${serverId}/webhooks`;
    const response = await client.submit(webhooks, webhooks, { url: '   ', events: 'credential.connected' });
    expect(response.statusCode).toBe(422);
    expect(response.body).toMatch(/<p class="error" id="field-url-error">Enter the URL of your endpoint.<\/p>/);
    expect(response.body).toContain('aria-invalid="true"');
  });

  it('says the limit beside a text longer than the server takes', async () => {
    const providers = `/dashboard/servers/${serverId}/providers`;
    const response = await client.submit(providers, providers, { provider: 'x'.repeat(101) });
    expect(response.statusCode).toBe(422);
    expect(response.body).toMatch(/id="field-provider-error">Use at most 100 characters.</);
  });

  it('answers the 400 page, not a problem, to a field no form has and to a list where one text goes', async () => {
    expectBadRequestPage(await postRaw(SERVERS, SERVERS, 'name=A&mode=business&admin=1'));
    expectBadRequestPage(await postRaw(SERVERS, SERVERS, 'name=A&name=B&mode=business'));
    const servers = await client.get(SERVERS);
    expect(visible(servers.body)).not.toContain('A,B');
  });

  it('answers the 400 page, never a 500, to any field of any dashboard form sent twice', async () => {
    const routes = t.app.routeTable.filter((r) => r.method === 'POST' && r.url.startsWith('/dashboard')).map((r) => r.url);
    expect(new Set(routes)).toEqual(new Set(Object.keys(DASHBOARD_POSTS)));
    // Real ids where a handler looks its target up before it reads the form.
    const { webhookId } = await addWebhookEndpoint(t.ctx, { serverId, url: 'https://hooks.schemas.test/keyward', actor: CLI_ACTOR });
    const ids: Record<string, string> = { serverId, webhookId, keyId: 'key_unknown', messageId: 'msg_unknown', sessionId: 'ses_unknown' };
    const anonymous = new DashboardClient(t.app);
    const tokens = { signedIn: csrfOf((await client.get(SERVERS)).body), anonymous: csrfOf((await anonymous.get('/dashboard/sign-in')).body) };
    let repeated = 0;
    for (const [pattern, form] of Object.entries(DASHBOARD_POSTS)) {
      const url = urlOf(pattern, ids);
      const who = PUBLIC_POSTS.has(pattern) ? anonymous : client;
      const csrf = PUBLIC_POSTS.has(pattern) ? tokens.anonymous : tokens.signedIn;
      const post = (pairs: [string, string][]) =>
        t.app.inject({
          method: 'POST',
          url,
          headers: { cookie: who.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams(pairs).toString(),
        });
      // A repeated CSRF token matches no session's: the form is expired before any handler reads it.
      expectFormExpired(
        await post([
          ['csrf', csrf],
          ['csrf', csrf],
        ]),
      );
      if (typeof form === 'string') continue;
      const fields = Object.entries(form.properties).filter(([name]) => !TOKENS.has(name));
      for (const [twice, schema] of fields.filter(([, schema]) => !takesList(schema))) {
        const pairs: [string, string][] = [['csrf', csrf], ...fields.map(([name, field]): [string, string] => [name, valueFor(field)])];
        const response = await post([...pairs, [twice, valueFor(schema)]]);
        expect(response.statusCode, `${pattern}: ${twice} twice`).toBe(400);
        expectBadRequestPage(response);
        repeated += 1;
      }
    }
    expect(repeated).toBeGreaterThanOrEqual(30);
  });

  it('answers the 400 page to a choice no select offers and to a query value past its bound', async () => {
    const overview = `/dashboard/servers/${serverId}`;
    const rotate = await postRaw(overview, `${overview}/rotate-key`, 'grace=0&grace=3600');
    expectBadRequestPage(rotate);
    expectBadRequestPage(await client.get(`${overview}/audience?provider=${'p'.repeat(101)}`));
    expectBadRequestPage(await client.get('/dashboard/audit?before=not-a-cursor'));
  });

  it('keeps a choice outside the list correctable where the form has words for it', async () => {
    const overview = `/dashboard/servers/${serverId}`;
    const response = await client.submit(overview, `${overview}/rotate-key`, { grace: '12' });
    expect(response.statusCode).toBe(422);
    expect(response.body).toMatch(/id="field-grace-error">Choose a grace period from the list.</);
  });

  it('checks the session and the CSRF token before the schema', async () => {
    const forged = await t.app.inject({
      method: 'POST',
      url: SERVERS,
      headers: { cookie: client.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'csrf=wrong&admin=1',
    });
    expect(forged.statusCode).toBe(403);
    expect(visible(forged.body)).toContain('Form expired');
    const anonymous = await t.app.inject({
      method: 'POST',
      url: SERVERS,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'admin=1',
    });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/dashboard/sign-in');
  });
});

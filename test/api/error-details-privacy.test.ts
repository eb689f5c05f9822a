/**
 * No error of the API repeats the externalUserId it was asked about (README: an id may be an email or
 * another personal identifier, and error bodies end up in logs and bug trackers). Every error a
 * request naming an end user can meet is provoked with a recognisable id, and no body may hold it,
 * raw or percent-encoded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const MEMBER = 'auth0|u42-jane.doe@example.com';
const STRANGER = 'auth0|u43-john.roe@example.com';

describe.each(ENGINES)('error details never echo an externalUserId, on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine, {}, { providers: ['openai'] }));
    await connectStatic(t.app, keys(tenant), { externalUserId: MEMBER, values: { apiKey: 'sk-proj-privacy-openaiopenaiopenaiopenai' } });
  });
  afterAll(() => t?.close());

  const path = (id: string, query = '') => `/v1/end-users/${encodeURIComponent(id)}${query}`;

  it('in every error a request about an end user can get', async () => {
    const requests = [
      // The member exists but has no credential of that provider: credential_not_found.
      { method: 'DELETE', url: path(MEMBER, '?provider=anthropic'), code: 'credential_not_found' },
      { method: 'DELETE', url: path(MEMBER, '?provider=no-such-provider'), code: 'credential_not_found' },
      { method: 'GET', url: path(STRANGER), code: 'end_user_not_found' },
      { method: 'DELETE', url: path(STRANGER), code: 'end_user_not_found' },
      { method: 'DELETE', url: path(STRANGER, '?provider=openai'), code: 'end_user_not_found' },
      { method: 'GET', url: path(MEMBER, '?minValiditySeconds=forever'), code: 'validation_failed' },
      {
        method: 'POST',
        url: '/v1/credentials/static/openai/connect',
        body: { externalUserId: MEMBER, redirectUri: 'https://elsewhere.example/' },
        code: 'redirect_uri_not_allowed',
      },
      { method: 'POST', url: '/v1/credentials/static/stripe/connect', body: { externalUserId: MEMBER }, code: 'provider_not_enabled' },
      { method: 'POST', url: '/v1/credentials/static/no-such/connect', body: { externalUserId: MEMBER }, code: 'provider_not_found' },
      { method: 'POST', url: '/v1/credentials/static/github/connect', body: { externalUserId: MEMBER }, code: 'provider_auth_mismatch' },
      { method: 'POST', url: '/v1/oauth/github/start', body: { externalUserId: MEMBER }, code: 'provider_not_enabled' },
      { method: 'POST', url: '/v1/oauth/openai/start', body: { externalUserId: MEMBER }, code: 'provider_auth_mismatch' },
      { method: 'POST', url: '/v1/credentials/static/openai/connect', body: { externalUserId: MEMBER, expiresIn: 5 }, code: 'validation_failed' },
    ] as const;
    for (const request of requests) {
      const response = await t.app.inject({
        method: request.method,
        url: request.url,
        headers: keys(tenant),
        ...('body' in request ? { payload: request.body } : {}),
      });
      const what = `${request.method} ${request.url}`;
      expect(response.json().code, `${what}: ${response.body}`).toBe(request.code);
      for (const id of [MEMBER, STRANGER]) {
        for (const form of [id, encodeURIComponent(id), JSON.stringify(id), 'u42', 'u43']) {
          expect(response.body, what).not.toContain(form);
        }
      }
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keys, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)('a static credential end to end on %s', (engine) => {
  let t: TestApp, tenant: Tenant;
  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  it('connects through the hosted form, then lists, reads and revokes it', async () => {
    await connectStatic(t.app, keys(tenant), { externalUserId: 'auth0|a/b', values: { apiKey: 'sk-proj-abcdefghijklmnopqrstuvwxyz' } });
    const list = await t.app.inject({ method: 'GET', url: '/v1/end-users', headers: keys(tenant) });
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0].externalUserId).toBe('auth0|a/b');
    const read = await t.app.inject({ method: 'GET', url: '/v1/end-users/auth0%7Ca%2Fb', headers: keys(tenant) });
    expect(read.statusCode).toBe(200);
    expect(read.json().credentials[0].values).toEqual({ apiKey: 'sk-proj-abcdefghijklmnopqrstuvwxyz' });
    const revoked = await t.app.inject({ method: 'DELETE', url: '/v1/end-users/auth0%7Ca%2Fb', headers: keys(tenant) });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked[0].providerRevocation).toBe('not_supported');
  });
});

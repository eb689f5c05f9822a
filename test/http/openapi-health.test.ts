import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

describe.each(ENGINES)('/openapi.json and /healthz on %s', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(engine);
  });
  afterAll(() => t.close());

  it('generates the OpenAPI document from the route schemas', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    const doc = response.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/connect-sessions',
      '/v1/credentials/static/{providerSlug}/connect',
      '/v1/end-users',
      '/v1/end-users/{externalUserId}',
      '/v1/end-users/{externalUserId}/proxy/{provider}/{path}',
      '/v1/end-users/{externalUserId}/verify',
      '/v1/oauth/{provider}/start',
    ]);
    expect(Object.keys(doc.paths['/v1/end-users/{externalUserId}']).sort()).toEqual(['delete', 'get', 'patch']);
    // PATCH /v1/end-users/{id} (CONTRACT 10): the profile's fields, unknown ones refused; the list's tag filter.
    const patch = doc.paths['/v1/end-users/{externalUserId}'].patch.requestBody.content['application/json'].schema;
    expect(patch).toMatchObject({ additionalProperties: false });
    expect(Object.keys(patch.properties).sort()).toEqual(['displayName', 'email', 'tags']);
    expect(doc.paths['/v1/end-users'].get.parameters.map((p: { name: string }) => p.name)).toContain('tag');
    // The gateway: every method, its path a named parameter rather than the router's wildcard.
    const proxy = doc.paths['/v1/end-users/{externalUserId}/proxy/{provider}/{path}'];
    expect(Object.keys(proxy).sort()).toEqual(['delete', 'get', 'patch', 'post', 'put']);
    expect(proxy.get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:externalUserId', 'path:provider', 'path:path']);
    const connect = doc.paths['/v1/credentials/static/{providerSlug}/connect'].post;
    // The body schema is the one the route validates with, unknown fields refused.
    const body = connect.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.externalUserId.maxLength).toBe(255);
    expect(Object.keys(connect.responses)).toEqual(expect.arrayContaining(['201', '401', '422']));
    const start = doc.paths['/v1/oauth/{provider}/start'].post;
    expect(Object.keys(start.requestBody.content['application/json'].schema.properties).sort()).toEqual([
      'expiresIn',
      'externalUserId',
      'redirectUri',
      'scopes',
    ]);
    expect(start.responses['201'].content['application/json'].schema.required).toEqual(expect.arrayContaining(['authorizationUrl', 'expiresAt']));
    expect(doc.components.securitySchemes.serverKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-service-key' });
  });

  it('answers /healthz after asking the database', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', database: engine });
  });
});

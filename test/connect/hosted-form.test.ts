/**
 * The hosted static form over HTTP (CONTRACT 2.4): the session the API hands out, the page, its
 * validation, a good submission, and the link's life (single use, unknown, expired).
 * CSRF, redirects, replacement, races and custom providers: hosted-form-flows.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { createForm, fieldMessage, inputValue, readEndUser } from '../helpers/form-session.js';
import { openHostedForm, postHostedForm, snapshotTables } from '../helpers/hosted-form.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const GOOD_KEY = 'sk-proj-Good0123456789abcdefghij';
const OPENAI_FIELDS = [
  { name: 'apiKey', label: 'API key', secret: true, required: true },
  { name: 'organizationId', label: 'Organization ID', secret: false, required: false },
];

/** Pages for unknown, used and expired links must not say whose form it was. */
function expectAnonymousPage(response: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number, externalUserId: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^text\/html/);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.body).not.toContain(externalUserId);
  expect(response.body).not.toMatch(/openai/i);
  expect(response.body).not.toContain('name="apiKey"');
}

describe.each(ENGINES)('the hosted static form on %s', (engine) => {
  let t: TestApp, h: Record<string, string>;
  beforeAll(async () => {
    ({ t, headers: h } = await startWithTenant(engine));
  });
  afterAll(() => t.close());

  it('POST connect answers 201 with a pending session, a 256-bit single-use URL, its expiry and the fields', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers: h, payload: { externalUserId: 'u_create' } });
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'expiresAt', 'externalUserId', 'fields', 'id', 'provider', 'status', 'url']);
    expect(body).toMatchObject({ provider: 'openai', externalUserId: 'u_create', status: 'pending', fields: OPENAI_FIELDS });
    expect(body.id).toMatch(/^cfs_[0-9a-z]+$/);
    const url = new URL(body.url);
    expect(url.origin).toBe('http://keyward.test');
    const token = /^\/connect\/([^/]+)$/.exec(url.pathname)?.[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url').length * 8).toBeGreaterThanOrEqual(128);
    expect(body.createdAt).toBe(t.clock.now().toISOString());
    expect(body.expiresAt).toMatch(/Z$/);
    expect(Date.parse(body.expiresAt) - Date.parse(body.createdAt)).toBe(1800 * 1000);

    const short = await createForm(t.app, h, { externalUserId: 'u_create', expiresIn: 60 });
    expect(Date.parse(short.expiresAt) - Date.parse(short.createdAt)).toBe(60 * 1000);
    expect(short.url).not.toBe(body.url);
    expect(short.id).not.toBe(body.id);
    // A form alone makes no member: only a completed one does.
    expect((await readEndUser(t.app, h, 'u_create')).status).toBe(404);
  });

  it('GET shows the provider, its fields and a CSRF token under strict headers, and never uses the link up', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_page' });
    const first = await openHostedForm(t.app, form.url);
    const second = await openHostedForm(t.app, form.url);
    for (const visit of [first, second]) {
      expect(visit.status).toBe(200);
      expect(visit.html).toContain('OpenAI');
      expect(visit.html).toMatch(/<input id="field-apiKey" name="apiKey" type="password"/);
      expect(visit.html).toMatch(/<input id="field-organizationId" name="organizationId" type="text"/);
      expect(visit.html).toMatch(/<input type="hidden" name="csrf" value="[^"]{20,}">/);
      expect(visit.csrf).not.toBe('');
      expect(visit.cookie).not.toBe('');
    }
    const response = await t.app.inject({ method: 'GET', url: first.path });
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['x-frame-options']).toBe('DENY');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toMatch(/form-action 'self'/);

    const posted = await postHostedForm(t.app, second, { apiKey: GOOD_KEY });
    expect(posted.statusCode).toBe(200);
  });

  const refusals = [
    { name: 'a missing required field', apiKey: '', message: /API key is required/ },
    { name: 'a value not matching the pattern', apiKey: 'nope-typed-secret-7f3a', message: /API key does not look right/ },
    { name: 'a value over 4,096 characters', apiKey: `sk-${'q'.repeat(4094)}`, message: /at most 4096 characters/ },
  ];
  it.each(refusals)('$name: 422, the message beside the field, non-secret values kept, no secret echoed, nothing stored', async ({ apiKey, message }) => {
    const externalUserId = `u_bad_${randomBytes(3).toString('hex')}`;
    const form = await createForm(t.app, h, { externalUserId });
    const visit = await openHostedForm(t.app, form.url);
    const before = await snapshotTables(t.ctx);
    const response = await postHostedForm(t.app, visit, { apiKey, organizationId: 'org-Keep12345' });
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(fieldMessage(response.body, 'apiKey')).toMatch(message);
    expect(fieldMessage(response.body, 'organizationId')).toBeNull();
    expect(response.body).toMatch(/<input id="field-apiKey"[^>]*aria-invalid="true"/);
    expect(inputValue(response.body, 'organizationId')).toBe('org-Keep12345');
    expect(inputValue(response.body, 'apiKey')).toBe('');
    if (apiKey) expect(response.body).not.toContain(apiKey.slice(0, 20));
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, h, externalUserId)).status).toBe(404);

    // The refusal does not use the link up: the corrected form goes through.
    expect((await postHostedForm(t.app, visit, { apiKey: GOOD_KEY })).statusCode).toBe(200);
  });

  it('a bad non-secret value gets its own message, while a value of exactly 4,096 characters is taken', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_limits' });
    const visit = await openHostedForm(t.app, form.url);
    const longest = `sk-${'L'.repeat(4093)}`;
    const refused = await postHostedForm(t.app, visit, { apiKey: longest, organizationId: 'not-an-org' });
    expect(refused.statusCode).toBe(422);
    expect(fieldMessage(refused.body, 'organizationId')).toMatch(/Organization ID does not look right/);
    expect(fieldMessage(refused.body, 'apiKey')).toBeNull();
    expect(inputValue(refused.body, 'organizationId')).toBe('not-an-org');

    expect((await postHostedForm(t.app, visit, { apiKey: longest })).statusCode).toBe(200);
    const read = await readEndUser(t.app, h, 'u_limits');
    expect(read.body.credentials[0]?.values).toEqual({ apiKey: longest });
  });

  it('a good POST stores the values trimmed, makes the member, and shows a success page', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_good' });
    expect((await readEndUser(t.app, h, 'u_good')).status).toBe(404);
    const visit = await openHostedForm(t.app, form.url);
    const response = await postHostedForm(t.app, visit, { apiKey: `  ${GOOD_KEY}\r\n`, organizationId: ' org-abcdefgh12 ' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toContain('OpenAI connected');
    expect(response.body).not.toContain(GOOD_KEY);

    const read = await readEndUser(t.app, h, 'u_good');
    expect(read.status).toBe(200);
    expect(read.body.credentials).toHaveLength(1);
    expect(read.body.credentials[0]).toMatchObject({ provider: 'openai', type: 'static', status: 'active' });
    expect(read.body.credentials[0]?.values).toEqual({ apiKey: GOOD_KEY, organizationId: 'org-abcdefgh12' });
    const list = await t.app.inject({ method: 'GET', url: '/v1/end-users?prefix=u_good', headers: h });
    expect(list.json().data.map((m: { externalUserId: string }) => m.externalUserId)).toEqual(['u_good']);
  });

  it('a used link answers 410 to GET and POST, changes nothing, and does not say whose it was', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_used' });
    const visit = await openHostedForm(t.app, form.url);
    expect((await postHostedForm(t.app, visit, { apiKey: GOOD_KEY })).statusCode).toBe(200);
    const before = await snapshotTables(t.ctx);

    expectAnonymousPage(await t.app.inject({ method: 'GET', url: visit.path }), 410, 'u_used');
    expectAnonymousPage(await postHostedForm(t.app, visit, { apiKey: 'sk-proj-Second0123456789abcdefgh' }), 410, 'u_used');
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, h, 'u_used')).body.credentials[0]?.values).toEqual({ apiKey: GOOD_KEY });
  });

  it('an unknown link answers 404, well-formed or not, to GET and POST', async () => {
    await createForm(t.app, h, { externalUserId: 'u_unknown' });
    const before = await snapshotTables(t.ctx);
    for (const token of [randomBytes(32).toString('base64url'), 'not-a-token', 'A'.repeat(44), 'A'.repeat(42)]) {
      expectAnonymousPage(await t.app.inject({ method: 'GET', url: `/connect/${token}` }), 404, 'u_unknown');
      const post = await postHostedForm(t.app, { path: `/connect/${token}`, status: 0, html: '', cookie: '', csrf: 'x' }, { apiKey: GOOD_KEY });
      expectAnonymousPage(post, 404, 'u_unknown');
    }
    expect(await snapshotTables(t.ctx)).toEqual(before);
  });

  it('an expired link (default 30 minutes) answers 410 to GET and POST and stores nothing', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_expired' });
    const visit = await openHostedForm(t.app, form.url);
    t.clock.advance(1799);
    expect((await openHostedForm(t.app, form.url)).status).toBe(200);
    t.clock.advance(2);
    const before = await snapshotTables(t.ctx);
    expectAnonymousPage(await t.app.inject({ method: 'GET', url: visit.path }), 410, 'u_expired');
    expectAnonymousPage(await postHostedForm(t.app, visit, { apiKey: GOOD_KEY }), 410, 'u_expired');
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, h, 'u_expired')).status).toBe(404);
  });
});

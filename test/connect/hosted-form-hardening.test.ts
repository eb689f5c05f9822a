/**
 * The hosted form against input a browser would not send (issue 8 items 5 and 11): values that are
 * not well-formed text, posted as JSON (the route reads JSON as well as forms), and a custom provider
 * whose fields are named like properties of Object.prototype.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { ENGINES } from '../helpers/databases.js';
import { createForm, fieldMessage, inputValue, readEndUser } from '../helpers/form-session.js';
import { type FormVisit, openHostedForm, postHostedForm, snapshotTables } from '../helpers/hosted-form.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

const GOOD_KEY = 'sk-proj-Good0123456789abcdefghij';

describe.each(ENGINES)('the hosted form against odd input on %s', (engine) => {
  let t: TestApp, tenant: Tenant, h: Record<string, string>;
  beforeAll(async () => {
    ({ t, tenant, headers: h } = await startWithTenant(engine));
    await addCustomStaticProvider(t.ctx, {
      serverId: tenant.serverId,
      slug: 'protoish',
      name: 'Protoish',
      fields: [
        { name: 'constructor', label: 'Constructor', secret: false, required: true },
        { name: 'toString', label: 'To string', secret: false, required: false },
        { name: 'valueOf', label: 'Value of', secret: true, required: false },
      ],
      actor: CLI_ACTOR,
    });
  });
  afterAll(() => t.close());

  const postJson = (visit: FormVisit, body: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: visit.path, headers: { cookie: visit.cookie }, payload: { csrf: visit.csrf, ...body } });

  it.each([
    ['a lone high surrogate', `${GOOD_KEY}\ud800`, 'u_high'],
    ['a lone low surrogate', `\udc00${GOOD_KEY}`, 'u_low'],
  ])("refuses %s in a value with the field's message, storing nothing", async (_name, value, user) => {
    const form = await createForm(t.app, h, { externalUserId: user });
    const visit = await openHostedForm(t.app, form.url);
    const before = await snapshotTables(t.ctx);
    const refused = await postJson(visit, { apiKey: value });
    expect(refused.statusCode, refused.body).toBe(422);
    expect(fieldMessage(refused.body, 'apiKey')).toBe('API key holds characters that are not valid text.');
    expect(await snapshotTables(t.ctx)).toEqual(before);
    expect((await readEndUser(t.app, h, user)).status).toBe(404);

    // The link is still usable.
    expect((await postJson(visit, { apiKey: GOOD_KEY })).statusCode).toBe(200);
    expect((await readEndUser(t.app, h, user)).body.credentials[0]?.values).toEqual({ apiKey: GOOD_KEY });
  });

  it('shows fields named constructor, toString and valueOf empty, not as Object.prototype properties', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_proto_get' }, 'protoish');
    const visit = await openHostedForm(t.app, form.url);
    expect(visit.status).toBe(200);
    expect(visit.html).not.toContain('native code');
    for (const name of ['constructor', 'toString']) expect(inputValue(visit.html, name)).toBe('');
    for (const name of ['constructor', 'toString', 'valueOf']) expect(fieldMessage(visit.html, name)).toBeNull();
  });

  it('checks and stores them like any other field', async () => {
    const form = await createForm(t.app, h, { externalUserId: 'u_proto_post' }, 'protoish');
    const visit = await openHostedForm(t.app, form.url);
    const missing = await postHostedForm(t.app, visit, { toString: 'kept' });
    expect(missing.statusCode).toBe(422);
    expect(fieldMessage(missing.body, 'constructor')).toBe('Constructor is required.');
    expect(fieldMessage(missing.body, 'toString')).toBeNull();
    expect(inputValue(missing.body, 'toString')).toBe('kept');
    expect(missing.body).not.toContain('native code');

    // A surrogate pair (one emoji) is well-formed text like any other.
    const posted = await postHostedForm(t.app, visit, { constructor: 'c-value', toString: 's-value \u{1F511}', valueOf: 'v-secret' });
    expect(posted.statusCode).toBe(200);
    const read = await readEndUser(t.app, h, 'u_proto_post');
    expect(read.body.credentials[0]?.values).toEqual({ constructor: 'c-value', toString: 's-value \u{1F511}', valueOf: 'v-secret' });
  });
});

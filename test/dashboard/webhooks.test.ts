/**
 * A server's Webhooks tab over app.inject, on both engines: "Add endpoint" answers the signing secret
 * once (and the secret shown is the one that signs), refused forms keep what was typed, "Rotate
 * secret" and "Remove" go through confirmations, the deliveries show each attempt, "Resend" sends a
 * failed message again; another account's endpoint or message is a 404, and nothing changes.
 * Deliveries are real: events written as changes write them, sent by the node's dispatcher to a
 * local receiver whose answers decide the outcome.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createServer } from '../../src/services/servers/servers.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/services/webhooks/webhook-events.js';
import { csrfOf, type DashboardClient, hiddenFieldsOf, newSignedInUser, visible } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { messageStatus, writeAndDeliver } from '../helpers/webhook-history.js';
import { startWebhookReceiver, verifiedEvent, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SECRET_IN_PAGE = /id="shown-once-value" class="secret" type="text" readonly value="(whsec_[A-Za-z0-9+/]{43}=)"/;
const ENDPOINT_IN_PAGE = /action="\/dashboard\/servers\/srv_[0-9a-f]{28}\/webhooks\/(wh_[0-9a-f]{28})\/rotate-secret"/;

const tab = (serverId: string) => `/dashboard/servers/${serverId}/webhooks`;

/** Posts form fields as a browser does; a name may come more than once (checkboxes). */
function postFields(client: DashboardClient, action: string, fields: [string, string][]) {
  return client.app.inject({
    method: 'POST',
    url: action,
    headers: { cookie: client.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The fields of the form to `action` on the page at `pageUrl`: its hidden ones (CSRF token, one-time nonce), then `fields`. */
async function formOf(client: DashboardClient, pageUrl: string, action: string, fields: [string, string][]): Promise<[string, string][]> {
  const page = await client.get(pageUrl);
  expect(page.statusCode, pageUrl).toBe(200);
  return [...Object.entries(hiddenFieldsOf(page.body, action)), ...fields];
}

/** The "Add endpoint" form filled in, with these events checked (every one unless told). */
function addForm(client: DashboardClient, serverId: string, url: string, events: readonly string[] = WEBHOOK_EVENT_TYPES) {
  return formOf(client, tab(serverId), tab(serverId), [['url', url], ...events.map((e): [string, string] => ['events', e])]);
}

describe.each(ENGINES)('the Webhooks tab on %s', (engine) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    t = await startTestApp(engine);
    receiver = await startWebhookReceiver({ status: 400 });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function userWithServer(name = 'Hooks') {
    const user = await newSignedInUser(t.app, t.ctx.store.db, name);
    const { serverId } = await createServer(t.ctx, { accountId: user.accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    return { ...user, serverId };
  }
  /** Adds an endpoint on the page; its id and the secret the answer shows once. */
  async function added(client: DashboardClient, serverId: string, url: string, events?: readonly string[]) {
    const response = await postFields(client, tab(serverId), await addForm(client, serverId, url, events));
    expect(response.statusCode, response.body.slice(0, 400)).toBe(200);
    return { response, webhookId: ENDPOINT_IN_PAGE.exec(response.body)![1]!, secret: SECRET_IN_PAGE.exec(response.body)![1]! };
  }
  const endpointRows = (serverId: string) => t.ctx.store.db.selectFrom('webhook_endpoints').selectAll().where('server_id', '=', serverId).execute();
  const secretRows = (webhookId: string) =>
    t.ctx.store.db.selectFrom('webhook_secrets').selectAll().where('endpoint_id', '=', webhookId).orderBy('created_at').orderBy('id').execute();

  it('adds an endpoint for every event: the secret is shown once with "Copy", signs what is sent, and is never shown again', async () => {
    const { client, serverId, userId } = await userWithServer();
    const overview = await client.get(`/dashboard/servers/${serverId}`);
    expect(overview.body).toContain(`<a href="${tab(serverId)}">Webhooks</a>`);

    const empty = await client.get(tab(serverId));
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain(`<a href="${tab(serverId)}" aria-current="page">Webhooks</a>`);
    expect(visible(empty.body)).toContain('No endpoints yet.');
    expect(empty.body).toContain('<label for="field-url">Endpoint URL</label>');
    expect(empty.body).toContain('<legend>Events</legend>');
    for (const type of WEBHOOK_EVENT_TYPES) expect(empty.body).toContain(`name="events" value="${type}" checked>`);
    expect(empty.body).toContain('<button type="submit">Add endpoint</button>');

    const { response, webhookId, secret } = await added(client, serverId, receiver.url);
    const text = visible(response.body);
    expect(text).toContain('Endpoint added.');
    expect(text).toContain('Signing secret');
    expect(text).toContain('Copy it now: it will not be shown again. Keyward keeps it encrypted, to sign with.');
    expect(response.body).toContain('data-copy="shown-once-value">Copy</button>');
    expect(text).toContain('No deliveries yet.');
    const [row] = await endpointRows(serverId);
    expect(row).toMatchObject({ id: webhookId, url: receiver.url, events: null });

    // The secret on the page is the one that signs: standardwebhooks verifies a real delivery with it.
    receiver.fallback = { status: 204 };
    const [messageId] = await writeAndDeliver(t, serverId);
    const request = receiver.received.find((r) => r.headers['webhook-id'] === messageId)!;
    expect(verifiedEvent(secret, request, t.clock.now().getTime()).type).toBe('connect.failed');
    receiver.fallback = { status: 400 };

    // Shown once: neither the tab nor the endpoint's page carries it again.
    const list = await client.get(tab(serverId));
    expect(list.body).toContain(`<a href="${tab(serverId)}/${webhookId}"><code>${receiver.url}</code></a></td><td>All events</td>`);
    expect(visible(list.body)).toContain('1 of 10');
    const later = await client.get(`${tab(serverId)}/${webhookId}`);
    for (const page of [list, later]) {
      expect(page.body).not.toContain(secret.slice('whsec_'.length));
      expect(visible(page.body)).not.toContain('Copy it now');
    }
    const audit = visible((await client.get('/dashboard/audit')).body, ' ');
    expect(audit).toContain(`Added webhook endpoint ${receiver.url} (all events)`);
    const event = await t.ctx.store.db.selectFrom('audit_events').select('actor').where('target_id', '=', webhookId).executeTakeFirstOrThrow();
    expect(event.actor).toBe(`user:${userId}`);
  });

  it('acts once: the same form sent again (a reload, a double click) adds nothing and shows no secret', async () => {
    const { client, serverId } = await userWithServer();
    const form = await addForm(client, serverId, `${receiver.url}/once`, ['credential.connected', 'credential.revoked']);
    const first = await postFields(client, tab(serverId), form);
    expect(first.statusCode).toBe(200);
    expect(first.body).toMatch(SECRET_IN_PAGE);
    const second = await postFields(client, tab(serverId), form);
    expect(second.statusCode).toBe(409);
    expect(visible(second.body)).toContain('This form was already submitted; nothing new was made.');
    expect(second.body).not.toMatch(SECRET_IN_PAGE);
    const rows = await endpointRows(serverId);
    expect(rows).toHaveLength(1);
    expect(JSON.parse(rows[0]!.events!)).toEqual(['credential.connected', 'credential.revoked']);
    const list = await client.get(tab(serverId));
    expect(list.body).toContain('<td><code>credential.connected</code>, <code>credential.revoked</code></td>');
    expect(visible((await client.get('/dashboard/audit')).body, ' ')).toContain(
      `Added webhook endpoint ${receiver.url}/once (events: credential.connected, credential.revoked)`,
    );
  });

  it('refuses a bad URL, no event or an unknown one beside the field, keeping what was typed, and adds nothing', async () => {
    const { client, serverId } = await userWithServer();
    const cases: { url: string; events?: string[]; field: string; message: string }[] = [
      { url: '', field: 'url', message: 'Enter the URL of your endpoint.' },
      { url: 'ftp://hooks.acme.test/keyward', field: 'url', message: 'The endpoint URL must be https.' },
      { url: 'not a url', field: 'url', message: 'The endpoint URL must be an absolute URL.' },
      { url: 'https://hooks.acme.test/keyward', events: [], field: 'events', message: 'Choose at least one event.' },
      {
        url: 'https://hooks.acme.test/keyward',
        events: ['credential.connected', 'credential.exploded'],
        field: 'events',
        message: `Unknown event type "credential.exploded": the types are ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      },
    ];
    for (const c of cases) {
      const refused = await postFields(client, tab(serverId), await addForm(client, serverId, c.url, c.events));
      expect(refused.statusCode, c.message).toBe(422);
      expect(visible(refused.body)).toContain(c.message);
      expect(refused.body).toContain(`id="field-${c.field}-error">`);
      expect(refused.body).toContain(`id="field-url" name="url" type="url" value="${c.url.replace(/&/g, '&amp;')}"`);
      expect(refused.body).not.toMatch(SECRET_IN_PAGE);
    }
    // The boxes checked stay checked; the others not.
    const partial = await postFields(client, tab(serverId), await addForm(client, serverId, 'not a url', ['connect.failed']));
    expect(partial.body).toContain('name="events" value="connect.failed" checked>');
    expect(partial.body).toContain('name="events" value="credential.connected">');
    expect(await endpointRows(serverId)).toEqual([]);
  });

  it('refuses a private address as production does, and an 11th endpoint above the form', async () => {
    const strict = await startTestApp(engine, { allowPrivateUrls: false });
    try {
      const user = await newSignedInUser(strict.app, strict.ctx.store.db, 'Strict');
      const { serverId } = await createServer(strict.ctx, { accountId: user.accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
      const refused = await postFields(user.client, tab(serverId), await addForm(user.client, serverId, 'https://169.254.169.254/latest/meta-data'));
      expect(refused.statusCode).toBe(422);
      expect(refused.body).toContain(
        '<p class="error" id="field-url-error">The endpoint URL points at a link-local address (169.254.169.254); set KEYWARD_ALLOW_PRIVATE_URLS=true only for development.</p>',
      );
    } finally {
      await strict.close();
    }

    const { client, serverId } = await userWithServer();
    for (let i = 1; i <= 10; i += 1) await addWebhookEndpoint(t.ctx, { serverId, url: `https://hooks${i}.acme.test/keyward`, actor: CLI_ACTOR });
    expect(visible((await client.get(tab(serverId))).body)).toContain('10 of 10');
    const eleventh = await postFields(client, tab(serverId), await addForm(client, serverId, 'https://hooks11.acme.test/keyward'));
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.body).toContain('<p class="error summary" role="alert">A server has at most 10 webhook endpoints: remove one first.</p>');
    expect(eleventh.body).toContain('value="https://hooks11.acme.test/keyward"');
    expect(await endpointRows(serverId)).toHaveLength(10);
  });

  it('rotates the secret behind a confirmation: the new one shown once, both signing for the grace period', async () => {
    const { client, serverId } = await userWithServer();
    const { webhookId, secret: oldSecret } = await added(client, serverId, receiver.url);
    const endpointPage = `${tab(serverId)}/${webhookId}`;
    const page = await client.get(endpointPage);
    expect(page.body).toContain(
      `<form method="get" action="${endpointPage}/rotate-secret"><button type="submit" class="secondary">Rotate secret</button></form>`,
    );

    const confirm = await client.get(`${endpointPage}/rotate-secret`);
    expect(confirm.statusCode).toBe(200);
    expect(visible(confirm.body)).toContain(`Make a new signing secret for ${receiver.url}?`);
    expect(confirm.body).toContain('<label for="field-grace">Grace period</label>');
    expect(confirm.body).toContain('<option value="86400" selected>24 hours</option>');

    const badGrace = await postFields(
      client,
      `${endpointPage}/rotate-secret`,
      await formOf(client, `${endpointPage}/rotate-secret`, `${endpointPage}/rotate-secret`, [['grace', '5']]),
    );
    expect(badGrace.statusCode).toBe(422);
    expect(badGrace.body).toContain('<p class="error" id="field-grace-error">Choose a grace period from the list.</p>');
    expect(await secretRows(webhookId)).toHaveLength(1);

    const rotated = await postFields(
      client,
      `${endpointPage}/rotate-secret`,
      await formOf(client, `${endpointPage}/rotate-secret`, `${endpointPage}/rotate-secret`, [['grace', '3600']]),
    );
    expect(rotated.statusCode).toBe(200);
    expect(visible(rotated.body)).toContain('The signing secret was rotated.');
    expect(visible(rotated.body)).toContain('New signing secret');
    const newSecret = SECRET_IN_PAGE.exec(rotated.body)![1]!;
    expect(newSecret).not.toBe(oldSecret);
    const [old, current] = await secretRows(webhookId);
    expect(current!.expires_at).toBeNull();
    expect(Date.parse(old!.expires_at!) - t.clock.now().getTime()).toBe(3600_000);
    expect((await client.get(endpointPage)).body).not.toContain(newSecret.slice('whsec_'.length));

    // During the grace period a delivery verifies with either secret.
    receiver.fallback = { status: 204 };
    const [messageId] = await writeAndDeliver(t, serverId);
    receiver.fallback = { status: 400 };
    const request = receiver.received.find((r) => r.headers['webhook-id'] === messageId)!;
    for (const secret of [oldSecret, newSecret]) expect(verifiedEvent(secret, request, t.clock.now().getTime()).type).toBe('connect.failed');
    const audit = visible((await client.get('/dashboard/audit')).body, ' ');
    expect(audit).toContain(`Rotated the signing secret of ${receiver.url}; the old secret kept signing for 1 hour`);
  });

  it('removes an endpoint behind a confirmation', async () => {
    const { client, serverId } = await userWithServer();
    const { webhookId } = await added(client, serverId, `${receiver.url}/removed`);
    const endpointPage = `${tab(serverId)}/${webhookId}`;
    const confirm = await client.get(`${endpointPage}/remove`);
    expect(confirm.statusCode).toBe(200);
    expect(visible(confirm.body)).toContain(`Remove the endpoint ${receiver.url}/removed?`);
    expect(confirm.body).toContain('<button type="submit" class="danger">Remove</button>');
    expect(await endpointRows(serverId)).toHaveLength(1);

    const removed = await client.post(`${endpointPage}/remove`, { csrf: csrfOf(confirm.body) });
    expect(removed.statusCode).toBe(303);
    expect(removed.headers.location).toBe(`${tab(serverId)}?notice=webhook-removed`);
    const after = await client.get(removed.headers.location!);
    expect(after.body).toContain('<p class="notice" role="status">The endpoint was removed. Nothing more is sent to it.</p>');
    expect(visible(after.body)).toContain('No endpoints yet.');
    expect(await endpointRows(serverId)).toEqual([]);
    expect((await client.get(endpointPage)).statusCode).toBe(404);
    expect(visible((await client.get('/dashboard/audit')).body, ' ')).toContain(`Removed webhook endpoint ${receiver.url}/removed`);
  });

  it('shows each delivery with its attempts (status code or error, duration), and resends a failed one', async () => {
    const { client, serverId } = await userWithServer();
    const { webhookId } = await added(client, serverId, receiver.url);
    const [failedId] = await writeAndDeliver(t, serverId, 'u_failed');
    receiver.fallback = { status: 204 };
    const [deliveredId] = await writeAndDeliver(t, serverId, 'u_delivered');
    const endpointPage = `${tab(serverId)}/${webhookId}`;

    const page = await client.get(endpointPage);
    const text = visible(page.body, ' ');
    expect(text).toMatch(new RegExp(`connect\\.failed\\s+${failedId}\\s+\\S+ \\S+ UTC\\s+Failed\\s+\\S+ \\S+ UTC · HTTP 400 · \\d+ ms`));
    expect(text).toMatch(new RegExp(`connect\\.failed\\s+${deliveredId}\\s+\\S+ \\S+ UTC\\s+Delivered\\s+\\S+ \\S+ UTC · HTTP 204 · \\d+ ms`));
    // "Resend" on the failed one only.
    expect(page.body.match(/>Resend<\/button>/g)).toHaveLength(1);
    const resendAction = `${endpointPage}/messages/${failedId}/resend`;
    expect(page.body).toContain(`action="${resendAction}"`);

    // Resent later than it first failed, as a person does (the test clock stands still otherwise).
    t.clock.advance(60);
    const resent = await client.post(resendAction, { csrf: csrfOf(page.body) });
    expect(resent.statusCode).toBe(303);
    expect(resent.headers.location).toBe(`${endpointPage}?notice=message-resent`);
    expect(await messageStatus(t, failedId!)).toBe('pending');
    const after = await client.get(resent.headers.location!);
    expect(visible(after.body)).toContain('The message is pending again');
    expect(after.body).not.toContain('>Resend</button>');
    const twice = await client.post(resendAction, { csrf: csrfOf(page.body) });
    expect(twice.headers.location).toBe(`${endpointPage}?notice=message-not-failed`);

    await t.webhooks.drain();
    receiver.fallback = { status: 400 };
    expect(await messageStatus(t, failedId!)).toBe('delivered');
    const sent = receiver.received.filter((r) => r.headers['webhook-id'] === failedId);
    expect(sent).toHaveLength(2);
    expect(visible((await client.get(endpointPage)).body, ' ')).toMatch(/HTTP 400 · \d+ ms\s+\S+ \S+ UTC · HTTP 204 · \d+ ms/);
    expect(visible((await client.get('/dashboard/audit')).body, ' ')).toContain(`Resent a failed webhook message to endpoint ${webhookId}`);

    // An endpoint that refuses connections: the error and the next attempt, no "Resend" (it is still retried).
    const dead = await startWebhookReceiver();
    await dead.close();
    const { webhookId: deadId } = await added(client, serverId, dead.url, ['credential.revoked', 'connect.failed']);
    await writeAndDeliver(t, serverId, 'u_dead');
    const deadPage = visible((await client.get(`${tab(serverId)}/${deadId}`)).body, ' ');
    expect(deadPage).toMatch(/Pending\s+next attempt \S+ \S+ UTC\s+\S+ \S+ UTC · network: [^·]+ · \d+ ms/);
    expect(deadPage).not.toContain('Resend');
  });

  it("answers 404 to another account's endpoints and messages, and to forms without the CSRF token, and changes nothing", async () => {
    const owner = await userWithServer('Owner');
    const { webhookId } = await added(owner.client, owner.serverId, receiver.url);
    const [messageId] = await writeAndDeliver(t, owner.serverId);
    expect(await messageStatus(t, messageId!)).toBe('failed');
    const before = { endpoints: await endpointRows(owner.serverId), secrets: await secretRows(webhookId) };

    const other = await userWithServer('Other');
    const { webhookId: otherWebhook } = await added(other.client, other.serverId, `${receiver.url}/other`);
    const csrf = csrfOf((await other.client.get(tab(other.serverId))).body);
    const foreign = `${tab(owner.serverId)}/${webhookId}`;
    // The owner's endpoint under the other user's own server, and the owner's server itself.
    const underOwn = `${tab(other.serverId)}/${webhookId}`;
    for (const url of [tab(owner.serverId), foreign, underOwn, `${underOwn}/rotate-secret`, `${underOwn}/remove`]) {
      const response = await other.client.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(visible(response.body)).toContain('This page does not exist, or it belongs to another account.');
      expect(response.body).not.toContain(receiver.url);
    }
    for (const [action, fields] of [
      [tab(owner.serverId), { url: 'https://intruder.example.test/', events: 'connect.failed', once: 'AAAAAAAAAAAAAAAAAAAAAAAA' }],
      [`${underOwn}/rotate-secret`, { grace: '0', once: 'BBBBBBBBBBBBBBBBBBBBBBBB' }],
      [`${underOwn}/remove`, {}],
      [`${foreign}/remove`, {}],
      [`${underOwn}/messages/${messageId}/resend`, {}],
      [`${tab(other.serverId)}/${otherWebhook}/messages/${messageId}/resend`, {}],
    ] as const) {
      const response = await other.client.post(action, { csrf, ...fields });
      expect(response.statusCode, action).toBe(404);
      expect(response.body).not.toMatch(SECRET_IN_PAGE);
    }
    // The owner's own forms, without the token: refused before anything is read.
    for (const action of [tab(owner.serverId), `${foreign}/rotate-secret`, `${foreign}/remove`, `${foreign}/messages/${messageId}/resend`]) {
      const response = await owner.client.post(action, { url: 'https://evil.example.test/', grace: '0' });
      expect(response.statusCode, action).toBe(403);
      expect(response.body).toContain('This form could not be verified.');
    }
    expect(await endpointRows(owner.serverId)).toEqual(before.endpoints);
    expect(await secretRows(webhookId)).toEqual(before.secrets);
    expect(await messageStatus(t, messageId!)).toBe('failed');
  });
});

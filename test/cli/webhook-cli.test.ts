/**
 * `keyward webhook …` (CONTRACT 4 and 7) as a real process on a real database, beside a test node on
 * the same database and master key: the node writes events the way changes write them and its real
 * dispatcher sends them to a real receiver, so the deliveries the CLI lists and resends are real ones.
 * Each command's one JSON object, the secret shown once (and sealed at rest), the refusals on stderr.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addWebhookEndpoint, removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/services/webhooks/webhook-events.js';
import { webhookSecretAad } from '../../src/services/webhooks/webhook-signing.js';
import { type CliRun, cliEnv, cliJson, runCli } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { moveClockTo } from '../helpers/webhook-delivery.js';
import { messageStatus, writeEvent } from '../helpers/webhook-history.js';
import { startWebhookReceiver, verifiedEvent, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ALLOW_HINT, REFUSED_TOKEN_URLS } from '../outbound/refused-urls.js';

const SLOW = 180_000;
const WEBHOOK_ID = /^wh_[0-9a-f]{28}$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const sortedKeys = (value: object) => Object.keys(value).sort();

/** A refusal: exit 1, nothing on stdout, the message on stderr. */
function expectRefused(run: CliRun, message: string) {
  expect(run.stdout).toBe('');
  expect(run.stderr).toBe(`keyward: ${message}\n`);
  expect(run.code).toBe(1);
}

describe.each(ENGINES)('keyward webhook … on %s', (engine) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let env: NodeJS.ProcessEnv;
  let serverId: string;
  /** Added by the first test: one for every event, one for two types. */
  let all: { webhookId: string; secret: string };
  let some: { webhookId: string; secret: string };
  beforeAll(async () => {
    t = await startTestApp(engine);
    ({ serverId } = await createTenant(t.ctx));
    receiver = await startWebhookReceiver({ status: 400 });
    env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  const endpointCount = async () => (await t.ctx.store.webhooks.endpointsOf(serverId)).length;
  const secretRows = (webhookId: string) =>
    t.ctx.store.db.selectFrom('webhook_secrets').selectAll().where('endpoint_id', '=', webhookId).orderBy('created_at').orderBy('id').execute();
  const auditActions = async (targetId: string) =>
    (await t.ctx.store.db.selectFrom('audit_events').select(['action', 'actor']).where('target_id', '=', targetId).orderBy('created_at').execute()).map(
      (e) => `${e.action} by ${e.actor}`,
    );

  it('webhook add prints the secret once; webhook list shows the endpoints and no secret; the secret is kept only sealed', { timeout: SLOW }, async () => {
    const [json, text] = await Promise.all([
      cliJson(env, ['webhook', 'add', '--server', serverId, '--url', receiver.url]),
      runCli(env, ['webhook', 'add', '--server', serverId, '--url', `${receiver.url}/some`, '--events', 'credential.connected, connect.failed']),
    ]);
    expect(sortedKeys(json)).toEqual(['secret', 'webhookId']);
    expect(json.webhookId).toMatch(WEBHOOK_ID);
    expect(json.secret).toMatch(SECRET);
    all = json as typeof all;
    // Text for a person: the secret on a line of its own, once, under the warning.
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^Webhook endpoint wh_[0-9a-f]{28} added\.$/);
    expect(lines[1]).toContain('shown once');
    expect(lines[2]).toMatch(SECRET);
    expect(lines).toHaveLength(3);
    some = { webhookId: /wh_[0-9a-f]{28}/.exec(lines[0]!)![0], secret: lines[2]! };

    const listed = await cliJson(env, ['webhook', 'list', '--server', serverId]);
    expect(sortedKeys(listed)).toEqual(['webhooks']);
    // Oldest first; the two were added at the same moment, in either order.
    const byUrl = [...(listed.webhooks as { url: string }[])].sort((a, b) => a.url.localeCompare(b.url));
    expect({ webhooks: byUrl }).toEqual({
      webhooks: [
        { id: all.webhookId, serverId, url: receiver.url, events: [...WEBHOOK_EVENT_TYPES], createdAt: expect.stringMatching(TIME) },
        {
          id: some.webhookId,
          serverId,
          url: `${receiver.url}/some`,
          events: ['credential.connected', 'connect.failed'],
          createdAt: expect.stringMatching(TIME),
        },
      ],
    });
    const listedText = await runCli(env, ['webhook', 'list', '--server', serverId]);
    expect(listedText.stdout).toContain(`${all.webhookId}  ${receiver.url}  all events  created `);
    expect(listedText.stdout).toContain(`${some.webhookId}  ${receiver.url}/some  credential.connected,connect.failed  created `);
    for (const { secret } of [all, some]) {
      const base64 = secret.slice('whsec_'.length);
      for (const printed of [JSON.stringify(listed), listedText.stdout]) expect(printed).not.toContain(base64);
      const [row] = await secretRows(secret === all.secret ? all.webhookId : some.webhookId);
      const sealed = Buffer.from(row!.secret);
      for (const encoding of ['latin1', 'utf8', 'hex', 'base64'] as const) expect(sealed.toString(encoding)).not.toContain(base64);
      expect(t.ctx.vault.open(sealed, webhookSecretAad(row!.id, row!.endpoint_id))).toBe(secret);
    }
    expect(await auditActions(all.webhookId)).toEqual(['webhook.added by cli']);
  });

  it('refuses a URL outside the outbound policy, an unknown event type and a missing option, and stores nothing', { timeout: SLOW }, async () => {
    const strict = { ...env, KEYWARD_ALLOW_PRIVATE_URLS: 'false' };
    const add = (e: NodeJS.ProcessEnv, url: string, extra: string[] = []) =>
      runCli(e, ['webhook', 'add', '--server', serverId, '--url', url, ...extra, '--json']);
    // A few of the forms test/outbound checks one by one, with the words each refusal carries.
    const privateOnes = REFUSED_TOKEN_URLS.filter((r) =>
      ['https://10.0.0.5/token', 'https://[::1]/token', 'https://169.254.169.254/latest/meta-data', 'http://auth.acme.test/token'].includes(r.url),
    );
    expect(privateOnes).toHaveLength(4);
    const [refusedPrivate, ftp, garbage, userinfo, unknownEvent, noUrl] = await Promise.all([
      Promise.all(privateOnes.map((r) => add(strict, r.url))),
      add(env, 'ftp://hooks.acme.test/keyward'),
      add(env, 'not a url'),
      add(env, 'https://user:password@hooks.acme.test/keyward'),
      add(env, 'https://hooks.acme.test/keyward', ['--events', 'credential.connected,credential.exploded']),
      runCli(env, ['webhook', 'add', '--server', serverId, '--json']),
    ]);
    for (const [i, r] of privateOnes.entries()) expectRefused(refusedPrivate[i]!, `the endpoint URL ${r.because}${ALLOW_HINT}`);
    expectRefused(ftp, 'the endpoint URL must be https');
    expectRefused(garbage, 'the endpoint URL must be an absolute URL');
    expectRefused(userinfo, 'the endpoint URL must not carry credentials or a #fragment');
    expectRefused(unknownEvent, `unknown event type "credential.exploded": the types are ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    expect(noUrl.code).toBe(2);
    expect(noUrl.stdout).toBe('');
    expect(noUrl.stderr).toContain('--url is required');
    expect(await endpointCount()).toBe(2);
  });

  it('refuses an 11th endpoint on the server', { timeout: SLOW }, async () => {
    const more = [];
    for (let i = 3; i <= 10; i += 1) more.push(await addWebhookEndpoint(t.ctx, { serverId, url: `https://hooks${i}.acme.test/keyward`, actor: CLI_ACTOR }));
    const eleventh = await runCli(env, ['webhook', 'add', '--server', serverId, '--url', 'https://hooks11.acme.test/keyward', '--json']);
    expectRefused(eleventh, 'a server has at most 10 webhook endpoints: remove one first');
    expect(await endpointCount()).toBe(10);
    // The next tests deliver events: only the two endpoints that answer (the local receiver) stay.
    for (const { webhookId } of more) await removeWebhookEndpoint(t.ctx, { webhookId, actor: CLI_ACTOR });
  });

  it('webhook deliveries lists a message written with its change, pending, then failed with its attempt; --status filters', { timeout: SLOW }, async () => {
    const written = await writeEvent(t, serverId);
    // One message per endpoint that subscribes to connect.failed: both.
    expect(written).toHaveLength(2);
    const pending = await cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId]);
    expect(pending).toEqual({
      deliveries: [
        {
          messageId: expect.stringMatching(/^msg_[0-9a-f]{28}$/),
          type: 'connect.failed',
          createdAt: expect.stringMatching(TIME),
          status: 'pending',
          nextAttemptAt: expect.stringMatching(TIME),
          endedAt: null,
          attempts: [],
        },
      ],
    });
    const [message] = pending.deliveries as { messageId: string }[];
    expect(written).toContain(message!.messageId);

    // The receiver answers 400: not retried, failed at once.
    await t.webhooks.drain();
    const [failed, onlyFailed, onlyPending, onlyDelivered, badStatus, text] = await Promise.all([
      cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId]),
      cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId, '--status', 'failed']),
      cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId, '--status', 'pending']),
      cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId, '--status', 'delivered']),
      runCli(env, ['webhook', 'deliveries', '--webhook', all.webhookId, '--status', 'lost', '--json']),
      runCli(env, ['webhook', 'deliveries', '--webhook', all.webhookId]),
    ]);
    const [delivery] = failed.deliveries as { status: string; nextAttemptAt: null; endedAt: string; attempts: Record<string, unknown>[] }[];
    expect(delivery).toMatchObject({ messageId: message!.messageId, status: 'failed', nextAttemptAt: null, endedAt: expect.stringMatching(TIME) });
    expect(delivery!.attempts).toEqual([{ attemptedAt: expect.stringMatching(TIME), statusCode: 400, error: null, durationMs: expect.any(Number) }]);
    expect(onlyFailed).toEqual(failed);
    expect(onlyPending).toEqual({ deliveries: [] });
    expect(onlyDelivered).toEqual({ deliveries: [] });
    expectRefused(badStatus, 'the status must be one of pending, delivered, failed');
    expect(text.stdout).toContain(`${message!.messageId}  connect.failed  `);
    expect(text.stdout).toMatch(/ failed\n {4}\S+Z {2}400 {2}\d+ ms\n$/);
  });

  it('webhook resend makes a failed message pending again, sent with the same webhook-id; refuses one that is not failed', { timeout: SLOW }, async () => {
    const { deliveries } = await cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId, '--status', 'failed']);
    const messageId = (deliveries as { messageId: string }[])[0]!.messageId;
    expect(await cliJson(env, ['webhook', 'resend', '--message', messageId])).toEqual({ messageId, status: 'pending' });
    expect(await messageStatus(t, messageId)).toBe('pending');
    const [again, unknown] = await Promise.all([
      runCli(env, ['webhook', 'resend', '--message', messageId, '--json']),
      runCli(env, ['webhook', 'resend', '--message', 'msg_000000000000ffffffffffffffff', '--json']),
    ]);
    expectRefused(again, `message ${messageId} is pending: only a failed message can be resent`);
    expectRefused(unknown, 'no webhook message msg_000000000000ffffffffffffffff');

    receiver.fallback = { status: 204 };
    // The CLI made it due at its own (real) time; the node's test clock stood still since it started.
    moveClockTo(t.clock, new Date().toISOString(), 1000);
    const before = receiver.received.length;
    await t.webhooks.drain();
    expect(receiver.received.slice(before).map((r) => r.headers['webhook-id'])).toEqual([messageId]);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === messageId)).toHaveLength(2);
    const { deliveries: after } = await cliJson(env, ['webhook', 'deliveries', '--webhook', all.webhookId]);
    const resent = (after as { messageId: string; status: string; attempts: { statusCode: number }[] }[]).find((d) => d.messageId === messageId)!;
    expect(resent.status).toBe('delivered');
    expect(resent.attempts.map((a) => a.statusCode)).toEqual([400, 204]);
    expect(await auditActions(messageId)).toEqual(['webhook.message_resent by cli']);
  });

  it('webhook rotate-secret keeps the old secret signing for 24 hours unless told, and refuses a grace period out of range', { timeout: SLOW }, async () => {
    const rotated = await cliJson(env, ['webhook', 'rotate-secret', '--webhook', all.webhookId]);
    expect(sortedKeys(rotated)).toEqual(['secret', 'webhookId']);
    expect(rotated.webhookId).toBe(all.webhookId);
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(all.secret);
    const [old, current] = await secretRows(all.webhookId);
    expect(current!.expires_at).toBeNull();
    const grace = Date.parse(old!.expires_at!) - Date.parse(current!.created_at);
    expect(grace).toBeGreaterThanOrEqual(86_399_000);
    expect(grace).toBeLessThanOrEqual(86_400_000);

    // Meanwhile a message carries both signatures: standardwebhooks verifies it with either secret.
    const written = await writeEvent(t, serverId, 'u_rotation');
    await t.webhooks.drain();
    const { id } = await t.ctx.store.db
      .selectFrom('webhook_messages')
      .select('id')
      .where('endpoint_id', '=', all.webhookId)
      .where('id', 'in', written)
      .executeTakeFirstOrThrow();
    const request = receiver.received.find((r) => r.headers['webhook-id'] === id)!;
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [all.secret, rotated.secret as string]) {
      expect(verifiedEvent(secret, request, t.clock.now().getTime()).data.externalUserId).toBe('u_rotation');
    }

    const [noGrace, tooLong, notANumber] = await Promise.all([
      cliJson(env, ['webhook', 'rotate-secret', '--webhook', some.webhookId, '--grace-seconds', '0']),
      runCli(env, ['webhook', 'rotate-secret', '--webhook', some.webhookId, '--grace-seconds', '604801', '--json']),
      runCli(env, ['webhook', 'rotate-secret', '--webhook', some.webhookId, '--grace-seconds', 'soon', '--json']),
    ]);
    expect(noGrace.webhookId).toBe(some.webhookId);
    const [ended, fresh] = await secretRows(some.webhookId);
    expect(Date.parse(ended!.expires_at!) - Date.parse(fresh!.created_at)).toBeLessThanOrEqual(0);
    expectRefused(tooLong, 'the grace period must be 0 to 604800 seconds');
    // Malformed, not out of range: a usage error (CONTRACT 4), exit 2 with the command's usage.
    expect({ code: notANumber.code, stdout: notANumber.stdout }).toEqual({ code: 2, stdout: '' });
    expect(notANumber.stderr).toMatch(/^keyward: --grace-seconds must be a whole number\b[^\n]*\n$/);
    expect(await secretRows(some.webhookId)).toHaveLength(2);
    expect(await auditActions(some.webhookId)).toEqual(['webhook.added by cli', 'webhook.secret_rotated by cli']);
  });

  it('webhook remove deletes the endpoint with its messages; a second remove is refused', { timeout: SLOW }, async () => {
    const removed = await cliJson(env, ['webhook', 'remove', '--webhook', some.webhookId]);
    expect(removed).toEqual({ webhookId: some.webhookId, removedAt: expect.stringMatching(TIME) });
    const listed = await cliJson(env, ['webhook', 'list', '--server', serverId]);
    expect((listed.webhooks as { id: string }[]).map((w) => w.id)).toEqual([all.webhookId]);
    const messages = await t.ctx.store.db.selectFrom('webhook_messages').select('id').where('endpoint_id', '=', some.webhookId).execute();
    expect(messages).toEqual([]);
    const [again, deliveries] = await Promise.all([
      runCli(env, ['webhook', 'remove', '--webhook', some.webhookId, '--json']),
      runCli(env, ['webhook', 'deliveries', '--webhook', some.webhookId, '--json']),
    ]);
    expectRefused(again, `no webhook endpoint ${some.webhookId}`);
    expectRefused(deliveries, `no webhook endpoint ${some.webhookId}`);
    expect(await auditActions(some.webhookId)).toEqual(['webhook.added by cli', 'webhook.secret_rotated by cli', 'webhook.removed by cli']);
  });
});

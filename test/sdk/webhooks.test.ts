/**
 * verifyWebhook on real deliveries: Keyward's dispatcher sends each kind of event to a real receiver,
 * the SDK verifies what arrived (headers and raw body) and returns the event, which must match the
 * schema the OpenAPI document publishes for its type (the SDK's event types are generated from it).
 * Then the refusals: a tampered body, an old or future timestamp, a wrong secret, a missing header.
 */
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyward, KeywardError, verifyWebhook, type WebhookEvent, type WebhookEventOf } from '../../src/sdk/index.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { rotateWebhookSecret } from '../../src/services/webhooks/webhook-endpoints.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { type Subscriber, subscribe } from '../helpers/webhook-events.js';
import type { ReceivedWebhook } from '../helpers/webhook-receiver.js';

let o: OAuthTenant;
let keyward: Keyward;
let subscriber: Subscriber;
/** The schema of each event type, from GET /openapi.json's webhooks section. */
let schemaOf: (type: string) => object;

beforeAll(async () => {
  o = await startOAuthTenant('sqlite', { listen: true, accessTokenTtlSeconds: 600 });
  keyward = new Keyward({ baseUrl: o.t.ctx.publicUrl, accountKey: o.tenant.accountKey, serverKey: o.tenant.serverKey });
  subscriber = await subscribe(o.t, o.tenant.serverId);
  const doc = (await o.t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  schemaOf = (type) => {
    const ref: string = doc.webhooks[type].post.requestBody.content['application/json'].schema.$ref;
    return doc.components.schemas[ref.split('/').pop()!];
  };
});
afterAll(async () => {
  await subscriber?.close();
  await o?.close();
});

/** Every webhook delivered since `from`, once the node's dispatcher has sent what is due. */
async function deliveredSince(from: number): Promise<ReceivedWebhook[]> {
  await o.t.webhooks.drain();
  return subscriber.receiver.received.slice(from);
}

const now = () => o.t.clock.now();
const ajv = new Ajv({ strict: false, allErrors: true });

/** Verified by the SDK, and checked against the published schema of its type. */
function verified(webhook: ReceivedWebhook, secret = subscriber.secret): WebhookEvent {
  const event = verifyWebhook(webhook.headers, webhook.body, secret, { now: now() });
  const validate = ajv.compile(schemaOf(event.type));
  expect(validate(event), `${event.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  return event;
}

describe('every event type, verified and as its schema says', () => {
  const events: WebhookEvent[] = [];

  it('credential.connected and credential.revoked from a hosted form and a revoke', async () => {
    const from = subscriber.receiver.received.length;
    const { sessionId } = await connectStatic(o.t.app, o.headers, { externalUserId: 'hooked', values: { apiKey: 'sk-proj-hooked-openaiopenaiopenaiopenai' } });
    await keyward.revokeEndUser('hooked');
    const [connected, revoked] = (await deliveredSince(from)).map((w) => verified(w));
    events.push(connected!, revoked!);
    expect(connected).toMatchObject({ type: 'credential.connected', data: { serverId: o.tenant.serverId, externalUserId: 'hooked', sessionId } });
    // Narrowed on `type`: the revoked event's own fields are typed.
    if (revoked!.type !== 'credential.revoked') throw new Error(`got ${revoked!.type}`);
    const data: WebhookEventOf<'credential.revoked'>['data'] = revoked!.data;
    expect(data).toMatchObject({ reason: 'revoked', providerRevocation: 'not_supported', credential: { status: 'revoked', provider: 'openai' } });
  });

  it('connect.failed, then credential.connected from OAuth, refresh_failed, recovered and needs_reauth', async () => {
    const from = subscriber.receiver.received.length;
    const denied = await keyward.startOAuth(PROVIDER, { externalUserId: 'oauth-hooked' });
    await o.callback(await o.as.approve(denied.authorizationUrl, { deny: true }));
    const flow = await keyward.startOAuth(PROVIDER, { externalUserId: 'oauth-hooked' });
    await o.callback(await o.as.approve(flow.authorizationUrl));
    // Each refresh asks for more validity than the token's 600 s, past the 30 s cooldown.
    const refresh = () => {
      o.t.clock.advance(31);
      return keyward.getEndUser('oauth-hooked', { minValiditySeconds: 900 });
    };
    o.as.tokenEndpoint = 'unavailable';
    await refresh();
    o.as.tokenEndpoint = 'normal';
    await refresh();
    o.as.tokenEndpoint = 'invalid_grant';
    await refresh();
    o.as.tokenEndpoint = 'normal';
    const received = (await deliveredSince(from)).map((w) => verified(w));
    events.push(...received);
    expect(received.map((e) => e.type)).toEqual([
      'connect.failed',
      'credential.connected',
      'credential.refresh_failed',
      'credential.recovered',
      'credential.needs_reauth',
    ]);
    expect(received[0]).toMatchObject({ data: { flowId: denied.id, error: 'access_denied', provider: PROVIDER } });
    expect(received[1]).toMatchObject({ data: { flowId: flow.id, credential: { type: 'oauth2', status: 'active' } } });
  });

  it('covers every type the document lists', async () => {
    const doc = (await o.t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(Object.keys(doc.webhooks)));
  });
});

describe('refusals', () => {
  let webhook: ReceivedWebhook;
  beforeAll(async () => {
    const from = subscriber.receiver.received.length;
    await connectStatic(o.t.app, o.headers, { externalUserId: 'refusals', values: { apiKey: 'sk-proj-refusals-openaiopenaiopenaiopenai' } });
    webhook = (await deliveredSince(from))[0]!;
  });

  /** The KeywardError verifyWebhook throws for these inputs. */
  function refusal(headers: Record<string, string | string[] | undefined>, body: string | Uint8Array, secret: string, at = now()): KeywardError {
    try {
      verifyWebhook(headers, body, secret, { now: at });
    } catch (error) {
      expect(error).toBeInstanceOf(KeywardError);
      expect(error).toMatchObject({ code: 'webhook_verification_failed', status: null });
      return error as KeywardError;
    }
    throw new Error('verifyWebhook accepted it');
  }

  it('accepts the raw bytes as well as the text, and headers as a fetch Headers object', () => {
    const bytes = new TextEncoder().encode(webhook.body);
    expect(verifyWebhook(webhook.headers, bytes, subscriber.secret, { now: now() }).type).toBe('credential.connected');
    const headers = new Headers(Object.entries(webhook.headers).map(([name, value]): [string, string] => [name, String(value)]));
    expect(verifyWebhook(headers, webhook.body, subscriber.secret, { now: now() }).type).toBe('credential.connected');
  });

  it('a body changed by one character', () => {
    const tampered = webhook.body.replace('"refusals"', '"refusalz"');
    expect(tampered).not.toBe(webhook.body);
    expect(refusal(webhook.headers, tampered, subscriber.secret).detail).toBe('No signature matches this secret and body.');
  });

  it('a body parsed and serialised again with other spacing', () => {
    refusal(webhook.headers, JSON.stringify(JSON.parse(webhook.body), null, 2), subscriber.secret);
  });

  it('a timestamp more than five minutes old or ahead, and one five minutes off accepted', () => {
    const sent = Number(webhook.headers['webhook-timestamp']) * 1000;
    expect(refusal(webhook.headers, webhook.body, subscriber.secret, new Date(sent + 301_000)).detail).toContain('300 seconds');
    refusal(webhook.headers, webhook.body, subscriber.secret, new Date(sent - 301_000));
    expect(verifyWebhook(webhook.headers, webhook.body, subscriber.secret, { now: new Date(sent + 300_000) }).type).toBe('credential.connected');
  });

  it('another secret, and a timestamp changed to bring an old message back', () => {
    refusal(webhook.headers, webhook.body, `whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    const later = String(Number(webhook.headers['webhook-timestamp']) + 600);
    refusal({ ...webhook.headers, 'webhook-timestamp': later }, webhook.body, subscriber.secret, new Date(Number(later) * 1000));
  });

  it('a missing header, or a signature of another version', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(refusal({ ...webhook.headers, [name]: undefined }, webhook.body, subscriber.secret).detail).toBe(`The ${name} header is missing.`);
    }
    const v2 = String(webhook.headers['webhook-signature']).replace(/^v1,/, 'v2,');
    refusal({ ...webhook.headers, 'webhook-signature': v2 }, webhook.body, subscriber.secret);
  });
});

describe('a secret rotation', () => {
  it('the message carries both signatures during the grace period, and either secret verifies it', async () => {
    const { secret: next } = await rotateWebhookSecret(o.t.ctx, { webhookId: subscriber.webhookId, graceSeconds: 3600, actor: CLI_ACTOR });
    const from = subscriber.receiver.received.length;
    await connectStatic(o.t.app, o.headers, { externalUserId: 'rotation', values: { apiKey: 'sk-proj-rotation-openaiopenaiopenaiopenai' } });
    const [webhook] = await deliveredSince(from);
    expect(String(webhook!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(webhook!, subscriber.secret).type).toBe('credential.connected');
    expect(verified(webhook!, next).type).toBe('credential.connected');
    // The secret without its whsec_ prefix works too, as Standard Webhooks libraries accept it.
    expect(verified(webhook!, next.slice('whsec_'.length)).type).toBe('credential.connected');
  });
});

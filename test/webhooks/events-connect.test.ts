/**
 * credential.connected and connect.failed (CONTRACT 7), on both engines: each event delivered to a real
 * receiver, verified by the standardwebhooks package, with the exact body of the contract; and the
 * subscription filter (an endpoint gets only the types it asked for, each endpoint its own message).
 * The flows run against a real authorization server (oidc-provider) and the real hosted form.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { removeWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { eventTimestamp, listedCredential, outboxRows, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const API_KEY = 'sk-proj-CONNECTEDabcdefghijklmnopqrstuv';

describe.each(ENGINES)('connect events on %s', (engine) => {
  let o: OAuthTenant;
  let all: Subscriber;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    all = await subscribe(o.t, o.tenant.serverId);
  });
  afterAll(async () => {
    await all.close();
    await o.close();
  });
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  const listed = (externalUserId: string, provider: string) => listedCredential(o.t.app, o.headers, externalUserId, provider);

  it('credential.connected from the hosted form names the form session', async () => {
    o.t.clock.advance(1);
    const { sessionId } = await connectStatic(o.t.app, o.headers, { externalUserId: 'u_form', values: { apiKey: API_KEY } });
    const credential = await listed('u_form', 'openai');
    const events = await all.events('u_form');
    expect(events).toEqual([
      {
        messageId: expect.stringMatching(/^msg_[0-9a-f]{28}$/),
        type: 'credential.connected',
        timestamp: eventTimestamp(o.t.clock.now()),
        data: { serverId: o.tenant.serverId, externalUserId: 'u_form', credential, sessionId, endUser: { displayName: null, email: null, tags: {} } },
      },
    ]);
    expect(sessionId).toMatch(/^cfs_/);
    // The webhook-id is the outbox message, now delivered.
    const rows = await outboxRows(o.t.ctx, 'u_form');
    expect(rows.map((r) => [r.id, r.endpoint_id, r.status])).toEqual([[events[0]!.messageId, all.webhookId, 'delivered']]);
  });

  it('credential.connected from the OAuth callback names the flow', async () => {
    o.t.clock.advance(1);
    const { flowId, response } = await o.connect('u_oauth');
    expect(response.statusCode).toBe(200);
    const credential = await listed('u_oauth', 'acme');
    expect(credential).toMatchObject({ type: 'oauth2', status: 'active' });
    expect(await all.events('u_oauth')).toEqual([
      {
        messageId: expect.stringMatching(/^msg_/),
        type: 'credential.connected',
        timestamp: eventTimestamp(o.t.clock.now()),
        data: { serverId: o.tenant.serverId, externalUserId: 'u_oauth', credential, flowId, endUser: { displayName: null, email: null, tags: {} } },
      },
    ]);
  });

  /** connect.failed as the contract writes it, for a flow of acme. */
  const failed = (externalUserId: string, flowId: string, error: string) => ({
    messageId: expect.stringMatching(/^msg_/),
    type: 'connect.failed',
    timestamp: eventTimestamp(o.t.clock.now()),
    data: { serverId: o.tenant.serverId, externalUserId, provider: 'acme', flowId, error, endUser: { displayName: null, email: null, tags: {} } },
  });

  it('connect.failed when the end user denies access (access_denied)', async () => {
    const flow = await o.start({ externalUserId: 'u_denied' });
    const back = await o.as.approve(flow.authorizationUrl, { deny: true });
    expect((await o.callback(back)).statusCode).toBe(400);
    expect(await all.events('u_denied')).toEqual([failed('u_denied', flow.id, 'access_denied')]);
  });

  it('connect.failed when the provider refuses the code exchange (token_exchange_failed)', async () => {
    o.as.tokenEndpoint = 'invalid_grant';
    const { flowId } = await o.connect('u_exchange');
    expect(await all.events('u_exchange')).toEqual([failed('u_exchange', flowId, 'token_exchange_failed')]);
  });

  it('connect.failed when the flow expired before the callback (flow_expired)', async () => {
    const flow = await o.start({ externalUserId: 'u_expired', expiresIn: 60 });
    const back = await o.as.approve(flow.authorizationUrl);
    o.t.clock.advance(61);
    expect((await o.callback(back)).statusCode).toBe(410);
    expect(await all.events('u_expired')).toEqual([failed('u_expired', flow.id, 'flow_expired')]);
    // Its callback replayed finds the flow ended: no second event.
    await o.callback(back);
    expect(await all.events('u_expired')).toHaveLength(1);
  });

  it('sends an endpoint only the types it subscribed to, and each endpoint its own message', async () => {
    const failures = await subscribe(o.t, o.tenant.serverId, ['connect.failed']);
    const connections = await subscribe(o.t, o.tenant.serverId, ['credential.connected', 'credential.revoked']);
    try {
      const connected = await o.connect('u_filter');
      const denied = await o.start({ externalUserId: 'u_filter' });
      await o.callback(await o.as.approve(denied.authorizationUrl, { deny: true }));

      const everything = await all.events('u_filter');
      expect(everything.map((e) => e.type).sort()).toEqual(['connect.failed', 'credential.connected']);
      const onlyFailures = await failures.events('u_filter');
      expect(onlyFailures).toEqual([failed('u_filter', denied.id, 'access_denied')]);
      const onlyConnections = await connections.events('u_filter');
      expect(onlyConnections).toEqual([expect.objectContaining({ type: 'credential.connected', data: expect.objectContaining({ flowId: connected.flowId }) })]);

      // One message per endpoint and event: the same body, each under its own webhook-id.
      const rows = await outboxRows(o.t.ctx, 'u_filter');
      expect(rows).toHaveLength(4);
      const byEndpoint = (webhookId: string) =>
        rows
          .filter((r) => r.endpoint_id === webhookId)
          .map((r) => r.id)
          .sort();
      expect(byEndpoint(all.webhookId)).toEqual(everything.map((e) => e.messageId).sort());
      expect(byEndpoint(failures.webhookId)).toEqual(onlyFailures.map((e) => e.messageId));
      expect(byEndpoint(connections.webhookId)).toEqual(onlyConnections.map((e) => e.messageId));
      expect(new Set(rows.map((r) => r.id)).size).toBe(4);
      const failedEvent = everything.find((e) => e.type === 'connect.failed')!;
      expect(failedEvent).toEqual({ ...onlyFailures[0], messageId: failedEvent.messageId });
      expect(failedEvent.messageId).not.toBe(onlyFailures[0]!.messageId);
    } finally {
      for (const s of [failures, connections]) {
        await removeWebhookEndpoint(o.t.ctx, { webhookId: s.webhookId, actor: CLI_ACTOR });
        await s.close();
      }
    }
  });
});

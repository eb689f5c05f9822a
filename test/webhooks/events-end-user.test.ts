/**
 * `data.endUser` (CONTRACT 10) in every event about a member, on both engines: delivered to a real
 * receiver and verified by the standardwebhooks package, each body checked against the event's schema
 * in the OpenAPI document. The profile as the member had it when the event was written (also after
 * the member left the audience with its credentials); nulls and {} for a member with none, and for a
 * flow that failed before any member was made. Never a secret.
 */
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTED_SCHEMAS } from '../../src/api/webhook-event-schemas.js';
import { setEndUserProfile } from '../../src/services/audience/end-user-profile.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { type DeliveredEvent, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const API_KEY = 'sk-proj-ENDUSERabcdefghijklmnopqrstuvwxyz';
const UNSET = { displayName: null, email: null, tags: {} };
const SCHEMA_OF: Record<string, string> = {
  'credential.connected': 'CredentialConnectedEvent',
  'credential.revoked': 'CredentialRevokedEvent',
  'connect.failed': 'ConnectFailedEvent',
};

describe.each(ENGINES)('the end user in webhook bodies on %s', (engine) => {
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

  const profile = (externalUserId: string, change: Parameters<typeof setEndUserProfile>[1]['change']) =>
    setEndUserProfile(o.t.ctx, {
      accountId: o.tenant.accountId,
      serverId: o.tenant.serverId,
      externalUserId,
      change,
      makeIfNew: true,
      actor: CLI_ACTOR,
    });

  /** The member's events, each checked against its documented schema and for the absence of the secret. */
  async function eventsOf(externalUserId: string): Promise<DeliveredEvent[]> {
    const events = await all.events(externalUserId);
    for (const event of events) {
      const { messageId: _, ...body } = event;
      const schema = DOCUMENTED_SCHEMAS[SCHEMA_OF[event.type]!]!;
      expect(
        [...Value.Errors(schema, body)].map((e) => `${e.path} ${e.message}`),
        JSON.stringify(body),
      ).toEqual([]);
      expect(JSON.stringify(body)).not.toContain(API_KEY);
    }
    return events;
  }

  it('carries the profile in credential.connected, and the profile as it was in credential.revoked after the member left', async () => {
    const alice = { displayName: 'Alice Example', email: 'alice@example.com', tags: { plan: 'pro', region: 'eu' } };
    await profile('u_alice', alice);
    o.t.clock.advance(1);
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_alice', values: { apiKey: API_KEY } });
    const [connected] = await eventsOf('u_alice');
    expect(connected).toMatchObject({ type: 'credential.connected', data: { externalUserId: 'u_alice', endUser: alice } });

    // Changed since: the next event says so.
    await profile('u_alice', { displayName: 'Alice E.', tags: { region: null } });
    o.t.clock.advance(1);
    expect((await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_alice', headers: o.headers })).statusCode).toBe(200);
    const revoked = (await eventsOf('u_alice')).filter((e) => e.type === 'credential.revoked');
    expect(revoked).toHaveLength(1);
    // The member is gone from the audience, and the event describes it as it was.
    expect(revoked[0]!.data.endUser).toEqual({ displayName: 'Alice E.', email: 'alice@example.com', tags: { plan: 'pro' } });
  });

  it('carries the profile in an OAuth credential’s held credential.revoked, released after the member left', async () => {
    const bob = { displayName: 'Bob', email: null, tags: { cohort: 'beta' } };
    await profile('u_bob', bob);
    await o.connect('u_bob');
    // Delivered before the revocation is made, so the two arrive in that order.
    expect((await eventsOf('u_bob')).map((e) => e.type)).toEqual(['credential.connected']);
    o.t.clock.advance(1);
    expect((await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_bob', headers: o.headers })).statusCode).toBe(200);
    const events = await eventsOf('u_bob');
    expect(events.map((e) => e.type)).toEqual(['credential.connected', 'credential.revoked']);
    for (const event of events) expect(event.data.endUser).toEqual(bob);
    expect(events[1]!.data.providerRevocation).toBe('succeeded');
  });

  it('sends nulls and {} for a member without a profile, and for a flow that failed before any member was made', async () => {
    o.t.clock.advance(1);
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_plain', values: { apiKey: API_KEY } });
    expect((await eventsOf('u_plain')).map((e) => e.data.endUser)).toEqual([UNSET]);

    const flow = await o.start({ externalUserId: 'u_nobody' });
    const back = await o.as.approve(flow.authorizationUrl, { deny: true });
    expect((await o.callback(back)).statusCode).toBe(400);
    const [failed] = await eventsOf('u_nobody');
    expect(failed).toMatchObject({ type: 'connect.failed', data: { flowId: flow.id, error: 'access_denied', endUser: UNSET } });
  });

  it('carries the profile of a member that failed to connect again', async () => {
    await profile('u_retry', { email: 'retry@example.com' });
    const flow = await o.start({ externalUserId: 'u_retry' });
    const back = await o.as.approve(flow.authorizationUrl, { deny: true });
    await o.callback(back);
    const [failed] = await eventsOf('u_retry');
    expect(failed!.data.endUser).toEqual({ displayName: null, email: 'retry@example.com', tags: {} });
  });
});

/**
 * credential.revoked (CONTRACT 7), on both engines, delivered to a real receiver and verified by the
 * standardwebhooks package: from DELETE /v1/end-users/{id} (all, and ?provider=), from the dashboard's
 * revoke, and from a replacement (reason "replaced", replacedBy), with providerRevocation as a real
 * authorization server (oidc-provider) answered. An OAuth credential's event waits for that answer; a
 * node that dies before it (the event written, never released) still has it sent, saying "failed".
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey } from '../../src/services/keys/account-keys.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer } from '../../src/services/servers/servers.js';
import { recordRevocations, revocationHoldSeconds } from '../../src/services/webhooks/webhook-events.js';
import { newSignedInUser } from '../helpers/dashboard-session.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { addProviderLikeAcme, connectTo, credentialRow } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { keys } from '../helpers/test-app.js';
import { startTokenGate, type TokenGate } from '../helpers/token-gate.js';
import { type DeliveredEvent, eventTimestamp, listedCredential, outboxRows, type Subscriber, subscribe } from '../helpers/webhook-events.js';

type Listed = Awaited<ReturnType<typeof listedCredential>>;

const revokedOnly = (events: DeliveredEvent[]) => events.filter((e) => e.type === 'credential.revoked');

describe.each(ENGINES)('credential.revoked events on %s', (engine) => {
  let o: OAuthTenant;
  let all: Subscriber;
  let gate: TokenGate;
  beforeAll(async () => {
    o = await startOAuthTenant(engine);
    // Like acme (same authorization server and client), but revoking fails, or cannot be asked for.
    await addProviderLikeAcme(o, 'broken', { revocationUrl: `${o.as.issuer}/no-such-endpoint` }); // answers 404
    await addProviderLikeAcme(o, 'plain', {}); // no revocation endpoint
    // Like acme, its revocation passing through a gate the test holds shut.
    gate = await startTokenGate(o.as.revocationUrl);
    await addProviderLikeAcme(o, 'gated', { revocationUrl: gate.url });
    all = await subscribe(o.t, o.tenant.serverId);
  });
  afterAll(async () => {
    await all.close();
    await gate.close();
    await o.close();
  });

  const listed = (externalUserId: string, provider: string) => listedCredential(o.t.app, o.headers, externalUserId, provider);
  const revoke = (externalUserId: string, query = '') =>
    o.t.app.inject({ method: 'DELETE', url: `/v1/end-users/${externalUserId}${query}`, headers: o.headers });

  /** credential.revoked as the contract writes it: the credential as it was listed, now revoked at `at`. */
  function revoked(
    externalUserId: string,
    credential: Listed,
    providerRevocation: string,
    cause: { reason: 'revoked' } | { reason: 'replaced'; replacedBy: string } = { reason: 'revoked' },
    serverId = o.tenant.serverId,
  ) {
    const at = o.t.clock.now();
    return {
      messageId: expect.stringMatching(/^msg_/),
      type: 'credential.revoked',
      timestamp: eventTimestamp(at),
      data: {
        serverId,
        externalUserId,
        credential: { ...credential, status: 'revoked', revokedAt: at.toISOString() },
        ...cause,
        providerRevocation,
        endUser: { displayName: null, email: null, tags: {} },
      },
    };
  }

  it('sends one event per credential erased by DELETE, each with what its provider answered', async () => {
    for (const slug of ['acme', 'broken', 'plain']) await connectTo(o, slug, 'u_leaver');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_leaver', values: { apiKey: 'sk-proj-LEAVERabcdefghijklmnopqrstuvwx' } });
    const before = Object.fromEntries(await Promise.all(['acme', 'broken', 'plain', 'openai'].map(async (p) => [p, await listed('u_leaver', p)] as const)));
    expect(revokedOnly(await all.events('u_leaver'))).toEqual([]);

    o.t.clock.advance(1);
    expect((await revoke('u_leaver')).statusCode).toBe(200);
    const events = revokedOnly(await all.events('u_leaver'));
    const byProvider = (p: string) => events.filter((e) => e.data.credential.provider === p);
    expect(events).toHaveLength(4);
    expect(byProvider('acme')).toEqual([revoked('u_leaver', before.acme!, 'succeeded')]);
    expect(byProvider('broken')).toEqual([revoked('u_leaver', before.broken!, 'failed')]);
    expect(byProvider('plain')).toEqual([revoked('u_leaver', before.plain!, 'not_supported')]);
    expect(byProvider('openai')).toEqual([revoked('u_leaver', before.openai!, 'not_supported')]);
  });

  it("sends only the named provider's event for DELETE ?provider=", async () => {
    await o.connect('u_partial');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_partial', values: { apiKey: 'sk-proj-PARTIALabcdefghijklmnopqrstuv' } });
    const acme = await listed('u_partial', 'acme');
    o.t.clock.advance(1);
    expect((await revoke('u_partial', '?provider=acme')).statusCode).toBe(200);
    expect(revokedOnly(await all.events('u_partial'))).toEqual([revoked('u_partial', acme, 'succeeded')]);
  });

  it('sends the event for a revoke from the dashboard', async () => {
    // A user signed in to the dashboard, with a business server of their own.
    const { client, accountId } = await newSignedInUser(o.t.app, o.t.ctx.store.db, 'Events');
    const { serverId, serverKey } = await createServer(o.t.ctx, { accountId, name: 'Production', mode: 'business', actor: CLI_ACTOR });
    await enableProvider(o.t.ctx, { serverId, slug: 'openai', actor: CLI_ACTOR });
    const { key } = await createAccountKey(o.t.ctx, { accountId, label: 'backend', actor: CLI_ACTOR });
    const headers = keys({ accountKey: key, serverKey });
    const theirs = await subscribe(o.t, serverId);
    try {
      await connectStatic(o.t.app, headers, { externalUserId: 'u_dashboard', values: { apiKey: 'sk-proj-DASHBOARDabcdefghijklmnopqrst' } });
      const credential = await listedCredential(o.t.app, headers, 'u_dashboard', 'openai');
      o.t.clock.advance(1);
      const page = `/dashboard/servers/${serverId}/audience`;
      const response = await client.submit(`${page}/revoke?externalUserId=u_dashboard&provider=openai`, `${page}/revoke`, {});
      expect(response.headers.location).toBe(`${page}?notice=credential-revoked&revocation=not_supported`);
      expect(revokedOnly(await theirs.events('u_dashboard'))).toEqual([revoked('u_dashboard', credential, 'not_supported', { reason: 'revoked' }, serverId)]);
      // The other server's endpoint hears nothing of it.
      expect(await all.events('u_dashboard')).toEqual([]);
    } finally {
      await theirs.close();
    }
  });

  it('sends reason "replaced" with replacedBy when a second hosted form replaces a static credential', async () => {
    const first = await connectStatic(o.t.app, o.headers, { externalUserId: 'u_restatic', values: { apiKey: 'sk-proj-FIRSTabcdefghijklmnopqrstuvwxy' } });
    const old = await listed('u_restatic', 'openai');
    o.t.clock.advance(1);
    const second = await connectStatic(o.t.app, o.headers, { externalUserId: 'u_restatic', values: { apiKey: 'sk-proj-SECONDabcdefghijklmnopqrstuvwx' } });
    const current = await listed('u_restatic', 'openai');
    const events = await all.events('u_restatic');
    expect(revokedOnly(events)).toEqual([revoked('u_restatic', old, 'not_supported', { reason: 'replaced', replacedBy: current.id })]);
    const connected = events.filter((e) => e.type === 'credential.connected').map((e) => [e.data.credential.id, e.data.sessionId]);
    expect(connected.sort()).toEqual(
      [
        [old.id, first.sessionId],
        [current.id, second.sessionId],
      ].sort(),
    );
  });

  it('sends reason "replaced" with the provider\'s answer when a second OAuth flow replaces a credential', async () => {
    await o.connect('u_reoauth');
    const old = await listed('u_reoauth', 'acme');
    o.t.clock.advance(1);
    await o.connect('u_reoauth');
    const current = await listed('u_reoauth', 'acme');
    expect(revokedOnly(await all.events('u_reoauth'))).toEqual([revoked('u_reoauth', old, 'succeeded', { reason: 'replaced', replacedBy: current.id })]);
  });

  it("holds an OAuth credential's event until the provider has answered, then sends that answer", async () => {
    await connectTo(o, 'gated', 'u_held');
    const credential = await listed('u_held', 'gated');
    expect((await all.events('u_held')).map((e) => e.type)).toEqual(['credential.connected']);
    o.t.clock.advance(1);
    gate.hold = true;
    const arrived = gate.arrived;
    const deleting = revoke('u_held');
    try {
      // The revocation is at the provider: the change is committed, its event written but held.
      while (gate.arrived === arrived) await sleep(5);
      expect(await outboxRows(o.t.ctx, 'u_held')).toEqual([
        expect.objectContaining({ event_type: 'credential.connected', status: 'delivered' }),
        expect.objectContaining({ event_type: 'credential.revoked', status: 'pending', failures: 0 }),
      ]);
      expect(revokedOnly(await all.events('u_held'))).toEqual([]);
    } finally {
      gate.release();
    }
    expect((await deleting).json().revoked).toEqual([expect.objectContaining({ provider: 'gated', providerRevocation: 'succeeded' })]);
    expect(revokedOnly(await all.events('u_held'))).toEqual([revoked('u_held', credential, 'succeeded')]);
  });

  it('sends a held event whose node died before the provider answered after the hold, saying "failed"', async () => {
    await o.connect('u_dead_node');
    const credential = await listed('u_dead_node', 'acme');
    const row = await credentialRow(o, 'u_dead_node');
    o.t.clock.advance(1);
    // What revokeMember writes in its transaction; the node then dies, so nobody calls answered().
    await o.t.ctx.store.transaction(() =>
      recordRevocations(o.t.ctx, {
        serverId: o.tenant.serverId,
        externalUserId: 'u_dead_node',
        rows: [row],
        at: o.t.clock.now().toISOString(),
        reason: 'revoked',
      }),
    );
    const expected = revoked('u_dead_node', credential, 'failed'); // as of the revocation, not of the sending
    const hold = revocationHoldSeconds(o.t.ctx);
    expect(hold).toBeGreaterThan(2 * (o.t.ctx.providerTimeoutMs / 1000));
    o.t.clock.advance(hold - 1);
    expect(revokedOnly(await all.events('u_dead_node'))).toEqual([]);
    o.t.clock.advance(1);
    expect(revokedOnly(await all.events('u_dead_node'))).toEqual([expected]);
  });
});

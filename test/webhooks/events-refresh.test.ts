/**
 * The refresh outcomes' events (CONTRACT 7), on both engines, as a read refreshes against a real
 * authorization server (oidc-provider): credential.needs_reauth when the provider refuses the grant
 * (invalid_grant); credential.refresh_failed on the first failure of a streak only; credential.recovered
 * on the success that ends it. Each delivered to a real receiver and verified by standardwebhooks.
 *
 * Access tokens live 120 s, so a read asking for 300 s of validity finds them due; each new attempt on
 * one credential waits out the refresh cooldown (COOLDOWN).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { REFRESH_FAILED, refreshCounts } from '../helpers/refresh-readers.js';
import { eventTimestamp, listedCredential, outboxRows, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const COOLDOWN = 30;

describe.each(ENGINES)('refresh events on %s', (engine) => {
  let o: OAuthTenant;
  let all: Subscriber;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: 120 });
    all = await subscribe(o.t, o.tenant.serverId);
  });
  afterAll(async () => {
    await all.close();
    await o.close();
  });
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  const listed = (externalUserId: string) => listedCredential(o.t.app, o.headers, externalUserId, 'acme');
  /** The member's events after its credential.connected. */
  const refreshEvents = async (externalUserId: string) => (await all.events(externalUserId)).filter((e) => e.type !== 'credential.connected');
  const event = (type: string, externalUserId: string, data: Record<string, unknown>) => ({
    messageId: expect.stringMatching(/^msg_/),
    type,
    timestamp: eventTimestamp(o.t.clock.now()),
    data: { serverId: o.tenant.serverId, externalUserId, ...data, endUser: { displayName: null, email: null, tags: {} } },
  });

  it('sends credential.needs_reauth when the provider refuses the refresh token, once', async () => {
    await o.connect('u_reauth');
    // The end user removes the app at the provider: every token of the grant dies there.
    await o.as.revoke((await storedCredential(o, 'u_reauth')).refreshToken);
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const answer = await o.read('u_reauth', 300);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(answer.status).toBe('needs_reauth');
    const credential = await listed('u_reauth');
    expect(credential).toMatchObject({ status: 'needs_reauth', updatedAt: o.t.clock.now().toISOString() });
    const expected = event('credential.needs_reauth', 'u_reauth', { credential, error: { code: 'refresh_rejected', message: answer.error.message } });
    expect(await refreshEvents('u_reauth')).toEqual([expected]);

    // Later reads serve the verdict without asking the provider, and without another event.
    o.t.clock.advance(COOLDOWN);
    expect((await o.read('u_reauth', 300)).status).toBe('needs_reauth');
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(await refreshEvents('u_reauth')).toEqual([expected]);
  });

  it('sends no event for a refresh that succeeds with no failure before it', async () => {
    await o.connect('u_quiet');
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    expect((await o.read('u_quiet', 300)).error).toBeUndefined();
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    expect(await refreshEvents('u_quiet')).toEqual([]);
  });

  it('sends credential.refresh_failed on the first failure in a row only, and credential.recovered on the success after', async () => {
    await o.connect('u_outage');
    const before = await listed('u_outage');
    const seen = refreshCounts(o);
    o.as.tokenEndpoint = 'unavailable';
    o.t.clock.advance(1);
    const firstReadAt = o.t.clock.now().toISOString();
    const first = await o.read('u_outage', 300);
    expect(first.error).toEqual(REFRESH_FAILED);
    // The stored credential is unchanged: the event describes it as it is.
    const failed = event('credential.refresh_failed', 'u_outage', { credential: before, error: first.error });
    expect(await refreshEvents('u_outage')).toEqual([failed]);

    // A second failure of the same streak: the provider is asked again, but no second event is written.
    o.t.clock.advance(COOLDOWN);
    expect((await o.read('u_outage', 300)).error).toEqual(REFRESH_FAILED);
    expect(seen()).toEqual({ requests: 2, grants: 0 });
    expect(await refreshEvents('u_outage')).toEqual([failed]);
    expect((await outboxRows(o.t.ctx, 'u_outage')).map((r) => r.event_type)).toEqual(['credential.connected', 'credential.refresh_failed']);

    o.as.tokenEndpoint = 'normal';
    o.t.clock.advance(COOLDOWN);
    const healed = await o.read('u_outage', 300);
    expect(healed.error).toBeUndefined();
    expect(seen()).toEqual({ requests: 3, grants: 1 });
    const after = await listed('u_outage');
    // Each read handed the token out: a use, written at most once a minute (the first read's, then this one's).
    expect(after).toEqual({ ...before, updatedAt: o.t.clock.now().toISOString(), lastUsedAt: o.t.clock.now().toISOString() });
    // The event describes the credential as its refresh left it, before this read's use was written.
    const recovered = event('credential.recovered', 'u_outage', { credential: { ...after, lastUsedAt: firstReadAt } });
    expect(await refreshEvents('u_outage')).toEqual([failed, recovered]);

    // Recovered, the next outage is a new streak: its first failure is told again.
    o.as.tokenEndpoint = 'unavailable';
    o.t.clock.advance(COOLDOWN);
    const again = await o.read('u_outage', 300);
    expect(again.error).toEqual(REFRESH_FAILED);
    expect(await refreshEvents('u_outage')).toEqual([
      failed,
      recovered,
      event('credential.refresh_failed', 'u_outage', { credential: after, error: again.error }),
    ]);
  });
});

/**
 * The background refresh (CONTRACT 5, KEYWARD_BACKGROUND_REFRESH_HOURS) against a real authorization
 * server (oidc-provider), on both engines. Every "the provider was asked" is counted by the provider
 * itself, every token checked there (RFC 7662), every webhook verified with the standardwebhooks package.
 *
 * Each test starts its own Keyward and provider: a run picks every due credential of the database, so
 * one test's credentials must not fall due in another's run. The TestClock stands still unless moved.
 */
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RUN_INTERVAL_MS, scheduleBackgroundRefresh } from '../../src/jobs/background-refresh-schedule.js';
import { CLI_ACTOR, type ServiceContext } from '../../src/services/context.js';
import {
  BATCH_SIZE,
  BATCHES_PER_RUN,
  type BackgroundRefreshLimits,
  type BackgroundRefreshReport,
  runBackgroundRefresh,
} from '../../src/services/oauth/background-refresh.js';
import { addWebhookEndpoint, listDeliveries } from '../../src/services/webhooks/webhook-endpoints.js';
import { ENGINES } from '../helpers/databases.js';
import { addProviderLikeAcme, connectTo, credentialRow, storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { REFRESH_FAILED, refreshCounts } from '../helpers/refresh-readers.js';
import { startSecondNode } from '../helpers/test-app.js';
import { startTokenGate, type TokenGate } from '../helpers/token-gate.js';
import { until } from '../helpers/webhook-delivery.js';
import { startWebhookReceiver, verifiedEvent } from '../helpers/webhook-receiver.js';

const HOURS = 24;
const PERIOD = HOURS * 3600;
const NOTHING: BackgroundRefreshReport = { picked: 0, refreshed: 0, rejected: 0, failed: 0, busy: 0, noRefreshToken: 0, notEnabled: 0, errors: 0 };

describe.each(ENGINES)('the background refresh on %s', (engine) => {
  let o: OAuthTenant;
  let gate: TokenGate | undefined;
  beforeEach(async () => {
    o = await startOAuthTenant(engine);
  });
  afterEach(async () => {
    await gate?.close();
    gate = undefined;
    await o.close();
  });

  const run = (limits?: Partial<BackgroundRefreshLimits>, ctx: ServiceContext = o.t.ctx) => runBackgroundRefresh(ctx, { hours: HOURS, limits });
  const now = () => o.t.clock.now().toISOString();

  /** A provider `slow` like acme whose token endpoint is behind a gate the test holds and releases. */
  async function slowProvider(): Promise<TokenGate> {
    gate = await startTokenGate(o.as.tokenUrl);
    await addProviderLikeAcme(o, 'slow', { tokenUrl: gate.url });
    return gate;
  }

  it('refreshes a credential not refreshed for 24 hours: the provider is asked once, and a read gets the new token', async () => {
    await o.connect('stale');
    const before = await storedCredential(o, 'stale');
    o.t.clock.advance(PERIOD + 1);
    const seen = refreshCounts(o);
    expect(await run()).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    expect(seen()).toEqual({ requests: 1, grants: 1 });

    const read = await o.read('stale');
    expect(seen()).toEqual({ requests: 1, grants: 1 }); // the read found the token fresh
    expect(read).toMatchObject({ status: 'active', refreshedAt: now() });
    expect(read.accessToken).not.toBe(before.accessToken);
    expect(await o.as.isActive(read.accessToken)).toBe(true);
    // The grant is alive at the provider on a new refresh token; the old one was rotated out.
    const after = await storedCredential(o, 'stale');
    expect(await o.as.isActive(after.refreshToken)).toBe(true);
    expect(await o.as.isActive(before.refreshToken)).toBe(false);

    // Its next turn is a period away.
    o.t.clock.advance(PERIOD - 1);
    expect(await run()).toEqual(NOTHING);
    expect(seen()).toEqual({ requests: 1, grants: 1 });
  });

  it('counts from the last refresh attempt, or from the connection where there was none', async () => {
    await o.connect('read-midway');
    await o.connect('untouched');
    o.t.clock.advance(PERIOD / 2);
    await o.read('read-midway'); // its hour-long token expired long ago: the read refreshes it
    const seen = refreshCounts(o);

    o.t.clock.advance(PERIOD / 2 - 1); // the connection was a second short of 24 hours ago
    expect(await run()).toEqual(NOTHING);
    o.t.clock.advance(1); // now 24 hours ago: the one never refreshed is due, the one read midway is not
    expect(await run()).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    expect((await credentialRow(o, 'untouched')).refreshed_at).toBe(now());
    expect(seen()).toEqual({ requests: 1, grants: 1 });

    o.t.clock.advance(PERIOD / 2); // 24 hours after the read
    expect(await run()).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    expect((await credentialRow(o, 'read-midway')).refreshed_at).toBe(now());
    expect(seen()).toEqual({ requests: 2, grants: 2 });
  });

  // Picked, then refreshed by a reader before its turn came: no longer due, it is left alone.
  it('leaves alone a credential a reader refreshed after the run picked it', async () => {
    const held = await slowProvider();
    await connectTo(o, 'slow', 'first-in-line');
    o.t.clock.advance(1);
    await o.connect('read-meanwhile');
    o.t.clock.advance(PERIOD + 1);
    const seen = refreshCounts(o);
    held.hold = true;
    const arrived = held.arrived;
    // One call at a time: the second credential's turn waits for the first's, which the gate holds.
    const running = run({ concurrency: 1 });
    await until(() => held.arrived > arrived, 'the run to reach the provider');
    const read = await o.read('read-meanwhile');
    expect(seen()).toEqual({ requests: 1, grants: 1 }); // the reader's refresh; the run's is at the gate
    // Past the cooldown before the run's turn comes: what keeps it from a second call is that the
    // credential is no longer due (attempted since the run's cutoff), not the cooldown.
    o.t.clock.advance(o.t.ctx.refreshCooldownSeconds + 1);
    held.release();
    expect(await running).toEqual({ ...NOTHING, picked: 2, refreshed: 1, busy: 1 });
    expect(seen()).toEqual({ requests: 2, grants: 2 });
    expect((await o.read('read-meanwhile')).accessToken).toBe(read.accessToken);
  });

  it('does not refresh a second time a credential whose lease a reader holds', async () => {
    const held = await slowProvider();
    await connectTo(o, 'slow', 'being-read');
    o.t.clock.advance(PERIOD + 1);
    const seen = refreshCounts(o);
    held.hold = true;
    const arrived = held.arrived;
    const reading = o.t.app.inject({ method: 'GET', url: '/v1/end-users/being-read', headers: o.headers });
    await until(() => held.arrived > arrived, 'the reader to reach the provider');
    expect(await run()).toEqual({ ...NOTHING, picked: 1, busy: 1 });
    held.release();
    const read = (await reading).json().credentials[0];
    expect(read).toMatchObject({ provider: 'slow', status: 'active', refreshedAt: now() });
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    expect(await run()).toEqual(NOTHING); // the reader's attempt was this period's
  });

  it('turns a grant revoked at the provider to needs_reauth, with a signed credential.needs_reauth webhook', async () => {
    await o.connect('revoked-upstream');
    const stored = await storedCredential(o, 'revoked-upstream');
    const receiver = await startWebhookReceiver();
    try {
      const { webhookId, secret } = await addWebhookEndpoint(o.t.ctx, { serverId: o.tenant.serverId, url: receiver.url, actor: CLI_ACTOR });
      await o.as.revoke(stored.refreshToken); // the end user removes the app at the provider
      o.t.clock.advance(PERIOD + 1);
      const seen = refreshCounts(o);
      expect(await run()).toEqual({ ...NOTHING, picked: 1, rejected: 1 });
      expect(seen()).toEqual({ requests: 1, grants: 0 });

      // Written to the outbox with the verdict, before anyone read the credential.
      const { deliveries } = await listDeliveries(o.t.ctx, { webhookId });
      expect(deliveries).toEqual([expect.objectContaining({ type: 'credential.needs_reauth', status: 'pending' })]);
      await o.t.webhooks.drain();
      expect(receiver.received).toHaveLength(1);
      const event = verifiedEvent(secret, receiver.received[0]!, o.t.clock.now().getTime());
      expect(event).toMatchObject({
        type: 'credential.needs_reauth',
        data: {
          serverId: o.tenant.serverId,
          externalUserId: 'revoked-upstream',
          credential: { id: stored.id, provider: 'acme', type: 'oauth2', status: 'needs_reauth' },
          error: { code: 'refresh_rejected' },
        },
      });
      for (const token of [stored.accessToken, stored.refreshToken]) expect(receiver.received[0]!.body).not.toContain(token);

      const read = await o.read('revoked-upstream');
      expect(read).toMatchObject({ status: 'needs_reauth', error: { code: 'refresh_rejected' } });
      expect(read).not.toHaveProperty('accessToken');
      // Out of the background refresh for good: only the end user can mend it.
      o.t.clock.advance(PERIOD + 1);
      expect(await run()).toEqual(NOTHING);
      expect(seen()).toEqual({ requests: 1, grants: 0 });
    } finally {
      await receiver.close();
    }
  });

  it('keeps the stored token through an outage, writes refresh_failed once, and recovers on the next turn', async () => {
    await o.connect('outage');
    const before = await storedCredential(o, 'outage');
    const { webhookId } = await addWebhookEndpoint(o.t.ctx, { serverId: o.tenant.serverId, url: 'http://127.0.0.1:9/never-sent', actor: CLI_ACTOR });
    o.t.clock.advance(PERIOD + 1);
    o.as.tokenEndpoint = 'unavailable';
    const seen = refreshCounts(o);
    expect(await run()).toEqual({ ...NOTHING, picked: 1, failed: 1 });
    expect((await storedCredential(o, 'outage')).sealed).toBe(before.sealed);
    expect(await o.read('outage', 0)).toMatchObject({ status: 'active', accessToken: before.accessToken, error: REFRESH_FAILED });
    // The failed attempt is stamped: not asked again until the next turn, even in the same moment.
    expect(await run()).toEqual(NOTHING);

    o.as.tokenEndpoint = 'normal';
    o.t.clock.advance(PERIOD + 1);
    expect(await run()).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    expect(seen()).toEqual({ requests: 2, grants: 1 });
    const recovered = await o.read('outage');
    expect(recovered.accessToken).not.toBe(before.accessToken);
    expect(recovered.error).toBeUndefined();
    const { deliveries } = await listDeliveries(o.t.ctx, { webhookId });
    expect(deliveries.map((d) => d.type)).toEqual(['credential.recovered', 'credential.refresh_failed']);
  });

  it('touches at most batches × batch size credentials a run, oldest due first, and the next run goes on', async () => {
    // The production figures keep up with a million credentials due once a day.
    expect(BATCHES_PER_RUN * BATCH_SIZE * (86_400_000 / RUN_INTERVAL_MS)).toBeGreaterThanOrEqual(1_000_000);
    const members = ['m1', 'm2', 'm3', 'm4', 'm5'];
    for (const member of members) {
      await o.connect(member);
      o.t.clock.advance(1);
    }
    o.t.clock.advance(PERIOD);
    const seen = refreshCounts(o);
    const limits = { batchSize: 2, batches: 2, concurrency: 2 };
    expect(await run(limits)).toEqual({ ...NOTHING, picked: 4, refreshed: 4 });
    expect(seen()).toEqual({ requests: 4, grants: 4 });
    const refreshed = async () => Promise.all(members.map(async (m) => (await credentialRow(o, m)).refreshed_at !== null));
    expect(await refreshed()).toEqual([true, true, true, true, false]);

    expect(await run(limits)).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    expect(await refreshed()).toEqual([true, true, true, true, true]);
    expect(seen()).toEqual({ requests: 5, grants: 5 });
  });

  it('schedules nothing when the hours are 0, and runs on schedule otherwise', async () => {
    const logger = o.t.app.log as unknown as Logger;
    expect(scheduleBackgroundRefresh(o.t.ctx, { hours: 0 }, logger)).toBeNull();
    await expect(runBackgroundRefresh(o.t.ctx, { hours: 0 })).rejects.toThrow(RangeError);

    await o.connect('scheduled');
    const { accessToken } = await storedCredential(o, 'scheduled');
    o.t.clock.advance(PERIOD + 1);
    const schedule = scheduleBackgroundRefresh(o.t.ctx, { hours: HOURS, firstRunDelayMs: 0 }, logger)!;
    try {
      await until(async () => (await credentialRow(o, 'scheduled')).refreshed_at !== null, 'the scheduled run');
    } finally {
      await schedule.stop();
    }
    await until(() => o.t.logs.some((line) => line.includes('background refresh ran')), 'the run to be logged');
    const line = o.t.logs.find((l) => l.includes('background refresh ran'))!;
    expect(JSON.parse(line).backgroundRefresh).toEqual({ ...NOTHING, picked: 1, refreshed: 1 });
    const refreshedToken = (await storedCredential(o, 'scheduled')).accessToken;
    for (const token of [accessToken, refreshedToken]) expect(o.t.logs.join('\n')).not.toContain(token);
  });

  // The job's lease is in the database: two nodes on one PostgreSQL run it one at a time.
  if (engine === 'postgres') {
    it('runs on one node of two started at the same moment, and refreshes each credential once', async () => {
      const held = await slowProvider();
      const members = ['n1', 'n2', 'n3'];
      for (const member of members) await connectTo(o, 'slow', member);
      const second = await startSecondNode(o.t);
      try {
        o.t.clock.advance(PERIOD + 1);
        second.clock.advance(PERIOD + 1);
        const seen = refreshCounts(o);
        held.hold = true;
        const arrived = held.arrived;
        const settled: (BackgroundRefreshReport | null)[] = [];
        const runs = [o.t.ctx, second.ctx].map((ctx) => run({}, ctx).then((report) => void settled.push(report)));
        // The node that took the job holds every call at the gate; the other must have given up meanwhile.
        await until(() => held.arrived === arrived + members.length, 'the running node to reach the provider');
        await until(() => settled.length === 1, 'the other node to skip the run');
        expect(settled).toEqual([null]);
        held.release();
        await Promise.all(runs);
        expect(settled).toEqual([null, { ...NOTHING, picked: 3, refreshed: 3 }]);
        expect(seen()).toEqual({ requests: 3, grants: 3 });
        expect(held.arrived).toBe(arrived + members.length);
        // The lease was released: the next run, on either node, may start at once (and finds nothing due).
        expect(await run({}, second.ctx)).toEqual(NOTHING);
      } finally {
        await second.close();
      }
    });
  }
});

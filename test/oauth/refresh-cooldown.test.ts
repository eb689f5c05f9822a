/**
 * The refresh cooldown (CONTRACT 2.6, KEYWARD_REFRESH_COOLDOWN_SECONDS, 30 s here as by default)
 * against a real authorization server (oidc-provider) whose access tokens live 120 s, read by callers
 * that want an hour of validity: every token is due on every read, so only the cooldown stands between
 * the readers and the provider. Grants are counted by the provider itself.
 *
 * Before the cooldown, a storm of such reads made a grant for each reader arriving after the previous
 * refresh ended. The storms below are sent in two waves: the second leaves once the first wave's refresh
 * is stored and the clock has moved on, as readers arriving a moment later would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { credentialRow } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { REFRESH_FAILED, readAtOnce, refreshCounts } from '../helpers/refresh-readers.js';
import { startSecondNode, type TestClock } from '../helpers/test-app.js';

const COOLDOWN = 30;
const TOKEN_SECONDS = 120;
const WANTED = 3600;

/** When the member's last refresh attempt ended, as stored (null before any). */
async function attemptedAt(o: OAuthTenant, externalUserId: string): Promise<string | null> {
  return (await credentialRow(o, externalUserId)).refresh_attempted_at;
}

/**
 * 2 × `perWave` reads on each app: the first wave at once, then, when its refresh attempt is stored,
 * the clocks move a second and the second wave leaves while the first may still be answering.
 */
async function storm(o: OAuthTenant, apps: FastifyInstance[], clocks: TestClock[], externalUserId: string, perWave: number) {
  const before = await attemptedAt(o, externalUserId);
  const first = readAtOnce(apps, o, externalUserId, perWave, WANTED);
  while ((await attemptedAt(o, externalUserId)) === before) await sleep(5);
  for (const clock of clocks) clock.advance(1);
  const second = readAtOnce(apps, o, externalUserId, perWave, WANTED);
  return [...(await first), ...(await second)];
}

describe.each(ENGINES)('the refresh cooldown on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: TOKEN_SECONDS, refreshCooldownSeconds: COOLDOWN });
  });
  afterAll(() => o.close());
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  it('makes one grant for 20 reads wanting an hour of a 120 s token, none more inside the cooldown, one after it', async () => {
    await o.connect('storm');
    const connected = await o.read('storm');
    const seen = refreshCounts(o);
    const answers = await storm(o, [o.t.app], [o.t.clock], 'storm', 10);
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    const refreshedAt = (await attemptedAt(o, 'storm'))!;
    const tokens = new Set(answers.map((a) => a.accessToken));
    expect(tokens.size).toBe(1);
    const [token] = tokens;
    expect(token).not.toBe(connected.accessToken);
    expect(await o.as.isActive(token)).toBe(true);
    // Taken as it is, although it lives 120 s and the readers asked for an hour: expiresAt says so.
    const expiresAt = new Date(Date.parse(refreshedAt) + TOKEN_SECONDS * 1000).toISOString();
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'active', accessToken: token, refreshedAt, expiresAt });
      expect(answer.error).toBeUndefined();
    }

    // The last second of the cooldown: still nothing asked, the same token served.
    o.t.clock.advance((Date.parse(refreshedAt) - o.t.clock.now().getTime()) / 1000 + COOLDOWN - 1);
    const inside = await readAtOnce([o.t.app], o, 'storm', 5, WANTED);
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    for (const answer of inside) expect(answer).toMatchObject({ accessToken: token, refreshedAt, expiresAt });

    // The cooldown over: one more grant, however many read.
    o.t.clock.advance(1);
    const after = await readAtOnce([o.t.app], o, 'storm', 5, WANTED);
    expect(seen()).toEqual({ requests: 2, grants: 2 });
    expect(new Set(after.map((a) => a.accessToken)).size).toBe(1);
    expect(after[0].accessToken).not.toBe(token);
    expect(after[0].refreshedAt).toBe(o.t.clock.now().toISOString());
  });

  // An outage must not be hammered either: the failed attempt starts the cooldown like a good one.
  it('starts the cooldown with a failed attempt: readers inside it get the stored token and refresh_failed', async () => {
    await o.connect('outage');
    const connected = await o.read('outage');
    o.as.tokenEndpoint = 'unavailable';
    const seen = refreshCounts(o);
    const answers = await storm(o, [o.t.app], [o.t.clock], 'outage', 10);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'active', accessToken: connected.accessToken, expiresAt: connected.expiresAt, refreshedAt: null });
      expect(answer.error).toEqual(REFRESH_FAILED);
    }

    o.t.clock.advance(COOLDOWN - 2); // the last second of the cooldown (the storm moved it by one)
    o.as.tokenEndpoint = 'normal';
    const inside = await readAtOnce([o.t.app], o, 'outage', 5, WANTED);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    for (const answer of inside) expect(answer.error).toEqual(REFRESH_FAILED);

    o.t.clock.advance(1);
    const recovered = await o.read('outage', WANTED);
    expect(seen()).toEqual({ requests: 2, grants: 1 });
    expect(recovered.accessToken).not.toBe(connected.accessToken);
    expect(recovered.error).toBeUndefined();
  });

  // The cooldown is decided in the database: a second node on the same PostgreSQL keeps to it as well.
  if (engine === 'postgres') {
    it('makes one grant for 20 reads on each of two nodes sharing the database', async () => {
      await o.connect('two-nodes');
      const second = await startSecondNode(o.t);
      try {
        const seen = refreshCounts(o);
        const answers = await storm(o, [o.t.app, second.app], [o.t.clock, second.clock], 'two-nodes', 10);
        expect(seen()).toEqual({ requests: 1, grants: 1 });
        expect(new Set(answers.map((a) => a.accessToken)).size).toBe(1);
        expect(await o.as.isActive(answers[0].accessToken)).toBe(true);

        o.t.clock.advance(COOLDOWN - 2);
        second.clock.advance(COOLDOWN - 2);
        await readAtOnce([second.app], o, 'two-nodes', 5, WANTED);
        expect(seen()).toEqual({ requests: 1, grants: 1 });
      } finally {
        await second.close();
      }
    });
  }
});

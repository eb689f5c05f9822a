/**
 * Refresh on read (CONTRACT 2.6) against a real authorization server (oidc-provider), on both engines.
 * Every claim about tokens is checked at the provider itself (RFC 7662 introspection), and every "the
 * provider was called once" by the provider's own request counters.
 *
 * The TestClock stands still: readers started in the same instant count as "the same moment", and each
 * test moves it by a second before a new round, so an earlier refresh is not taken for this round's.
 * A second refresh of the same credential waits out the refresh cooldown (30 s by default): those
 * tests move the clock by COOLDOWN. The cooldown itself is tested in refresh-cooldown.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/databases.js';
import { addProviderLikeAcme, connectTo, storedCredential } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { REFRESH_FAILED, readAtOnce, refreshCounts } from '../helpers/refresh-readers.js';
import { startSecondNode } from '../helpers/test-app.js';
import { startTokenGate } from '../helpers/token-gate.js';

const COOLDOWN = 30;

describe.each(ENGINES)('refresh on read on %s', (engine) => {
  // Tokens that live 120 s: a read asking for 300 s of validity finds every one of them due.
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: 120 });
  });
  afterAll(() => o.close());
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  it('refreshes a due token once for 20 readers at the same moment, and all of them get the new token', async () => {
    await o.connect('crowd');
    const before = await o.read('crowd');
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const answers = await readAtOnce([o.t.app], o, 'crowd', 20, 300);
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    const tokens = new Set(answers.map((a) => a.accessToken));
    expect(tokens.size).toBe(1);
    const [token] = tokens;
    expect(token).not.toBe(before.accessToken);
    expect(await o.as.isActive(token)).toBe(true);
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'active', tokenType: 'bearer', refreshedAt: o.t.clock.now().toISOString() });
      expect(answer.error).toBeUndefined();
    }
  });

  // The lease lives in the database row: another process on the same PostgreSQL must respect it too.
  if (engine === 'postgres') {
    it('refreshes once for 10 readers on each of two Keyward nodes sharing the database', async () => {
      await o.connect('two-nodes');
      const second = await startSecondNode(o.t);
      try {
        o.t.clock.advance(1);
        second.clock.advance(1);
        const seen = refreshCounts(o);
        const answers = await readAtOnce([o.t.app, second.app], o, 'two-nodes', 10, 300);
        expect(seen()).toEqual({ requests: 1, grants: 1 });
        expect(new Set(answers.map((a) => a.accessToken)).size).toBe(1);
        expect(await o.as.isActive(answers[0].accessToken)).toBe(true);
      } finally {
        await second.close();
      }
    });
  }

  // The new token is itself due (120 s < 300 s): a reader that began while the refresh was in flight must
  // take its result rather than refresh again. An attempt is stamped when the provider has answered.
  it('gives a reader that arrives while a refresh is in flight the result of that refresh', async () => {
    const gate = await startTokenGate(o.as.tokenUrl);
    try {
      await addProviderLikeAcme(o, 'slow', { tokenUrl: gate.url });
      await connectTo(o, 'slow', 'late-reader');
      const url = '/v1/end-users/late-reader?minValiditySeconds=300';
      const read = () => o.t.app.inject({ method: 'GET', url, headers: o.headers });
      gate.hold = true;
      const arrived = gate.arrived;
      o.t.clock.advance(1);
      const seen = refreshCounts(o);
      const first = read();
      while (gate.arrived === arrived) await sleep(5); // the first reader's refresh is now at the provider
      o.t.clock.advance(1); // a slow provider: time passes while it works
      const second = read();
      await sleep(200); // the second reader finds the lease taken and waits
      gate.release();
      const [a, b] = (await Promise.all([first, second])).map((r) => r.json().credentials[0]);
      expect(seen()).toEqual({ requests: 1, grants: 1 });
      expect(b.accessToken).toBe(a.accessToken);
      expect(b.refreshedAt).toBe(a.refreshedAt);
    } finally {
      await gate.close();
    }
  });

  it('keeps the rotated refresh token: the old one is dead at the provider and the next refresh works', async () => {
    await o.connect('rotating');
    const first = await storedCredential(o, 'rotating');
    o.t.clock.advance(1);
    const refreshed = await o.read('rotating', 300);
    const second = await storedCredential(o, 'rotating');
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(await o.as.isActive(first.refreshToken)).toBe(false);
    expect(await o.as.isActive(second.refreshToken)).toBe(true);

    o.t.clock.advance(COOLDOWN);
    const seen = refreshCounts(o);
    const again = await o.read('rotating', 300);
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    expect(again.accessToken).not.toBe(refreshed.accessToken);
    expect(again.error).toBeUndefined();
    expect(await o.as.isActive(again.accessToken)).toBe(true);
  });

  it('turns the credential to needs_reauth when the provider refuses the grant, and stops asking it', async () => {
    await o.connect('revoked-upstream');
    // The end user removes the app at the provider: every token of the grant dies there.
    await o.as.revoke((await storedCredential(o, 'revoked-upstream')).refreshToken);
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const answer = await o.read('revoked-upstream', 300);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(answer.status).toBe('needs_reauth');
    expect(answer.error).toEqual({ code: 'refresh_rejected', message: expect.stringMatching(/\S/) });
    expect(answer).not.toHaveProperty('accessToken');
    expect(answer).not.toHaveProperty('tokenType');
    expect(answer).not.toHaveProperty('refreshToken');

    const list = await o.t.app.inject({ method: 'GET', url: '/v1/end-users?prefix=revoked-upstream', headers: o.headers });
    expect(list.json().data.map((m: { credentials: unknown[] }) => m.credentials)).toEqual([
      [expect.objectContaining({ provider: 'acme', type: 'oauth2', status: 'needs_reauth' })],
    ]);

    // A later read serves the verdict without asking again: the refresh token is known to be dead.
    o.t.clock.advance(1);
    const later = await o.read('revoked-upstream', 300);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(later).toMatchObject({ status: 'needs_reauth', error: answer.error });
    expect(later).not.toHaveProperty('accessToken');
  });

  it('serves the stored token with refresh_failed during an outage, changes nothing stored, and recovers', async () => {
    await o.connect('outage');
    const before = await o.read('outage');
    const { sealed } = await storedCredential(o, 'outage');
    o.as.tokenEndpoint = 'unavailable';
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const answer = await o.read('outage', 300);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(answer).toMatchObject({
      status: 'active',
      accessToken: before.accessToken,
      tokenType: before.tokenType,
      expiresAt: before.expiresAt,
      refreshedAt: null,
    });
    expect(answer.error).toEqual(REFRESH_FAILED);
    expect((await storedCredential(o, 'outage')).sealed).toBe(sealed);
    expect(await o.as.isActive(before.accessToken)).toBe(true);

    o.as.tokenEndpoint = 'normal';
    o.t.clock.advance(COOLDOWN); // the failed attempt started the cooldown too
    const recovered = await o.read('outage', 300);
    expect(seen()).toEqual({ requests: 2, grants: 1 });
    expect(recovered.status).toBe('active');
    expect(recovered.accessToken).not.toBe(before.accessToken);
    expect(recovered.error).toBeUndefined();
    expect(await o.as.isActive(recovered.accessToken)).toBe(true);
  });

  // A failed attempt is stamped too: a reader of the same moment that reaches the lease only after the
  // attempt ended takes its outcome instead of trying again (the crowd test below meets this by chance).
  it('gives a reader of the same moment the outcome of a failed attempt instead of trying again', async () => {
    await o.connect('outage-same-moment');
    o.as.tokenEndpoint = 'unavailable';
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const first = await o.read('outage-same-moment', 300);
    const second = await o.read('outage-same-moment', 300); // the clock has not moved: the same moment
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(second).toMatchObject({ status: 'active', accessToken: first.accessToken });
    expect(second.error).toEqual(REFRESH_FAILED);
  });

  it('makes one attempt for 10 readers at the same moment during an outage, and all of them get the old token', async () => {
    await o.connect('outage-crowd');
    const before = await o.read('outage-crowd');
    o.as.tokenEndpoint = 'unavailable';
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const answers = await readAtOnce([o.t.app], o, 'outage-crowd', 10, 300);
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 'active', accessToken: before.accessToken });
      expect(answer.error).toEqual(REFRESH_FAILED);
    }
  });
});

describe.each(ENGINES)('refresh with tokens that live an hour and a 300 ms provider timeout, on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { providerTimeoutMs: 300 }); // access tokens live 3600 s
  });
  afterAll(() => o.close());
  afterEach(() => {
    o.as.tokenEndpoint = 'normal';
  });

  it('does not call the provider for a token valid longer than the default 60 s', async () => {
    await o.connect('fresh');
    const seen = refreshCounts(o);
    o.t.clock.advance(3600 - 61); // 61 s left
    const answer = await o.read('fresh');
    expect(seen()).toEqual({ requests: 0, grants: 0 });
    expect(answer).toMatchObject({ status: 'active', refreshedAt: null });
    expect(answer.error).toBeUndefined();
  });

  it('gives up on a provider that does not answer after the timeout, serving the stored token with refresh_failed', async () => {
    await o.connect('hung');
    const before = await o.read('hung');
    const { sealed } = await storedCredential(o, 'hung');
    o.as.tokenEndpoint = 'hang';
    o.t.clock.advance(1);
    const seen = refreshCounts(o);
    const started = performance.now();
    const answer = await o.read('hung', 3600);
    expect(performance.now() - started).toBeLessThan(3000); // the 300 ms timeout, not the 5 s default
    expect(seen()).toEqual({ requests: 1, grants: 0 });
    expect(answer).toMatchObject({ status: 'active', accessToken: before.accessToken, refreshedAt: null });
    expect(answer.error).toEqual(REFRESH_FAILED);
    expect((await storedCredential(o, 'hung')).sealed).toBe(sealed);

    o.as.tokenEndpoint = 'normal';
    o.t.clock.advance(COOLDOWN); // the failed attempt started the cooldown too
    const recovered = await o.read('hung', 3600);
    expect(seen()).toEqual({ requests: 2, grants: 1 });
    expect(recovered.accessToken).not.toBe(before.accessToken);
    expect(recovered.error).toBeUndefined();
  });
});

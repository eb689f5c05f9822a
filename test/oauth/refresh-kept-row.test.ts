/**
 * A refresh asked with a row read before another node's refresh (a proxied call's read kept in
 * memory until the node hears of the change: store/reads-until-change.ts). With no cooldown
 * (KEYWARD_REFRESH_COOLDOWN_SECONDS=0) the database lets such a caller take the refresh lease; it must
 * then act on the row as the lease found it: already refreshed, so the provider is asked nothing more,
 * and the refresh token it rotated away is never sent back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { readRefreshedAfterRefusal } from '../../src/services/oauth/token-refresh.js';
import { ENGINES } from '../helpers/databases.js';
import { credentialRow } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { refreshCounts } from '../helpers/refresh-readers.js';

describe.each(ENGINES)('a refresh asked with a row from before another refresh, on %s', (engine) => {
  let o: OAuthTenant;
  beforeAll(async () => {
    o = await startOAuthTenant(engine, { accessTokenTtlSeconds: 3600, refreshCooldownSeconds: 0 });
  }, 120_000);
  afterAll(() => o?.close());

  it('asks the provider nothing, and answers the refreshed row', async () => {
    await o.connect('u_kept_row');
    const kept = await credentialRow(o, 'u_kept_row');
    const seen = refreshCounts(o);
    o.t.clock.advance(1);
    const first = await readRefreshedAfterRefusal(o.t.ctx, kept, iso(o.t.clock.now()));
    expect(first?.failure).toBeNull();
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    expect(Buffer.from(first!.row.secret).equals(Buffer.from(kept.secret))).toBe(false);

    // The same old row, a second later: the lease is granted (no cooldown), and found refreshed.
    o.t.clock.advance(1);
    const second = await readRefreshedAfterRefusal(o.t.ctx, kept, iso(o.t.clock.now()));
    expect(seen()).toEqual({ requests: 1, grants: 1 });
    expect(second?.failure).toBeNull();
    expect(second?.row).toMatchObject({ status: 'active', refresh_lease_holder: null, refresh_attempted_at: first!.row.refresh_attempted_at });
    expect(Buffer.from(second!.row.secret).equals(Buffer.from(first!.row.secret))).toBe(true);
  });
});

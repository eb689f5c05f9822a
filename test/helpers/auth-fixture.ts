/**
 * The real keys and servers the auth matrix's requests need: a tenant whose server key was rotated
 * with grace, account keys revoked, expired and never issued, server keys of a rotated-out, a personal
 * and another account's server.
 */

import { CLI_ACTOR } from '../../src/services/context.js';
import { createAccountKey, revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { generateKey } from '../../src/services/keys/key-format.js';
import { enableProvider } from '../../src/services/providers/server-providers.js';
import { createServer, rotateServerKey } from '../../src/services/servers/servers.js';
import { createTenant, type Tenant, type TestApp } from './test-app.js';

export interface AuthFixture {
  tenant: Tenant;
  rateLimitPerMinute: number;
  /** A new live key of the tenant, so each request meant to pass starts with a full rate-limit window. */
  freshAccountKey(): Promise<string>;
  revokedAccountKey: string;
  expiredAccountKey: string;
  revokedAndExpiredAccountKey: string;
  neverIssuedAccountKey: string;
  neverIssuedServerKey: string;
  rotatedOutServerKey: string;
  inGraceServerKey: string;
  personalServerKey: string;
  otherAccountServerKey: string;
  otherAccountRotatedOutServerKey: string;
  otherAccountPersonalServerKey: string;
}

export async function createAuthFixture(t: TestApp, rateLimitPerMinute: number): Promise<AuthFixture> {
  const { ctx, clock } = t;
  // The tenant's first server key is rotated with a day of grace: both keys reach the same server,
  // its providers and its audience, so a request on the old one must answer as on the new one.
  const original = await createTenant(ctx);
  await enableProvider(ctx, { serverId: original.serverId, slug: 'github', clientId: 'gh-matrix', clientSecret: 'gh-matrix-secret', actor: CLI_ACTOR });
  const current = await rotateServerKey(ctx, original.serverId, 86_400, CLI_ACTOR);
  const tenant: Tenant = { ...original, serverKey: current.serverKey };
  const accountKey = async (expiresAt?: string) => createAccountKey(ctx, { accountId: tenant.accountId, label: 'matrix', expiresAt, actor: CLI_ACTOR });
  const inAMinute = new Date(clock.now().getTime() + 60_000).toISOString();
  const expired = await accountKey(inAMinute);
  const revokedAndExpired = await accountKey(inAMinute);
  await revokeAccountKey(ctx, revokedAndExpired.keyId, CLI_ACTOR);
  const revoked = await accountKey();
  await revokeAccountKey(ctx, revoked.keyId, CLI_ACTOR);
  clock.advance(61);

  const rotatedOut = await createServer(ctx, { accountId: tenant.accountId, name: 'Rotated', mode: 'business', actor: CLI_ACTOR });
  await rotateServerKey(ctx, rotatedOut.serverId, 0, CLI_ACTOR);
  const personal = await createServer(ctx, { accountId: tenant.accountId, name: 'Personal', mode: 'personal', actor: CLI_ACTOR });
  const other = await createTenant(ctx);
  const otherCurrent = await rotateServerKey(ctx, other.serverId, 0, CLI_ACTOR);
  const otherPersonal = await createTenant(ctx, { mode: 'personal' });
  let lastFresh: string | null = null;

  return {
    tenant,
    rateLimitPerMinute,
    // The one before is revoked: an account holds at most 50 live keys, and each test uses only its newest.
    freshAccountKey: async () => {
      if (lastFresh) await revokeAccountKey(ctx, lastFresh, CLI_ACTOR);
      const fresh = await accountKey();
      lastFresh = fresh.keyId;
      return fresh.key;
    },
    revokedAccountKey: revoked.key,
    expiredAccountKey: expired.key,
    revokedAndExpiredAccountKey: revokedAndExpired.key,
    neverIssuedAccountKey: generateKey('account'),
    neverIssuedServerKey: generateKey('server'),
    rotatedOutServerKey: rotatedOut.serverKey,
    inGraceServerKey: original.serverKey,
    personalServerKey: personal.serverKey,
    otherAccountServerKey: otherCurrent.serverKey,
    otherAccountRotatedOutServerKey: other.serverKey,
    otherAccountPersonalServerKey: otherPersonal.serverKey,
  };
}

/**
 * The per-request reads go as named prepared statements on PostgreSQL (store/postgres-runner.ts). In
 * a rolling upgrade another node migrates the schema under them: a statement prepared before now
 * answers 0A000 ("cached plan must not change result type") on that connection, and one the server
 * dropped answers 26000. The read must still answer, and answer right.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../../src/primitives/clock.js';
import { sha256Hex } from '../../src/primitives/digest.js';
import { CLI_ACTOR } from '../../src/services/context.js';
import { storeCredential } from '../../src/services/credentials/credentials.js';
import { startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';

/** More than the pool's connections (open.ts), so every connection has prepared each read. */
const AT_ONCE = 12;

describe('named statements on postgres', () => {
  let t: TestApp, tenant: Tenant, headers: Record<string, string>;

  beforeAll(async () => {
    ({ t, tenant, headers } = await startWithTenant('postgres'));
    await storeCredential(t.ctx, {
      accountId: tenant.accountId,
      serverId: tenant.serverId,
      externalUserId: 'u1',
      provider: 'openai',
      secret: { type: 'static', values: { apiKey: 'sk-openai-u1' } },
      actor: CLI_ACTOR,
      now: iso(t.clock.now()),
    });
  });
  afterAll(() => t.close());

  /** Every hot read once, on every connection of the pool at once; what they answered. */
  async function readEverywhere() {
    const { audience, authLookups } = t.ctx.store;
    const reads = Array.from({ length: AT_ONCE }, () =>
      Promise.all([
        audience.memberWithCredentials(tenant.serverId, 'u1'),
        authLookups.authVersion(),
        authLookups.accountKeyByDigest(sha256Hex(tenant.accountKey)),
        authLookups.guardServerKey(sha256Hex(tenant.serverKey)),
      ]),
    );
    const answers = await Promise.all(reads);
    return answers.map(([read, version, accountKey, serverKey]) => ({
      version,
      member: read.member?.id,
      credentials: read.credentials.map((c) => [c.provider, c.status, c.scopes, c.connected_at]),
      accountKey: accountKey?.hint,
      serverKey: serverKey?.hint,
    }));
  }

  async function readEndUser() {
    const response = await t.app.inject({ method: 'GET', url: '/v1/end-users/u1', headers });
    return { status: response.statusCode, body: response.json() };
  }

  /** A statement from another node's connection, as its migration would run it. */
  async function elsewhere(statement: string) {
    const client = new pg.Client(t.database.url);
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  it('answers after another connection changes the type of a column each read selects', async () => {
    const before = await readEverywhere();
    const endUserBefore = await readEndUser();
    expect(endUserBefore.status).toBe(200);
    expect(before[0]!.credentials).toEqual([['openai', 'active', null, expect.any(String)]]);

    await elsewhere(`
      alter table credentials alter column scopes type varchar(4000);
      alter table auth_version alter column version type numeric;
      alter table account_keys alter column hint type varchar(64);
      alter table server_keys alter column hint type varchar(64)`);

    expect(await readEndUser()).toEqual(endUserBefore);
    expect(await readEverywhere()).toEqual(before);
    expect(await readEndUser()).toEqual(endUserBefore);
  });

  it('answers after a column is added to a table a read selects from', async () => {
    const before = await readEverywhere();
    await elsewhere('alter table credentials add column added_by_a_later_migration text');
    expect(await readEverywhere()).toEqual(before);
  });

  it('answers when the server no longer has a statement the connection prepared', async () => {
    const before = await readEverywhere();
    // Run on the pool's most recently released connection, which the next read takes first.
    await sql`deallocate all`.execute(t.ctx.store.db);
    const again = await t.ctx.store.audience.memberWithCredentials(tenant.serverId, 'u1');
    expect(again.credentials.map((c) => [c.provider, c.status, c.scopes, c.connected_at])).toEqual(before[0]!.credentials);
    expect(await readEverywhere()).toEqual(before);
  });
});

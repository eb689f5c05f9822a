/**
 * The guard answers its key lookups from memory on every node (auth/key-cache.ts), yet a key
 * revoked, rotated out, expired, or a server switched to personal mode or moved, is refused on the
 * very next request on every node, whoever made the change: the CLI in another process, the
 * services (what the dashboard and the API call), or an operator's SQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { revokeAccountKey } from '../../src/services/keys/account-keys.js';
import { rotateServerKey, setServerMode } from '../../src/services/servers/servers.js';
import { cliEnv, cliJson } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { createTenant, keys, newAccountKey, type SecondNode, startSecondNode, startTestApp, type Tenant, type TestApp } from '../helpers/test-app.js';

const SLOW = 120_000;

describe.each(ENGINES)('cached key lookups on three nodes of one %s database', (engine) => {
  let t: TestApp;
  let others: SecondNode[];
  let nodes: (TestApp | SecondNode)[];
  let cli: NodeJS.ProcessEnv;
  let tenant: Tenant;

  beforeAll(async () => {
    t = await startTestApp(engine);
    others = [await startSecondNode(t), await startSecondNode(t)];
    nodes = [t, ...others];
    cli = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') });
    tenant = await createTenant(t.ctx);
  }, SLOW);
  afterAll(async () => {
    for (const node of others) await node.close();
    await t.close();
  });

  /**
   * The member read folds the auth version into its own statement (a member nobody added: 404 while
   * the keys hold, the refusal once they do not); the list reads it in the guard.
   */
  const ROUTES = [
    // First: after a change, the first request each node sees is the one that folds the version in.
    { url: '/v1/end-users/nobody-here', admitted: 404 },
    { url: '/v1/end-users', admitted: 200 },
  ];
  const list = (node: TestApp | SecondNode, headers: Record<string, string>) => node.app.inject({ method: 'GET', url: '/v1/end-users', headers });

  async function expectAdmittedEverywhere(headers: Record<string, string>) {
    for (const node of nodes) {
      for (const route of ROUTES) expect((await node.app.inject({ method: 'GET', url: route.url, headers })).statusCode).toBe(route.admitted);
    }
  }

  /** Every node admits the keys on both routes, and each has them in memory afterwards. */
  async function warm(headers: Record<string, string>) {
    await expectAdmittedEverywhere(headers);
    const misses = nodes.map((node) => node.ctx.store.authLookups.misses);
    await expectAdmittedEverywhere(headers);
    // The second round read no key from the database: the cache is really in use.
    expect(nodes.map((node) => node.ctx.store.authLookups.misses)).toEqual(misses);
  }

  /** The very next request on every node, on either route, is refused. */
  async function expectRefusedEverywhere(headers: Record<string, string>, status: number, code: string) {
    for (const route of ROUTES) {
      for (const node of nodes) {
        const response = await node.app.inject({ method: 'GET', url: route.url, headers });
        expect(response.statusCode, `${route.url}`).toBe(status);
        expect(response.json().code).toBe(code);
      }
    }
  }

  it('refuses an account key revoked by the CLI on the next request of every node', { timeout: SLOW }, async () => {
    const { keyId, headers } = await newAccountKey(t.ctx, tenant, { label: 'cli-revoked' });
    await warm(headers);
    await cliJson(cli, ['key', 'revoke', '--key', keyId]);
    await expectRefusedEverywhere(headers, 401, 'account_key_revoked');
  });

  it('refuses an account key revoked through the services (the dashboard, another node)', async () => {
    const { keyId, headers } = await newAccountKey(t.ctx, tenant, { label: 'dashboard-revoked' });
    await warm(headers);
    await revokeAccountKey(others[1]!.ctx, keyId, 'user_someone');
    await expectRefusedEverywhere(headers, 401, 'account_key_revoked');
  });

  it("refuses a revoked key on the write that shares the member read's URL (DELETE), before any read", async () => {
    const { keyId, headers } = await newAccountKey(t.ctx, tenant, { label: 'delete-after-revoke' });
    await warm(headers);
    const remove = (node: TestApp | SecondNode) => node.app.inject({ method: 'DELETE', url: '/v1/end-users/nobody-here', headers });
    for (const node of nodes) expect((await remove(node)).statusCode).toBe(404);
    await revokeAccountKey(others[0]!.ctx, keyId, 'user_someone');
    // The DELETE's handler reads no auth version of its own: the guard must read it for the write.
    for (const node of nodes) {
      const response = await remove(node);
      expect(response.statusCode).toBe(401);
      expect(response.json().code).toBe('account_key_revoked');
    }
  });

  it('refuses a server key rotated out by the CLI with no grace, and admits the new one', { timeout: SLOW }, async () => {
    const server = await createTenant(t.ctx);
    await warm(keys(server));
    const rotated = await cliJson(cli, ['server', 'rotate-key', '--server', server.serverId, '--grace-seconds', '0']);
    // The CLI ends the old key's life at its own (real) time; the nodes' test clocks stand still, so
    // they are brought just past it.
    for (const node of nodes) node.clock.advance((Date.now() - node.clock.now().getTime()) / 1000 + 0.001);
    await expectRefusedEverywhere(keys(server), 401, 'service_key_revoked');
    for (const node of nodes) expect((await list(node, keys({ ...server, serverKey: String(rotated.serverKey) }))).statusCode).toBe(200);
  });

  it('refuses a server key rotated out through the services once its grace period is over', async () => {
    const server = await createTenant(t.ctx);
    await warm(keys(server));
    await rotateServerKey(t.ctx, server.serverId, 60, CLI_ACTOR);
    // Within the grace period the old key still opens, on every node.
    for (const node of nodes) expect((await list(node, keys(server))).statusCode).toBe(200);
    for (const node of nodes) node.clock.advance(61);
    await expectRefusedEverywhere(keys(server), 401, 'service_key_revoked');
  });

  it('refuses a server switched to personal mode by the CLI, and admits it again once switched back', { timeout: SLOW }, async () => {
    const server = await createTenant(t.ctx);
    await warm(keys(server));
    await cliJson(cli, ['server', 'mode', '--server', server.serverId, '--mode', 'personal']);
    await expectRefusedEverywhere(keys(server), 403, 'server_not_business_mode');
    await setServerMode(others[0]!.ctx, server.serverId, 'business', CLI_ACTOR);
    // The member read first on every node: a refusal it remembered must not outlive the change.
    await expectAdmittedEverywhere(keys(server));
  });

  it('answers a revoked key 401 on the member read, not 429, once its rate limit is spent', async () => {
    const limited = await startSecondNode(t, { rateLimitPerMinute: 1 });
    try {
      const { keyId, headers } = await newAccountKey(t.ctx, tenant, { label: 'spent' });
      const read = () => limited.app.inject({ method: 'GET', url: '/v1/end-users/nobody-here', headers });
      expect((await read()).statusCode).toBe(404);
      expect((await read()).json().code).toBe('rate_limited');
      await revokeAccountKey(t.ctx, keyId, CLI_ACTOR);
      // CONTRACT 2.1: step 9 comes before step 15.
      expect((await read()).json().code).toBe('account_key_revoked');
    } finally {
      await limited.close();
    }
  });

  it("keeps every node's cache through statements that change nothing", async () => {
    const version = () => t.ctx.store.db.selectFrom('auth_version').select('version').executeTakeFirstOrThrow();
    const before = await version();
    await sql`update account_keys set revoked_at = ${'2026-01-01T00:00:00.000Z'} where id = ${'key_nothing'}`.execute(t.ctx.store.db);
    await sql`delete from server_keys where id = ${'skey_nothing'}`.execute(t.ctx.store.db);
    await sql`update servers set mode = ${'personal'} where id = ${'srv_nothing'}`.execute(t.ctx.store.db);
    expect(await version()).toEqual(before);
  });

  it('refuses a server an operator moved to another account with SQL', async () => {
    const server = await createTenant(t.ctx);
    const elsewhere = await createTenant(t.ctx);
    await warm(keys(server));
    await sql`update servers set account_id = ${elsewhere.accountId} where id = ${server.serverId}`.execute(t.ctx.store.db);
    await expectRefusedEverywhere(keys(server), 403, 'server_access_denied');
  });

  it('refuses an account key past its expiry without any change in the database', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 30_000).toISOString();
    const { headers } = await newAccountKey(t.ctx, tenant, { label: 'short-lived', expiresAt });
    await warm(headers);
    for (const node of nodes) node.clock.advance(31);
    await expectRefusedEverywhere(headers, 401, 'account_key_expired');
  });

  it('writes lastUsedAt at most once a minute per key, not once a request', async () => {
    const { keyId, headers } = await newAccountKey(t.ctx, tenant, { label: 'touched' });
    const lastUsed = async () =>
      (await t.ctx.store.db.selectFrom('account_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow()).last_used_at;
    expect((await list(t, headers)).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first).toBe(t.clock.now().toISOString());
    t.clock.advance(30);
    expect((await list(t, headers)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    t.clock.advance(31);
    expect((await list(t, headers)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(t.clock.now().toISOString());
  });
});

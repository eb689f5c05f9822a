/**
 * A proxied call's read kept in memory on PostgreSQL by three nodes sharing the database
 * (store/change-feed.ts): each node answers a busy end user's calls from memory once its feed holds a
 * lease, and a revocation on any node, or by the CLI in a process of its own, is answered only once
 * every node will refuse the credential at its next call. A node that cannot hear (its session cut,
 * its process stopped) keeps nothing, and holds a revocation back for its lease at most.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { FEED_APPLICATION_NAME, LEASE_MS } from '../../src/store/change-feed.js';
import { UNWATCHED_CREDENTIAL_COLUMNS } from '../../src/store/migrations/024-change-feed.js';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { cliEnv, cliJson, type ServeProcess, startServe } from '../helpers/cli-process.js';
import { startDelayingRelay } from '../helpers/delaying-relay.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keptRead } from '../helpers/kept-reads.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { newAccountKey, type SecondNode, startSecondNode, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/webhook-delivery.js';

const SLOW = 120_000;

describe('a proxied call’s read kept by three nodes on PostgreSQL', () => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let api: ApiStandIn;
  let others: SecondNode[];
  const serves: ServeProcess[] = [];

  beforeAll(async () => {
    api = await startApiStandIn();
    ({ t, tenant, headers } = await startWithTenant('postgres'));
    others = [await startSecondNode(t), await startSecondNode(t)];
    await addCustomStaticProvider(t.ctx, {
      serverId: tenant.serverId,
      slug: 'ledger',
      fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
      api: { apiBaseUrl: `${api.url}/v1`, auth: 'bearer:apiKey' },
      actor: CLI_ACTOR,
    });
  }, SLOW);
  afterAll(async () => {
    for (const serve of serves) {
      serve.child.kill('SIGCONT');
      await serve.stop().catch(() => undefined);
    }
    for (const node of others ?? []) await node.close();
    await t?.close();
    await api?.close();
  }, SLOW);

  const nodes = () => [t, ...others];
  const read = (node: Pick<TestApp, 'ctx'>, externalUserId: string) =>
    node.ctx.store.audience.memberCredentialForProxy(tenant.serverId, externalUserId, 'ledger');
  const proxy = (node: Pick<TestApp, 'app'>, externalUserId: string, callHeaders = headers) =>
    node.app.inject({ method: 'GET', url: `/v1/end-users/${externalUserId}/proxy/ledger/items`, headers: callHeaders });
  const connect = (externalUserId: string) =>
    connectStatic(t.app, headers, { provider: 'ledger', externalUserId, values: { apiKey: `sk_${externalUserId}_0123456789` } });

  /** The node's read once it answers it from memory (its feed holds a lease by then). */
  const keptBy = (node: Pick<TestApp, 'ctx'>, externalUserId: string) => keptRead(() => read(node, externalUserId));

  /** One statement on the suite's database, on a session of its own. */
  async function query<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
    const admin = new pg.Client(t.database.url);
    await admin.connect();
    try {
      return (await admin.query(text, values)).rows as Row[];
    } finally {
      await admin.end();
    }
  }

  /** Cuts every feed's session to this suite's database from the server's side, as a restart of the database or a lost network would. */
  const cutFeedSessions = async () =>
    (
      await query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()', [
        FEED_APPLICATION_NAME,
      ])
    ).length;

  /** The last token drawn by a write that waited for every node (0 before the first). */
  const lastToken = async () =>
    Number((await query<{ token: string }>('select case when is_called then last_value else 0 end as token from change_tokens'))[0]!.token);

  /**
   * The write since `before` drew a token, and no node with a live lease is behind it. (That the write
   * waited for them is shown by the late node's test: nodes in this process hear within a millisecond.)
   */
  async function expectHeardEverywhere(before: number): Promise<void> {
    const token = await lastToken();
    expect(token).toBeGreaterThan(before);
    const behind = await query('select node_id from caching_nodes where lease_until > now() and seen_token < $1', [token]);
    expect(behind).toEqual([]);
  }

  it('is answered from memory on every node, and a revocation on one is refused at the next call of every node', { timeout: SLOW }, async () => {
    await connect('u_kept');
    await connect('u_member');
    for (const node of nodes()) {
      const kept = await keptBy(node, 'u_kept');
      expect(kept.credential?.external_user_id).toBe('u_kept');
      expect(await read(node, 'u_kept')).toBe(kept);
      await keptBy(node, 'u_member');
      expect((await proxy(node, 'u_kept')).statusCode).toBe(200);
    }
    // One credential revoked, then a whole member (a transaction: the wait comes after its commit).
    // Every node heard each at once: neither waited for a lease to run out.
    let before = await lastToken();
    let started = performance.now();
    expect((await others[0]!.app.inject({ method: 'DELETE', url: '/v1/end-users/u_kept?provider=ledger', headers })).statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(LEASE_MS);
    await expectHeardEverywhere(before);
    before = await lastToken();
    started = performance.now();
    expect((await others[1]!.app.inject({ method: 'DELETE', url: '/v1/end-users/u_member', headers })).statusCode).toBe(200);
    expect(performance.now() - started).toBeLessThan(LEASE_MS);
    await expectHeardEverywhere(before);
    api.reset();
    for (const node of nodes()) {
      expect((await read(node, 'u_kept')).credential).toBeUndefined();
      expectProblem(await proxy(node, 'u_kept'), 404, 'credential_not_found');
      expect((await read(node, 'u_member')).member).toBeUndefined();
    }
    expect(api.received).toHaveLength(0);
  });

  it('keeps a read through the write of its use (lastUsedAt notifies nothing)', { timeout: SLOW }, async () => {
    await connect('u_used');
    const kept = await keptBy(t, 'u_used');
    expect((await proxy(t, 'u_used')).statusCode).toBe(200);
    const [row] = await query<{ last_used_at: string | null }>('select last_used_at from credentials where id = $1', [kept.credential!.id]);
    expect(row!.last_used_at).not.toBeNull();
    // Time for a notice to arrive, had the write sent one.
    await sleep(200);
    expect(await read(t, 'u_used')).toBe(kept);
  });

  it('is told of a credential’s change, but not of its bookkeeping alone (lastUsedAt, the check, the refresh lease)', { timeout: SLOW }, async () => {
    await connect('u_told');
    const { credential } = await read(t, 'u_told');
    const listener = new pg.Client(t.database.url);
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(message.channel));
      await listener.query('listen keyward_changes');
      await listener.query('listen test_fence');
      // Notices reach a listener in commit order: once the fence committed after some writes has
      // arrived, whatever those writes notified has arrived before it.
      const fenced = async () => {
        await query('notify test_fence');
        await until(() => heard.includes('test_fence'), 'the fence', 5000);
        expect(heard).toContain('test_fence');
        const before = heard.filter((channel) => channel !== 'test_fence');
        heard.length = 0;
        return before;
      };
      const values: Record<string, string> = {
        last_used_at: '2031-01-01T00:00:00.000Z',
        last_check_at: '2031-01-01T00:00:00.000Z',
        last_check_outcome: 'valid',
        refresh_lease_until: '2031-01-01T00:00:00.000Z',
        refresh_lease_holder: 'node_a',
      };
      expect(Object.keys(values).sort()).toEqual([...UNWATCHED_CREDENTIAL_COLUMNS].sort());
      for (const [column, value] of Object.entries(values)) await query(`update credentials set ${column} = $2 where id = $1`, [credential!.id, value]);
      expect(await fenced()).toEqual([]);
      await query('update credentials set scopes = $2 where id = $1', [credential!.id, 'read']);
      expect(await fenced()).toEqual(['keyward_changes']);
    } finally {
      await listener.end();
    }
  });

  it('answers a revocation only once a node whose database answers late has heard it', { timeout: SLOW }, async () => {
    // A fourth node whose every byte from the database arrives 400 ms late, its notifications too:
    // a node that answered from memory as soon as the revocation was committed would pass the call.
    const database = new URL(t.database.url);
    const relay = await startDelayingRelay({ host: database.hostname, port: Number(database.port) }, 400);
    const late = await startSecondNode(t, { databaseUrl: Object.assign(new URL(database), { hostname: '127.0.0.1', port: String(relay.port) }).href });
    try {
      await connect('u_late');
      await keptBy(late, 'u_late');
      expect((await proxy(late, 'u_late')).statusCode).toBe(200);
      const started = performance.now();
      expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_late?provider=ledger', headers })).statusCode).toBe(200);
      const waited = performance.now() - started;
      api.reset();
      expectProblem(await proxy(late, 'u_late'), 404, 'credential_not_found');
      expect(api.received).toHaveLength(0);
      // The revocation was answered once the late node had heard it: 400 ms after it was sent at least.
      expect(waited).toBeGreaterThan(400);
    } finally {
      await late.close();
      await relay.close();
    }
  });

  it('refuses an account key the CLI revoked, in a process without a feed of its own, at the next call of every node', { timeout: SLOW }, async () => {
    await connect('u_key');
    const { keyId, headers: keyHeaders } = await newAccountKey(t.ctx, tenant, { label: 'revoked-by-cli' });
    for (const node of nodes()) {
      await keptBy(node, 'u_key');
      expect((await proxy(node, 'u_key', keyHeaders)).statusCode).toBe(200);
    }
    const before = await lastToken();
    await cliJson(cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') }), ['key', 'revoke', '--key', keyId]);
    await expectHeardEverywhere(before);
    for (const node of nodes()) expectProblem(await proxy(node, 'u_key', keyHeaders), 401, 'account_key_revoked');
  });

  it('keeps nothing on a node whose session was cut until it listens again, and refuses what was revoked meanwhile', { timeout: SLOW }, async () => {
    await connect('u_cut');
    for (const node of nodes()) await keptBy(node, 'u_cut');
    expect(await cutFeedSessions()).toBe(3);
    // The cut is seen as the session's end: from then on every read is made afresh (until the node
    // listens again, a second later at the soonest).
    for (const node of nodes()) {
      const kept = await read(node, 'u_cut');
      let fresh = kept;
      for (const giveUpAt = performance.now() + 900; fresh === kept && performance.now() < giveUpAt; await sleep(10)) fresh = await read(node, 'u_cut');
      expect(fresh).not.toBe(kept);
      expect(fresh).toEqual(kept);
    }
    const started = performance.now();
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_cut?provider=ledger', headers })).statusCode).toBe(200);
    // The cut nodes' leases were still live in the database: the revocation waited for them to listen
    // again (and see it) or for their leases to end, whichever came first, and no longer.
    expect(performance.now() - started).toBeLessThan(LEASE_MS + 1000);
    for (const node of nodes()) expectProblem(await proxy(node, 'u_cut'), 404, 'credential_not_found');
    // And each node listens again, and keeps reads again.
    await connect('u_after_cut');
    for (const node of nodes()) expect((await keptBy(node, 'u_after_cut')).credential?.external_user_id).toBe('u_after_cut');
  });

  it('forgets what a node kept when its row is gone (deleted by hand), and registers it again', { timeout: SLOW }, async () => {
    await connect('u_unregistered');
    const kept = await keptBy(t, 'u_unregistered');
    await query('delete from caching_nodes');
    // The next renewal finds no row: the nodes register again, and what they kept is forgotten.
    await until(async () => (await query('select 1 from caching_nodes')).length === 3, 'the nodes to register again', 10_000);
    expect(await query('select 1 from caching_nodes')).toHaveLength(3);
    const after = await keptBy(t, 'u_unregistered');
    expect(after).not.toBe(kept);
    expect(after).toEqual(kept);
  });

  it('holds a revocation back for a stopped node’s lease at most, and the node refuses it once running again', { timeout: SLOW }, async () => {
    await connect('u_stopped');
    const serve = await startServe(
      cliEnv({
        KEYWARD_DATABASE_URL: t.database.url,
        KEYWARD_MASTER_KEY: t.masterKey.toString('base64'),
        KEYWARD_HOST: '127.0.0.1',
        KEYWARD_PORT: '0',
      }),
    );
    serves.push(serve);
    const nodesBefore = (await query<{ node_id: string }>('select node_id from caching_nodes')).map((row) => row.node_id);
    const call = () => fetch(`${serve.address}/v1/end-users/u_stopped/proxy/ledger/items`, { headers });
    expect((await call()).status).toBe(200);
    // Its feed registers at its first call: wait for its row.
    let served: string | undefined;
    await until(
      async () => {
        served = (await query<{ node_id: string }>('select node_id from caching_nodes')).map((row) => row.node_id).find((id) => !nodesBefore.includes(id));
        return served !== undefined;
      },
      'the served node to register',
      10_000,
    );
    expect(served).toBeDefined();
    expect((await call()).status).toBe(200);

    serve.child.kill('SIGSTOP');
    const [lease] = await query<{ left: number }>('select extract(epoch from lease_until - now()) * 1000 as left from caching_nodes where node_id = $1', [
      served,
    ]);
    // Renewed every second for three: two seconds at least were left.
    expect(Number(lease!.left)).toBeGreaterThan(1000);
    const started = performance.now();
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_stopped?provider=ledger', headers })).statusCode).toBe(200);
    const waited = performance.now() - started;
    // It could not hear: the revocation waited for its lease to run out, and no longer.
    expect(waited).toBeGreaterThan(Number(lease!.left) - 250);
    expect(waited).toBeLessThan(LEASE_MS + 1000);
    serve.child.kill('SIGCONT');
    const after = await call();
    expect(after.status).toBe(404);
    expect(((await after.json()) as { code: string }).code).toBe('credential_not_found');
  });
});

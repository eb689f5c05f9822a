/**
 * A proxied call's read is answered from memory until a change is committed
 * (store/reads-until-change.ts): the same object while nothing changes, so a busy end user's calls
 * cost no statement and no decryption; yet a change is seen at once. On SQLite any commit, by anyone,
 * is seen by the very next call: a credential deleted or marked needs_reauth by another process's
 * SQL, an account key revoked by the CLI, a credential stored anew by the services. On PostgreSQL
 * (store/change-feed.ts) Keyward's own changes are seen by the next call of every node (the CLI's
 * too), and another process's SQL once its notification has arrived, a moment later; the calls that
 * read together share one statement (store/statements-together.ts), which gives each call its own
 * read. Three nodes: proxy-reads-nodes.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ACTOR } from '../../src/services/context.js';
import { addCustomStaticProvider } from '../../src/services/providers/custom-providers.js';
import { proxyReadBytes } from '../../src/store/proxy-reads.js';
import { type ApiStandIn, startApiStandIn } from '../helpers/api-stand-in.js';
import { cliEnv, cliJson } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { keptRead } from '../helpers/kept-reads.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { createTenant, keys, newAccountKey, startWithTenant, type Tenant, type TestApp } from '../helpers/test-app.js';
import { until } from '../helpers/webhook-delivery.js';

const resolve = createRequire(import.meta.url).resolve;

/** One statement with one parameter, committed by a process of its own, as an operator's shell would. */
function sqlInAnotherProcess(databaseUrl: string, statement: string, parameter: string) {
  const [sqlite, postgres] = [JSON.stringify(resolve('better-sqlite3')), JSON.stringify(resolve('pg'))];
  const script = databaseUrl.startsWith('sqlite:')
    ? `const db = new (require(${sqlite}))(${JSON.stringify(databaseUrl.slice('sqlite:'.length))});
       db.pragma('busy_timeout = 5000');
       db.prepare(${JSON.stringify(statement.replace('$1', '?'))}).run(${JSON.stringify(parameter)});
       db.close();`
    : `const client = new (require(${postgres}).Client)(${JSON.stringify(databaseUrl)});
       client.connect().then(() => client.query(${JSON.stringify(statement)}, [${JSON.stringify(parameter)}])).then(() => client.end());`;
  execFileSync(process.execPath, ['-e', script]);
}

describe.each(ENGINES)('a proxied call’s read on %s', (engine) => {
  let t: TestApp;
  let tenant: Tenant;
  let headers: Record<string, string>;
  let api: ApiStandIn;

  /** A custom static provider of the server: one API key, sent as a bearer token to the stand-in at `basePath`. */
  const addKeyProvider = (serverId: string, slug: string, basePath: string) =>
    addCustomStaticProvider(t.ctx, {
      serverId,
      slug,
      fields: [{ name: 'apiKey', label: 'API key', secret: true, required: true }],
      api: { apiBaseUrl: `${api.url}${basePath}`, auth: 'bearer:apiKey' },
      actor: CLI_ACTOR,
    });

  beforeAll(async () => {
    api = await startApiStandIn();
    ({ t, tenant, headers } = await startWithTenant(engine));
    await addKeyProvider(tenant.serverId, 'ledger', '/v1');
    await addKeyProvider(tenant.serverId, 'almanac', '/v2');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await api?.close();
  });

  const read = (externalUserId: string) => t.ctx.store.audience.memberCredentialForProxy(tenant.serverId, externalUserId, 'ledger');
  const proxy = (externalUserId: string, callHeaders = headers) =>
    t.app.inject({ method: 'GET', url: `/v1/end-users/${externalUserId}/proxy/ledger/items`, headers: callHeaders });
  const connect = (externalUserId: string, apiKey: string) => connectStatic(t.app, headers, { provider: 'ledger', externalUserId, values: { apiKey } });
  /** Three calls that pass: the read is kept from the first on (on PostgreSQL once the node's feed holds its lease). */
  const inUse = async (externalUserId: string, callHeaders = headers) => {
    for (let i = 0; i < 3; i++) expect((await proxy(externalUserId, callHeaders)).statusCode).toBe(200);
  };
  /** The read, once kept: the same object twice in a row (on PostgreSQL the feed holds its lease a moment after the first read). */
  const kept = (externalUserId: string) => keptRead(() => read(externalUserId));
  /**
   * Waits, on PostgreSQL, until the node has heard of a change committed elsewhere without Keyward
   * (another process's SQL), which its notification tells a moment after the commit: the read kept
   * before it is dropped then. On SQLite the next read sees it: nothing to wait for.
   */
  const heardOfChange = async (externalUserId: string, keptBefore: object) => {
    if (engine === 'sqlite') return;
    await until(async () => (await read(externalUserId)) !== keptBefore, 'the change to be heard of', 5000);
  };

  it('is the same object while nothing is committed, a new one after a change to the audience', async () => {
    await connect('u_same', 'sk_same_0123456789');
    const first = await kept('u_same');
    expect(first.credential?.provider).toBe('ledger');
    const again = await read('u_same');
    expect(again).toBe(first);
    // A change to the audience, even one that touches another member, drops what was kept.
    await connect('u_other', 'sk_other_0123456789');
    await heardOfChange('u_same', first);
    const after = await read('u_same');
    expect(after === first).toBe(false);
    expect(after).toEqual(first);
  });

  it('gives each of the calls that read together its own read, as the call alone would (one statement on PostgreSQL)', async () => {
    await connect('u_together_a', 'sk_together_a_0123456789');
    await connect('u_together_b', 'sk_together_b_0123456789');
    await connectStatic(t.app, headers, { provider: 'almanac', externalUserId: 'u_together_c', values: { apiKey: 'sk_together_c_0123456789' } });
    // a and b have a ledger credential, c is a member without one, and nobody is no member at all.
    const ids = ['u_together_a', 'u_together_b', 'u_together_c', 'u_together_a', 'u_nobody', 'u_together_b'];
    const together = await Promise.all(ids.map(read));
    const alone = [];
    for (const id of ids) alone.push(await read(id));
    expect(together).toEqual(alone);
    expect(together.map((found) => found.credential?.external_user_id)).toEqual([
      'u_together_a',
      'u_together_b',
      undefined,
      'u_together_a',
      undefined,
      'u_together_b',
    ]);
    expect(together.map((found) => found.member !== undefined)).toEqual([true, true, true, true, false, true]);
    expect(together[0]!.customDefinition).toContain(api.url);
    // On PostgreSQL the same key asked twice in one statement is read once; on SQLite each call that
    // asks before the first read was kept runs its own statement (which costs no round trip there).
    expect(together[0] === together[3]).toBe(engine === 'postgres');
  });

  it('gives each call its own read where calls of two servers, two providers and seventeen keys read together', async () => {
    // Another server with a ledger of its own at another base URL, and the same external user id on both.
    const other = await createTenant(t.ctx);
    const otherHeaders = keys(other);
    await addKeyProvider(other.serverId, 'ledger', '/v3');
    await connect('u_mixed', 'sk_mixed_here_0123456789');
    await connectStatic(t.app, otherHeaders, { provider: 'ledger', externalUserId: 'u_mixed', values: { apiKey: 'sk_mixed_there_0123456789' } });
    await connectStatic(t.app, headers, { provider: 'almanac', externalUserId: 'u_mixed', values: { apiKey: 'sk_mixed_almanac_0123456789' } });
    const asks: [string, string, string][] = [
      [tenant.serverId, 'u_mixed', 'ledger'],
      [other.serverId, 'u_mixed', 'ledger'],
      [tenant.serverId, 'u_mixed', 'almanac'],
      [other.serverId, 'u_mixed', 'almanac'],
      [tenant.serverId, 'u_mixed', 'openai'],
      ...Array.from({ length: 12 }, (_, i): [string, string, string] => [i % 2 ? tenant.serverId : other.serverId, `u_nobody_${i}`, 'ledger']),
    ];
    expect(asks).toHaveLength(17);
    const readAsked = ([serverId, externalUserId, provider]: [string, string, string]) =>
      t.ctx.store.audience.memberCredentialForProxy(serverId, externalUserId, provider);
    const together = await Promise.all(asks.map(readAsked));
    const alone = [];
    for (const ask of asks) alone.push(await readAsked(ask));
    expect(together).toEqual(alone);
    const summary = together.slice(0, 5).map((found) => ({
      server: found.credential?.server_id,
      provider: found.credential?.provider,
      base: found.customDefinition === null ? null : JSON.parse(found.customDefinition).api.apiBaseUrl,
    }));
    expect(summary).toEqual([
      { server: tenant.serverId, provider: 'ledger', base: `${api.url}/v1` },
      { server: other.serverId, provider: 'ledger', base: `${api.url}/v3` },
      { server: tenant.serverId, provider: 'almanac', base: `${api.url}/v2` },
      { server: undefined, provider: undefined, base: null },
      { server: undefined, provider: undefined, base: null },
    ]);
    expect(together.slice(5).every((found) => found.member === undefined && found.credential === undefined)).toBe(true);
  });

  it('sees a revocation in the next calls that read together', async () => {
    await connect('u_turn_a', 'sk_turn_a_0123456789');
    await connect('u_turn_b', 'sk_turn_b_0123456789');
    const both = () => Promise.all([read('u_turn_a'), read('u_turn_b')]);
    expect((await both()).map((found) => found.credential?.external_user_id)).toEqual(['u_turn_a', 'u_turn_b']);
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_turn_a?provider=ledger', headers })).statusCode).toBe(200);
    expect((await both()).map((found) => found.credential?.external_user_id)).toEqual([undefined, 'u_turn_b']);
  });

  it('answers the calls that read together with one the database refuses (a NUL in the provider) as if each had read alone', async () => {
    await connect('u_nul', 'sk_nul_0123456789');
    const [good, refused, goodAgain] = await Promise.allSettled([
      read('u_nul'),
      t.ctx.store.audience.memberCredentialForProxy(tenant.serverId, 'u_nul', 'led\0ger'),
      read('u_nul'),
    ]);
    expect(good.status === 'fulfilled' && good.value.credential?.external_user_id).toBe('u_nul');
    expect(goodAgain.status === 'fulfilled' && goodAgain.value.credential?.external_user_id).toBe('u_nul');
    // PostgreSQL refuses the text; SQLite finds no such credential.
    if (engine === 'postgres') expect(refused.status).toBe('rejected');
    else expect(refused.status === 'fulfilled' && refused.value.credential).toBeUndefined();
    // Over HTTP such a provider is no slug: refused before anything is read, and the calls beside it pass.
    const [nul, ...passing] = await Promise.all([
      t.app.inject({ method: 'GET', url: '/v1/end-users/u_nul/proxy/led%00ger/items', headers }),
      proxy('u_nul'),
      proxy('u_nul'),
    ]);
    expectProblem(nul, 400, 'validation_failed');
    expect(passing.map((answer) => answer.statusCode)).toEqual([200, 200]);
  });

  it('counts a read by the values it holds, so that what SQLite keeps is bounded in bytes as well as in number', async () => {
    await connect('u_short_key', 'sk_short_0123456789');
    await connect('u_long_key', `sk_${'long'.repeat(1000)}`);
    const [short, long] = [await read('u_short_key'), await read('u_long_key')];
    expect(long.credential!.secret.byteLength - short.credential!.secret.byteLength).toBeGreaterThan(3_900);
    expect(proxyReadBytes(long) - proxyReadBytes(short)).toBeGreaterThan(3_900);
  });

  it('sends the credential stored anew, from the next call', async () => {
    await connect('u_new', 'sk_first_0123456789');
    api.reset();
    await inUse('u_new');
    await connect('u_new', 'sk_second_0123456789');
    expect((await proxy('u_new')).statusCode).toBe(200);
    expect(api.received.map((r) => r.headers.authorization)).toEqual([...Array(3).fill('Bearer sk_first_0123456789'), 'Bearer sk_second_0123456789']);
  });

  it('refuses a credential another process deleted with SQL, at the next call (on PostgreSQL once notified)', async () => {
    await connect('u_sql', 'sk_sql_0123456789');
    await inUse('u_sql');
    const before = await read('u_sql');
    sqlInAnotherProcess(t.database.url, 'delete from credentials where member_id = $1', before.member!.id);
    await heardOfChange('u_sql', before);
    expectProblem(await proxy('u_sql'), 404, 'credential_not_found');
  });

  it('refuses a credential another process marked as needing the end user again, at the next call (on PostgreSQL once notified)', async () => {
    await connect('u_reauth', 'sk_reauth_0123456789');
    await inUse('u_reauth');
    const before = await read('u_reauth');
    sqlInAnotherProcess(
      t.database.url,
      "update credentials set status = 'needs_reauth', error_code = 'credential_rejected' where id = $1",
      before.credential!.id,
    );
    await heardOfChange('u_reauth', before);
    expectProblem(await proxy('u_reauth'), 409, 'credential_needs_reauth');
  });

  it('never sends or hands out a secret copied onto another member’s row, though the secret is kept opened for its own', async () => {
    // Opened secrets are kept by their sealed bytes (credentials/opened-secrets.ts): the bytes alone
    // must not find them, or a row given another row's bytes would be sent that row's secret.
    await connect('u_source', 'sk_source_0123456789');
    await connect('u_target', 'sk_target_0123456789');
    await inUse('u_source');
    await inUse('u_target');
    const source = (await read('u_source')).credential!;
    const targetRead = await read('u_target');
    const target = targetRead.credential!;
    api.reset();
    sqlInAnotherProcess(t.database.url, `update credentials set secret = (select secret from credentials where id = '${source.id}') where id = $1`, target.id);
    await heardOfChange('u_target', targetRead);
    const answer = await proxy('u_target');
    expect(answer.statusCode).toBe(500);
    expect(api.received).toEqual([]);
    expect(answer.body).not.toContain('sk_source');
    // The member's read keeps opened secrets the same way.
    const memberRead = await t.app.inject({ method: 'GET', url: '/v1/end-users/u_target', headers });
    expect(memberRead.statusCode).toBe(500);
    expect(memberRead.body).not.toContain('sk_source');
    // The source's own calls still go, with its own secret.
    expect((await proxy('u_source')).statusCode).toBe(200);
    expect(api.received.map((r) => r.headers.authorization)).toEqual(['Bearer sk_source_0123456789']);
  });

  it('refuses, at the next call, an account key the CLI revoked in another process', { timeout: 60_000 }, async () => {
    await connect('u_key', 'sk_key_0123456789');
    const { keyId, headers: keyHeaders } = await newAccountKey(t.ctx, tenant, { label: 'revoked-by-cli' });
    await inUse('u_key', keyHeaders);
    await cliJson(cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64') }), ['key', 'revoke', '--key', keyId]);
    expectProblem(await proxy('u_key', keyHeaders), 401, 'account_key_revoked');
  });
});

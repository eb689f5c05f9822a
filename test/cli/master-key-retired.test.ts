/**
 * A master key retired by `keyward master-key rotate` seals nothing more (issue 17, item 2): a node
 * still running on it is refused every write of a sealed value, a retirement racing such a write
 * waits for it and counts it, and values a node wrote under a retired key before this was enforced
 * make a start without that key stop with one line naming KEYWARD_OLD_MASTER_KEYS. Two nodes on one
 * real database: the node on the old key in this process, the rotation and the starts as real CLI
 * processes (or a second node in this process).
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { Vault } from '../../src/primitives/vault.js';
import { CLI_ACTOR, type ServiceContext } from '../../src/services/context.js';
import { aad as idempotencyAad } from '../../src/services/idempotency/idempotency.js';
import { verifyMasterKeys } from '../../src/services/sealing/master-key.js';
import { rotateMasterKey } from '../../src/services/sealing/master-key-rotation.js';
import { createServer } from '../../src/services/servers/servers.js';
import { migrateToLatest, migrateUpTo } from '../../src/store/migrate.js';
import { SEALED_COLUMNS } from '../../src/store/sealed-columns.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { isRetiredMasterKeyRefusal } from '../../src/store/store-errors.js';
import { cliEnv, cliJson, newMasterKey, runCli } from '../helpers/cli-process.js';
import { createTestDatabase, ENGINES } from '../helpers/databases.js';
import { connectStatic, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { expectOneLineRefusal, keyIdOf } from '../helpers/master-key.js';
import { type SecondNode, startSecondNode, startWithTenant, type TestApp } from '../helpers/test-app.js';

const SLOW = 120_000;
const REFUSAL = 'sealed under a retired master key';
const prefixOf = (key: string) => `02${keyIdOf(key)}`;

/** The first 9 bytes (layout version and key id) of every sealed value, by column. */
async function sealedPrefixes(store: Store): Promise<string[]> {
  const prefixes: string[] = [];
  for (const { table, column } of SEALED_COLUMNS) {
    const rows = (await (store.db as any).selectFrom(table).select(column).execute()) as Record<string, Uint8Array | null>[];
    for (const row of rows) if (row[column]) prefixes.push(Buffer.from(row[column]!).subarray(0, 9).toString('hex'));
  }
  return prefixes;
}

function idempotencyRecord(vault: Vault, serverId: string, key: string) {
  const now = new Date();
  return {
    server_id: serverId,
    idempotency_key: key,
    request_hash: 'h',
    status_code: 201,
    response: vault.sealJson({ id: key }, idempotencyAad(serverId, key)),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
  };
}

describe.each(ENGINES)('a retired master key on %s', (engine) => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  }, SLOW);

  it('refuses every sealed write of a node still on the retired key; the new key alone starts and reads', { timeout: SLOW }, async () => {
    const { t, tenant, headers } = await startWithTenant(engine);
    closers.push(() => t.close());
    const keyA = t.masterKey.toString('base64');
    const keyB = newMasterKey();
    await connectStatic(t.app, headers, { externalUserId: 'u_before', values: { apiKey: 'sk-proj-BEFOREretirementabcdefghij' } });
    // A form opened on node A before the rotation, completed after it.
    const created = await t.app.inject({ method: 'POST', url: '/v1/credentials/static/openai/connect', headers, payload: { externalUserId: 'u_after' } });
    expect(created.statusCode).toBe(201);
    const visit = await openHostedForm(t.app, created.json().url);

    const env = (settings: Record<string, string>) => cliEnv({ KEYWARD_DATABASE_URL: t.database.url, ...settings });
    expect(await cliJson(env({ KEYWARD_MASTER_KEY: keyB, KEYWARD_OLD_MASTER_KEYS: keyA }), ['master-key', 'rotate'])).toEqual({ resealed: 1, remaining: 0 });

    // Node A, still on A: the form's credential and an idempotency record are refused, and so is any
    // other sealed write, recognisably (what the CLI turns into its one line).
    const posted = await postHostedForm(t.app, visit, { apiKey: 'sk-proj-AFTERretirementabcdefghijk' });
    expect(posted.statusCode).toBe(500);
    const replayable = await t.app.inject({
      method: 'POST',
      url: '/v1/credentials/static/openai/connect',
      headers: { ...headers, 'idempotency-key': 'after-retirement' },
      payload: { externalUserId: 'u_other' },
    });
    expect(replayable.statusCode).toBe(500);
    expect(replayable.json().code).toBe('internal_error');
    expect(replayable.body).not.toContain(REFUSAL);
    const direct = t.ctx.store.flows.addIdempotencyRecord(idempotencyRecord(t.ctx.vault, tenant.serverId, 'direct'));
    await expect(direct).rejects.toSatisfy(isRetiredMasterKeyRefusal);
    // The operator's line: what happened and what to do.
    const refusals = t.logs.filter((line) => line.includes(REFUSAL));
    expect(refusals.length).toBeGreaterThanOrEqual(2);
    expect(refusals[0]).toContain('KEYWARD_MASTER_KEY');

    // Nothing under A; B alone starts and reads what was written before.
    const prefixes = await sealedPrefixes(t.ctx.store);
    expect(prefixes.length).toBeGreaterThan(0);
    expect(new Set(prefixes)).toEqual(new Set([prefixOf(keyB)]));
    expect(await cliJson(env({ KEYWARD_MASTER_KEY: keyB }), ['migrate'])).toEqual({ applied: [] });
    const b: SecondNode = await startSecondNode(t, { masterKey: Buffer.from(keyB, 'base64') });
    closers.push(() => b.close());
    const read = await b.app.inject({ method: 'GET', url: '/v1/end-users/u_before', headers });
    expect(read.statusCode).toBe(200);
    expect(read.json().credentials[0].values).toEqual({ apiKey: 'sk-proj-BEFOREretirementabcdefghij' });
  });

  it('asks for a retired key in KEYWARD_OLD_MASTER_KEYS while values written under it before the fix remain', { timeout: SLOW }, async () => {
    // A database as the code before migration 013 left it: A retired by a rotation, and then a value
    // sealed under A by a node still running on it.
    const database = await createTestDatabase(engine);
    closers.push(() => database.drop());
    const store = openStore(parseDatabaseUrl(database.url)!);
    const keyA = newMasterKey();
    const keyB = newMasterKey();
    const [vaultA, vaultB] = [new Vault(Buffer.from(keyA, 'base64')), new Vault(Buffer.from(keyB, 'base64'), [Buffer.from(keyA, 'base64')])];
    try {
      await migrateUpTo(store, '012-account-users');
      const ctxA = { store, vault: vaultA, clock: { now: () => new Date() }, catalog: () => undefined } as unknown as ServiceContext;
      // The account as the code of then wrote it (createAccount now writes migration 017's role), its server through the service.
      await store.db
        .insertInto('accounts')
        .values({ id: 'acct_00000000000000000000000000000013', name: 'Before 013', created_at: 't', updated_at: 't' })
        .execute();
      const { serverId } = await createServer(ctxA, {
        accountId: 'acct_00000000000000000000000000000013',
        name: 'Production',
        mode: 'business',
        actor: CLI_ACTOR,
      });
      await store.flows.addIdempotencyRecord(idempotencyRecord(vaultA, serverId, 'before-rotation'));
      await verifyMasterKeys(store, { current: Buffer.from(keyA, 'base64'), old: [] }, new Date().toISOString());
      await verifyMasterKeys(store, { current: Buffer.from(keyB, 'base64'), old: [Buffer.from(keyA, 'base64')] }, new Date().toISOString());
      // The rotation, as it ran then: everything resealed under B, then A retired.
      const before = idempotencyRecord(vaultB, serverId, 'before-rotation');
      await store.db.updateTable('idempotency_records').set({ response: before.response }).where('idempotency_key', '=', 'before-rotation').execute();
      await store.masterKeys.retireAllBut(vaultB.keyId, new Date().toISOString());
      await store.flows.addIdempotencyRecord(idempotencyRecord(vaultA, serverId, 'after-retirement'));
    } finally {
      await store.close();
    }

    const env = (settings: Record<string, string>) => cliEnv({ KEYWARD_DATABASE_URL: database.url, ...settings });
    for (const args of [['migrate', '--json'], ['serve']]) {
      const refused = await runCli(env({ KEYWARD_MASTER_KEY: keyB }), args);
      expectOneLineRefusal(refused, 'KEYWARD_OLD_MASTER_KEYS', [keyA, keyB]);
      expect(refused.stderr).toContain(keyIdOf(keyA));
    }
    // With A given again, a rotation reseals the stray value and retires A; then B alone starts.
    expect(await cliJson(env({ KEYWARD_MASTER_KEY: keyB, KEYWARD_OLD_MASTER_KEYS: keyA }), ['master-key', 'rotate'])).toEqual({ resealed: 1, remaining: 0 });
    expect(await cliJson(env({ KEYWARD_MASTER_KEY: keyB }), ['migrate'])).toEqual({ applied: [] });
  });

  it('has the refusal on every sealed column', async () => {
    const database = await createTestDatabase(engine);
    closers.push(() => database.drop());
    const store = openStore(parseDatabaseUrl(database.url)!);
    closers.push(() => store.close());
    // Every migration: each sealed column's table, and its trigger, come from one (018 made two more).
    await migrateToLatest(store);
    const triggers = (
      engine === 'postgres'
        ? await sql<{ table: string }>`select c.relname as table from pg_trigger g join pg_class c on c.oid = g.tgrelid
            where g.tgname like '%_sealed_under_live_key'`.execute(store.db)
        : await sql<{ table: string }>`select tbl_name as "table" from sqlite_master
            where type = 'trigger' and name like '%_sealed_under_live_key_insert'`.execute(store.db)
    ).rows;
    expect(new Set(triggers.map((r) => r.table))).toEqual(new Set(SEALED_COLUMNS.map((c) => c.table)));
  });
});

describe('a retirement racing a write under the key it retires (PostgreSQL)', () => {
  let t: TestApp | undefined;
  let b: SecondNode | undefined;
  afterEach(async () => {
    await b?.close();
    await t?.close();
  }, SLOW);

  // On SQLite the two cannot overlap: the write and the retirement each hold the one write lock.
  it('waits for the write, counts its value and leaves the key in use', { timeout: SLOW }, async () => {
    const started = await startWithTenant('postgres');
    t = started.t;
    const keyB = newMasterKey();
    b = await startSecondNode(t, { masterKey: Buffer.from(keyB, 'base64'), oldMasterKeys: [t.masterKey] });
    const serverId = started.tenant.serverId;

    // Node A seals a value and has not committed yet when the rotation on B comes to retire A.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => {
      written = resolve;
    });
    const write = t.ctx.store.transaction(async () => {
      await t!.ctx.store.flows.addIdempotencyRecord(idempotencyRecord(t!.ctx.vault, serverId, 'in-flight'));
      written();
      await gate;
    });
    await wrote;
    let settled = false;
    const rotation = rotateMasterKey(b.ctx).finally(() => {
      settled = true;
    });
    // Until the rotation waits on a lock (or has finished without waiting, as it did before the fix).
    for (let i = 0; i < 100 && !settled; i += 1) {
      const waiting = await sql<{ n: string }>`select count(*) as n from pg_locks where not granted`.execute(t.ctx.store.db);
      if (Number(waiting.rows[0]!.n) > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    release();
    await write;
    expect(await rotation).toEqual({ resealed: 0, remaining: 1 });
    const keys = await t.ctx.store.masterKeys.all();
    expect(keys.every((k) => k.retired_at === null)).toBe(true);

    // The next run reseals it and retires A.
    expect(await rotateMasterKey(b.ctx)).toEqual({ resealed: 1, remaining: 0 });
    expect((await t.ctx.store.masterKeys.find(keyIdOf(t.masterKey.toString('base64'))))?.retired_at).not.toBeNull();
  });
});

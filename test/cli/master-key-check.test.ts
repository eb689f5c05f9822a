/**
 * The master key checked at start-up (CONTRACT 5), through the real CLI process: the first start
 * records the key; a wrong key stops `serve` and every command with one line naming
 * KEYWARD_MASTER_KEY, and writes nothing; a database from before check values adopts only a key that
 * opens what it holds; an all-zero or hand-made key is refused before the database is touched.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { masterKeyId } from '../../src/primitives/vault.js';
import { openStore, parseDatabaseUrl, type Store } from '../../src/store/store.js';
import { cliEnv, cliJson, newMasterKey, runCli } from '../helpers/cli-process.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';
import { snapshotTables } from '../helpers/hosted-form.js';
import { expectOneLineRefusal, keyIdOf } from '../helpers/master-key.js';

const SLOW = 180_000;

describe.each(ENGINES)('the master key checked at start-up on %s', (engine) => {
  let database: TestDatabase;
  let store: Store;
  const keyA = newMasterKey();
  const keyB = newMasterKey();
  const envOf = (key: string) => cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: key, KEYWARD_PORT: '0' });
  let serverId: string;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
  });
  afterAll(async () => {
    await store?.close();
    await database.drop();
  });

  it('records the key at first start, then refuses another key: serve and every command, one line, nothing written', { timeout: SLOW }, async () => {
    const { accountId } = await cliJson(envOf(keyA), ['account', 'create', '--name', 'Acme', '--email', 'ops@acme.test']);
    ({ serverId } = (await cliJson(envOf(keyA), ['server', 'create', '--account', accountId as string, '--name', 'Production'])) as { serverId: string });
    await cliJson(envOf(keyA), ['provider', 'enable', '--server', serverId, '--provider', 'github', '--client-id', 'Iv1.a', '--client-secret', 'gh-secret-A']);
    store = openStore(parseDatabaseUrl(database.url)!);
    const recorded = await store.db.selectFrom('master_keys').select(['key_id', 'retired_at']).execute();
    expect(recorded).toEqual([{ key_id: keyIdOf(keyA), retired_at: null }]);

    const before = await snapshotTables({ store });
    const runs = await Promise.all([
      runCli(envOf(keyB), ['serve']),
      runCli(envOf(keyB), ['migrate', '--json']),
      runCli(envOf(keyB), ['account', 'create', '--name', 'Intruder', '--email', 'x@acme.test', '--json']),
      runCli(envOf(keyB), ['provider', 'enable', '--server', serverId, '--provider', 'openai', '--json']),
      runCli(envOf(keyB), ['master-key', 'rotate', '--json']),
      // An old key that is not this database's does not help either.
      runCli({ ...envOf(keyB), KEYWARD_OLD_MASTER_KEYS: newMasterKey() }, ['master-key', 'rotate']),
    ]);
    for (const run of runs) {
      expectOneLineRefusal(run, 'KEYWARD_MASTER_KEY', [keyA, keyB]);
      expect(run.stderr).toContain('is not the master key this database was sealed with');
    }
    expect(await snapshotTables({ store })).toEqual(before);
  });

  it('a database from before check values: refuses a key that opens nothing in it, adopts the one that does', { timeout: SLOW }, async () => {
    // What this version found on disk: no check value, and the client secret in the first layout
    // (version 1, no key id: the same bytes without the 8-byte key id).
    const row = await store.db.selectFrom('server_providers').select('client_secret').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    const sealed = Buffer.from(row.client_secret!);
    expect(sealed.subarray(0, 9)).toEqual(Buffer.concat([Buffer.from([2]), masterKeyId(Buffer.from(keyA, 'base64'))]));
    const firstLayout = Buffer.concat([Buffer.from([1]), sealed.subarray(9)]);
    await store.db.updateTable('server_providers').set({ client_secret: firstLayout }).where('server_id', '=', serverId).execute();
    await store.db.deleteFrom('master_keys').execute();

    const before = await snapshotTables({ store });
    const refused = await runCli(envOf(keyB), ['account', 'create', '--name', 'Intruder', '--email', 'x@acme.test', '--json']);
    expectOneLineRefusal(refused, 'KEYWARD_MASTER_KEY', [keyA, keyB]);
    expect(refused.stderr).toContain('does not open the values already sealed in this database');
    expect(await snapshotTables({ store })).toEqual(before);

    expect(await cliJson(envOf(keyA), ['migrate'])).toEqual({ applied: [] });
    expect(await store.db.selectFrom('master_keys').select(['key_id', 'retired_at']).execute()).toEqual([{ key_id: keyIdOf(keyA), retired_at: null }]);
    // The first layout still opens, and a rotation under the same key moves it to the new one.
    expect(await cliJson(envOf(keyA), ['master-key', 'rotate'])).toEqual({ resealed: 1, remaining: 0 });
    const after = await store.db.selectFrom('server_providers').select('client_secret').where('server_id', '=', serverId).executeTakeFirstOrThrow();
    expect(Buffer.from(after.client_secret!).subarray(0, 9)).toEqual(sealed.subarray(0, 9));
    expectOneLineRefusal(await runCli(envOf(keyB), ['serve']), 'KEYWARD_MASTER_KEY', [keyA, keyB]);
  });
});

describe('a master key that is not random', () => {
  const zero = Buffer.alloc(32).toString('base64');
  const twoBytes = Buffer.alloc(32, Buffer.from([0xab, 0xcd])).toString('base64');
  // 15 distinct bytes, each twice or three times: what a hand-made or badly generated key looks like.
  const fewDistinct = Buffer.from(Array.from({ length: 32 }, (_, i) => (i % 15) * 17)).toString('base64');

  it('is refused before the database is touched, with one line naming the variable', { timeout: SLOW }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-weak-key-'));
    const file = join(dir, 'keyward.db');
    const env = (settings: Record<string, string>) => cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${file}`, ...settings });
    const runs = await Promise.all([
      runCli(env({ KEYWARD_MASTER_KEY: zero }), ['serve']),
      runCli(env({ KEYWARD_MASTER_KEY: twoBytes }), ['migrate', '--json']),
      runCli(env({ KEYWARD_MASTER_KEY: fewDistinct }), ['account', 'create', '--name', 'A', '--email', 'a@a.test', '--json']),
    ]);
    for (const run of runs) {
      expectOneLineRefusal(run, 'KEYWARD_MASTER_KEY', [zero, twoBytes, fewDistinct]);
      expect(run.stderr).toContain('not a random key');
    }
    expectOneLineRefusal(await runCli(env({ KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_OLD_MASTER_KEYS: zero }), ['serve']), 'KEYWARD_OLD_MASTER_KEYS');
    expect(existsSync(file)).toBe(false);
    // A random key passes the same test (it fails it with probability about 2^-55).
    expect(await cliJson(env({ KEYWARD_MASTER_KEY: newMasterKey() }), ['migrate'])).toHaveProperty('applied');
  });
});

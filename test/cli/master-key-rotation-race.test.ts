/**
 * A write that lands while `keyward master-key rotate` reseals the same row is never overwritten
 * (the rotation's UPDATE is guarded by the bytes it read). On PostgreSQL the window can be held open
 * on purpose: another transaction rewrites the credential and keeps its row lock until the
 * rotation's UPDATE is seen waiting on it, then commits. (On SQLite every write takes the one
 * database lock, which the CLI's own start-up waits on too, so no test can place a write inside
 * that window; the same guarded UPDATE runs there.)
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vault } from '../../src/primitives/vault.js';
import { credentialAad } from '../../src/services/credentials/credentials.js';
import { cliEnv, newMasterKey, runCli } from '../helpers/cli-process.js';
import { connectStatic } from '../helpers/hosted-form.js';
import { startWithTenant, type TestApp } from '../helpers/test-app.js';

const SLOW = 180_000;

describe('a write landing during a rotation on postgres', () => {
  let t: TestApp;
  let headers: Record<string, string>;
  let client: pg.Client | undefined;
  let watcher: pg.Client | undefined;
  beforeAll(async () => {
    ({ t, headers } = await startWithTenant('postgres'));
  }, SLOW);
  afterAll(async () => {
    await client?.end();
    await watcher?.end();
    await t?.close();
  }, SLOW);

  it('keeps the newer value, counts it in remaining, and the next run reseals it', { timeout: SLOW }, async () => {
    await connectStatic(t.app, headers, { externalUserId: 'u_race', values: { apiKey: 'sk-proj-BEFOREabcdefghijklmnopqrst' } });
    const row = await t.ctx.store.db.selectFrom('credentials').selectAll().executeTakeFirstOrThrow();
    const keyA = t.masterKey.toString('base64');
    const keyB = newMasterKey();
    const env = cliEnv({ KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: keyB, KEYWARD_OLD_MASTER_KEYS: keyA });

    // The node on A rewrites the credential (as a refresh or a new connection would), and holds the row.
    const newer = t.ctx.vault.sealJson(
      { type: 'static', values: { apiKey: 'sk-proj-NEWERabcdefghijklmnopqrst' } },
      credentialAad(row.id, row.server_id, row.member_id),
    );
    client = new pg.Client(t.database.url);
    await client.connect();
    // pg_stat_activity is a snapshot for the rest of a transaction: watch from another connection.
    watcher = new pg.Client(t.database.url);
    await watcher.connect();
    await client.query('BEGIN');
    await client.query('UPDATE credentials SET secret = $1 WHERE id = $2', [newer, row.id]);

    let settled: unknown;
    const rotation = runCli(env, ['master-key', 'rotate', '--json']).then((r) => (settled = r));
    const deadline = Date.now() + 60_000;
    for (;;) {
      // The rotation's guarded UPDATE (update "credentials" set "secret" = … where "secret" = …) waits on the row lock.
      const waiting = await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'update "credentials"%'`,
      );
      if (waiting.rows[0]!.n > 0) break;
      if (settled || Date.now() > deadline) throw new Error(`the rotation never reached the credential row: ${JSON.stringify(settled)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await client.query('COMMIT');

    const first = await rotation;
    expect(first.stderr).toBe('');
    // The credential is the tenant's only sealed value: left as the other writer made it.
    expect(JSON.parse(first.stdout)).toEqual({ resealed: 0, remaining: 1 });
    const kept = await t.ctx.store.db.selectFrom('credentials').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(Buffer.from(kept.secret)).toEqual(newer);
    // Not retired: A still opens something.
    expect((await t.ctx.store.db.selectFrom('master_keys').select('retired_at').execute()).every((k) => k.retired_at === null)).toBe(true);

    const second = await runCli(env, ['master-key', 'rotate', '--json']);
    expect(JSON.parse(second.stdout)).toEqual({ resealed: 1, remaining: 0 });
    const resealed = await t.ctx.store.db.selectFrom('credentials').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    const vaultB = new Vault(Buffer.from(keyB, 'base64'));
    expect(vaultB.openJson(resealed.secret, credentialAad(row.id, row.server_id, row.member_id))).toEqual({
      type: 'static',
      values: { apiKey: 'sk-proj-NEWERabcdefghijklmnopqrst' },
    });
  });
});

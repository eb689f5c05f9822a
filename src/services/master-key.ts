/**
 * The master key checked at start-up (CONTRACT 5). Each key the data has been sealed under has a row
 * in `master_keys` with a check value sealed under it; a process starts only if the keys it was
 * given open every key still in use. A wrong KEYWARD_MASTER_KEY would otherwise start a healthy
 * service that answers 500 on every read and seals new values under a key nothing else can open.
 */
import { sql } from 'kysely';
import { ConfigError } from '../config.js';
import type { Store } from '../store/store.js';
import type { Db } from '../store/connections.js';
import { SEALED_COLUMNS } from './sealed-columns.js';
import { Vault } from './vault.js';

const CHECK_TEXT = 'keyward master key check';
const checkAad = (keyId: string) => `master_keys|${keyId}`;
const ROTATE_HINT = 'to change keys, give the previous one in KEYWARD_OLD_MASTER_KEYS and run keyward master-key rotate';

type Trx = Db;

function opens(vault: Vault, sealed: Uint8Array, associatedData: string, expected?: string): boolean {
  try {
    const plaintext = vault.open(sealed, associatedData);
    return expected === undefined || plaintext === expected;
  } catch {
    return false;
  }
}

/** Some value sealed before check values existed, with the associated data it was sealed with. */
async function anySealedValue(trx: Trx): Promise<{ sealed: Uint8Array; aad: string } | null> {
  for (const column of SEALED_COLUMNS) {
    const row = (await trx
      .selectFrom(column.table)
      .select([...column.reads, column.column] as never[])
      .where(column.column as never, 'is not', null)
      .limit(1)
      .executeTakeFirst()) as Record<string, unknown> | undefined;
    if (row) return { sealed: row[column.column] as Uint8Array, aad: column.aad(row) };
  }
  return null;
}

/** Records `vault`'s key as one the data is sealed under (again, if a rotation had retired it). */
async function recordKey(trx: Trx, vault: Vault, now: string): Promise<void> {
  const checkValue = vault.seal(CHECK_TEXT, checkAad(vault.keyId));
  const revived = await trx
    .updateTable('master_keys')
    .set({ check_value: checkValue, retired_at: null })
    .where('key_id', '=', vault.keyId)
    .executeTakeFirst();
  if (revived.numUpdatedRows === 0n) {
    await trx.insertInto('master_keys').values({ key_id: vault.keyId, check_value: checkValue, created_at: now, retired_at: null }).execute();
  }
}

/**
 * Refuses (ConfigError, one line, nothing written) unless the current key, or an old key given
 * beside it, is proven by the check values, and every key still in use was given. Records the
 * current key when it is new: that is how a rotation starts.
 */
export async function verifyMasterKeys(store: Store, keys: { current: Buffer; old: Buffer[] }, now: string): Promise<void> {
  const current = new Vault(keys.current);
  const given = new Map([current, ...keys.old.map((k) => new Vault(k))].map((v) => [v.keyId, v]));
  await store.transaction(async () => {
    const trx = store.current;
    // Two nodes starting at once on a new database must not both record a key. (SQLite: the
    // transaction already holds the write lock, see database.ts.)
    if (store.engine === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('keyward_master_keys'))`.execute(trx);
    const rows = await trx.selectFrom('master_keys').selectAll().execute();
    let active = rows.filter((r) => r.retired_at === null);
    if (active.length === 0) {
      // A new database, or one made before check values existed: adopt a key only if it opens
      // what is already sealed.
      const sample = await anySealedValue(trx);
      if (sample) {
        const opener = [...given.values()].find((v) => opens(v, sample.sealed, sample.aad));
        if (!opener) {
          throw new ConfigError('KEYWARD_MASTER_KEY', `does not open the values already sealed in this database (key id ${current.keyId}); ${ROTATE_HINT}`);
        }
        await recordKey(trx, opener, now);
        active = await trx.selectFrom('master_keys').selectAll().where('key_id', '=', opener.keyId).execute();
      }
    }
    const unproven = active.filter((r) => {
      const vault = given.get(r.key_id);
      return !vault || !opens(vault, r.check_value, checkAad(r.key_id), CHECK_TEXT);
    });
    if (active.length > 0 && unproven.length === active.length) {
      const retired = rows.find((r) => r.key_id === current.keyId && r.retired_at !== null);
      const inUse = active.map((r) => r.key_id).join(', ');
      throw new ConfigError(
        'KEYWARD_MASTER_KEY',
        retired
          ? `key id ${current.keyId} was retired by keyward master-key rotate on ${retired.retired_at}; start with the current master key (key id ${inUse})`
          : `is not the master key this database was sealed with (given key id ${current.keyId}, the database's ${inUse}); ${ROTATE_HINT}`,
      );
    }
    if (unproven.length > 0) {
      throw new ConfigError(
        'KEYWARD_OLD_MASTER_KEYS',
        `must also hold the master key with id ${unproven.map((r) => r.key_id).join(', ')}: values are still sealed under it until keyward master-key rotate reports remaining 0`,
      );
    }
    if (!active.some((r) => r.key_id === current.keyId)) await recordKey(trx, current, now);
  });
}

/** After a complete rotation: no old key starts the service any more (CONTRACT 5). */
export async function retireOldKeys(store: Store, currentKeyId: string, now: string): Promise<number> {
  const result = await store.db
    .updateTable('master_keys')
    .set({ retired_at: now })
    .where('key_id', '<>', currentKeyId)
    .where('retired_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

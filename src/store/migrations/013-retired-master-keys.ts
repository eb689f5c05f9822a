import { type Kysely, sql } from 'kysely';
import type { Engine } from '../connections.js';

/**
 * No value may be sealed under a retired master key (issue 17, item 2). A node still running on a key
 * that `keyward master-key rotate` retired went on sealing with it, and a node started with the new
 * key alone then started happily and answered 500 on those values: the start-up check reads only
 * `master_keys`, and nothing kept that table true.
 *
 * Now the database keeps it true, so the start-up check can stay a read of a few rows however large the
 * data (scanning a million sealed values at every start, or counting per key on every write, is what
 * this avoids):
 * - a trigger on every sealed column refuses a value whose key id (bytes 2–9 of the layout-2 value,
 *   see primitives/vault.ts) names a retired key. On PostgreSQL it first takes a shared advisory lock
 *   that a retirement takes exclusively, so a write and a rotation retiring its key line up: the
 *   retirement waits for the write to commit (and then counts its value), or the write waits for the
 *   retirement and is refused. On SQLite every write transaction already holds the database's one
 *   write lock.
 * - a key retired while values were still sealed under it (what the bug left behind) is brought back
 *   into use here, once: start-up then asks for it in KEYWARD_OLD_MASTER_KEYS, and the next rotation
 *   reseals those values and retires it again. This is the one full read of the sealed columns.
 *
 * The sealed columns are written out here, not read from store/sealed-columns.ts: a migration does
 * what it did when it ran. A sealed column added later adds its own trigger in its own migration.
 */
const SEALED = [
  ['credentials', 'secret'],
  ['server_providers', 'client_secret'],
  ['oauth_flows', 'verifier'],
  ['idempotency_records', 'response'],
  ['webhook_secrets', 'secret'],
] as const;

/** What a refused write says; store/store-errors.ts recognises it by this text (SQLite's trigger gives no code of its own). */
export const RETIRED_KEY_REFUSAL =
  "sealed under a retired master key: keyward master-key rotate retired this node's KEYWARD_MASTER_KEY; restart it with the current one";

export function retiredMasterKeysMigration(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') await createRefusalFunction(db);
      for (const [table, column] of SEALED) await refuseRetiredKeys(db, engine, table, column);
      await reviveKeysStillInUse(db);
    },
  };
}

async function createRefusalFunction(db: Kysely<unknown>): Promise<void> {
  // One function for every sealed column: the trigger passes the column's name.
  await sql`
    create function keyward_refuse_retired_master_key() returns trigger language plpgsql as $$
    declare
      sealed bytea;
      retired text;
    begin
      execute format('select ($1).%I', tg_argv[0]) into sealed using new;
      if sealed is null or length(sealed) < 9 or get_byte(sealed, 0) <> 2 then
        return new;
      end if;
      -- Shared with every other write, exclusive for a retirement (master-keys-repository.ts'
      -- retireAllBut): a retirement waits for the writes in flight to commit, and a write begun
      -- during one waits for it, then reads the key's row as it is now. An advisory lock lives in
      -- memory: a row lock (FOR SHARE) would write to master_keys' row on every sealed write.
      perform pg_advisory_xact_lock_shared(hashtext('keyward_key_retirement'));
      select k.retired_at into retired from master_keys k
        where k.key_id = encode(substring(sealed from 2 for 8), 'hex');
      if retired is not null then
        raise exception using errcode = 'KWR01', message = ${sql.lit(RETIRED_KEY_REFUSAL)};
      end if;
      return new;
    end
    $$`.execute(db);
}

/** Triggers named `<table>_sealed_under_live_key…`, so a test can find one per sealed column. */
export async function refuseRetiredKeys(db: Kysely<unknown>, engine: Engine, table: string, column: string): Promise<void> {
  const t = sql.raw(table);
  const c = sql.raw(column);
  if (engine === 'postgres') {
    await sql`create trigger ${sql.raw(`${table}_sealed_under_live_key`)} before insert or update of ${c} on ${t}
      for each row execute function keyward_refuse_retired_master_key(${sql.lit(column)})`.execute(db);
    return;
  }
  for (const [suffix, event] of [
    ['insert', sql`insert`],
    ['update', sql`update of ${c}`],
  ] as const) {
    await sql`create trigger ${sql.raw(`${table}_sealed_under_live_key_${suffix}`)} before ${event} on ${t}
      when new.${c} is not null and substr(new.${c}, 1, 1) = x'02'
        and exists (select 1 from master_keys where key_id = lower(hex(substr(new.${c}, 2, 8))) and retired_at is not null)
      begin select raise(abort, ${sql.lit(RETIRED_KEY_REFUSAL)}); end`.execute(db);
  }
}

async function reviveKeysStillInUse(db: Kysely<unknown>): Promise<void> {
  const retired = await sql<{ key_id: string }>`select key_id from master_keys where retired_at is not null`.execute(db);
  for (const { key_id: keyId } of retired.rows) {
    const prefix = Buffer.concat([Buffer.from([2]), Buffer.from(keyId, 'hex')]);
    for (const [table, column] of SEALED) {
      const found = await sql`select 1 from ${sql.raw(table)} where substr(${sql.raw(column)}, 1, 9) = ${prefix} limit 1`.execute(db);
      if (found.rows.length > 0) {
        await sql`update master_keys set retired_at = null where key_id = ${keyId}`.execute(db);
        break;
      }
    }
  }
}

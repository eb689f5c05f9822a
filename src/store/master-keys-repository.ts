/** The master keys the data was sealed under, and the resealing of every sealed column. */
import { type Kysely, type Selectable, sql } from 'kysely';
import { Repository } from './repository.js';
import type { MasterKeysTable } from './schema.js';
import { SEALED_COLUMNS, type SealedColumn, type SealedRow } from './sealed-columns.js';

export type MasterKeyRow = Selectable<MasterKeysTable>;

/** The sealed columns are named by the table-driven list, not by the typed schema. */
type AnyDb = Kysely<Record<string, SealedRow>>;

/** A value not sealed under the key whose sealed values start with `prefix`: another key id, or the version-1 layout with none. */
function notSealedUnder(column: SealedColumn, prefix: Buffer) {
  return sql<boolean>`${sql.ref(column.column)} is not null and substr(${sql.ref(column.column)}, 1, ${sql.lit(prefix.length)}) <> ${prefix}`;
}

export class MasterKeysRepository extends Repository {
  private get anyDb(): AnyDb {
    return this.db as unknown as AnyDb;
  }

  /**
   * Inside a transaction: makes a second start-up on another node wait for this one's commit, so two
   * nodes starting on a new database do not both record a key. (SQLite: the transaction already holds
   * the database's write lock.)
   */
  async lockAgainstOtherStarts(): Promise<void> {
    if (this.connections.engine === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('keyward_master_keys'))`.execute(this.db);
  }

  async all(): Promise<MasterKeyRow[]> {
    return this.db.selectFrom('master_keys').selectAll().execute();
  }

  async find(keyId: string): Promise<MasterKeyRow | undefined> {
    return this.db.selectFrom('master_keys').selectAll().where('key_id', '=', keyId).executeTakeFirst();
  }

  /** Records a key with its check value, or brings back a retired one with a new check value. */
  async record(keyId: string, checkValue: Uint8Array, now: string): Promise<void> {
    const revived = await this.db.updateTable('master_keys').set({ check_value: checkValue, retired_at: null }).where('key_id', '=', keyId).executeTakeFirst();
    if (revived.numUpdatedRows === 0n) {
      await this.db.insertInto('master_keys').values({ key_id: keyId, check_value: checkValue, created_at: now, retired_at: null }).execute();
    }
  }

  /** Retires every key but `keyId` that is not retired yet; how many it retired. */
  async retireAllBut(keyId: string, now: string): Promise<number> {
    // Exclusive against every sealed write's shared lock (migrations/013's trigger): the writes in
    // flight commit first, and the rest wait for this transaction, then see the retirement.
    if (this.connections.engine === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('keyward_key_retirement'))`.execute(this.db);
    const result = await this.db
      .updateTable('master_keys')
      .set({ retired_at: now })
      .where('key_id', '<>', keyId)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Some sealed value, whatever its key, with its column: where one exists, a key must open it. */
  async anySealedValue(): Promise<{ column: SealedColumn; row: SealedRow } | null> {
    for (const column of SEALED_COLUMNS) {
      const row = await this.anyDb
        .selectFrom(column.table)
        .select([...column.reads, column.column])
        .where(column.column, 'is not', null)
        .limit(1)
        .executeTakeFirst();
      if (row) return { column, row };
    }
    return null;
  }

  /**
   * The next `size` rows of `column` not sealed under `prefix`, after the row whose key is `after`, in
   * key order: walking by the key, a row that cannot be resealed is passed, not read again forever.
   */
  async notSealedUnder(column: SealedColumn, prefix: Buffer, after: unknown[] | null, size: number): Promise<SealedRow[]> {
    let query = this.anyDb
      .selectFrom(column.table)
      .select([...column.reads, column.column])
      .where(notSealedUnder(column, prefix));
    if (after) query = query.where(sql<boolean>`(${sql.join(column.key.map((k) => sql.ref(k)))}) > (${sql.join(after)})`);
    for (const k of column.key) query = query.orderBy(k);
    return query.limit(size).execute();
  }

  /**
   * Writes `next` over the row's sealed value only if it still holds the bytes that were read: a
   * write that landed meanwhile wins. Whether it wrote.
   */
  async resealIfUnchanged(column: SealedColumn, row: SealedRow, next: Buffer): Promise<boolean> {
    let update = this.anyDb
      .updateTable(column.table)
      .set({ [column.column]: next })
      .where(column.column, '=', row[column.column]);
    for (const k of column.key) update = update.where(k, '=', row[k]);
    return (await update.executeTakeFirst()).numUpdatedRows > 0n;
  }

  /** How many values, in every sealed column, are not sealed under `prefix`. */
  async countNotSealedUnder(prefix: Buffer): Promise<number> {
    let total = 0;
    for (const column of SEALED_COLUMNS) {
      const row = await this.anyDb
        .selectFrom(column.table)
        .select(sql<string | number>`count(*)`.as('n'))
        .where(notSealedUnder(column, prefix))
        .executeTakeFirstOrThrow();
      total += Number(row.n);
    }
    return total;
  }
}

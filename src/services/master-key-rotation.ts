/**
 * `keyward master-key rotate` (CONTRACT 4, 5): reseals every sealed value that is not yet under the
 * current master key, in bounded batches, while the service keeps running on the same database.
 *
 * There is no rotation state to lose: what is left to do is read from the values themselves (their
 * key id), so a run that crashed is simply run again. Each row is rewritten only if it still holds
 * the bytes that were read (a guarded UPDATE): a refresh or revoke that lands meanwhile wins, and the
 * value it wrote is counted in `remaining` if it is not under the current key.
 */
import { sql, type Kysely } from 'kysely';
import type { ServiceContext } from './context.js';
import { retireOldKeys } from './master-key.js';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.js';
import { ServiceError } from './service-error.js';

export const DEFAULT_ROTATION_BATCH = 500;

export interface RotationOptions {
  batchSize?: number;
  /** Stop after this many batches (a rotation in steps); the next run goes on from there. */
  maxBatches?: number;
}

export interface RotationResult {
  resealed: number;
  remaining: number;
}

// The columns are named by the table-driven list, not by the typed schema.
type Row = Record<string, unknown>;
type AnyDb = Kysely<Record<string, Row>>;

/** A value not sealed under the current key: another key id, or the version-1 layout with none. */
function stale(column: SealedColumn, prefix: Buffer) {
  return sql<boolean>`${sql.ref(column.column)} is not null and substr(${sql.ref(column.column)}, 1, ${sql.lit(prefix.length)}) <> ${prefix}`;
}

async function nextBatch(db: AnyDb, column: SealedColumn, prefix: Buffer, after: unknown[] | null, size: number): Promise<Row[]> {
  let query = db
    .selectFrom(column.table)
    .select([...column.reads, column.column])
    .where(stale(column, prefix));
  // Walk the table by its key, so a row that cannot be resealed is passed, not read again forever.
  if (after) query = query.where(sql<boolean>`(${sql.join(column.key.map((k) => sql.ref(k)))}) > (${sql.join(after)})`);
  for (const k of column.key) query = query.orderBy(k);
  return query.limit(size).execute();
}

async function resealBatch(ctx: ServiceContext, db: AnyDb, column: SealedColumn, rows: Row[]): Promise<number> {
  const updates: { row: Row; next: Buffer }[] = [];
  for (const row of rows) {
    const aad = column.aad(row);
    try {
      updates.push({ row, next: ctx.vault.seal(ctx.vault.open(row[column.column] as Uint8Array, aad), aad) });
    } catch {
      // Sealed under a key this process was not given: left for a run that has it (counted in remaining).
    }
  }
  if (updates.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    let changed = 0;
    for (const { row, next } of updates) {
      let update = trx
        .updateTable(column.table)
        .set({ [column.column]: next })
        .where(column.column, '=', row[column.column]);
      for (const k of column.key) update = update.where(k, '=', row[k]);
      changed += Number((await update.executeTakeFirst()).numUpdatedRows);
    }
    return changed;
  });
}

async function countStale(db: AnyDb, prefix: Buffer): Promise<number> {
  let total = 0;
  for (const column of SEALED_COLUMNS) {
    const row = await db.selectFrom(column.table).select(sql<string | number>`count(*)`.as('n')).where(stale(column, prefix)).executeTakeFirstOrThrow();
    total += Number(row.n);
  }
  return total;
}

function wholeNumber(value: number | undefined, name: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ServiceError('invalid', `${name} must be a whole number of at least 1`);
  return value;
}

export async function rotateMasterKey(ctx: ServiceContext, options: RotationOptions = {}): Promise<RotationResult> {
  const batchSize = wholeNumber(options.batchSize, '--batch-size', DEFAULT_ROTATION_BATCH)!;
  const maxBatches = wholeNumber(options.maxBatches, '--max-batches', undefined);
  const db = ctx.store.db as unknown as AnyDb;
  const prefix = ctx.vault.currentPrefix;
  let resealed = 0;
  let batches = 0;
  columns: for (const column of SEALED_COLUMNS) {
    let after: unknown[] | null = null;
    for (;;) {
      if (maxBatches !== undefined && batches >= maxBatches) break columns;
      const rows = await nextBatch(db, column, prefix, after, batchSize);
      if (rows.length === 0) break;
      batches += 1;
      resealed += await resealBatch(ctx, db, column, rows);
      const last = rows[rows.length - 1]!;
      after = column.key.map((k) => last[k]);
      if (rows.length < batchSize) break;
    }
  }
  const remaining = await countStale(db, prefix);
  // Nothing is left under an old key: from now on only the current key starts the service, and
  // KEYWARD_OLD_MASTER_KEYS can be dropped.
  if (remaining === 0) await retireOldKeys(ctx.store, ctx.vault.keyId, ctx.clock.now().toISOString());
  return { resealed, remaining };
}

/**
 * `keyward master-key rotate` (CONTRACT 4, 5): reseals every sealed value that is not yet under the
 * current master key, in bounded batches, while the service keeps running on the same database.
 *
 * There is no rotation state to lose: what is left to do is read from the values themselves (their
 * key id), so a run that crashed is simply run again. Each row is rewritten only if it still holds
 * the bytes that were read (a guarded UPDATE): a refresh or revoke that lands meanwhile wins, and the
 * value it wrote is counted in `remaining` if it is not under the current key.
 */
import { SEALED_COLUMNS, type SealedColumn, type SealedRow } from '../../store/sealed-columns.js';
import type { ServiceContext } from '../context.js';
import { invalid } from '../domain-error.js';
import { sealedValueAad } from './sealed-value-aad.js';

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

/** Reseals one batch in one transaction: on SQLite, requests interleave between batches. */
async function resealBatch(ctx: ServiceContext, column: SealedColumn, rows: SealedRow[]): Promise<number> {
  const updates: { row: SealedRow; next: Buffer }[] = [];
  for (const row of rows) {
    const aad = sealedValueAad(column, row);
    try {
      updates.push({ row, next: ctx.vault.seal(ctx.vault.open(row[column.column] as Uint8Array, aad), aad) });
    } catch {
      // Sealed under a key this process was not given: left for a run that has it (counted in remaining).
    }
  }
  if (updates.length === 0) return 0;
  return ctx.store.transaction(async () => {
    let changed = 0;
    for (const { row, next } of updates) {
      if (await ctx.store.masterKeys.resealIfUnchanged(column, row, next)) changed += 1;
    }
    return changed;
  });
}

function wholeNumber(value: number | undefined, field: 'batchSize' | 'maxBatches', option: string, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw invalid(field, `${option} must be a whole number of at least 1`);
  return value;
}

export async function rotateMasterKey(ctx: ServiceContext, options: RotationOptions = {}): Promise<RotationResult> {
  const batchSize = wholeNumber(options.batchSize, 'batchSize', '--batch-size', DEFAULT_ROTATION_BATCH)!;
  const maxBatches = wholeNumber(options.maxBatches, 'maxBatches', '--max-batches', undefined);
  const prefix = ctx.vault.currentPrefix;
  let resealed = 0;
  let batches = 0;
  columns: for (const column of SEALED_COLUMNS) {
    let after: unknown[] | null = null;
    for (;;) {
      if (maxBatches !== undefined && batches >= maxBatches) break columns;
      const rows = await ctx.store.masterKeys.notSealedUnder(column, prefix, after, batchSize);
      if (rows.length === 0) break;
      batches += 1;
      resealed += await resealBatch(ctx, column, rows);
      const last = rows[rows.length - 1]!;
      after = column.key.map((k) => last[k]);
      if (rows.length < batchSize) break;
    }
  }
  const remaining = await ctx.store.masterKeys.countNotSealedUnder(prefix);
  if (remaining > 0) return { resealed, remaining };
  return { resealed, remaining: await retireOldKeys(ctx, prefix) };
}

/** Rolls back the retirement: a value was sealed under an old key since the count. */
class StillInUse extends Error {
  constructor(readonly remaining: number) {
    super('values are still sealed under an old master key');
  }
}

/**
 * Nothing is left under an old key: from now on only the current key starts the service, and
 * KEYWARD_OLD_MASTER_KEYS can be dropped. A node still running on an old key may have sealed a value
 * since the count, so the keys are retired first and counted again in the same transaction: from the
 * retirement on, the database refuses every value under them (migrations/013's trigger; on
 * PostgreSQL a write in flight holds a shared advisory lock that the retirement takes exclusively,
 * so the retirement waits for its commit and the second count sees it), and what was written before
 * is in the count. Anything found rolls the retirement back and is left for the next run. How many
 * values remain: 0 once retired.
 *
 * The second count holds that lock (PostgreSQL) or the write lock (SQLite) while it reads the sealed
 * columns: writes wait that long, once, at the end of a rotation.
 */
async function retireOldKeys(ctx: ServiceContext, prefix: Buffer): Promise<number> {
  try {
    await ctx.store.transaction(async () => {
      await ctx.store.masterKeys.retireAllBut(ctx.vault.keyId, ctx.clock.now().toISOString());
      const left = await ctx.store.masterKeys.countNotSealedUnder(prefix);
      if (left > 0) throw new StillInUse(left);
    });
    return 0;
  } catch (error) {
    if (error instanceof StillInUse) return error.remaining;
    throw error;
  }
}

/**
 * Idempotency-Key on the POST routes: the first successful response is kept for 24 hours (sealed: it
 * can hold a single-use URL) and replayed for the same key and body; another body is refused.
 * Refused requests leave no record, so a corrected retry may reuse its key. Records past their 24
 * hours are deleted by the sweeps (sweeps.ts).
 */
import { createHash } from 'node:crypto';
import { addSeconds, iso } from '../../primitives/clock.js';
import { isUniqueViolation } from '../../store/store-errors.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../domain-error.js';

const KEEP_SECONDS = 24 * 3600;

export interface IdempotentResult {
  statusCode: number;
  body: unknown;
  replayed: boolean;
}

/** Object keys sorted at every depth, so the same JSON body hashes the same whatever its key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function requestHash(route: string, body: unknown): string {
  return createHash('sha256')
    .update(route)
    .update('\n')
    .update(JSON.stringify(canonical(body) ?? null))
    .digest('hex');
}

export function aad(serverId: string, key: string): string {
  return `idempotency_records|${serverId}|${key}`;
}

async function findLive(ctx: ServiceContext, serverId: string, key: string, hash: string): Promise<IdempotentResult | null> {
  const row = await ctx.store.flows.liveIdempotencyRecord(serverId, key, iso(ctx.clock.now()));
  if (!row) return null;
  if (row.request_hash !== hash) {
    throw new DomainError('idempotency_key_reused', {
      detail: 'This Idempotency-Key was already used with another request in the last 24 hours. Use a new key for a new request.',
    });
  }
  return { statusCode: row.status_code, body: ctx.vault.openJson(row.response, aad(serverId, key)), replayed: true };
}

export async function runIdempotent(
  ctx: ServiceContext,
  input: { serverId: string; key: string; hash: string },
  operation: () => Promise<{ statusCode: number; body: unknown }>,
): Promise<IdempotentResult> {
  const earlier = await findLive(ctx, input.serverId, input.key, input.hash);
  if (earlier) return earlier;
  try {
    return await ctx.store.transaction(async () => {
      const nowDate = ctx.clock.now();
      // An expired record of the same key gives way to the new request.
      await ctx.store.flows.deleteExpiredIdempotencyRecord(input.serverId, input.key, iso(nowDate));
      const result = await operation();
      // Inserted last, inside the same transaction: a concurrent twin blocks on the key and then fails
      // on it, and replays this response instead of creating a second resource.
      await ctx.store.flows.addIdempotencyRecord({
        server_id: input.serverId,
        idempotency_key: input.key,
        request_hash: input.hash,
        status_code: result.statusCode,
        response: ctx.vault.sealJson(result.body, aad(input.serverId, input.key)),
        created_at: iso(nowDate),
        expires_at: iso(addSeconds(nowDate, KEEP_SECONDS)),
      });
      return { ...result, replayed: false };
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const twin = await findLive(ctx, input.serverId, input.key, input.hash);
    if (!twin) throw error;
    return twin;
  }
}

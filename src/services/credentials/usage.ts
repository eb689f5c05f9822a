/**
 * When a credential was last used (CONTRACT 8.4): a read that hands out its secrets, or a proxied call
 * made with it. A check of its values is not a use. Written at most once a minute per credential, by
 * a guarded UPDATE (never read-modify-write), so readers and calls on every node agree without
 * coordinating; and not even that UPDATE where the row just read already shows a use within the
 * minute, so the member read (the hot path, bench/end-user-read.ts) adds no statement to most reads.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import type { CredentialRow } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';

/** How stale lastUsedAt may be: one write a minute per credential at most. */
export const USE_RESOLUTION_SECONDS = 60;

/**
 * Records a use of the credential now, unless the row as the caller read it shows one within the
 * minute; answers the lastUsedAt to show for the use just made: the row's own where it was recent
 * enough to write nothing, else now, or the latest time of the uses recorded in the same turn
 * (CredentialsRepository.recordUse), written by this call or by another within the same minute that
 * the guard let through first. The read and the proxy call it with the row they used.
 */
export async function noteUse(ctx: ServiceContext, row: Pick<CredentialRow, 'id' | 'last_used_at'>): Promise<string> {
  const now = ctx.clock.now();
  const threshold = iso(addSeconds(now, -USE_RESOLUTION_SECONDS));
  if (row.last_used_at !== null && row.last_used_at > threshold) return row.last_used_at;
  return ctx.store.credentials.recordUse(row.id, iso(now), threshold);
}

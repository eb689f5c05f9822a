/** The management guard's writes: when a key was last used, and where a key was sent from a browser. */
import { iso } from '../../primitives/clock.js';
import type { AccountKeyLookup } from '../../store/auth-lookups.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';

const TOUCH_INTERVAL_MS = 60_000;

/**
 * Records that the key was used, at most once a minute per key and node: a guarded UPDATE (several
 * nodes may race; the condition lets one through). The cached row remembers the time, so the next
 * request within the minute writes nothing.
 */
export async function touchAccountKey(ctx: ServiceContext, key: AccountKeyLookup, now: Date): Promise<void> {
  const threshold = iso(new Date(now.getTime() - TOUCH_INTERVAL_MS));
  if (key.last_used_at !== null && key.last_used_at > threshold) return;
  key.last_used_at = iso(now);
  await ctx.store.authLookups.touch(key.id, key.last_used_at, threshold);
}

/** A live account key was sent from a browser: remember where, for the dashboard's warning. */
export async function recordBrowserExposure(ctx: ServiceContext, digest: string, origin: string, now: Date): Promise<void> {
  const key = await ctx.store.authLookups.accountKeyByDigest(digest);
  const at = iso(now);
  // Only a live key: a revoked or expired one no longer opens anything, so it warrants no warning.
  if (!key || key.revoked_at || (key.expires_at && key.expires_at <= at)) return;
  const threshold = iso(new Date(now.getTime() - TOUCH_INTERVAL_MS));
  await ctx.store.transaction(async () => {
    if (!(await ctx.store.authLookups.recordExposure(key.id, origin, at, threshold))) return;
    await recordAudit(ctx, {
      accountId: key.account_id,
      actor: 'browser',
      action: 'account_key.browser_exposure',
      targetId: key.id,
      detail: { origin, hint: key.hint },
      at,
    });
  });
}

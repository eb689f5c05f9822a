/**
 * The kinds of link an end user may leave unfinished, each with how the expiry notices find its expired
 * rows and mark one (store/expiry-notices-repository.ts). A kind is added with one entry here, its
 * two repository methods, and a partial index on (expires_at, id) of its unnotified pending rows.
 */

import type { ExpiredRow } from '../../store/expiry-notices-repository.js';
import type { DuePosition } from '../../store/jobs-repository.js';
import type { ServiceContext } from '../context.js';

export interface ExpiringKind {
  /** Its table: the key of the run's report, and the end of its job's name in job_leases. */
  name: string;
  /** The field of `connect.failed` that names the row (CONTRACT 7: `sessionId` instead of `flowId` for a hosted form). */
  idField: 'flowId' | 'sessionId';
  /** The unnotified pending rows that expired in (`floor`, `cutoff`], oldest expiry first, after `after`. */
  expired(ctx: ServiceContext, floor: string, cutoff: string, after: DuePosition | null, limit: number): Promise<ExpiredRow[]>;
  /**
   * Marks one as notified with a guarded UPDATE (only if still pending, unnotified and expired at
   * `now`), so no flow or form can finish afterwards; false where it left that state first.
   */
  mark(ctx: ServiceContext, id: string, now: string): Promise<boolean>;
}

export const OAUTH_FLOWS: ExpiringKind = {
  name: 'oauth_flows',
  idField: 'flowId',
  expired: (ctx, floor, cutoff, after, limit) => ctx.store.expiryNotices.expiredFlows(floor, cutoff, after, limit),
  // The flow ends `failed`: its callback's claim (status = 'pending') refuses it from then on.
  mark: (ctx, id, now) => ctx.store.expiryNotices.expireFlow(id, now),
};

export const STATIC_FORM_SESSIONS: ExpiringKind = {
  name: 'static_form_sessions',
  idField: 'sessionId',
  expired: (ctx, floor, cutoff, after, limit) => ctx.store.expiryNotices.expiredForms(floor, cutoff, after, limit),
  // The form ends `expired`: its use (status = 'pending', store/flows-repository.ts) refuses it from then on.
  mark: (ctx, id, now) => ctx.store.expiryNotices.expireForm(id, now),
};

/**
 * A connect session (`csn_…`) through which nobody connected anything (CONTRACT 10). Its notice names
 * no provider: the session offered several. A flow started from its page is a flow as any other, with
 * its own notice when nobody came back from the provider.
 */
export const CONNECT_SESSIONS: ExpiringKind = {
  name: 'connect_sessions',
  idField: 'sessionId',
  expired: (ctx, floor, cutoff, after, limit) => ctx.store.expiryNotices.expiredSessions(floor, cutoff, after, limit),
  mark: (ctx, id, now) => ctx.store.expiryNotices.markSessionNotified(id, now),
};

/** What `keyward serve` notifies. */
export const EXPIRING_KINDS: readonly ExpiringKind[] = [OAUTH_FLOWS, STATIC_FORM_SESSIONS, CONNECT_SESSIONS];

/**
 * Refresh on read (CONTRACT 2.6): an access token that expires within `minValiditySeconds` is
 * refreshed first, once, however many readers on however many nodes ask at the same moment.
 *
 * The right to refresh is a lease in the credential's row, taken by a guarded UPDATE: the database,
 * not a process, decides who holds it, so it holds across Keyward nodes sharing PostgreSQL. The
 * holder calls the provider outside any transaction (a slow provider must not hold a write lock);
 * the others wait for the lease to be released and take the holder's result.
 *
 * The cooldown (KEYWARD_REFRESH_COOLDOWN_SECONDS): after an attempt ends, successful or not, no
 * other attempt is made on that credential for that long, whatever `minValiditySeconds` readers ask.
 * A provider whose tokens live shorter than what callers ask would otherwise be asked on every read,
 * and an outage would be hammered by every reader, so a failed attempt starts the cooldown too.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { addSeconds, iso } from '../../primitives/clock.js';
import type { RefreshOutcome } from '../../store/credentials-repository.js';
import type { CredentialRow } from '../../store/schema.js';
import type { ServiceContext } from '../context.js';
import { type CredentialSecret, credentialAad, openCredentialSecret } from '../credentials/credentials.js';
import { type RefreshOutcome as ObservedOutcome, observedProvider } from '../observer.js';
import { eventCredential, recordEvent, type WebhookEvent } from '../webhooks/webhook-events.js';
import { oauthClientSettings } from './client-settings.js';
import { ProviderCallError, refreshTokens } from './oauth-client.js';

/** A refresh this read attempted (or waited on) that did not happen: shown beside the stored tokens. */
export interface RefreshFailure {
  code: 'refresh_failed';
  message: string;
  retryable: true;
}

export interface ReadCredential {
  row: CredentialRow;
  failure: RefreshFailure | null;
}

const WAIT_STEP_MS = 25;
/** Beyond the provider's timeout, the time the holder may need to write the result back. */
const LEASE_MARGIN_SECONDS = 5;

function isDue(row: CredentialRow, now: Date, minValiditySeconds: number): boolean {
  return (
    row.type === 'oauth2' && row.status === 'active' && row.access_expires_at !== null && row.access_expires_at <= iso(addSeconds(now, minValiditySeconds))
  );
}

function readRow(ctx: ServiceContext, id: string): Promise<CredentialRow | undefined> {
  return ctx.store.credentials.credential(id);
}

/** The moment before which the last attempt must have ended for a new one to be made. */
function cooldownStart(ctx: ServiceContext, now: Date): string {
  return iso(addSeconds(now, -ctx.refreshCooldownSeconds));
}

/**
 * Whether the last attempt is this read's answer: it ended after the read began (one read causes at
 * most one refresh even with a cooldown of 0), or within the cooldown.
 */
function attemptStands(ctx: ServiceContext, row: CredentialRow, since: string): boolean {
  const ended = row.refresh_attempted_at;
  return ended !== null && (ended >= since || ended > cooldownStart(ctx, ctx.clock.now()));
}

/**
 * Takes the lease unless another reader holds a live one, or the last attempt stands (see above).
 * The same test as attemptStands, made again by the database in the UPDATE itself, so that readers on
 * other nodes, or one that read the row before an attempt ended, cannot start a second one. When
 * taken, the holder's id and the row as the UPDATE left it (lease included); null otherwise.
 */
async function takeLease(ctx: ServiceContext, row: CredentialRow, since: string): Promise<{ holder: string; row: CredentialRow } | null> {
  const now = ctx.clock.now();
  const holder = randomUUID();
  const leaseSeconds = Math.ceil(ctx.providerTimeoutMs / 1000) + LEASE_MARGIN_SECONDS;
  const leased = await ctx.store.credentials.takeRefreshLease(row.id, {
    holder,
    until: iso(addSeconds(now, leaseSeconds)),
    now: iso(now),
    since,
    cooldownStart: cooldownStart(ctx, now),
  });
  return leased ? { holder, row: leased } : null;
}

/** Waits until the lease is released or runs out; the row as it then is, or undefined if it was revoked. */
async function awaitLease(ctx: ServiceContext, id: string): Promise<CredentialRow | undefined> {
  for (;;) {
    await sleep(WAIT_STEP_MS);
    const row = await readRow(ctx, id);
    if (!row || row.refresh_lease_holder === null || (row.refresh_lease_until ?? '') <= iso(ctx.clock.now())) return row;
  }
}

/** What the holder's attempt came to (the row holds the rest). */
export type RefreshResult = 'refreshed' | 'no_refresh_token' | 'not_enabled' | 'rejected' | 'failed';

/**
 * The holder's refresh. Every write is fenced by the holder id: a holder whose lease ran out writes
 * nothing. The outcome and its event (CONTRACT 7) are written in one transaction: `needs_reauth` on a
 * refusal, `refresh_failed` on the first outage in a row, `recovered` on the success that ends one.
 */
async function refreshHeld(ctx: ServiceContext, row: CredentialRow, holder: string): Promise<{ result: RefreshResult; failure: RefreshFailure | null }> {
  const end = (outcome: RefreshOutcome = {}, event?: Omit<WebhookEvent, 'serverId' | 'at'>) =>
    ctx.store.transaction(async () => {
      const at = outcome.refresh_attempted_at ?? iso(ctx.clock.now());
      if ((await ctx.store.credentials.endRefresh(row.id, holder, outcome)) && event) await recordEvent(ctx, { ...event, serverId: row.server_id, at });
    });
  let secret: CredentialSecret;
  try {
    secret = openCredentialSecret(ctx, row);
  } catch (error) {
    // Released and stamped all the same: an unreadable secret must not hold the lease, nor be picked again at once.
    await end({ refresh_attempted_at: iso(ctx.clock.now()) });
    throw error;
  }
  const settings = await oauthClientSettings(ctx, row.server_id, row.provider);
  if (secret.type !== 'oauth2' || !secret.refreshToken) {
    // Stamped, so that the background refresh does not pick the credential again until its next turn.
    await end({ refresh_attempted_at: iso(ctx.clock.now()) });
    return { result: 'no_refresh_token', failure: null };
  }
  if (!settings) {
    // Stamped like any attempt: the background refresh does not pick it again at once, run after run.
    await end({ refresh_attempted_at: iso(ctx.clock.now()) });
    return {
      result: 'not_enabled',
      failure: { code: 'refresh_failed', message: `${row.provider} is no longer enabled on this server, so its token cannot be refreshed.`, retryable: true },
    };
  }
  const member = { externalUserId: row.external_user_id };
  const now = ctx.clock.now();
  try {
    const tokens = await refreshTokens(settings, secret.refreshToken, now);
    // Stamped once the provider answered: every reader that began before this takes this outcome.
    const ended = iso(ctx.clock.now());
    // A provider that does not rotate refresh tokens answers without one: the old one stays good.
    const next = { ...secret, accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? secret.refreshToken, tokenType: tokens.tokenType };
    const recovered = row.error_code === 'refresh_failed';
    await end(
      {
        secret: ctx.vault.sealJson(next, credentialAad(row.id, row.server_id, row.member_id)),
        access_expires_at: tokens.expiresAt,
        ...(tokens.scopes ? { scopes: JSON.stringify(tokens.scopes) } : {}),
        refreshed_at: ended,
        refresh_attempted_at: ended,
        updated_at: ended,
        error_code: null,
        error_message: null,
      },
      recovered ? { type: 'credential.recovered', data: { ...member, credential: eventCredential({ ...row, updated_at: ended }) } } : undefined,
    );
    return { result: 'refreshed', failure: null };
  } catch (error) {
    if (!(error instanceof ProviderCallError)) {
      // The provider may have been asked already: the cooldown starts all the same.
      await end({ refresh_attempted_at: iso(ctx.clock.now()) });
      throw error;
    }
    const ended = iso(ctx.clock.now());
    if (error.kind === 'rejected' && error.error === 'invalid_grant') {
      const message = `${settings.provider.name} refused the refresh token (invalid_grant): the end user must connect again.`;
      await end(
        { refresh_attempted_at: ended, status: 'needs_reauth', error_code: 'refresh_rejected', error_message: message, updated_at: ended },
        {
          type: 'credential.needs_reauth',
          data: { ...member, credential: eventCredential({ ...row, status: 'needs_reauth', updated_at: ended }), error: { code: 'refresh_rejected', message } },
        },
      );
      return { result: 'rejected', failure: null };
    }
    // An outage (or a refusal that is not about the grant): the stored tokens stay as they were.
    const message = `Refreshing at ${settings.provider.name} failed: ${error.message}. The stored token is unchanged; try again later.`;
    const failure: RefreshFailure = { code: 'refresh_failed', message, retryable: true };
    const firstInARow = row.error_code !== 'refresh_failed';
    await end(
      { refresh_attempted_at: ended, error_code: 'refresh_failed', error_message: message },
      firstInARow ? { type: 'credential.refresh_failed', data: { ...member, credential: eventCredential(row), error: failure } } : undefined,
    );
    return { result: 'failed', failure };
  }
}

/** One refresh outcome, told to the observer. */
function observeRefresh(ctx: ServiceContext, provider: string, outcome: ObservedOutcome): void {
  ctx.observer?.tokenRefresh(observedProvider(ctx.catalog, provider), outcome);
}

/** refreshHeld, its outcome told to the observer; an exception is Keyward's own failure, `error`. */
async function refreshCounted(ctx: ServiceContext, row: CredentialRow, holder: string): ReturnType<typeof refreshHeld> {
  try {
    const outcome = await refreshHeld(ctx, row, holder);
    observeRefresh(ctx, row.provider, outcome.result);
    return outcome;
  } catch (error) {
    observeRefresh(ctx, row.provider, 'error');
    throw error;
  }
}

function hasRefreshToken(ctx: ServiceContext, row: CredentialRow): boolean {
  const secret = openCredentialSecret(ctx, row);
  return secret.type === 'oauth2' && secret.refreshToken !== null;
}

function storedFailure(row: CredentialRow): RefreshFailure | null {
  return row.error_code === 'refresh_failed' ? { code: 'refresh_failed', message: row.error_message ?? 'The last refresh failed.', retryable: true } : null;
}

/**
 * The credential as a reader should see it: refreshed first where due, unless an attempt stands, in
 * which case it is served as it is (its expiresAt may then be sooner than `minValiditySeconds`).
 * Undefined when it was revoked while this read waited. `since` is when the read began: a refresh
 * attempt that ended after it, made by any reader on any node, is this read's answer too.
 */
export function readFresh(ctx: ServiceContext, row: CredentialRow, minValiditySeconds: number, since: string): Promise<ReadCredential | undefined> {
  return refreshWhere(ctx, row, since, (current) => isDue(current, ctx.clock.now(), minValiditySeconds));
}

/**
 * The credential after the provider refused its access token (a proxied call answered 401, CONTRACT
 * 8.1): refreshed whatever its expiry says, under the same single flight and cooldown as a read, where
 * `since` is when the refusal arrived (an attempt that ended after it, on any node, is its answer).
 */
export function readRefreshedAfterRefusal(ctx: ServiceContext, row: CredentialRow, since: string): Promise<ReadCredential | undefined> {
  return refreshWhere(ctx, row, since, (current) => current.type === 'oauth2' && current.status === 'active');
}

async function refreshWhere(ctx: ServiceContext, row: CredentialRow, since: string, due: (row: CredentialRow) => boolean): Promise<ReadCredential | undefined> {
  let current: CredentialRow | undefined = row;
  for (let attempt = 0; attempt < 3 && current; attempt++) {
    if (!due(current)) return { row: current, failure: null };
    // Without a refresh token (GitHub's, say) there is nothing to do but serve what is stored.
    if (!hasRefreshToken(ctx, current)) return { row: current, failure: null };
    if (attemptStands(ctx, current, since)) {
      // An attempt that ended after this read began is its answer; an earlier one is the cooldown at work.
      if (current.refresh_attempted_at! < since) observeRefresh(ctx, current.provider, 'skipped_cooldown');
      return { row: current, failure: storedFailure(current) };
    }
    const lease = await takeLease(ctx, current, since);
    if (lease) {
      // The row as the lease found it, not `current`: that may be a read kept from before another
      // node's refresh (reads-until-change.ts), whose refresh token the provider has rotated away. A
      // row refreshed since (its secret changed) or no longer due is the answer, and nothing is asked.
      if (!due(lease.row) || Buffer.compare(lease.row.secret, current.secret) !== 0) {
        await ctx.store.credentials.endRefresh(current.id, lease.holder, {});
        const after = await readRow(ctx, current.id);
        return after && { row: after, failure: storedFailure(after) };
      }
      const { failure } = await refreshCounted(ctx, lease.row, lease.holder);
      const after = await readRow(ctx, current.id);
      return after && { row: after, failure };
    }
    current = await awaitLease(ctx, current.id);
  }
  return current && { row: current, failure: storedFailure(current) };
}

/**
 * One credential's turn in the background refresh (CONTRACT 5): refreshed now unless a reader or
 * another node holds its lease, or an attempt was made after `cutoff` (the run's: it is no longer
 * due) or within the cooldown (then `busy`). The same lease as reads, so the background and
 * readers never refresh one credential twice.
 */
export async function refreshInBackground(ctx: ServiceContext, row: CredentialRow, cutoff: string): Promise<RefreshResult | 'busy'> {
  if (row.type !== 'oauth2' || row.status !== 'active') return 'busy';
  // Due means last attempted at or before the cutoff; the lease wants attempts before `since`: one
  // millisecond later (times are stored to the millisecond).
  const lease = await takeLease(ctx, row, iso(addSeconds(new Date(cutoff), 0.001)));
  if (!lease) return 'busy';
  // Refreshed from the row as the lease's UPDATE returned it, not as the batch read it earlier: a
  // reader may have refreshed since (a rotated refresh token; a streak of failures ended or begun).
  return (await refreshCounted(ctx, lease.row, lease.holder)).result;
}

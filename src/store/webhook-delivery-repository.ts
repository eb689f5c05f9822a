/**
 * The outbox's delivery protocol (CONTRACT 7): which endpoints have something due, the claim, the
 * endpoint's URL and secrets, and the outcomes. A message is delivered by the node holding a live
 * lease on it, and every write a delivery makes is fenced by that lease.
 */
import { type CompiledQuery, type ExpressionBuilder, type Insertable, sql, type Updateable } from 'kysely';
import type { Connections } from './connections.js';
import { compiledOnce, preparedQuery, statementName } from './prepared.js';
import { Repository } from './repository.js';
import type { Database, WebhookAttemptsTable, WebhookMessagesTable } from './schema.js';

/** The columns a delivery attempt may change on its message (the retry rules decide which, and to what). */
export type MessageOutcomeColumns = Pick<Updateable<WebhookMessagesTable>, 'status' | 'failures' | 'next_attempt_at' | 'ended_at'>;

/** An endpoint with something due, and the account its server belongs to (what the dispatcher's fair shares go by). */
export interface DueEndpoint {
  id: string;
  accountId: string;
}

/** A message leased to this node (claim's rows). */
export interface ClaimedMessage {
  id: string;
  endpoint_id: string;
  event_type: string;
  payload: string;
  schedule_start: string;
  failures: number;
  /** When this node's lease runs out: what a give-back is fenced by, besides the holder. */
  lease_until: string;
}

/** An endpoint's URL with one of its live secrets (none: `secret_id` null), as the dispatcher reads them together. */
export interface DeliveryTargetRow {
  url: string;
  secret_id: string | null;
  secret: Uint8Array | null;
}

/** An attempt's outcome as written: the message's next state and the attempt's row. */
export interface MessageOutcome {
  messageId: string;
  settlement: MessageOutcomeColumns;
  attempt: Omit<Insertable<WebhookAttemptsTable>, 'message_id'>;
}

/**
 * PostgreSQL: a batch of outcomes in one statement, where settling each alone and inserting its attempt
 * were two round trips an outcome, between a BEGIN and a COMMIT. The outcomes arrive as one array a
 * column (one text whatever the batch's size: one prepared statement); a column the settlement leaves
 * out is null in its array, and kept. The UPDATE is fenced by the lease, and only the messages it
 * settled get their attempt; one statement is one transaction. A settlement always gives `status`;
 * a column it leaves out is kept (the retry rules never set one to null). (As one JSON document
 * instead of arrays, planned for 100 rows whatever the batch, it ran 4 to 5 times slower:
 * bench/RESULTS.md.)
 */
const SETTLE_ALL_POSTGRES = `
with outcome as (
  select * from unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[], $10::int[])
    as o(message_id, status, failures, next_attempt_at, ended_at, attempt_id, attempted_at, status_code, error, duration_ms)
), settled as (
  update webhook_messages m
     set status = o.status,
         failures = coalesce(o.failures, m.failures),
         next_attempt_at = coalesce(o.next_attempt_at, m.next_attempt_at),
         ended_at = coalesce(o.ended_at, m.ended_at),
         lease_holder = null,
         lease_until = null
    from outcome o
   where m.id = o.message_id and m.lease_holder = $11
  returning m.id
), attempted as (
  insert into webhook_attempts (id, message_id, attempted_at, status_code, error, duration_ms)
  select o.attempt_id, o.message_id, o.attempted_at, o.status_code, o.error, o.duration_ms
    from outcome o join settled s on s.id = o.message_id
)
select id from settled`;
const SETTLE_ALL_POSTGRES_NAME = statementName(SETTLE_ALL_POSTGRES);

/** The fewest endpoints dueEndpoints asks the database for (see there). */
const DUE_ENDPOINTS_READ = 32;

/**
 * The dispatcher's statements, compiled once (per shape where a list's length varies): a delivery runs
 * about five of them, and Kysely's build and compile had cost more than SQLite's own work
 * (bench/RESULTS.md, Webhooks that do not slow the API).
 */
export class WebhookDeliveryRepository extends Repository {
  readonly #dueEndpointsByShape = new Map<string, (...args: unknown[]) => Promise<{ id: string; account_id: string }[]>>();
  readonly #settleOne: (...args: unknown[]) => CompiledQuery<unknown>;
  readonly #claim: (endpointId: string, limit: number, holder: string, until: string, now: string) => Promise<Omit<ClaimedMessage, 'lease_until'>[]>;
  readonly #releaseLease: (messageId: string, holder: string, until: string) => Promise<unknown[]>;
  readonly #attemptInsert: (...values: unknown[]) => CompiledQuery<unknown>;
  readonly #deliveryTarget: (endpointId: string, now: string) => Promise<DeliveryTargetRow[]>;

  constructor(connections: Connections) {
    super(connections);
    const root = connections.root;
    // The claim and the lease's give-back run alone (no transaction around them): named on PostgreSQL.
    const alone = connections.runAlone.bind(connections);
    this.#claim = preparedQuery(alone, 5, (endpointId: string, limit: number, holder: string, until: string, now: string) => {
      const due = root
        .selectFrom('webhook_messages')
        .select('id')
        .where('endpoint_id', '=', endpointId)
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit);
      const picked = this.lockedOnPostgres(due, (q) => q.forUpdate().skipLocked());
      return root
        .updateTable('webhook_messages')
        .set({ lease_holder: holder, lease_until: until })
        .where('id', 'in', picked)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .returning(['id', 'endpoint_id', 'event_type', 'payload', 'schedule_start', 'failures']);
    });
    this.#releaseLease = preparedQuery(alone, 3, (messageId: string, holder: string, until: string) =>
      root
        .updateTable('webhook_messages')
        .set({ lease_holder: null, lease_until: null })
        .where('id', '=', messageId)
        .where('lease_holder', '=', holder)
        .where('lease_until', '=', until),
    );
    // One statement whatever the settlement leaves out, as the PostgreSQL batch: a column left out is kept.
    this.#settleOne = compiledOnce(6, (id, by, status, failures, nextAttemptAt, endedAt) =>
      root
        .updateTable('webhook_messages')
        .set({
          status: status as WebhookMessagesTable['status'],
          failures: sql<number>`coalesce(${failures}, failures)`,
          next_attempt_at: sql<string>`coalesce(${nextAttemptAt}, next_attempt_at)`,
          ended_at: sql<string | null>`coalesce(${endedAt}, ended_at)`,
          lease_holder: null,
          lease_until: null,
        })
        .where('id', '=', id as string)
        .where('lease_holder', '=', by as string),
    );
    this.#attemptInsert = compiledOnce(6, (id, message_id, attempted_at, status_code, error, duration_ms) =>
      root.insertInto('webhook_attempts').values({ id, message_id, attempted_at, status_code, error, duration_ms } as Insertable<WebhookAttemptsTable>),
    );
    this.#deliveryTarget = preparedQuery(connections.reader, 2, (endpointId: string, now: string) =>
      root
        .selectFrom('webhook_endpoints as e')
        .leftJoin('webhook_secrets as s', (join) =>
          join.onRef('s.endpoint_id', '=', 'e.id').on((eb) => eb.or([eb('s.expires_at', 'is', null), eb('s.expires_at', '>', now)])),
        )
        .select(['e.url', 's.id as secret_id', 's.secret'])
        .where('e.id', '=', endpointId)
        .orderBy('s.created_at', 'desc')
        .orderBy('s.id', 'desc'),
    );
  }

  /**
   * Endpoints with a message due at `now` (not those in `busy.endpoints`, nor of an account in
   * `busy.accounts`), each with its server's account, taken in turns across accounts: every account's
   * longest-waiting endpoint first, then every account's second, and so on, each turn longest waiting
   * first. The dispatcher claims from each in turn, so neither one endpoint's backlog nor one account's
   * many endpoints can take every slot, or push another account out of the list this answers. Walks
   * the endpoints, with two seeks each on webhook_messages_endpoint_due: its cost follows the number
   * of endpoints, not of messages waiting (a dead endpoint's backlog costs nothing here).
   */
  async dueEndpoints(now: string, busy: { endpoints: readonly string[]; accounts: readonly string[] }, limit: number): Promise<DueEndpoint[]> {
    const shape = `${busy.endpoints.length}/${busy.accounts.length}`;
    let read = this.#dueEndpointsByShape.get(shape);
    if (!read) {
      // Named on PostgreSQL, one statement a shape: as many shapes as there can be busy endpoints and
      // accounts at once, which the node's slots bound (at most a few hundred, most never met).
      read = preparedQuery(this.connections.reader, 2 + busy.endpoints.length + busy.accounts.length, (...standIns: unknown[]) =>
        this.dueEndpointsQuery(
          standIns[0] as string,
          standIns.slice(2, 2 + busy.endpoints.length) as string[],
          standIns.slice(2 + busy.endpoints.length) as string[],
          standIns[1] as number,
        ),
      );
      this.#dueEndpointsByShape.set(shape, read);
    }
    // Asked for at least DUE_ENDPOINTS_READ rows and cut here: with a LIMIT of 1 or 2 (a nearly full
    // node) SQLite planned the ordering worse: 5.1 ms a call against 0.64 ms, measured with 10
    // endpoints and 4,200 messages due (bench/RESULTS.md, Webhooks).
    const rows = await read(now, Math.max(limit, DUE_ENDPOINTS_READ), ...busy.endpoints, ...busy.accounts);
    return rows.slice(0, limit).map((r) => ({ id: r.id, accountId: r.account_id }));
  }

  /** The statement dueEndpoints runs (public for the test of its plan). */
  dueEndpointsQuery(now: string, busyEndpoints: readonly string[], busyAccounts: readonly string[], limit: number) {
    const root = this.connections.root;
    const due = (eb: ExpressionBuilder<Database, 'webhook_endpoints' | 'servers'>) =>
      eb
        .selectFrom('webhook_messages as m')
        .whereRef('m.endpoint_id', '=', 'webhook_endpoints.id')
        .where('m.status', '=', 'pending')
        .where('m.next_attempt_at', '<=', now);
    let candidates = root
      .selectFrom('webhook_endpoints')
      .innerJoin('servers', 'servers.id', 'webhook_endpoints.server_id')
      .select((eb) => [
        'webhook_endpoints.id',
        'servers.account_id',
        due(eb)
          .select((m) => m.fn.min('m.next_attempt_at').as('oldest'))
          .as('oldest'),
      ])
      // "Has a message it could lease", as a scalar subquery that stops at the first: written as
      // EXISTS, PostgreSQL turned it into a semi-join that read every pending message of every
      // endpoint into a hash on every round (2.4 ms a call with 5,000 waiting, bench/RESULTS.md).
      .where((eb) =>
        eb(
          due(eb)
            .select('m.id')
            .where((w) => w.or([w('m.lease_until', 'is', null), w('m.lease_until', '<=', now)]))
            .limit(1),
          'is not',
          null,
        ),
      );
    if (busyEndpoints.length > 0) candidates = candidates.where('webhook_endpoints.id', 'not in', busyEndpoints);
    if (busyAccounts.length > 0) candidates = candidates.where('servers.account_id', 'not in', busyAccounts);
    return root
      .selectFrom(candidates.as('c'))
      .select(['c.id', 'c.account_id'])
      .select((eb) =>
        eb.fn
          .agg<number>('row_number')
          .over((over) => over.partitionBy('c.account_id').orderBy('c.oldest').orderBy('c.id'))
          .as('turn'),
      )
      .orderBy('turn')
      .orderBy('c.oldest')
      .orderBy('c.id')
      .limit(limit);
  }

  /**
   * Leases at most `limit` of the endpoint's due messages to `holder` until `until`. On PostgreSQL the
   * rows are picked FOR UPDATE SKIP LOCKED, so nodes claiming at the same moment take different
   * messages instead of waiting on each other; the lease condition is checked again by the UPDATE.
   */
  async claim(endpointId: string, limit: number, lease: { holder: string; until: string; now: string }): Promise<ClaimedMessage[]> {
    // The lease's end is the one given: set on the rows as they came, not copied into new ones.
    const rows = (await this.#claim(endpointId, limit, lease.holder, lease.until, lease.now)) as ClaimedMessage[];
    for (const row of rows) row.lease_until = lease.until;
    return rows;
  }

  /**
   * The endpoint's URL and its live secrets (the current one and those still in their grace
   * period, newest first), read together for a batch of messages to it: no row where the endpoint
   * is gone, one row with no secret where it has none live. Read on the read connection.
   */
  deliveryTarget(endpointId: string, now: string): Promise<DeliveryTargetRow[]> {
    return this.#deliveryTarget(endpointId, now);
  }

  /**
   * Writes each outcome where `holder` still holds the message's lease: the message's next state (the
   * lease released) and the attempt, together in one transaction for the whole batch. Which were
   * written, in order; where the lease ran out meanwhile nothing is written, the attempt included
   * (another node owns the message now). A failure writes nothing of the batch.
   */
  async settleAll(holder: string, outcomes: readonly MessageOutcome[]): Promise<boolean[]> {
    if (outcomes.length === 0) return [];
    if (this.connections.engine === 'postgres') {
      const column = <T>(pick: (o: MessageOutcome) => T | undefined) => outcomes.map((o) => pick(o) ?? null);
      const columns = [
        column((o) => o.messageId),
        column((o) => o.settlement.status),
        column((o) => o.settlement.failures),
        column((o) => o.settlement.next_attempt_at),
        column((o) => o.settlement.ended_at),
        column((o) => o.attempt.id),
        column((o) => o.attempt.attempted_at),
        column((o) => o.attempt.status_code),
        column((o) => o.attempt.error),
        column((o) => o.attempt.duration_ms),
      ];
      const settled = (await this.connections.runAlone(SETTLE_ALL_POSTGRES, [...columns, holder], SETTLE_ALL_POSTGRES_NAME)) as { id: string }[];
      const ids = new Set(settled.map((row) => row.id));
      return outcomes.map((o) => ids.has(o.messageId));
    }
    // SQLite runs in this process: a statement is no round trip, and one transaction holds the batch.
    return this.connections.transaction(async () => {
      const written: boolean[] = [];
      for (const { messageId, settlement, attempt } of outcomes) {
        const held = await this.#settle(messageId, holder, settlement);
        if (held) await this.#addAttempt({ ...attempt, message_id: messageId });
        written.push(held);
      }
      return written;
    });
  }

  /** Records an attempt's outcome and releases the lease; false (nothing written) where `holder` no longer holds it. */
  async #settle(messageId: string, holder: string, settlement: MessageOutcomeColumns): Promise<boolean> {
    const { status, failures, next_attempt_at, ended_at } = settlement;
    const settled = await this.db.executeQuery(this.#settleOne(messageId, holder, status, failures ?? null, next_attempt_at ?? null, ended_at ?? null));
    return (settled.numAffectedRows ?? 0n) > 0n;
  }

  /**
   * Gives a message back without an attempt (never sent, or its sender is stopping): due again at once,
   * if this lease still holds it. Fenced by the lease's end as well as its holder: a node that claimed
   * the message again meanwhile holds a newer lease, which a late give-back must not clear.
   */
  async releaseLease(messageId: string, lease: { holder: string; until: string }): Promise<void> {
    await this.#releaseLease(messageId, lease.holder, lease.until);
  }

  async #addAttempt(attempt: Insertable<WebhookAttemptsTable>): Promise<void> {
    const { id, message_id, attempted_at, status_code, error, duration_ms } = attempt;
    await this.db.executeQuery(this.#attemptInsert(id, message_id, attempted_at, status_code ?? null, error ?? null, duration_ms));
  }
}

/**
 * The credentials of the audience's members (credentials rows): their summaries, their rows with
 * secrets, the uses, checks and refresh leases written to them, their adding and deleting. The reads
 * of a member with its credentials in one statement are the audience's (audience-repository.ts).
 */
import type { Insertable, Updateable } from 'kysely';
import { BoundedMap } from '../primitives/insertion-ordered-map.js';
import type { Connections } from './connections.js';
import { asText, preparedPerCount } from './prepared.js';
import { Repository } from './repository.js';
import type { CheckOutcome, CredentialRow, CredentialsTable } from './schema.js';
import { StatementsTogether } from './statements-together.js';
import { DatabaseUnavailable } from './store-errors.js';

/**
 * Every column of a credential, named rather than `c.*`: PostgreSQL expands a `*` when it plans, so
 * a column added by a migration changes the result of a named statement prepared before it, which
 * then fails on that connection (postgres-runner.ts sends it again, at the cost of a second round
 * trip); named columns keep its result as it was. The type check below fails when a column is added
 * to CredentialsTable and not here.
 */
export const CREDENTIAL_COLUMNS = [
  'id',
  'server_id',
  'member_id',
  'provider',
  'type',
  'status',
  'secret',
  'access_expires_at',
  'scopes',
  'error_code',
  'error_message',
  'connected_at',
  'updated_at',
  'refreshed_at',
  'refresh_lease_until',
  'refresh_lease_holder',
  'refresh_attempted_at',
  'member_created_at',
  'external_user_id',
  'last_used_at',
  'last_check_at',
  'last_check_outcome',
] as const satisfies readonly (keyof CredentialsTable)[];
type MissingCredentialColumn = Exclude<keyof CredentialsTable, (typeof CREDENTIAL_COLUMNS)[number]>;
const everyCredentialColumn: [MissingCredentialColumn] extends [never] ? true : never = true;
void everyCredentialColumn;

/** What the list shows of a credential: never its secret. */
export type CredentialSummaryRow = Pick<CredentialRow, (typeof SUMMARY_COLUMNS)[number]>;
const SUMMARY_COLUMNS = [
  'id',
  'provider',
  'type',
  'status',
  'connected_at',
  'updated_at',
  'last_used_at',
  'last_check_at',
  'last_check_outcome',
] as const satisfies readonly (keyof CredentialsTable)[];

/** What a check writes (CONTRACT 8.3): its time and outcome, and for a refusal the credential's new state. */
export interface CheckWrite {
  at: string;
  /** Null: nothing could be checked (the background check's stamp, see migration 016). */
  outcome: CheckOutcome | null;
  /** A refusal: the credential needs the end user again, with this error (written only where it was active). */
  rejected?: { errorCode: string; message: string };
}

/** A new credential; the copies of its member's created_at and external id are taken from the member row itself. */
export type NewCredentialRow = Omit<Insertable<CredentialsTable>, 'member_created_at' | 'external_user_id'>;

/** What a holder of the refresh lease writes when its attempt ends (the lease is released with it). */
export type RefreshOutcome = Pick<
  Updateable<CredentialsTable>,
  'secret' | 'access_expires_at' | 'scopes' | 'refreshed_at' | 'refresh_attempted_at' | 'updated_at' | 'status' | 'error_code' | 'error_message'
>;

/** Uses written in one statement at most (statements-together.ts); one statement text per count up to it. */
const USES_TOGETHER = 16;

/** Credentials whose latest recorded use a node remembers; past it the oldest is forgotten (a write the guard refuses is all it costs). */
const USES_RECORDED_KEPT = 100_000;

/** A use to record: the credential, when, and the threshold a recorded use must be older than. */
type Use = [id: string, at: string, threshold: string];

/**
 * What a use's statement found: its time where it wrote it; where the guard found a use within the
 * minute (another node's), that use's time as stored (null for no such credential).
 */
type RecordedUse = { written: true; at: string } | { written: false; at: string; stored: string | null };

export class CredentialsRepository extends Repository {
  readonly #usesTogether: StatementsTogether<Use, RecordedUse>;
  /** The latest use this node wrote, or found written, per credential, for the credentials used lately. */
  readonly #usesRecorded = new BoundedMap<string>(USES_RECORDED_KEPT);

  constructor(connections: Connections) {
    super(connections);
    const { root } = connections;
    // Every proxied call and secret read may make this write (once a minute per credential): built and
    // compiled once per count of credentials, it costs the engine's work alone; its arguments are cast
    // for the reason asText gives (prepared.ts).
    const recordUses = preparedPerCount(
      connections.runAlone.bind(connections),
      (count) => count + 2,
      (at: string, threshold: string, ...ids: string[]) =>
        root
          .updateTable('credentials')
          .set({ last_used_at: asText(at) })
          .where('id', 'in', ids.map(asText))
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', asText(threshold))]))
          .returning('id'),
    );
    // Calls spread over a large audience use a credential not used within the minute on nearly every
    // call: the uses asked in one turn are one statement (on SQLite one commit), at the latest of their
    // times (they are within a turn of each other). The statement runs in the async context of the
    // call that asked first, which is outside any transaction: recordUse refuses a caller inside one.
    this.#usesTogether = new StatementsTogether<Use, RecordedUse>(
      async (uses) => {
        const [, at, threshold] = uses.reduce((latest, use) => (use[1] > latest[1] ? use : latest));
        const written = new Set((await recordUses(uses.length)(at, threshold, ...uses.map(([id]) => id))).map((row) => row.id));
        const refused = uses.map(([id]) => id).filter((id) => !written.has(id));
        // The uses another node wrote within the minute, read once so that this node, whose kept
        // reads do not show them, sends nothing more for them until that minute is over.
        const stored = new Map<string, string | null>();
        if (refused.length > 0) {
          for (const row of await this.db.selectFrom('credentials').select(['id', 'last_used_at']).where('id', 'in', refused).execute()) {
            stored.set(row.id, row.last_used_at);
          }
        }
        return uses.map(([id]): RecordedUse => (written.has(id) ? { written: true, at } : { written: false, at, stored: stored.get(id) ?? null }));
      },
      USES_TOGETHER,
      (error) => !(error instanceof DatabaseUnavailable),
    );
  }

  /** The credentials of the listed members, without secrets, by provider. */
  async summariesOfMembers(memberIds: string[]): Promise<(CredentialSummaryRow & { member_id: string })[]> {
    if (memberIds.length === 0) return [];
    return this.db
      .selectFrom('credentials')
      .select(['member_id', ...SUMMARY_COLUMNS])
      .where('member_id', 'in', memberIds)
      .orderBy('provider')
      .execute();
  }

  /** One credential of one member of a server, without its secret. */
  async summaryOf(serverId: string, externalUserId: string, provider: string): Promise<CredentialSummaryRow | undefined> {
    return this.db
      .selectFrom('audience_members as m')
      .innerJoin('credentials as c', 'c.member_id', 'm.id')
      .select(SUMMARY_COLUMNS.map((column) => `c.${column}` as const))
      .where('m.server_id', '=', serverId)
      .where('m.external_user_id', '=', externalUserId)
      .where('c.provider', '=', provider)
      .executeTakeFirst();
  }

  /** The member's credentials (or its one credential of a provider), by provider. */
  async credentialsOf(memberId: string, provider?: string): Promise<CredentialRow[]> {
    let select = this.db.selectFrom('credentials').selectAll().where('member_id', '=', memberId);
    if (provider) select = select.where('provider', '=', provider);
    return select.orderBy('provider').execute();
  }

  async credential(id: string): Promise<CredentialRow | undefined> {
    return this.db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Records a use at `at` unless one was recorded after `threshold` (a minute before): one guarded
   * UPDATE, never read-modify-write, so readers and proxied calls on every node write at most once a
   * minute between them. It runs alone (Connections.runAlone): never inside a transaction. Uses asked
   * in the same turn go in one statement, at the latest of their times, which is the answer (written
   * unless a use within the minute shut the guard; then that use's time, as stored). A use this node
   * wrote or found within the minute is the answer, and nothing is sent.
   */
  recordUse(id: string, at: string, threshold: string): Promise<string> {
    if (this.connections.inTransaction) return Promise.reject(new Error('recordUse was called inside a transaction'));
    // A use this node wrote within the minute: nothing to write. The row the caller read may not show
    // it: a kept read (reads-until-change.ts) is not dropped on PostgreSQL for lastUsedAt alone.
    const recorded = this.#usesRecorded.get(id);
    if (recorded !== undefined && recorded > threshold) return Promise.resolve(recorded);
    return this.#usesTogether.get(id, [id, at, threshold]).then((use) => {
      if (use.written) {
        this.#usesRecorded.set(id, use.at);
        return use.at;
      }
      if (use.stored !== null && use.stored > threshold) {
        this.#usesRecorded.set(id, use.stored);
        return use.stored;
      }
      return use.at;
    });
  }

  /**
   * Writes a check's time and outcome. A refusal also turns the credential to needs_reauth with its
   * error, only where it was still active: true when this write made that change (the caller then
   * sends its event), false otherwise (it was already needs_reauth, or is gone).
   */
  async recordCheck(id: string, check: CheckWrite): Promise<boolean> {
    await this.db.updateTable('credentials').set({ last_check_at: check.at, last_check_outcome: check.outcome }).where('id', '=', id).execute();
    if (!check.rejected) return false;
    const turned = await this.db
      .updateTable('credentials')
      .set({ status: 'needs_reauth', error_code: check.rejected.errorCode, error_message: check.rejected.message, updated_at: check.at })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (turned.numUpdatedRows === 0n) return false;
    await this.connections.seenEverywhere();
    return true;
  }

  /** Deletes the rows, and with them their secrets (SQLite's secure_delete overwrites them). */
  async deleteCredentials(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('credentials').where('id', 'in', ids).execute();
    await this.connections.seenEverywhere();
  }

  /**
   * Adds a credential. The copies of its member's created_at and external id, which the provider
   * filter walks in list order, are read from the member row in the same statement, so they cannot
   * disagree with it (neither ever changes for a member).
   */
  async addCredential(row: NewCredentialRow): Promise<void> {
    await this.db
      .insertInto('credentials')
      .values((eb) => {
        const member = eb.selectFrom('audience_members').where('id', '=', row.member_id);
        return { ...row, member_created_at: member.select('created_at'), external_user_id: member.select('external_user_id') };
      })
      .execute();
  }

  /**
   * Takes the refresh lease of an active credential unless a live one is held or an attempt ended at
   * or after `since` or after `cooldownStart` (token-refresh.ts). When taken, the row as the lease
   * left it (every column, as credential() reads them); undefined otherwise.
   */
  async takeRefreshLease(
    id: string,
    lease: { holder: string; until: string; now: string; since: string; cooldownStart: string },
  ): Promise<CredentialRow | undefined> {
    return this.db
      .updateTable('credentials')
      .set({ refresh_lease_until: lease.until, refresh_lease_holder: lease.holder })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('refresh_lease_until', 'is', null), eb('refresh_lease_until', '<=', lease.now)]))
      .where((eb) =>
        eb.or([
          eb('refresh_attempted_at', 'is', null),
          eb.and([eb('refresh_attempted_at', '<', lease.since), eb('refresh_attempted_at', '<=', lease.cooldownStart)]),
        ]),
      )
      .returningAll()
      .executeTakeFirst();
  }

  /** Releases the lease with the attempt's outcome; fenced by the holder, so a holder whose lease ran out writes nothing (false). */
  async endRefresh(id: string, holder: string, outcome: RefreshOutcome): Promise<boolean> {
    const ended = await this.db
      .updateTable('credentials')
      .set({ ...outcome, refresh_lease_until: null, refresh_lease_holder: null })
      .where('id', '=', id)
      .where('refresh_lease_holder', '=', holder)
      .executeTakeFirst();
    if (ended.numUpdatedRows === 0n) return false;
    // A credential that needs the end user again is refused by every node's next call. A new token
    // is not waited for: the old one still works until it expires, and nodes hear of it a moment later.
    if (outcome.status === 'needs_reauth') await this.connections.seenEverywhere();
    return true;
  }
}

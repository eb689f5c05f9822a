/**
 * An account's team (CONTRACT 9): its users' roles, their removal, and the invitations that bring new
 * users in (tables account_users, team_invitations). Only a digest of an invitation link's token is
 * stored; an invitation is pending while it is neither used, revoked nor expired, and every statement
 * that acts on one says so in its WHERE, so that the database, not a read before it, decides.
 */
import { type Insertable, sql } from 'kysely';
import { Repository } from './repository.js';
import type { TeamInvitationsTable, TeamRole } from './schema.js';

export class TeamRepository extends Repository {
  async createInvitation(invitation: Insertable<TeamInvitationsTable>): Promise<void> {
    await this.db.insertInto('team_invitations').values(invitation).execute();
  }

  /** The invitation of a link's token digest, whatever its state, with its account's name. */
  invitationByDigest(tokenDigest: string) {
    return this.db
      .selectFrom('team_invitations as i')
      .innerJoin('accounts as a', 'a.id', 'i.account_id')
      .select(['i.id', 'i.account_id', 'i.email', 'i.role', 'i.expires_at', 'i.used_at', 'i.revoked_at', 'a.name as account_name'])
      .where('i.token_digest', '=', tokenDigest)
      .executeTakeFirst();
  }

  /** The account's invitations pending at `now`, newest first. */
  pendingInvitations(accountId: string, now: string) {
    return this.#pending(now)
      .select(['id', 'email', 'role', 'invited_by', 'created_at', 'expires_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /** One of the account's invitations if it is pending at `now` (another account's is never found). */
  pendingInvitation(accountId: string, invitationId: string, now: string) {
    return this.#pending(now)
      .select(['id', 'email', 'role', 'expires_at'])
      .where('account_id', '=', accountId)
      .where('id', '=', invitationId)
      .executeTakeFirst();
  }

  #pending(now: string) {
    return this.db.selectFrom('team_invitations').where('used_at', 'is', null).where('revoked_at', 'is', null).where('expires_at', '>', now);
  }

  /** Revokes the account's invitation if it is still pending at `at`; what it was, or undefined when it was not pending. */
  revokeInvitation(accountId: string, invitationId: string, at: string) {
    return this.db
      .updateTable('team_invitations')
      .set({ revoked_at: at })
      .where('account_id', '=', accountId)
      .where('id', '=', invitationId)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .returning(['id', 'email', 'role'])
      .executeTakeFirst();
  }

  /**
   * Marks the invitation of this token digest used by `userId` at `at`, if it is pending then: one
   * guarded statement, so of two joins at once (on any nodes) exactly one claims it, the other's WHERE
   * no longer matching (PostgreSQL re-checks it on the row the first one updated; SQLite runs one
   * writer at a time). Undefined when nothing was claimed.
   */
  claimInvitation(tokenDigest: string, at: string, userId: string) {
    return this.db
      .updateTable('team_invitations')
      .set({ used_at: at, used_by: userId })
      .where('token_digest', '=', tokenDigest)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', at)
      .returning(['id', 'account_id', 'email', 'role'])
      .executeTakeFirst();
  }

  /** How many users the account has, and how many invitations are pending at `now`. */
  async teamSize(accountId: string, now: string): Promise<{ users: number; pending: number }> {
    const users = await this.db.selectFrom('account_users').select(sql<number>`count(*)`.as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    const pending = await this.#pending(now).select(sql<number>`count(*)`.as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    return { users: Number(users.n), pending: Number(pending.n) };
  }

  /** The account's users, oldest first (at most a hundred: CONTRACT 9). */
  users(accountId: string) {
    return this.db
      .selectFrom('account_users')
      .select(['id', 'email', 'role', 'created_at', 'last_sign_in_at', 'sso_subject'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** A user by id, with their account and role as they are now. */
  user(userId: string) {
    return this.db.selectFrom('account_users').select(['id', 'account_id', 'email', 'role']).where('id', '=', userId).executeTakeFirst();
  }

  /** Whether a user of the account has this (normalised) email. */
  async accountHasEmail(accountId: string, email: string): Promise<boolean> {
    const row = await this.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The ids of the account's owners, their rows locked until the transaction ends (FOR UPDATE on
   * PostgreSQL): a second transaction that demotes or removes an owner of the same account waits here,
   * and then reads the owners as the first one left them (PostgreSQL re-checks `role = 'owner'` on a
   * row another transaction changed, and leaves out one that is no longer an owner). SQLite takes no
   * row locks and needs none: its write transactions run one at a time.
   */
  async lockOwners(accountId: string): Promise<string[]> {
    if (!this.connections.inTransaction) throw new Error('lockOwners must run inside a transaction');
    const query = this.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).where('role', '=', 'owner');
    const rows = await this.lockedOnPostgres(query, (q) => q.forUpdate()).execute();
    return rows.map((row) => row.id);
  }

  async setRole(userId: string, role: TeamRole): Promise<void> {
    await this.db.updateTable('account_users').set({ role }).where('id', '=', userId).execute();
  }

  /** Deletes the user; their sessions go with them (the foreign key cascades). */
  async deleteUser(userId: string): Promise<void> {
    await this.db.deleteFrom('account_users').where('id', '=', userId).execute();
  }
}

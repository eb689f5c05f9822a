/** Accounts and the users who sign in to their dashboard (tables accounts, account_users). */
import { type Insertable, sql } from 'kysely';
import { Repository } from './repository.js';
import type { AccountsTable, AccountUsersTable } from './schema.js';

/** Any fixed number, the same on every node: the key of the `first` sign-up's advisory lock. */
const FIRST_SIGN_UP_LOCK = 0x6b657977; // 'keyw'

export class AccountsRepository extends Repository {
  async exists(accountId: string): Promise<boolean> {
    return (await this.db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst()) !== undefined;
  }

  /** Whether the instance has any account at all (the `first` sign-up policy). */
  async anyExists(): Promise<boolean> {
    return (await this.db.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) !== undefined;
  }

  /** The account's name, or undefined when there is no such account. */
  async nameOf(accountId: string): Promise<string | undefined> {
    return (await this.db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirst())?.name;
  }

  async create(account: Insertable<AccountsTable>): Promise<void> {
    await this.db.insertInto('accounts').values(account).execute();
  }

  /**
   * The first statement of a transaction that must not race another one on the same account: a write
   * to the account row takes SQLite's write lock at once and PostgreSQL's row lock, so counts read after
   * it stay true until commit. False when there is no such account.
   */
  async lock(accountId: string, at: string): Promise<boolean> {
    const result = await this.db.updateTable('accounts').set({ updated_at: at }).where('id', '=', accountId).executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * Serialises the sign-ups that may only make the instance's first account, until the transaction
   * ends, so two of them cannot both find it empty: an advisory lock on PostgreSQL; nothing on SQLite,
   * whose transactions begin IMMEDIATE and are serialised already.
   */
  async lockFirstSignUp(): Promise<void> {
    // Outside a transaction the lock would end with its own statement and serialise nothing.
    if (!this.connections.inTransaction) throw new Error('lockFirstSignUp must run inside a transaction');
    if (this.connections.engine === 'postgres') await sql`select pg_advisory_xact_lock(${FIRST_SIGN_UP_LOCK})`.execute(this.db);
  }

  async addUser(user: Insertable<AccountUsersTable>): Promise<void> {
    await this.db.insertInto('account_users').values(user).execute();
  }

  /** Replaces a user's password hash; the user's account and email, or undefined when no user has that id. */
  setPasswordHash(userId: string, passwordHash: string) {
    return this.db
      .updateTable('account_users')
      .set({ password_hash: passwordHash })
      .where('id', '=', userId)
      .returning(['account_id', 'email'])
      .executeTakeFirst();
  }

  /** The user who signs in with this (normalised) email, with the hash to check the password against. */
  userByEmail(email: string) {
    return this.db.selectFrom('account_users').select(['id', 'password_hash']).where('email', '=', email).executeTakeFirst();
  }

  /** The emails of those of `userIds` who are users of the account (another account's never). */
  userEmails(accountId: string, userIds: readonly string[]) {
    if (userIds.length === 0) return Promise.resolve([]);
    return this.db.selectFrom('account_users').select(['id', 'email']).where('account_id', '=', accountId).where('id', 'in', userIds).execute();
  }

  /** The account's users by email: the Audit page's choice of whose changes to show. */
  usersOfAccount(accountId: string) {
    return this.db.selectFrom('account_users').select(['id', 'email']).where('account_id', '=', accountId).orderBy('email').execute();
  }
}

/**
 * An account's single sign-on (CONTRACT 9): its OpenID Connect provider (table account_sso, the client
 * secret sealed), its "Require SSO" policy (accounts.require_sso) and the issuer's `sub` of each user
 * who signed in through it (account_users.sso_subject). The allowed domains are a JSON array of
 * lower-case domains, which the services read and write whole.
 */
import { type Insertable, sql } from 'kysely';
import { Repository } from './repository.js';
import type { AccountSsoTable } from './schema.js';

export class SsoRepository extends Repository {
  /** The account's provider, or undefined where it has none. */
  settingsOf(accountId: string) {
    return this.db.selectFrom('account_sso').selectAll().where('account_id', '=', accountId).executeTakeFirst();
  }

  /** Whether the account requires SSO (its non-owners sign in only through it). */
  async required(accountId: string): Promise<boolean> {
    const row = await this.db.selectFrom('accounts').select('require_sso').where('id', '=', accountId).executeTakeFirst();
    return row?.require_sso === 1;
  }

  /** Adds the account's provider or replaces every setting of it (created_at kept). */
  async save(settings: Insertable<AccountSsoTable>): Promise<void> {
    const { account_id: _key, created_at: _created, ...changed } = settings;
    await this.db
      .insertInto('account_sso')
      .values(settings)
      .onConflict((conflict) => conflict.column('account_id').doUpdateSet(changed))
      .execute();
  }

  /** Removes the account's provider; what it was (its issuer), or undefined when there was none. */
  remove(accountId: string) {
    return this.db.deleteFrom('account_sso').where('account_id', '=', accountId).returning(['issuer']).executeTakeFirst();
  }

  /** Sets the account's "Require SSO"; false when it already was so (nothing changed). */
  async setRequired(accountId: string, required: boolean): Promise<boolean> {
    const result = await this.db
      .updateTable('accounts')
      .set({ require_sso: required ? 1 : 0 })
      .where('id', '=', accountId)
      .where('require_sso', '=', required ? 0 : 1)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * The accounts whose provider allows `domain` (a lower-case domain: letters, digits, dots and
   * hyphens, so nothing in it is special to LIKE). The match on the quoted domain inside the JSON text
   * is exact; the caller reads each row's array to be sure.
   */
  accountsAllowing(domain: string) {
    return this.db.selectFrom('account_sso').select(['account_id', 'allowed_domains']).where('allowed_domains', 'like', `%"${domain}"%`).execute();
  }

  /** Every other account's allowed domains: a domain picks one account, so two may not share one. */
  domainsOfOtherAccounts(accountId: string) {
    return this.db.selectFrom('account_sso').select(['account_id', 'allowed_domains']).where('account_id', '!=', accountId).execute();
  }

  /** The dashboard user of this (normalised) email, in whichever account, with what SSO sign-in reads. */
  userByEmail(email: string) {
    return this.db.selectFrom('account_users').select(['id', 'account_id', 'role', 'sso_subject']).where('email', '=', email).executeTakeFirst();
  }

  /** Records the issuer's `sub` of a user who signed in through the account's provider. */
  async setSubject(userId: string, subject: string): Promise<void> {
    await this.db.updateTable('account_users').set({ sso_subject: subject }).where('id', '=', userId).execute();
  }

  /** Forgets every recorded `sub` of the account's users: its provider changed or was removed, so they are another issuer's. */
  async clearSubjects(accountId: string): Promise<void> {
    await this.db.updateTable('account_users').set({ sso_subject: null }).where('account_id', '=', accountId).where('sso_subject', 'is not', null).execute();
  }

  /** Whether the user's password is turned off: their account requires SSO and they are not an owner. */
  async passwordTurnedOff(userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('account_users as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select(sql<number>`1`.as('off'))
      .where('u.id', '=', userId)
      .where('a.require_sso', '=', 1)
      .where('u.role', '!=', 'owner')
      .executeTakeFirst();
    return row !== undefined;
  }
}

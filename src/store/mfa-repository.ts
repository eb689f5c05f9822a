/**
 * One-time codes (CONTRACT 9, migration 018): a user's TOTP secret (sealed) and their recovery codes
 * (digests), and the account's "Require MFA". Every statement that accepts something says so in its
 * WHERE, so that the database, not a read before it, decides: a code's step is accepted by the UPDATE
 * that moves `last_step` past it, a recovery code is spent by the UPDATE that sets its `used_at`, and
 * only one of two nodes doing either at once sees its row changed.
 */
import { type Insertable, sql } from 'kysely';
import { Repository } from './repository.js';
import type { UserRecoveryCodesTable } from './schema.js';

/** What sign-in needs of a user's second factor: whether their codes are on, and whether their account requires them. */
export interface SignInFactorRow {
  accountId: string;
  enabled: boolean;
  required: boolean;
}

export class MfaRepository extends Repository {
  /**
   * Starts (or starts again) the user's enrolment with a new sealed secret. An enrolment left
   * unconfirmed is replaced; a confirmed one is left as it is, and then nothing is written (false).
   */
  async startEnrolment(userId: string, secret: Uint8Array, at: string): Promise<boolean> {
    const row = await this.db
      .insertInto('user_totp')
      .values({ user_id: userId, secret, created_at: at, enabled_at: null, last_step: null })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret, created_at: at, last_step: null }).where('user_totp.enabled_at', 'is', null))
      .returning('user_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The user's TOTP row, confirmed or not: the sealed secret and its state. */
  async totpOf(userId: string) {
    const row = await this.db
      .selectFrom('user_totp')
      .select(['secret', 'created_at', 'enabled_at', 'last_step'])
      .where('user_id', '=', userId)
      .executeTakeFirst();
    // PostgreSQL hands a bigint back as text.
    return row && { ...row, last_step: row.last_step === null ? null : Number(row.last_step) };
  }

  /**
   * Confirms the enrolment whose sealed secret is `secret` (the one the code was checked against: a
   * newer enrolment that replaced it meanwhile is not confirmed by it), accepting the code's step.
   */
  async confirm(userId: string, secret: Uint8Array, step: number, at: string): Promise<boolean> {
    const row = await this.db
      .updateTable('user_totp')
      .set({ enabled_at: at, last_step: step })
      .where('user_id', '=', userId)
      .where('enabled_at', 'is', null)
      .where('secret', '=', secret)
      .returning('user_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Accepts a code of time step `step` if no code of that step or a later one was accepted: the one
   * statement that decides, on every node at once. Whether it was accepted.
   */
  async acceptStep(userId: string, step: number): Promise<boolean> {
    const row = await this.db
      .updateTable('user_totp')
      .set({ last_step: step })
      .where('user_id', '=', userId)
      .where('enabled_at', 'is not', null)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
      .returning('user_id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Turns the user's codes off: the secret and every recovery code go. Whether they were on. */
  async remove(userId: string): Promise<boolean> {
    const removed = await this.db
      .deleteFrom('user_totp')
      .where('user_id', '=', userId)
      .where('enabled_at', 'is not', null)
      .returning('user_id')
      .executeTakeFirst();
    await this.db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    return removed !== undefined;
  }

  /** The user's recovery codes become exactly these (the old ones, used or not, stop working). */
  async replaceRecoveryCodes(userId: string, codes: Insertable<UserRecoveryCodesTable>[]): Promise<void> {
    await this.db.deleteFrom('user_recovery_codes').where('user_id', '=', userId).execute();
    if (codes.length) await this.db.insertInto('user_recovery_codes').values(codes).execute();
  }

  /** Spends the user's unused recovery code of this digest; whether there was one. */
  async spendRecoveryCode(userId: string, codeDigest: string, at: string): Promise<boolean> {
    const row = await this.db
      .updateTable('user_recovery_codes')
      .set({ used_at: at })
      .where('user_id', '=', userId)
      .where('code_digest', '=', codeDigest)
      .where('used_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** How many of the user's recovery codes are still unused. */
  async unusedRecoveryCodes(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('user_recovery_codes')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('user_id', '=', userId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Whether the user's codes are on and whether their account requires them; undefined for no such user. */
  async signInFactor(userId: string): Promise<SignInFactorRow | undefined> {
    const row = await this.db
      .selectFrom('account_users as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .leftJoin('user_totp as t', 't.user_id', 'u.id')
      .select(['u.account_id', 'a.require_mfa', 't.enabled_at'])
      .where('u.id', '=', userId)
      .executeTakeFirst();
    return row && { accountId: row.account_id, enabled: row.enabled_at !== null, required: Number(row.require_mfa) === 1 };
  }

  /** Whether the account requires one-time codes. */
  async requireMfa(accountId: string): Promise<boolean> {
    const row = await this.db.selectFrom('accounts').select('require_mfa').where('id', '=', accountId).executeTakeFirst();
    return Number(row?.require_mfa ?? 0) === 1;
  }

  /** Sets the account's "Require MFA"; whether that changed it (the same value again changes nothing). */
  async setRequireMfa(accountId: string, required: boolean, at: string): Promise<boolean> {
    const value = required ? 1 : 0;
    const row = await this.db
      .updateTable('accounts')
      .set({ require_mfa: value, updated_at: at })
      .where('id', '=', accountId)
      .where('require_mfa', '<>', value)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Gives back one attempt of the email's sign-in count (a right password that a code must still
   * follow: services/users/sign-in-attempts.ts), leaving the rest of the count and its window as they are.
   */
  async returnSignInAttempt(emailMac: string): Promise<void> {
    await this.db
      .updateTable('sign_in_attempts')
      .set({ attempts: sql<number>`attempts - 1` })
      .where('email_mac', '=', emailMac)
      .where('attempts', '>', 0)
      .execute();
  }

  /** The ids of the account's users whose codes are on. */
  async enabledUsers(accountId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('user_totp as t')
      .innerJoin('account_users as u', 'u.id', 't.user_id')
      .select('t.user_id')
      .where('u.account_id', '=', accountId)
      .where('t.enabled_at', 'is not', null)
      .execute();
    return rows.map((row) => row.user_id);
  }
}

/** Dashboard sign-in state: sessions, sign-ins and their failures, sign-in attempts per email, used one-time form nonces. */
import { type Insertable, sql } from 'kysely';
import { newId } from '../primitives/ids.js';
import { Repository } from './repository.js';
import type { DashboardSessionsTable } from './schema.js';

/** A failed sign-in's audit event, but for the account and user, which the email finds. */
export interface FailedSignInEvent {
  actor: string;
  action: string;
  /** JSON, never the password. */
  detail: string;
  at: string;
}

export class SessionsRepository extends Repository {
  async create(session: Insertable<DashboardSessionsTable>): Promise<void> {
    await this.db.insertInto('dashboard_sessions').values(session).execute();
  }

  /** The session of this token digest if it is still live at `now` (neither idle nor past its end), with its user, role and account. */
  userSession(tokenDigest: string, now: string) {
    return this.db
      .selectFrom('dashboard_sessions as s')
      .innerJoin('account_users as u', 'u.id', 's.user_id')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select([
        's.id as sessionId',
        'u.id as userId',
        'u.account_id as accountId',
        'u.email',
        'u.role',
        'a.name as accountName',
        's.last_seen_at as lastSeenAt',
        's.ends_at as endsAt',
      ])
      .where('s.token_digest', '=', tokenDigest)
      .where('s.expires_at', '>', now)
      .where('s.ends_at', '>', now)
      .executeTakeFirst();
  }

  /** A request of the session at `now`: its idle deadline moves to `expiresAt`. */
  async seen(sessionId: string, now: string, expiresAt: string): Promise<void> {
    await this.db.updateTable('dashboard_sessions').set({ last_seen_at: now, expires_at: expiresAt }).where('id', '=', sessionId).execute();
  }

  async end(tokenDigest: string): Promise<void> {
    await this.db.deleteFrom('dashboard_sessions').where('token_digest', '=', tokenDigest).execute();
  }

  /** Ends every session of the user (their password changed, or they signed out everywhere); how many there were. */
  async endAllOf(userId: string): Promise<number> {
    const result = await this.db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The user's sessions live at `now`, the most recently used first (the "Security" page). */
  liveOfUser(userId: string, now: string) {
    return this.db
      .selectFrom('dashboard_sessions')
      .select(['id', 'created_at', 'last_seen_at', 'user_agent', 'address'])
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .where('ends_at', '>', now)
      .orderBy('last_seen_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  }

  /**
   * Ends the session `sessionId` if it is one of the user's and live at `now`; what it was, or
   * undefined when the user has no such session (another user's id ends nothing).
   */
  endOfUser(userId: string, sessionId: string, now: string) {
    return this.db
      .deleteFrom('dashboard_sessions')
      .where('id', '=', sessionId)
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .where('ends_at', '>', now)
      .returning(['id', 'user_agent', 'address'])
      .executeTakeFirst();
  }

  /** A good sign-in of the user at `at`: their last sign-in time; their account, or undefined when the user is gone. */
  async signedIn(userId: string, at: string): Promise<string | undefined> {
    const row = await this.db.updateTable('account_users').set({ last_sign_in_at: at }).where('id', '=', userId).returning('account_id').executeTakeFirst();
    return row?.account_id;
  }

  /**
   * Records a failed sign-in in the account of the user who has `email`, and nothing when no user has
   * it: one statement either way, so a failure costs the same work whether or not the email is known
   * (services/users/sessions.ts).
   */
  async recordFailedSignIn(email: string, event: FailedSignInEvent): Promise<void> {
    const text = (value: string | null) => sql<string>`cast(${value} as text)`;
    await this.db
      .insertInto('audit_events')
      .columns(['id', 'account_id', 'server_id', 'actor', 'action', 'target_id', 'detail', 'created_at'])
      .expression(
        this.db
          .selectFrom('account_users')
          .select([
            text(newId('evt')).as('id'),
            'account_id',
            text(null).as('server_id'),
            text(event.actor).as('actor'),
            text(event.action).as('action'),
            'id as target_id',
            text(event.detail).as('detail'),
            text(event.at).as('created_at'),
          ])
          .where('email', '=', email),
      )
      .execute();
  }

  /**
   * Counts one sign-in attempt for the email's MAC and moves its window's end to `windowEnds`, unless
   * `max` attempts were already counted in a window that has not ended at `at`: then nothing changes
   * and the result is undefined. A window that ended starts a fresh count with this attempt.
   *
   * One statement: the conflict's WHERE refuses the attempt once the count is full, and the row lock
   * (PostgreSQL) or the write lock (SQLite) makes concurrent takers line up behind each other.
   */
  async takeSignInAttempt(emailMac: string, at: string, windowEnds: string, max: number) {
    const row = await this.db
      .insertInto('sign_in_attempts')
      .values({ email_mac: emailMac, attempts: 1, window_ends: windowEnds })
      .onConflict((oc) =>
        oc
          .column('email_mac')
          .doUpdateSet({
            attempts: sql<number>`case when sign_in_attempts.window_ends <= ${at} then 1 else sign_in_attempts.attempts + 1 end`,
            window_ends: windowEnds,
          })
          .where((eb) => eb.or([eb('sign_in_attempts.attempts', '<', max), eb('sign_in_attempts.window_ends', '<=', at)])),
      )
      .returning(['attempts', 'window_ends'])
      .executeTakeFirst();
    return row && { attempts: Number(row.attempts), windowEnds: row.window_ends };
  }

  /** When the email's current window ends; undefined when it has no count. */
  async signInWindowEnd(emailMac: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('sign_in_attempts').select('window_ends').where('email_mac', '=', emailMac).executeTakeFirst();
    return row?.window_ends;
  }

  async clearSignInAttempts(emailMac: string): Promise<void> {
    await this.db.deleteFrom('sign_in_attempts').where('email_mac', '=', emailMac).execute();
  }

  /** Records a form nonce as used; false when it was used already (the primary key decides, on every node). */
  async claimFormNonce(nonce: string, usedAt: string, expiresAt: string): Promise<boolean> {
    const row = await this.db
      .insertInto('dashboard_form_uses')
      .values({ nonce, used_at: usedAt, expires_at: expiresAt })
      .onConflict((oc) => oc.column('nonce').doNothing())
      .returning('nonce')
      .executeTakeFirst();
    return row !== undefined;
  }

  async releaseFormNonce(nonce: string): Promise<void> {
    await this.db.deleteFrom('dashboard_form_uses').where('nonce', '=', nonce).execute();
  }
}

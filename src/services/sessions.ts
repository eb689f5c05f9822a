/**
 * Dashboard members: sign-up, sign-in with a lock-out after repeated failures, and sessions kept in
 * the database (only a digest of the cookie's token is stored, so a leaked table opens no session).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { addSeconds, iso } from '../clock.js';
import { sha256Hex } from '../digest.js';
import { newId } from '../ids.js';
import { createAccount } from './accounts.js';
import type { ServiceContext } from './context.js';
import { hashPassword, verifyPassword } from './passwords.js';

export const SESSION_SECONDS = 12 * 3600;
/** Failed sign-ins in a row before the member is locked out, and for how long. */
export const MAX_FAILED_SIGN_INS = 5;
export const LOCK_SECONDS = 15 * 60;

export interface MemberSession {
  sessionId: string;
  memberId: string;
  accountId: string;
  email: string;
  accountName: string;
}


/** A new session: a fresh random token every time, so no id chosen before sign-in survives it. */
async function createSession(ctx: ServiceContext, memberId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await ctx.store.db
    .insertInto('dashboard_sessions')
    .values({ id: newId('ses'), token_digest: sha256Hex(token), member_id: memberId, created_at: iso(now), expires_at: iso(addSeconds(now, SESSION_SECONDS)) })
    .execute();
  return token;
}

export async function signUp(ctx: ServiceContext, input: { accountName: string; email: string; password: string }): Promise<string> {
  const { userId } = await createAccount(ctx, { name: input.accountName, email: input.email, password: input.password });
  return createSession(ctx, userId);
}

export type SignInResult = { ok: true; token: string } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; until: string };

// Spent on unknown emails so that a wrong email costs as long as a wrong password (no account probing by timing).
const DECOY_HASH = hashPassword(randomBytes(16).toString('hex'));

export async function signIn(ctx: ServiceContext, input: { email: string; password: string }): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const member = await ctx.store.db
    .selectFrom('members')
    .select(['id', 'password_hash', 'locked_until'])
    .where('email', '=', email)
    .executeTakeFirst();
  const now = ctx.clock.now();
  if (member?.locked_until && member.locked_until > iso(now)) return { ok: false, reason: 'locked', until: member.locked_until };
  const good = await verifyPassword(input.password, member?.password_hash ?? (await DECOY_HASH));
  if (!member || !member.password_hash) return { ok: false, reason: 'invalid' };
  if (!good) {
    // One guarded UPDATE: concurrent failures each count, and the lock starts with the one that reaches the limit.
    const until = iso(addSeconds(now, LOCK_SECONDS));
    const counted = await ctx.store.db
      .updateTable('members')
      .set({
        failed_sign_ins: sql`failed_sign_ins + 1`,
        locked_until: sql`case when failed_sign_ins + 1 >= ${MAX_FAILED_SIGN_INS} then ${until} else null end`,
      })
      .where('id', '=', member.id)
      .returning(['locked_until'])
      .executeTakeFirst();
    return counted?.locked_until ? { ok: false, reason: 'locked', until: counted.locked_until } : { ok: false, reason: 'invalid' };
  }
  await ctx.store.db.updateTable('members').set({ failed_sign_ins: 0, locked_until: null }).where('id', '=', member.id).execute();
  return { ok: true, token: await createSession(ctx, member.id) };
}

export async function openSession(ctx: ServiceContext, token: string): Promise<MemberSession | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const row = await ctx.store.db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('members as m', 'm.id', 's.member_id')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['s.id as sessionId', 'm.id as memberId', 'm.account_id as accountId', 'm.email', 'a.name as accountName'])
    .where('s.token_digest', '=', sha256Hex(token))
    .where('s.expires_at', '>', iso(ctx.clock.now()))
    .executeTakeFirst();
  return row ?? null;
}

export async function endSession(ctx: ServiceContext, token: string): Promise<void> {
  await ctx.store.db.deleteFrom('dashboard_sessions').where('token_digest', '=', sha256Hex(token)).execute();
}

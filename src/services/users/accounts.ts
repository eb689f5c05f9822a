import { iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { requireWellFormed } from '../well-formed.js';
import { hashPassword } from './passwords.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The rule for a new password, wherever one is chosen: the dashboard's sign-up, joining a team, and the CLI. */
export function requireAcceptablePassword(password: string): void {
  if (password.length < 8 || password.length > 1024) throw invalid('password', 'the password must be 8 to 1024 characters');
}

/** The rule for a dashboard user's email (already trimmed and lower-cased), wherever one is given: sign-up, the CLI, an invitation. */
export function requireValidEmail(email: string): void {
  if (!EMAIL.test(email) || email.length > 320) throw invalid('email', 'the email address is not valid');
}

export async function createAccount(
  ctx: ServiceContext,
  input: { name: string; email: string; password?: string },
  /** Run first inside the account's transaction; it may throw to make nothing (the dashboard's sign-up policy). */
  options: { before?: () => Promise<void> } = {},
): Promise<{ accountId: string; userId: string }> {
  const name = input.name.trim();
  const email = input.email.trim().toLowerCase();
  requireWellFormed({ name: ['account name', name], email: ['email address', email] });
  if (!name) throw invalid('name', 'enter the name of the company or team');
  if (name.length > 200) throw invalid('name', 'the account name must be at most 200 characters');
  requireValidEmail(email);
  if (input.password !== undefined) requireAcceptablePassword(input.password);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  const now = iso(ctx.clock.now());
  const accountId = newId('acct');
  const userId = newId('usr');
  await ctx.store.transaction(async () => {
    await options.before?.();
    if (await ctx.store.accounts.userByEmail(email)) throw new DomainError('email_taken', { field: 'email', detail: 'a user with that email already exists' });
    await ctx.store.accounts.create({ id: accountId, name, created_at: now, updated_at: now });
    await ctx.store.accounts.addUser({
      id: userId,
      account_id: accountId,
      email,
      password_hash: passwordHash,
      created_at: now,
      role: 'owner',
      last_sign_in_at: null,
    });
  });
  return { accountId, userId };
}

/**
 * Gives a dashboard user a new password (`keyward user set-password`): the way in for a user made
 * without one, or a reset. Every session the user had ends with the old password: one opened by
 * whoever knew it must not outlive the reset.
 */
export async function setUserPassword(ctx: ServiceContext, input: { userId: string; password: string; actor: Actor }): Promise<{ userId: string }> {
  requireAcceptablePassword(input.password);
  const passwordHash = await hashPassword(input.password);
  await ctx.store.transaction(async () => {
    const user = await ctx.store.accounts.setPasswordHash(input.userId, passwordHash);
    if (!user) throw new DomainError('user_not_found', { field: 'user', detail: `no dashboard user ${input.userId}` });
    await ctx.store.sessions.endAllOf(input.userId);
    await recordAudit(ctx, {
      accountId: user.account_id,
      actor: input.actor,
      action: 'user.password_set',
      targetId: input.userId,
      detail: { email: user.email },
      at: iso(ctx.clock.now()),
    });
  });
  return { userId: input.userId };
}

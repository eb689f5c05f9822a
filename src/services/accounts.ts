import { iso } from '../clock.js';
import { newId } from '../ids.js';
import type { ServiceContext } from './context.js';
import { DomainError, invalid } from './domain-error.js';
import { hashPassword } from './passwords.js';
import { requireWellFormed } from './well-formed.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

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
  if (!EMAIL.test(email) || email.length > 320) throw invalid('email', 'the email address is not valid');
  if (input.password !== undefined && (input.password.length < 8 || input.password.length > 1024)) {
    throw invalid('password', 'the password must be 8 to 1024 characters');
  }
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  const now = iso(ctx.clock.now());
  const accountId = newId('acct');
  const userId = newId('usr');
  await ctx.store.transaction(async () => {
    await options.before?.();
    if (await ctx.store.accounts.userByEmail(email)) throw new DomainError('email_taken', { field: 'email', detail: 'a user with that email already exists' });
    await ctx.store.accounts.create({ id: accountId, name, created_at: now, updated_at: now });
    await ctx.store.accounts.addUser({ id: userId, account_id: accountId, email, password_hash: passwordHash, created_at: now });
  });
  return { accountId, userId };
}

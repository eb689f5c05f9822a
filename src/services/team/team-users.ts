/**
 * An account's users and their roles (CONTRACT 9): the list, a change of role, a removal. A change
 * counts from the user's next request on every node, because every request reads the session with the
 * user's role as it is then (sessions.ts): nothing here is cached anywhere.
 *
 * Who may do what: a role change needs the actor's role to allow changing both the old and the new
 * role (roleChangeAction: only owners make or unmake owners; admins change roles up to admin); a
 * removal needs team.remove, or the owners' own action for an owner. And whoever asks, the CLI's
 * operator included, the account keeps at least one owner.
 *
 * The last-owner rule holds under concurrent changes: each change first locks the account's owner rows
 * (TeamRepository.lockOwners: FOR UPDATE on PostgreSQL), then reads the target's role and counts the
 * other owners. Two owners demoting each other at once on two nodes: the second waits on the first's
 * locks, then sees one owner left, and is refused. SQLite runs one write transaction at a time.
 */
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';
import { DomainError } from '../domain-error.js';
import { type PendingInvitation, pendingInvitations, requireRole } from './invitations.js';
import { roleChangeAction, type TeamRole } from './roles.js';
import { actsWithin, lastOwner, mayAct, removalAction, type TeamActor, userNotFound } from './team-actor.js';

export interface TeamUser {
  id: string;
  email: string;
  role: TeamRole;
  createdAt: string;
  lastSignInAt: string | null;
  /** Whether the user has signed in through the account's single sign-on (their identity at its provider is recorded). */
  sso: boolean;
}

export interface Team {
  users: TeamUser[];
  invitations: PendingInvitation[];
}

/** The account's users (oldest first) and its pending invitations (newest first). */
export async function listTeam(ctx: ServiceContext, accountId: string): Promise<Team> {
  if (!(await ctx.store.accounts.exists(accountId))) {
    throw new DomainError('account_not_found', { field: 'account', detail: `no account ${accountId}` });
  }
  const rows = await ctx.store.team.users(accountId);
  return {
    users: rows.map((row) => ({
      id: row.id,
      email: row.email,
      role: row.role,
      createdAt: row.created_at,
      lastSignInAt: row.last_sign_in_at,
      sso: row.sso_subject !== null,
    })),
    invitations: await pendingInvitations(ctx, accountId),
  };
}

/** A user of the account (the removal's confirmation page), or undefined: another account's user is not found either. */
export async function teamUser(ctx: ServiceContext, accountId: string, userId: string) {
  const user = await ctx.store.team.user(userId);
  return user?.account_id === accountId ? user : undefined;
}

/**
 * Inside a transaction: the target user, read after the account's owner rows are locked (so their role
 * is the one that counts), and the ids of the account's other owners.
 */
async function lockedTarget(ctx: ServiceContext, userId: string, actor: TeamActor) {
  const found = await ctx.store.team.user(userId);
  if (!found || !actsWithin(actor, found.account_id)) throw userNotFound(userId);
  const owners = await ctx.store.team.lockOwners(found.account_id);
  const target = await ctx.store.team.user(userId);
  if (!target) throw userNotFound(userId);
  return { target, otherOwners: owners.filter((id) => id !== userId) };
}

function ownersOnly(): DomainError {
  return new DomainError('role_not_allowed', { detail: 'only an owner can make an owner, or change or remove one' });
}

export async function changeRole(ctx: ServiceContext, input: { userId: string; role: string; actor: TeamActor }): Promise<{ userId: string; role: TeamRole }> {
  const role = requireRole(input.role);
  const { actor } = input;
  return ctx.store.transaction(async () => {
    const { target, otherOwners } = await lockedTarget(ctx, input.userId, actor);
    if (!mayAct(actor, roleChangeAction(target.role)) || !mayAct(actor, roleChangeAction(role))) {
      throw target.role === 'owner' || role === 'owner' ? ownersOnly() : new DomainError('role_not_allowed', { detail: 'your role cannot change roles' });
    }
    if (target.role === role) return { userId: target.id, role };
    if (target.role === 'owner' && otherOwners.length === 0) throw lastOwner();
    const at = iso(ctx.clock.now());
    await ctx.store.team.setRole(target.id, role);
    await recordAudit(ctx, {
      accountId: target.account_id,
      actor: actor.actor,
      action: 'user.role_changed',
      targetId: target.id,
      detail: { email: target.email, from: target.role, to: role },
      at,
    });
    return { userId: target.id, role };
  });
}

/** Removes a user from their account: their row goes, and their sessions with it. */
export async function removeUser(ctx: ServiceContext, input: { userId: string; actor: TeamActor }): Promise<{ userId: string; removedAt: string }> {
  const { actor } = input;
  return ctx.store.transaction(async () => {
    const { target, otherOwners } = await lockedTarget(ctx, input.userId, actor);
    if (!mayAct(actor, removalAction(target.role))) {
      throw target.role === 'owner' ? ownersOnly() : new DomainError('role_not_allowed', { detail: 'your role cannot remove users' });
    }
    if (target.role === 'owner' && otherOwners.length === 0) throw lastOwner();
    const removedAt = iso(ctx.clock.now());
    await ctx.store.team.deleteUser(target.id);
    await recordAudit(ctx, {
      accountId: target.account_id,
      actor: actor.actor,
      action: 'user.removed',
      targetId: target.id,
      detail: { email: target.email, role: target.role },
      at: removedAt,
    });
    return { userId: target.id, removedAt };
  });
}

/**
 * Who changes an account's team: a signed-in user of that account, with the role their session read
 * on this request, or the operator at the CLI, who may do anything the rules of the team itself allow
 * (the last owner stays, whoever asks).
 */
import { type Actor, CLI_ACTOR } from '../context.js';
import { DomainError } from '../domain-error.js';
import { mayDo, type TeamAction, type TeamRole } from './roles.js';

export type TeamActor = { kind: 'user'; actor: Actor; userId: string; accountId: string; role: TeamRole } | { kind: 'operator'; actor: Actor };

export const OPERATOR: TeamActor = { kind: 'operator', actor: CLI_ACTOR };

export function mayAct(actor: TeamActor, action: TeamAction): boolean {
  return actor.kind === 'operator' || mayDo(actor.role, action);
}

/** The action of removing a user of `role`: an owner's is the owners' own. */
export const removalAction = (role: TeamRole): TeamAction => (role === 'owner' ? 'team.owners' : 'team.remove');

export const LAST_OWNER = 'An account keeps at least one owner.';

export function lastOwner(): DomainError {
  return new DomainError('last_owner', { detail: LAST_OWNER });
}

/** A user the actor may not see: unknown, or of another account than a signed-in actor's (the same answer). */
export function userNotFound(userId: string): DomainError {
  return new DomainError('user_not_found', { field: 'user', detail: `no dashboard user ${userId}` });
}

/** Whether the actor acts within `accountId`: the operator acts within any. */
export function actsWithin(actor: TeamActor, accountId: string): boolean {
  return actor.kind === 'operator' || actor.accountId === accountId;
}

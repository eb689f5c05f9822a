/**
 * What each role of an account's team may do (CONTRACT 9): the one table every surface consults. A
 * dashboard route names its action (dashboard/route-actions.ts); this says the least role the action
 * needs. A right of a lower role is a right of every higher one, so a role is judged by its rank.
 */
import type { TeamRole } from '../../store/schema.js';

export type { TeamRole };

/** Lowest first: a role may do what every role before it may. */
export const TEAM_ROLES = ['viewer', 'developer', 'admin', 'owner'] as const satisfies readonly TeamRole[];

export const isTeamRole = (value: unknown): value is TeamRole => (TEAM_ROLES as readonly unknown[]).includes(value);

const rank = (role: TeamRole) => TEAM_ROLES.indexOf(role);

/** Whether `role` is `than` or above it. */
export const atLeast = (role: TeamRole, than: TeamRole) => rank(role) >= rank(than);

/** Each action a person can take, and the least role that may take it. */
export const LEAST_ROLE = {
  /** Every page of the account, read only. */
  view: 'viewer',
  /** One's own sign-in: password, one-time codes, sessions. Every user has these over themselves. */
  'own.security': 'viewer',
  'account_keys.manage': 'developer',
  'providers.manage': 'developer',
  'redirect_uris.manage': 'developer',
  'webhooks.manage': 'developer',
  'credentials.revoke': 'developer',
  'servers.create': 'admin',
  'servers.mode': 'admin',
  'server_keys.rotate': 'admin',
  'servers.secrets_readable': 'admin',
  /** A server's branding: the name, colour and logo its end users see (CONTRACT 10). */
  'servers.branding': 'admin',
  'team.invite': 'admin',
  'team.change_roles': 'admin',
  'team.remove': 'admin',
  'team.sso': 'admin',
  'team.mfa_policy': 'admin',
  /** Making an owner, and demoting or removing one. */
  'team.owners': 'owner',
} as const satisfies Record<string, TeamRole>;

export type TeamAction = keyof typeof LEAST_ROLE;

export const mayDo = (role: TeamRole, action: TeamAction): boolean => atLeast(role, LEAST_ROLE[action]);

/** The action that gives or takes away `role`: an owner's is the owners' own. */
export const roleChangeAction = (role: TeamRole): TeamAction => (role === 'owner' ? 'team.owners' : 'team.change_roles');

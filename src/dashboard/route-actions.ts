/**
 * Every signed-in dashboard route and the action it takes (services/team/roles.ts says the least role
 * each action needs). The signed-in scope refuses to register a route missing here, and its
 * preHandler judges the role by this table before the route runs: a GET of a confirmation page is
 * judged as the POST it leads to, so a role that may not act never sees the page that asks.
 */
import type { TeamAction } from '../services/team/roles.js';

/** Keyed by method and the route's path under /dashboard, as the router holds it. */
export const DASHBOARD_ROUTE_ACTIONS: Record<string, TeamAction> = {
  'GET /dashboard': 'view',
  'POST /dashboard/sign-out': 'own.security',

  'GET /dashboard/servers': 'view',
  'POST /dashboard/servers': 'servers.create',
  'GET /dashboard/servers/:serverId': 'view',
  'POST /dashboard/servers/:serverId/mode': 'servers.mode',
  'POST /dashboard/servers/:serverId/secrets-readable': 'servers.secrets_readable',
  'POST /dashboard/servers/:serverId/rotate-key': 'server_keys.rotate',
  'POST /dashboard/servers/:serverId/redirect-uris': 'redirect_uris.manage',
  'POST /dashboard/servers/:serverId/redirect-uris/remove': 'redirect_uris.manage',
  'GET /dashboard/servers/:serverId/branding': 'view',
  'POST /dashboard/servers/:serverId/branding': 'servers.branding',
  'POST /dashboard/servers/:serverId/branding/remove-logo': 'servers.branding',

  'GET /dashboard/servers/:serverId/providers': 'view',
  'POST /dashboard/servers/:serverId/providers': 'providers.manage',
  'POST /dashboard/servers/:serverId/providers/custom-oauth': 'providers.manage',
  'POST /dashboard/servers/:serverId/providers/custom-static': 'providers.manage',

  'GET /dashboard/servers/:serverId/audience': 'view',
  'GET /dashboard/servers/:serverId/audience/revoke': 'credentials.revoke',
  'POST /dashboard/servers/:serverId/audience/revoke': 'credentials.revoke',
  'GET /dashboard/servers/:serverId/audience/remove': 'credentials.revoke',
  'POST /dashboard/servers/:serverId/audience/remove': 'credentials.revoke',

  'GET /dashboard/servers/:serverId/webhooks': 'view',
  'POST /dashboard/servers/:serverId/webhooks': 'webhooks.manage',
  'GET /dashboard/servers/:serverId/webhooks/:webhookId': 'view',
  'GET /dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': 'webhooks.manage',
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': 'webhooks.manage',
  'GET /dashboard/servers/:serverId/webhooks/:webhookId/remove': 'webhooks.manage',
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/remove': 'webhooks.manage',
  'POST /dashboard/servers/:serverId/webhooks/:webhookId/messages/:messageId/resend': 'webhooks.manage',

  'GET /dashboard/developer': 'view',
  'GET /dashboard/developer/api-keys': 'view',
  'POST /dashboard/developer/api-keys': 'account_keys.manage',
  'GET /dashboard/developer/api-keys/:keyId/revoke': 'account_keys.manage',
  'POST /dashboard/developer/api-keys/:keyId/revoke': 'account_keys.manage',

  'GET /dashboard/audit': 'view',

  'GET /dashboard/team': 'view',
  'POST /dashboard/team/invitations': 'team.invite',
  'GET /dashboard/team/invitations/revoke': 'team.invite',
  'POST /dashboard/team/invitations/revoke': 'team.invite',
  'POST /dashboard/team/role': 'team.change_roles',
  'GET /dashboard/team/remove': 'team.remove',
  'POST /dashboard/team/remove': 'team.remove',
  'GET /dashboard/team/sso': 'view',
  'POST /dashboard/team/sso': 'team.sso',
  'POST /dashboard/team/sso/require': 'team.sso',
  'GET /dashboard/team/sso/remove': 'team.sso',
  'POST /dashboard/team/sso/remove': 'team.sso',
  'POST /dashboard/team/mfa-policy': 'team.mfa_policy',

  'GET /dashboard/security': 'own.security',
  'POST /dashboard/security/sessions/:sessionId/end': 'own.security',
  'POST /dashboard/security/sessions/end-all': 'own.security',
  'POST /dashboard/security/mfa/enrol': 'own.security',
  'POST /dashboard/security/mfa/confirm': 'own.security',
  'GET /dashboard/security/mfa/turn-off': 'own.security',
  'POST /dashboard/security/mfa/turn-off': 'own.security',
  'GET /dashboard/security/mfa/recovery-codes': 'own.security',
  'POST /dashboard/security/mfa/recovery-codes': 'own.security',
};

/** The action of a route, or undefined where the table has none (a route the scope refuses to register). */
export function routeAction(method: string, url: string): TeamAction | undefined {
  return Object.hasOwn(DASHBOARD_ROUTE_ACTIONS, `${method} ${url}`) ? DASHBOARD_ROUTE_ACTIONS[`${method} ${url}`] : undefined;
}

/**
 * Every POST route of the dashboard, by its pattern in the app's route table: the body schema of its
 * form, or why it has no field of its own to send (its CSRF token is all it reads). The schema test
 * checks this table against the route table, so a new form cannot be left out of it or of the fuzz.
 */
import type { TObject } from '@sinclair/typebox';
import { RemoveMemberBody, RevokeCredentialBody } from '../../src/dashboard/audience-pages.js';
import { SignInBody, SignUpBody } from '../../src/dashboard/auth-routes.js';
import { BrandingBody } from '../../src/dashboard/branding-pages.js';
import { GenerateBody } from '../../src/dashboard/developer-pages.js';
import { JoinBody } from '../../src/dashboard/join-routes.js';
import { CodeBody, MfaPolicyBody } from '../../src/dashboard/mfa-pages.js';
import { SignInCodeBody, SignInRecoveryBody } from '../../src/dashboard/mfa-routes.js';
import { CustomOAuthBody, CustomStaticBody, EnableBody } from '../../src/dashboard/provider-pages.js';
import { CreateServerBody, ModeBody, RedirectUriBody, RotateKeyBody, SecretsReadableBody } from '../../src/dashboard/server-pages.js';
import { SsoRequireBody, SsoSettingsBody } from '../../src/dashboard/sso-pages.js';
import { SsoJoinBody, SsoSignInBody } from '../../src/dashboard/sso-routes.js';
import { ChangeRoleBody, InviteBody, RemoveUserBody, RevokeInvitationBody } from '../../src/dashboard/team-pages.js';
import { AddEndpointBody, RotateSecretBody } from '../../src/dashboard/webhook-pages.js';

const BUTTON = 'a button: the CSRF token is all it sends';

export const DASHBOARD_POSTS: Record<string, TObject | string> = {
  '/dashboard/sign-in': SignInBody,
  '/dashboard/sign-up': SignUpBody,
  '/dashboard/join': JoinBody,
  '/dashboard/sign-out': BUTTON,
  '/dashboard/developer/api-keys': GenerateBody,
  '/dashboard/developer/api-keys/:keyId/revoke': BUTTON,
  '/dashboard/servers': CreateServerBody,
  '/dashboard/servers/:serverId/mode': ModeBody,
  '/dashboard/servers/:serverId/secrets-readable': SecretsReadableBody,
  '/dashboard/servers/:serverId/rotate-key': RotateKeyBody,
  '/dashboard/servers/:serverId/redirect-uris': RedirectUriBody,
  '/dashboard/servers/:serverId/redirect-uris/remove': RedirectUriBody,
  // Sent as multipart by the page (for its logo); the fields are also read from a urlencoded body.
  '/dashboard/servers/:serverId/branding': BrandingBody,
  '/dashboard/servers/:serverId/branding/remove-logo': BUTTON,
  '/dashboard/servers/:serverId/providers': EnableBody,
  '/dashboard/servers/:serverId/providers/custom-oauth': CustomOAuthBody,
  '/dashboard/servers/:serverId/providers/custom-static': CustomStaticBody,
  '/dashboard/servers/:serverId/audience/revoke': RevokeCredentialBody,
  '/dashboard/servers/:serverId/audience/remove': RemoveMemberBody,
  '/dashboard/servers/:serverId/webhooks': AddEndpointBody,
  '/dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': RotateSecretBody,
  '/dashboard/servers/:serverId/webhooks/:webhookId/remove': BUTTON,
  '/dashboard/servers/:serverId/webhooks/:webhookId/messages/:messageId/resend': BUTTON,
  '/dashboard/team/invitations': InviteBody,
  '/dashboard/team/invitations/revoke': RevokeInvitationBody,
  '/dashboard/team/role': ChangeRoleBody,
  '/dashboard/team/remove': RemoveUserBody,
  '/dashboard/team/sso': SsoSettingsBody,
  '/dashboard/team/sso/require': SsoRequireBody,
  '/dashboard/team/sso/remove': BUTTON,
  '/dashboard/sso': SsoSignInBody,
  '/dashboard/sso/join': SsoJoinBody,
  '/dashboard/security/sessions/:sessionId/end': BUTTON,
  '/dashboard/security/sessions/end-all': BUTTON,
  '/dashboard/sign-in/code': SignInCodeBody,
  '/dashboard/sign-in/recovery': SignInRecoveryBody,
  '/dashboard/security/mfa/enrol': BUTTON,
  '/dashboard/security/mfa/confirm': CodeBody,
  '/dashboard/security/mfa/turn-off': CodeBody,
  '/dashboard/security/mfa/recovery-codes': CodeBody,
  '/dashboard/team/mfa-policy': MfaPolicyBody,
};

/** The forms a browser posts before it has a session. */
export const PUBLIC_POSTS = new Set([
  '/dashboard/sign-in',
  '/dashboard/sign-up',
  '/dashboard/join',
  '/dashboard/sign-in/code',
  '/dashboard/sign-in/recovery',
  '/dashboard/sso',
  '/dashboard/sso/join',
]);

/** The URL of a route pattern with its parameters filled from `ids` (`:serverId` from ids.serverId). */
export function urlOf(pattern: string, ids: Record<string, string>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => {
    const id = ids[name];
    if (id === undefined) throw new Error(`no id given for :${name} in ${pattern}`);
    return id;
  });
}

/**
 * Every POST route of the dashboard, by its pattern in the app's route table: the body schema of its
 * form, or why it has no field of its own to send (its CSRF token is all it reads). The schema test
 * checks this table against the route table, so a new form cannot be left out of it or of the fuzz.
 */
import type { TObject } from '@sinclair/typebox';
import { RemoveMemberBody, RevokeCredentialBody } from '../../src/dashboard/audience-pages.js';
import { SignInBody, SignUpBody } from '../../src/dashboard/auth-routes.js';
import { GenerateBody } from '../../src/dashboard/developer-pages.js';
import { CustomOAuthBody, CustomStaticBody, EnableBody } from '../../src/dashboard/provider-pages.js';
import { CreateServerBody, ModeBody, RedirectUriBody, RotateKeyBody, SecretsReadableBody } from '../../src/dashboard/server-pages.js';
import { AddEndpointBody, RotateSecretBody } from '../../src/dashboard/webhook-pages.js';

const BUTTON = 'a button: the CSRF token is all it sends';

export const DASHBOARD_POSTS: Record<string, TObject | string> = {
  '/dashboard/sign-in': SignInBody,
  '/dashboard/sign-up': SignUpBody,
  '/dashboard/sign-out': BUTTON,
  '/dashboard/developer/api-keys': GenerateBody,
  '/dashboard/developer/api-keys/:keyId/revoke': BUTTON,
  '/dashboard/servers': CreateServerBody,
  '/dashboard/servers/:serverId/mode': ModeBody,
  '/dashboard/servers/:serverId/secrets-readable': SecretsReadableBody,
  '/dashboard/servers/:serverId/rotate-key': RotateKeyBody,
  '/dashboard/servers/:serverId/redirect-uris': RedirectUriBody,
  '/dashboard/servers/:serverId/redirect-uris/remove': RedirectUriBody,
  '/dashboard/servers/:serverId/providers': EnableBody,
  '/dashboard/servers/:serverId/providers/custom-oauth': CustomOAuthBody,
  '/dashboard/servers/:serverId/providers/custom-static': CustomStaticBody,
  '/dashboard/servers/:serverId/audience/revoke': RevokeCredentialBody,
  '/dashboard/servers/:serverId/audience/remove': RemoveMemberBody,
  '/dashboard/servers/:serverId/webhooks': AddEndpointBody,
  '/dashboard/servers/:serverId/webhooks/:webhookId/rotate-secret': RotateSecretBody,
  '/dashboard/servers/:serverId/webhooks/:webhookId/remove': BUTTON,
  '/dashboard/servers/:serverId/webhooks/:webhookId/messages/:messageId/resend': BUTTON,
};

/** The forms a browser posts before it has a session. */
export const PUBLIC_POSTS = new Set(['/dashboard/sign-in', '/dashboard/sign-up']);

/** The URL of a route pattern with its parameters filled from `ids` (`:serverId` from ids.serverId). */
export function urlOf(pattern: string, ids: Record<string, string>): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => {
    const id = ids[name];
    if (id === undefined) throw new Error(`no id given for :${name} in ${pattern}`);
    return id;
  });
}

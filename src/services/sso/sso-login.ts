/**
 * A sign-in through the account's provider (CONTRACT 9), from "Sign in with SSO" (email first: the
 * email's domain picks the one account whose provider allows it) or from an invitation's "Join with
 * SSO", to the callback that signs the person in.
 *
 * What the callback must find again (the account, `state`, `nonce`, the PKCE verifier, and for a join
 * the invitation's token) travels in a short-lived cookie of this browser, sealed with the master key
 * (AES-GCM under its own associated data), rather than in a table: it works on every node (they share
 * the master key); it binds the sign-in to the browser that started it, which is what `state` is
 * for (a callback carried to another browser finds no cookie); and an anonymous form that anyone
 * may post writes no row, so it cannot be used to fill the database. It lives 10 minutes (the time is
 * sealed inside it, judged by this Keyward's clock) and the callback clears it, whatever the outcome.
 * The identity provider's authorization code is single-use, so a callback replayed with the cookie
 * still set signs nobody in.
 */
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { isToken } from '../../primitives/random-tokens.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';
import { openSsoClientSecret } from '../sealing/sso-client-secret.js';
import { requireValidEmail } from '../users/accounts.js';
import type { SessionDevice, SignInFailure } from '../users/sessions.js';
import {
  type AuthorizationSecrets,
  authorizationUrl,
  DiscoveryError,
  discoverProvider,
  newAuthorizationSecrets,
  SsoCallbackError,
  verifiedIdentity,
} from './sso-provider.js';
import { domainsOf, ssoRedirectUri } from './sso-settings.js';
import { joinThroughSso, type SsoSignedIn, signInThroughSso } from './sso-sign-in.js';

/** How long a started sign-in may take to come back. */
export const SSO_LOGIN_SECONDS = 600;

/** The associated data of the sealed cookie: nothing else sealed opens as one. */
const LOGIN_AAD = 'dashboard-sso-login';

/** What the cookie holds. */
interface LoginState extends AuthorizationSecrets {
  accountId: string;
  expiresAt: string;
  /** An invitation's token, when the sign-in joins through it. */
  invitation?: string;
}

export type SsoStart =
  | { started: true; authorizationUrl: string; cookie: string }
  /** No account's provider allows the email's domain: the answer says nothing of accounts. */
  | { started: false; reason: 'no_provider' }
  /** The account's provider cannot be used now (its discovery failed): `detail` says why. */
  | { started: false; reason: 'provider_unavailable'; detail: string }
  /** The invitation is not pending, or its account has no provider. */
  | { started: false; reason: 'invitation_unusable' };

/** The one account whose provider allows the domain; none when no account does (or, against the rule, several). */
async function accountOfDomain(ctx: ServiceContext, domain: string): Promise<string | undefined> {
  const rows = (await ctx.store.sso.accountsAllowing(domain)).filter((row) => domainsOf(row.allowed_domains).includes(domain));
  return rows.length === 1 ? rows[0]!.account_id : undefined;
}

async function start(ctx: ServiceContext, accountId: string, extra: { loginHint?: string; invitation?: string }): Promise<SsoStart> {
  const settings = await ctx.store.sso.settingsOf(accountId);
  if (!settings) return { started: false, reason: 'no_provider' };
  let provider: Awaited<ReturnType<typeof discoverProvider>>;
  try {
    provider = await discoverProvider(ctx, settings.issuer);
  } catch (error) {
    if (error instanceof DiscoveryError) return { started: false, reason: 'provider_unavailable', detail: error.reason };
    throw error;
  }
  const secrets = newAuthorizationSecrets();
  const state: LoginState = {
    ...secrets,
    accountId,
    expiresAt: iso(addSeconds(ctx.clock.now(), SSO_LOGIN_SECONDS)),
    ...(extra.invitation ? { invitation: extra.invitation } : {}),
  };
  const url = await authorizationUrl(provider, { clientId: settings.client_id, redirectUri: ssoRedirectUri(ctx), secrets, loginHint: extra.loginHint });
  return { started: true, authorizationUrl: url, cookie: ctx.vault.sealJson(state, LOGIN_AAD).toString('base64url') };
}

/** "Sign in with SSO": the email's domain picks the account. A malformed email is refused on its field. */
export async function startSsoSignIn(ctx: ServiceContext, typedEmail: string): Promise<SsoStart> {
  const email = typedEmail.trim().toLowerCase();
  requireValidEmail(email);
  const accountId = await accountOfDomain(ctx, email.slice(email.lastIndexOf('@') + 1));
  if (!accountId) return { started: false, reason: 'no_provider' };
  return start(ctx, accountId, { loginHint: email });
}

/** The invitation of a link's token while it is pending (neither used, revoked nor expired), else undefined. */
async function pendingInvitation(ctx: ServiceContext, invitationToken: string) {
  if (!isToken(invitationToken)) return undefined;
  const invitation = await ctx.store.team.invitationByDigest(sha256Hex(invitationToken));
  const now = iso(ctx.clock.now());
  return invitation && !invitation.used_at && !invitation.revoked_at && invitation.expires_at > now ? invitation : undefined;
}

/** Whether an invitation's page offers "Join with SSO": the link is pending and its account has a provider. */
export async function ssoJoinOffered(ctx: ServiceContext, invitationToken: string): Promise<boolean> {
  const invitation = await pendingInvitation(ctx, invitationToken);
  // An owner's invitation is joined with a password: owners never sign in through SSO (sso-sign-in.ts).
  return invitation !== undefined && invitation.role !== 'owner' && (await ctx.store.sso.settingsOf(invitation.account_id)) !== undefined;
}

/** "Join with SSO" on an invitation's page: the invitation's account's provider, the invitation's email as the hint. */
export async function startSsoJoin(ctx: ServiceContext, invitationToken: string): Promise<SsoStart> {
  const invitation = await pendingInvitation(ctx, invitationToken);
  if (!invitation) return { started: false, reason: 'invitation_unusable' };
  const started = await start(ctx, invitation.account_id, { loginHint: invitation.email, invitation: invitationToken });
  return started.started || started.reason !== 'no_provider' ? started : { started: false, reason: 'invitation_unusable' };
}

/** The cookie's sign-in, or null where it is missing, was not sealed here, or has expired. */
function openLoginState(ctx: ServiceContext, cookie: string | undefined): LoginState | null {
  if (!cookie || cookie.length > 4096 || !/^[A-Za-z0-9_-]+$/.test(cookie)) return null;
  let state: LoginState;
  try {
    state = ctx.vault.openJson<LoginState>(Buffer.from(cookie, 'base64url'), LOGIN_AAD);
  } catch {
    return null;
  }
  return state.expiresAt > iso(ctx.clock.now()) ? state : null;
}

/** The sentence a callback without its sign-in gets: nothing is known of who is asking. */
const NO_SIGN_IN =
  'This sign-in has expired, or it was started in another browser. Start again from “Sign in with SSO”: a sign-in must be finished within 10 minutes, in the browser that started it.';

export type SsoFinish = ({ ok: true } & SsoSignedIn) | { ok: false; reason: string };

/**
 * GET /dashboard/sso/callback: the sign-in of this browser's cookie, checked against the redirect's
 * parameters, the code exchanged and the ID token checked (sso-provider.ts), and the person signed in
 * or joined (sso-sign-in.ts). Every refusal is one sentence and signs nobody in.
 */
export async function finishSsoSignIn(
  ctx: ServiceContext,
  input: { cookie: string | undefined; query: URLSearchParams; device: SessionDevice },
): Promise<SsoFinish> {
  const login = openLoginState(ctx, input.cookie);
  if (!login) return { ok: false, reason: NO_SIGN_IN };
  const settings = await ctx.store.sso.settingsOf(login.accountId);
  if (!settings) return { ok: false, reason: 'Single sign-on is no longer set up for this account. Sign in with your password, or ask an administrator.' };
  try {
    let provider: Awaited<ReturnType<typeof discoverProvider>>;
    try {
      provider = await discoverProvider(ctx, settings.issuer);
    } catch (error) {
      if (error instanceof DiscoveryError)
        throw new SsoCallbackError(`Keyward could not reach your identity provider: ${error.reason}. Try again in a moment.`);
      throw error;
    }
    const identity = await verifiedIdentity(ctx, provider, {
      clientId: settings.client_id,
      clientSecret: openSsoClientSecret(ctx.vault, login.accountId, settings.client_secret),
      redirectUri: ssoRedirectUri(ctx),
      query: input.query,
      secrets: login,
    });
    const signedIn = login.invitation
      ? await joinThroughSso(ctx, { accountId: login.accountId, invitationToken: login.invitation, identity, device: input.device })
      : await signInThroughSso(
          ctx,
          { accountId: login.accountId, allowedDomains: settings.allowed_domains, defaultRole: settings.default_role },
          identity,
          input.device,
        );
    return { ok: true, ...signedIn };
  } catch (error) {
    if (!(error instanceof SsoCallbackError)) throw error;
    await recordRefusedSignIn(ctx, login.accountId, input.device, error.reason);
    return { ok: false, reason: error.reason };
  }
}

/** Room enough for every refusal sentence of sso-provider.ts and sso-sign-in.ts; a provider's own error text is cut there. */
const REASON_CHARACTERS = 400;

/** Anything shaped like an email in a refusal sentence. */
const EMAIL_LIKE = /[^\s@“”"'(]+@[^\s@“”"')]+[^\s@“”"').,:;]/g;

/**
 * A refused callback is a failed sign-in (CONTRACT 9): recorded in the account whose sign-in it was,
 * with the sentence the person was shown, its emails withheld: an ID token that was refused vouches
 * for nobody, and one refusal names the email's other Keyward account, which is not this account's to
 * know. The route limits callbacks by address as it does password checks, so the trail cannot be
 * flooded faster than failed passwords can.
 */
async function recordRefusedSignIn(ctx: ServiceContext, accountId: string, device: SessionDevice, reason: string): Promise<void> {
  await recordAudit(ctx, {
    accountId,
    actor: 'browser',
    action: 'user.sign_in_failed',
    targetId: accountId,
    detail: {
      address: device.address,
      failure: 'sso_refused' satisfies SignInFailure,
      reason: reason.replace(EMAIL_LIKE, '(email withheld)').slice(0, REASON_CHARACTERS),
    },
    at: iso(ctx.clock.now()),
  });
}

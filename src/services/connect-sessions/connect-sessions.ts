/**
 * Connect sessions (CONTRACT 10): a short-lived link to the Connect page, where one end user connects
 * and disconnects the providers it offers, any number of times until it expires. Only the digest of
 * the link's token is stored; the token itself is handed out once, in the URL.
 */
import type { Provider, StaticProvider } from '../../catalog/provider-definition.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken, newToken } from '../../primitives/random-tokens.js';
import { setEndUserProfile } from '../audience/end-user-profile.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { findProviderDefinition, listServerProviders } from '../providers/server-providers.js';
import { requireAllowedRedirect, requireEnabledProvider } from '../providers/static-forms.js';
import { checkAllowedOrigins } from './allowed-origins.js';

export interface ConnectSessionCreated {
  id: string;
  externalUserId: string;
  url: string;
  expiresAt: string;
  createdAt: string;
}

export interface NewConnectSession {
  accountId: string;
  serverId: string;
  externalUserId: string;
  /** Slugs offered on the page; undefined offers every provider enabled on the server when the page is read. */
  providers?: string[];
  redirectUri?: string;
  allowedOrigins?: string[];
  expiresIn: number;
  endUser?: { displayName?: string; email?: string };
  actor: Actor;
}

/** The path of a session's Connect page: the token is the whole of what opens it. */
export function connectPagePath(token: string): string {
  return `/connect/s/${token}`;
}

/**
 * Creates a session after checking every input against the server (each offered provider exists and
 * is enabled, the redirect URI is allowed, the origins are origins). The member is made now if new,
 * so that the session's `endUser` has somewhere to be kept and the page can greet them by name.
 */
export async function createConnectSession(ctx: ServiceContext, input: NewConnectSession): Promise<ConnectSessionCreated> {
  for (const slug of input.providers ?? []) {
    // Either kind may be offered; the definition only tells requireEnabledProvider which kind to expect.
    const definition = await findProviderDefinition(ctx, input.serverId, slug);
    await requireEnabledProvider(ctx, input.serverId, slug, definition?.kind ?? 'oauth2');
  }
  await requireAllowedRedirect(ctx, input.serverId, input.redirectUri);
  const allowedOrigins = checkAllowedOrigins(input.allowedOrigins);
  const nowDate = ctx.clock.now();
  const token = newToken();
  const id = newId('csn');
  const createdAt = iso(nowDate);
  const expiresAt = iso(addSeconds(nowDate, input.expiresIn));
  const providers = input.providers ? [...new Set(input.providers)] : null;
  await ctx.store.transaction(async () => {
    await ctx.store.connectSessions.add({
      id,
      server_id: input.serverId,
      external_user_id: input.externalUserId,
      token_digest: sha256Hex(token),
      providers: providers ? JSON.stringify(providers) : null,
      redirect_uri: input.redirectUri ?? null,
      allowed_origins: JSON.stringify(allowedOrigins),
      expires_at: expiresAt,
      created_at: createdAt,
    });
    // The profile's rules are PATCH /v1/end-users/{id}'s; a refusal names the field under endUser/ and rolls the session back.
    if (input.endUser) {
      await setEndUserProfile(ctx, {
        accountId: input.accountId,
        serverId: input.serverId,
        externalUserId: input.externalUserId,
        change: input.endUser,
        makeIfNew: true,
        actor: input.actor,
        fieldsAt: 'endUser/',
      });
    } else {
      await ctx.store.audience.ensureMember(input.serverId, input.externalUserId, createdAt);
    }
    await recordAudit(ctx, {
      accountId: input.accountId,
      serverId: input.serverId,
      actor: input.actor,
      action: 'connect_session.created',
      targetId: id,
      detail: { externalUserId: input.externalUserId, providers, expiresAt },
      at: createdAt,
    });
  });
  return { id, externalUserId: input.externalUserId, url: `${ctx.publicUrl}${connectPagePath(token)}`, expiresAt, createdAt };
}

/** A session as its page needs it. */
export interface ConnectSession {
  id: string;
  serverId: string;
  accountId: string;
  externalUserId: string;
  /** Null: every provider enabled on the server. */
  providers: string[] | null;
  redirectUri: string | null;
  allowedOrigins: string[];
  expiresAt: string;
}

export type OpenConnectSession = { state: 'unknown' } | { state: 'expired' } | { state: 'open'; session: ConnectSession };

/** What a token opens. Nothing about an unknown or expired session leaves this function. */
export async function openConnectSession(ctx: ServiceContext, token: string): Promise<OpenConnectSession> {
  if (!isToken(token)) return { state: 'unknown' };
  const row = await ctx.store.connectSessions.byToken(sha256Hex(token));
  if (!row) return { state: 'unknown' };
  if (row.expires_at <= iso(ctx.clock.now())) return { state: 'expired' };
  return {
    state: 'open',
    session: {
      id: row.id,
      serverId: row.server_id,
      accountId: row.account_id,
      externalUserId: row.external_user_id,
      providers: row.providers ? (JSON.parse(row.providers) as string[]) : null,
      redirectUri: row.redirect_uri,
      allowedOrigins: JSON.parse(row.allowed_origins) as string[],
      expiresAt: row.expires_at,
    },
  };
}

/** Whether `token` is the one of session `sessionId` (the OAuth callback's way back to its page). */
export async function isSessionToken(ctx: ServiceContext, sessionId: string, token: string | undefined): Promise<boolean> {
  if (!isToken(token)) return false;
  return (await ctx.store.connectSessions.tokenDigest(sessionId)) === sha256Hex(token);
}

/** One provider on the page, with the member's credential of it, if any. */
export interface OfferedProvider {
  provider: Provider;
  credential: { id: string; status: 'active' | 'needs_reauth' } | null;
}

/** What the page shows: who is connecting, and each offered provider with its state for them. */
export interface ConnectPageState {
  /** The member's display name, else their externalUserId. */
  connectingAs: string;
  providers: OfferedProvider[];
}

/**
 * The providers the page offers now: the session's list (in its order), or every provider enabled on
 * the server; either way only those still enabled, so a provider turned off since is not offered.
 */
export async function readConnectPage(ctx: ServiceContext, session: ConnectSession): Promise<ConnectPageState> {
  const enabled = await listServerProviders(ctx, session.serverId);
  const slugs = session.providers ?? enabled.map((p) => p.slug);
  const enabledSlugs = new Set(enabled.map((p) => p.slug));
  const member = await ctx.store.connectSessions.memberOf(session.serverId, session.externalUserId);
  const credentials = member ? await ctx.store.credentials.summariesOfMembers([member.id]) : [];
  const providers: OfferedProvider[] = [];
  for (const slug of slugs.filter((s) => enabledSlugs.has(s))) {
    const provider = await findProviderDefinition(ctx, session.serverId, slug);
    if (!provider) continue;
    const credential = credentials.find((c) => c.provider === slug);
    providers.push({ provider, credential: credential ? { id: credential.id, status: credential.status } : null });
  }
  return { connectingAs: member?.display_name || session.externalUserId, providers };
}

/** The offered provider of that slug, or null where the page does not offer it. */
export function offeredProvider(state: ConnectPageState, slug: string): OfferedProvider | null {
  return state.providers.find((p) => p.provider.slug === slug) ?? null;
}

export type StaticOffer = OfferedProvider & { provider: StaticProvider };

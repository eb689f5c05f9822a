import { addSeconds, iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import { type AuditAction, recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { generateKey, keyDigest, keyHint } from '../keys/key-format.js';
import { requireWellFormed } from '../well-formed.js';

export type ServerMode = 'business' | 'personal';
export const SERVER_MODES: readonly ServerMode[] = ['business', 'personal'];
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/** A new current key for the server; the key itself is returned once and only its digest is stored. */
async function addServerKey(ctx: ServiceContext, serverId: string, now: string): Promise<string> {
  const key = generateKey('server');
  await ctx.store.keys.addServerKey({ id: newId('skey'), server_id: serverId, digest: keyDigest(key), hint: keyHint(key), created_at: now, expires_at: null });
  return key;
}

export async function getServer(ctx: ServiceContext, serverId: string) {
  const server = await ctx.store.servers.byId(serverId);
  if (!server) throw new DomainError('server_not_found', { detail: `no server ${serverId}` });
  return server;
}

export async function createServer(
  ctx: ServiceContext,
  input: { accountId: string; name: string; mode: ServerMode; actor: Actor },
): Promise<{ serverId: string; serverKey: string }> {
  const name = input.name.trim();
  requireWellFormed({ name: ['server name', name] });
  if (!name) throw invalid('name', 'enter a name for the server');
  if (name.length > 100) throw invalid('name', 'the server name must be 1 to 100 characters');
  if (!SERVER_MODES.includes(input.mode)) throw invalid('mode', 'the mode must be business or personal');
  const now = iso(ctx.clock.now());
  const serverId = newId('srv');
  const serverKey = await ctx.store.transaction(async () => {
    if (!(await ctx.store.accounts.exists(input.accountId))) throw new DomainError('account_not_found', { detail: `no account ${input.accountId}` });
    await ctx.store.servers.create({ id: serverId, account_id: input.accountId, name, mode: input.mode, created_at: now, updated_at: now });
    const key = await addServerKey(ctx, serverId, now);
    await recordAudit(ctx, {
      accountId: input.accountId,
      serverId,
      actor: input.actor,
      action: 'server.created',
      targetId: serverId,
      detail: { name, mode: input.mode, keyHint: keyHint(key) },
      at: now,
    });
    return key;
  });
  return { serverId, serverKey };
}

export async function setServerMode(ctx: ServiceContext, serverId: string, mode: ServerMode, actor: Actor) {
  if (!SERVER_MODES.includes(mode)) throw invalid('mode', 'the mode must be business or personal');
  await changeServer(ctx, serverId, actor, 'server.mode_changed', async (server, now) => {
    await ctx.store.servers.setMode(serverId, mode, now);
    return { from: server.mode, to: mode };
  });
  return { serverId, mode };
}

/**
 * One change to a server's settings and its audit entry (what `apply` says it changed), in one
 * transaction; `apply` answers null where there is nothing to change, and then nothing is written or
 * audited. Whether anything changed.
 */
async function changeServer(
  ctx: ServiceContext,
  serverId: string,
  actor: Actor,
  action: AuditAction,
  apply: (server: Awaited<ReturnType<typeof getServer>>, now: string) => Promise<Record<string, unknown> | null>,
): Promise<boolean> {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const server = await getServer(ctx, serverId);
    const detail = await apply(server, now);
    if (detail === null) return false;
    await recordAudit(ctx, { accountId: server.account_id, serverId, actor, action, targetId: serverId, detail, at: now });
    return true;
  });
}

/**
 * Whether the member read answers credentials with their secrets (CONTRACT 8.2); false makes the
 * server write-only, and the gateway the only way its credentials are used. From the next request on
 * every node: the change bumps the auth version the guard checks (migration 015). Audited, with what
 * it was.
 */
export async function setSecretsReadable(ctx: ServiceContext, serverId: string, readable: boolean, actor: Actor) {
  const changed = await changeServer(ctx, serverId, actor, 'server.secrets_readable_changed', async (server, now) => {
    // Set as it already is: nothing to write, and no audit entry (the trail lists only real changes).
    if ((server.secrets_readable !== 0) === readable) return null;
    await ctx.store.servers.setSecretsReadable(serverId, readable, now);
    return { from: server.secrets_readable !== 0, to: readable };
  });
  return { serverId, secretsReadable: readable, changed };
}

/**
 * Makes a new server key. Keys still current get the grace period as their end (0 ends them now);
 * keys already in a grace period keep their earlier end.
 */
export async function rotateServerKey(ctx: ServiceContext, serverId: string, graceSeconds: number, actor: Actor) {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    throw invalid('graceSeconds', `the grace period must be 0 to ${MAX_GRACE_SECONDS} seconds`);
  }
  const nowDate = ctx.clock.now();
  const now = iso(nowDate);
  const serverKey = await ctx.store.transaction(async () => {
    const server = await getServer(ctx, serverId);
    await ctx.store.keys.endCurrentServerKeys(serverId, iso(addSeconds(nowDate, graceSeconds)));
    const key = await addServerKey(ctx, serverId, now);
    await recordAudit(ctx, {
      accountId: server.account_id,
      serverId,
      actor,
      action: 'server_key.rotated',
      targetId: serverId,
      detail: { keyHint: keyHint(key), graceSeconds },
      at: now,
    });
    return key;
  });
  return { serverId, serverKey };
}

/** Redirect URIs are compared exactly, so only absolute http(s) URIs without a fragment are taken. */
export function checkRedirectUri(uri: string): string {
  requireWellFormed({ redirectUri: ['redirect URI', uri] });
  if (!uri) throw invalid('redirectUri', 'enter a redirect URI');
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    throw invalid('redirectUri', 'the redirect URI must be an absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw invalid('redirectUri', 'the redirect URI must be http(s)');
  if (parsed.hash) throw invalid('redirectUri', 'the redirect URI must not have a fragment');
  if (uri.length > 2048) throw invalid('redirectUri', 'the redirect URI must be at most 2048 characters');
  return uri;
}

/**
 * Puts a URI on the server's allowed list, audited as a change of the server (the CLI's
 * `server allow-redirect` and the dashboard's Overview). A URI already there is no change: no event.
 */
export async function allowRedirectUri(ctx: ServiceContext, serverId: string, uri: string, actor: Actor) {
  checkRedirectUri(uri);
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    const server = await getServer(ctx, serverId);
    if (await ctx.store.servers.allowRedirectUri(serverId, uri, now)) await auditRedirectUri(ctx, server.account_id, serverId, 'allowed', uri, actor, now);
  });
  return { serverId, redirectUris: await listRedirectUris(ctx, serverId) };
}

/** A redirect URI is where end users are sent back to, never a secret: the trail names it in full. */
function auditRedirectUri(ctx: ServiceContext, accountId: string, serverId: string, change: 'allowed' | 'removed', uri: string, actor: Actor, at: string) {
  const action = change === 'allowed' ? 'server.redirect_uri_allowed' : 'server.redirect_uri_removed';
  return recordAudit(ctx, { accountId, serverId, actor, action, targetId: serverId, detail: { uri }, at });
}

export function listRedirectUris(ctx: ServiceContext, serverId: string): Promise<string[]> {
  return ctx.store.servers.redirectUris(serverId);
}

export function isRedirectUriAllowed(ctx: ServiceContext, serverId: string, uri: string): Promise<boolean> {
  return ctx.store.servers.isRedirectUriAllowed(serverId, uri);
}

// ---- Added for the dashboard's Servers pages (src/dashboard/server-pages.ts) ----

export interface AccountServerRow {
  id: string;
  name: string;
  mode: ServerMode;
  createdAt: string;
  /** The hint of the current key (null only if a server somehow has none). */
  keyHint: string | null;
}

/**
 * An account's servers, oldest first, each with its current key's hint: the Servers page's table and
 * `keyward server list`. An unknown account is refused, not answered with an empty list.
 */
export async function listServersOfAccount(ctx: ServiceContext, accountId: string): Promise<AccountServerRow[]> {
  if (!(await ctx.store.accounts.exists(accountId))) throw new DomainError('account_not_found', { detail: `no account ${accountId}` });
  const rows = await ctx.store.servers.listOfAccount(accountId);
  return rows.map((r) => ({ id: r.id, name: r.name, mode: r.mode, createdAt: r.created_at, keyHint: r.key_hint ?? null }));
}

export interface LiveServerKey {
  hint: string;
  createdAt: string;
  /** Null for the current key; the end of its grace period for a rotated-out key. */
  expiresAt: string | null;
}

/** The keys of a server that still open the API now: the current one and those still in their grace period, newest first. */
export async function listLiveServerKeys(ctx: ServiceContext, serverId: string): Promise<LiveServerKey[]> {
  const now = iso(ctx.clock.now());
  const rows = await ctx.store.keys.liveServerKeys(serverId, now);
  return rows.map((r) => ({ hint: r.hint, createdAt: r.created_at, expiresAt: r.expires_at }));
}

/** Takes a URI off a server's allowed list, audited like its addition; false (and no event) when it was not on it. */
export async function removeRedirectUri(ctx: ServiceContext, serverId: string, uri: string, actor: Actor): Promise<boolean> {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    const server = await getServer(ctx, serverId);
    const removed = await ctx.store.servers.removeRedirectUri(serverId, uri);
    if (removed) await auditRedirectUri(ctx, server.account_id, serverId, 'removed', uri, actor, now);
    return removed;
  });
}

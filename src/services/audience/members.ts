/** The audience of a business-mode server: list (keyset pages), read one member with secrets (its revocation: member-revocation.ts). */
import { iso } from '../../primitives/clock.js';
import { sameText } from '../../primitives/digest.js';
import type { MemberWithCredentials } from '../../store/audience-repository.js';
import type { CredentialSummaryRow } from '../../store/credentials-repository.js';
import type { ServiceContext } from '../context.js';
import { keptOpenedSecret } from '../credentials/opened-secrets.js';
import { noteUse } from '../credentials/usage.js';
import { DomainError } from '../domain-error.js';
import { type ReadCredential, readFresh } from '../oauth/token-refresh.js';
import type { EventEndUser } from '../webhooks/webhook-events.js';
import { endUserOf, lastCheckOf } from '../webhooks/webhook-events.js';
import { parseTagFilters } from './profile-rules.js';

export interface CredentialSummary {
  id: string;
  provider: string;
  type: 'oauth2' | 'static';
  status: 'active' | 'needs_reauth';
  connectedAt: string;
  updatedAt: string;
  /** The last read with its secrets or proxied call, to the minute (CONTRACT 8.4). */
  lastUsedAt: string | null;
  /** The last check of a static credential's values (CONTRACT 8.3); null where never checked. */
  lastCheck: { at: string; outcome: 'valid' | 'rejected' | 'unreachable' } | null;
}

export interface CredentialWithSecrets extends CredentialSummary {
  values?: Record<string, string>;
  accessToken?: string;
  tokenType?: string;
  expiresAt?: string | null;
  scopes?: string[];
  refreshedAt?: string | null;
  error?: { code: string; message?: string; retryable?: boolean };
  /** A write-only server's read (CONTRACT 8.2): no accessToken and no values. */
  secretsWithheld?: true;
}

/** A member as the list and the read show it: its profile (CONTRACT 10: null and {} where unset), then its credentials. */
export interface AudienceMemberView<C> extends EventEndUser {
  externalUserId: string;
  createdAt: string;
  updatedAt: string;
  credentials: C[];
}

export interface AudienceMemberPage {
  data: AudienceMemberView<CredentialSummary>[];
  hasMore: boolean;
  nextCursor: string | null;
}

function summary(row: CredentialSummaryRow): CredentialSummary {
  return {
    id: row.id,
    provider: row.provider,
    type: row.type,
    status: row.status,
    connectedAt: row.connected_at,
    updatedAt: row.updated_at,
    lastUsedAt: row.last_used_at,
    lastCheck: lastCheckOf(row),
  };
}

const cursorMac = (ctx: ServiceContext, payload: string) => ctx.vault.mac(`cursor|${payload}`).slice(0, 22);

/**
 * A cursor is the last row's (createdAt, externalUserId), signed so a client cannot hand-craft one.
 * It names a place in the list's order, whatever the filters: the next page starts after it.
 */
export function encodeCursor(ctx: ServiceContext, createdAt: string, externalUserId: string): string {
  const payload = Buffer.from(JSON.stringify([createdAt, externalUserId])).toString('base64url');
  return `${payload}.${cursorMac(ctx, payload)}`;
}

function decodeCursor(ctx: ServiceContext, cursor: string): [string, string] {
  const refusal = new DomainError('invalid_cursor', {
    field: 'cursor',
    detail: 'The cursor is not one this API returned. Pass the nextCursor of the previous page, unchanged.',
  });
  const [payload, mac, extra] = cursor.split('.');
  if (!payload || !mac || extra !== undefined || !sameText(cursorMac(ctx, payload), mac)) throw refusal;
  try {
    const value: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return [value[0], value[1]];
    }
  } catch {
    // Falls through to the same answer as any other bad cursor.
  }
  throw refusal;
}

export interface PageQuery {
  limit: number;
  cursor?: string;
  provider?: string;
  prefix?: string;
  /** `tag=key:value`, one or several (all must match), as the query string gave them: checked here (profile-rules.ts). */
  tag?: string | readonly string[];
}

/**
 * One page of members after the cursor's position, oldest first, then by id. The repository finds it
 * in list order on an index (or sorts a bounded set of prefix matches), so its cost does not grow with
 * the audience (CONTRACT 2.5). One row more than the limit tells whether there is a next page.
 */
export async function listMembers(ctx: ServiceContext, serverId: string, query: PageQuery): Promise<AudienceMemberPage> {
  const tags = parseTagFilters(query.tag);
  const after = query.cursor === undefined ? null : decodeCursor(ctx, query.cursor);
  const filter = { provider: query.provider, prefix: query.prefix, ...(tags.length ? { tags } : {}) };
  const rows = await ctx.store.audience.pageOf(serverId, filter, after, query.limit + 1);
  const page = rows.slice(0, query.limit);
  const credentials = await ctx.store.credentials.summariesOfMembers(page.map((r) => r.id));
  const byMember = new Map<string, CredentialSummary[]>();
  for (const row of credentials) {
    const list = byMember.get(row.member_id) ?? [];
    list.push(summary(row));
    byMember.set(row.member_id, list);
  }
  const last = page.at(-1);
  const hasMore = rows.length > query.limit;
  return {
    data: page.map((r) => ({
      externalUserId: r.external_user_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      ...endUserOf(r),
      credentials: byMember.get(r.id) ?? [],
    })),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ctx, last.created_at, last.external_user_id) : null,
  };
}

/** The id is not repeated: whatever a caller pastes into a path (a key, by mistake) must not come back in an error. */
export function endUserNotFound(): DomainError {
  return new DomainError('end_user_not_found', {
    detail: 'This server has no end user with that externalUserId. Ids are matched exactly: case, spaces and Unicode normalisation count.',
  });
}

/**
 * A credential as the read answers it. Its secrets only while it is active: a credential that needs
 * the end user again (a refused refresh, or static values its provider refused: CONTRACT 8.3) answers
 * its error instead, and handing nothing out is no use of it.
 */
async function withSecrets(ctx: ServiceContext, { row, failure }: ReadCredential): Promise<CredentialWithSecrets> {
  if (row.type === 'static') {
    if (row.status !== 'active') return { ...summary(row), ...storedError(row) };
    const secret = keptOpenedSecret(ctx.vault, row);
    if (secret.type !== 'static') throw new Error('a static credential holds OAuth tokens');
    return { ...summary(row), lastUsedAt: await noteUse(ctx, row), values: secret.values };
  }
  const secret = keptOpenedSecret(ctx.vault, row);
  if (secret.type !== 'oauth2') throw new Error('an OAuth credential holds static values');
  const credential = oauthDetails(row);
  if (row.status === 'active') {
    credential.accessToken = secret.accessToken;
    credential.tokenType = secret.tokenType;
    credential.lastUsedAt = await noteUse(ctx, row);
  }
  if (!credential.error && failure) credential.error = failure;
  return credential;
}

/** Why a credential needs the end user again, as stored (refresh_rejected, credential_rejected); nothing where it is active. */
function storedError(row: ReadCredential['row']): Pick<CredentialWithSecrets, 'error'> {
  if (row.status !== 'needs_reauth' || !row.error_code) return {};
  return { error: { code: row.error_code, ...(row.error_message ? { message: row.error_message } : {}) } };
}

/** An OAuth credential as stored beside its secrets: its expiry, scopes and last refresh, and why it needs the end user again. */
function oauthDetails(row: ReadCredential['row']): CredentialWithSecrets {
  const credential: CredentialWithSecrets = {
    ...summary(row),
    expiresAt: row.access_expires_at,
    scopes: row.scopes ? (JSON.parse(row.scopes) as string[]) : [],
    refreshedAt: row.refreshed_at,
    ...storedError(row),
  };
  return credential;
}

/** A credential as a write-only server's read answers it: what is stored beside the secrets, and that they were withheld. */
function withheld(row: ReadCredential['row']): CredentialWithSecrets {
  return { ...(row.type === 'oauth2' ? oauthDetails(row) : { ...summary(row), ...storedError(row) }), secretsWithheld: true };
}

/** The member read (store/audience-repository.ts), and when it began: a refresh attempt after that is its answer too. */
export interface MemberRead extends MemberWithCredentials {
  since: string;
}

/**
 * One member and its credentials as stored, in one statement, with the auth version for the caller
 * to confirm the keys by (api/get-end-user.ts) before openMember answers or refreshes anything.
 */
export async function readMember(ctx: ServiceContext, serverId: string, externalUserId: string): Promise<MemberRead> {
  const since = iso(ctx.clock.now());
  return { since, ...(await ctx.store.audience.memberWithCredentials(serverId, externalUserId)) };
}

/** The member read with every credential's secrets, OAuth tokens refreshed first where they expire within `minValiditySeconds`. */
export async function openMember(
  ctx: ServiceContext,
  { since, member, credentials }: MemberRead,
  externalUserId: string,
  minValiditySeconds: number,
  server: { secretsReadable: boolean },
): Promise<AudienceMemberView<CredentialWithSecrets>> {
  if (!member) throw endUserNotFound();
  // A write-only server's read opens nothing and refreshes nothing: the gateway uses its credentials.
  const shown = { externalUserId, createdAt: member.created_at, updatedAt: member.updated_at, ...endUserOf(member) };
  if (!server.secretsReadable) return { ...shown, credentials: credentials.map(withheld) };
  const read = await Promise.all(credentials.map((row) => readFresh(ctx, row, minValiditySeconds, since)));
  return {
    ...shown,
    credentials: await Promise.all(read.filter((r) => r !== undefined).map((r) => withSecrets(ctx, r))),
  };
}

/**
 * One credential of one member, without its secret: what the dashboard's revoke confirmation names
 * before anything is erased (null where the member or the credential does not exist on this server).
 */
export async function findMemberCredential(ctx: ServiceContext, serverId: string, externalUserId: string, provider: string): Promise<CredentialSummary | null> {
  const row = await ctx.store.credentials.summaryOf(serverId, externalUserId, provider);
  return row ? summary(row) : null;
}

/**
 * A member's credentials, without secrets: what the dashboard's "Remove end user" confirmation checks
 * before offering removal (null where the server has no such member).
 */
export async function findMemberCredentials(ctx: ServiceContext, serverId: string, externalUserId: string): Promise<CredentialSummary[] | null> {
  const memberId = await ctx.store.audience.memberId(serverId, externalUserId);
  if (memberId === undefined) return null;
  return memberCredentialSummaries(ctx, memberId);
}

/** A member's credentials as the list shows them (no secrets), by provider. */
export async function memberCredentialSummaries(ctx: ServiceContext, memberId: string): Promise<CredentialSummary[]> {
  return (await ctx.store.credentials.summariesOfMembers([memberId])).map(summary);
}

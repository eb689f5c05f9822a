/**
 * An account's single sign-on settings (CONTRACT 9), which an admin sets on Team → "Single sign-on":
 * the OpenID Connect issuer, the client id and secret (sealed), the email domains whose people sign
 * in through it, the role a new person joins with, and "Require SSO", which turns passwords off for
 * everyone in the account but its owners (they keep theirs as a break-glass).
 *
 * Saving checks the cheap things first (the issuer's URL under the address policy of CONTRACT 3, the
 * domains, the role), then fetches the issuer's discovery document and JWKS: an issuer that cannot be
 * used is refused with one sentence and nothing is stored. A domain picks one account's provider
 * when a person signs in, so two accounts may not allow the same domain.
 */
import { describeRefusal, outboundUrlRefusal } from '../../outbound/address-policy.js';
import { iso } from '../../primitives/clock.js';
import type { TeamRole } from '../../store/schema.js';
import { recordAudit } from '../audit/audit.js';
import type { ServiceContext } from '../context.js';
import { DomainError, invalid } from '../domain-error.js';
import { sealSsoClientSecret } from '../sealing/sso-client-secret.js';
import { actsWithin, mayAct, type TeamActor } from '../team/team-actor.js';
import { requireWellFormed } from '../well-formed.js';
import { checkSigningKeys, DiscoveryError, discoverProvider } from './sso-provider.js';

/** The roles a person may join with through SSO: any but owner, which only an owner gives. */
export const SSO_JOIN_ROLES = ['viewer', 'developer', 'admin'] as const satisfies readonly TeamRole[];

/** An account may allow this many domains. */
export const MAX_SSO_DOMAINS = 50;

/** A domain as a person types it in an email: labels of letters, digits and inner hyphens, and a dot between two at least. */
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The client's id and secret are sent in a header (client_secret_basic) or a form: no control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The path the provider sends the browser back to (CONTRACT 9): registered at the provider by the admin. */
export function ssoRedirectUri(ctx: ServiceContext): string {
  return `${ctx.publicUrl}/dashboard/sso/callback`;
}

/** The domains of a stored JSON array (never anything but lower-case domains, as saved here). */
export function domainsOf(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((d): d is string => typeof d === 'string') : [];
}

/** What the settings page shows: never the client secret. */
export interface SsoSettings {
  issuer: string;
  clientId: string;
  allowedDomains: string[];
  defaultRole: TeamRole;
  updatedAt: string;
}

export interface SsoState {
  /** Null while the account has no provider. */
  settings: SsoSettings | null;
  required: boolean;
}

export async function ssoState(ctx: ServiceContext, accountId: string): Promise<SsoState> {
  const row = await ctx.store.sso.settingsOf(accountId);
  const required = await ctx.store.sso.required(accountId);
  if (!row) return { settings: null, required };
  return {
    settings: {
      issuer: row.issuer,
      clientId: row.client_id,
      allowedDomains: domainsOf(row.allowed_domains),
      defaultRole: row.default_role,
      updatedAt: row.updated_at,
    },
    required,
  };
}

function requireSsoAdmin(actor: TeamActor, accountId: string): void {
  if (!actsWithin(actor, accountId)) throw new DomainError('account_not_found', { field: 'account', detail: `no account ${accountId}` });
  if (!mayAct(actor, 'team.sso')) throw new DomainError('role_not_allowed', { detail: 'your role cannot change single sign-on' });
}

/** The issuer as typed, checked as a URL Keyward will call (CONTRACT 3), with no query or fragment (OpenID Connect Discovery 1.0). */
function checkIssuer(ctx: ServiceContext, typed: string): string {
  const issuer = typed.trim();
  if (!issuer) throw invalid('issuer', 'enter the issuer URL of your identity provider');
  if (issuer.length > 2048) throw invalid('issuer', 'the issuer URL must be at most 2048 characters');
  const refusal = outboundUrlRefusal(issuer, ctx.outbound.allowPrivateUrls);
  if (refusal) throw invalid('issuer', describeRefusal('issuer URL', refusal));
  if (new URL(issuer).search) throw invalid('issuer', 'the issuer URL must not have a query (?…)');
  return issuer;
}

/** The domains typed (separated by commas, spaces or lines; "@example.com" read as example.com), lower-cased, each once. */
export function parseDomains(typed: string): string[] {
  const domains = [
    ...new Set(
      typed
        .split(/[\s,;]+/)
        .map((d) => d.trim().toLowerCase().replace(/^@/, '').replace(/\.$/, ''))
        .filter(Boolean),
    ),
  ];
  if (domains.length === 0) throw invalid('allowedDomains', 'enter at least one email domain, such as example.com');
  if (domains.length > MAX_SSO_DOMAINS) throw invalid('allowedDomains', `enter at most ${MAX_SSO_DOMAINS} domains`);
  for (const domain of domains) {
    if (!DOMAIN.test(domain)) throw invalid('allowedDomains', `enter email domains such as example.com: “${domain}” is not one`);
  }
  return domains;
}

function checkRole(role: string): TeamRole {
  if (!(SSO_JOIN_ROLES as readonly string[]).includes(role)) throw invalid('defaultRole', `the default role must be one of ${SSO_JOIN_ROLES.join(', ')}`);
  return role as TeamRole;
}

function checkClientId(typed: string): string {
  const clientId = typed.trim();
  if (!clientId) throw invalid('clientId', 'enter the client id your identity provider gave Keyward');
  if (clientId.length > 255 || CONTROL.test(clientId)) throw invalid('clientId', 'the client id must be at most 255 characters, without control characters');
  return clientId;
}

function checkClientSecret(secret: string): string {
  if (secret.length > 1024 || CONTROL.test(secret))
    throw invalid('clientSecret', 'the client secret must be at most 1024 characters, without control characters');
  return secret;
}

/** A domain another account allows already: a domain picks one account's provider. */
async function refuseDomainsOfOthers(ctx: ServiceContext, accountId: string, domains: string[]): Promise<void> {
  for (const other of await ctx.store.sso.domainsOfOtherAccounts(accountId)) {
    const taken = domainsOf(other.allowed_domains).find((d) => domains.includes(d));
    if (taken) throw invalid('allowedDomains', `the domain ${taken} is allowed for single sign-on by another account on this Keyward already`);
  }
}

export interface SsoConfigurationInput {
  accountId: string;
  issuer: string;
  clientId: string;
  /** Empty: keep the stored one (an account with no provider yet must give one). */
  clientSecret: string;
  allowedDomains: string;
  defaultRole: string;
  actor: TeamActor;
}

/**
 * Connects the account's provider, or replaces its settings. Everything is checked before anything is
 * stored, the issuer's discovery document and JWKS last (they are fetched). A new issuer forgets the
 * users' recorded subjects: they were the old issuer's.
 */
export async function configureSso(ctx: ServiceContext, input: SsoConfigurationInput): Promise<void> {
  const { accountId, actor } = input;
  requireSsoAdmin(actor, accountId);
  requireWellFormed({
    issuer: ['issuer URL', input.issuer],
    clientId: ['client id', input.clientId],
    clientSecret: ['client secret', input.clientSecret],
    allowedDomains: ['allowed domains', input.allowedDomains],
  });
  const issuer = checkIssuer(ctx, input.issuer);
  const clientId = checkClientId(input.clientId);
  const clientSecret = checkClientSecret(input.clientSecret);
  const allowedDomains = parseDomains(input.allowedDomains);
  const defaultRole = checkRole(input.defaultRole);
  const existing = await ctx.store.sso.settingsOf(accountId);
  if (!existing && !clientSecret) throw invalid('clientSecret', 'enter the client secret your identity provider gave Keyward');
  await refuseDomainsOfOthers(ctx, accountId, allowedDomains);
  let discoveredIssuer: string;
  try {
    const provider = await discoverProvider(ctx, issuer);
    await checkSigningKeys(ctx, provider);
    // As the document spells it: the ID token's `iss` is compared with this exact text.
    discoveredIssuer = provider.as.issuer;
  } catch (error) {
    if (error instanceof DiscoveryError) throw invalid('issuer', `Keyward cannot use ${issuer} as an OpenID Connect issuer: ${error.reason}`);
    throw error;
  }

  const at = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    if (!(await ctx.store.accounts.lock(accountId, at))) throw new DomainError('account_not_found', { field: 'account', detail: `no account ${accountId}` });
    // Read again under the account's lock: a save in between decides whether this one is the first.
    const before = await ctx.store.sso.settingsOf(accountId);
    await refuseDomainsOfOthers(ctx, accountId, allowedDomains);
    const sealed = clientSecret ? sealSsoClientSecret(ctx.vault, accountId, clientSecret) : before?.client_secret;
    if (!sealed) throw invalid('clientSecret', 'enter the client secret your identity provider gave Keyward');
    await ctx.store.sso.save({
      account_id: accountId,
      issuer: discoveredIssuer,
      client_id: clientId,
      client_secret: sealed,
      allowed_domains: JSON.stringify(allowedDomains),
      default_role: defaultRole,
      created_at: at,
      updated_at: at,
    });
    if (before && before.issuer !== discoveredIssuer) await ctx.store.sso.clearSubjects(accountId);
    // Never the secret: whether it changed.
    await recordAudit(ctx, {
      accountId,
      actor: actor.actor,
      action: 'sso.configured',
      targetId: accountId,
      detail: { issuer: discoveredIssuer, clientId, allowedDomains, defaultRole, first: !before, secretChanged: clientSecret !== '' },
      at,
    });
  });
}

/**
 * Disconnects the account's provider. "Require SSO" goes with it (else nobody but the owners could
 * sign in), and so do the users' recorded subjects. False when the account had no provider.
 */
export async function removeSso(ctx: ServiceContext, input: { accountId: string; actor: TeamActor }): Promise<boolean> {
  const { accountId, actor } = input;
  requireSsoAdmin(actor, accountId);
  const at = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    await ctx.store.accounts.lock(accountId, at);
    const removed = await ctx.store.sso.remove(accountId);
    if (!removed) return false;
    const requireSsoTurnedOff = await ctx.store.sso.setRequired(accountId, false);
    await ctx.store.sso.clearSubjects(accountId);
    await recordAudit(ctx, {
      accountId,
      actor: actor.actor,
      action: 'sso.removed',
      targetId: accountId,
      detail: { issuer: removed.issuer, requireSsoTurnedOff },
      at,
    });
    return true;
  });
}

/** Turns "Require SSO" on or off; false when it already was as asked (nothing recorded). On needs a provider. */
export async function setSsoRequired(ctx: ServiceContext, input: { accountId: string; required: boolean; actor: TeamActor }): Promise<boolean> {
  const { accountId, actor } = input;
  requireSsoAdmin(actor, accountId);
  const at = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    // The account's row lock: a removal of the provider at the same moment waits, or is waited for.
    await ctx.store.accounts.lock(accountId, at);
    if (input.required && !(await ctx.store.sso.settingsOf(accountId))) {
      throw invalid('required', 'connect an identity provider first: Require SSO needs single sign-on to be set up');
    }
    if (!(await ctx.store.sso.setRequired(accountId, input.required))) return false;
    await recordAudit(ctx, { accountId, actor: actor.actor, action: 'account.sso_required_changed', targetId: accountId, detail: { to: input.required }, at });
    return true;
  });
}

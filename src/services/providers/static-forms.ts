/**
 * Hosted static-credential forms: a single-use URL the company hands its end user, who types the
 * provider's fields into a page Keyward serves. Only the token's digest is stored.
 */

import type { StaticField, StaticProvider } from '../../catalog/provider-definition.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import { sha256Hex } from '../../primitives/digest.js';
import { newId } from '../../primitives/ids.js';
import { isToken, newToken } from '../../primitives/random-tokens.js';
import type { ServiceContext } from '../context.js';
import { type NewCredential, storeCredential } from '../credentials/credentials.js';
import { DomainError } from '../domain-error.js';
import { checkValues } from '../gateway/verify-request.js';
import { getServer, isRedirectUriAllowed } from '../servers/servers.js';
import { isWellFormedText } from '../well-formed.js';
import { findServerProvider } from './server-providers.js';

export const MAX_FIELD_LENGTH = 4096;

export interface FormSessionCreated {
  id: string;
  provider: string;
  externalUserId: string;
  status: 'pending';
  url: string;
  expiresAt: string;
  createdAt: string;
  fields: { name: string; label: string; secret: boolean; required: boolean }[];
}

/** The checks both connect routes share: the provider exists, is of the route's kind, is enabled. */
export async function requireEnabledProvider(ctx: ServiceContext, serverId: string, slug: string, kind: 'static' | 'oauth2') {
  const found = await findServerProvider(ctx, serverId, slug);
  if (!found) throw new DomainError('provider_not_found', { detail: `No provider "${slug}" in the catalog or among this server's custom providers.` });
  if (found.provider.kind !== kind) {
    const route = found.provider.kind === 'oauth2' ? 'POST /v1/oauth/{provider}/start' : 'POST /v1/credentials/static/{providerSlug}/connect';
    throw new DomainError('provider_auth_mismatch', {
      detail: `${found.provider.name} uses ${found.provider.kind === 'oauth2' ? 'OAuth' : 'static credentials'}: connect it with ${route}.`,
    });
  }
  if (!found.enabled) {
    throw new DomainError('provider_not_enabled', {
      detail: `${found.provider.name} is not enabled on this server. Enable it in the dashboard (Servers → Providers) or with the CLI.`,
    });
  }
  return found;
}

/**
 * The detail names the place that holds the list, under the names the dashboard shows, and never the
 * URI that was refused (a caller's query string may carry anything).
 */
export async function requireAllowedRedirect(ctx: ServiceContext, serverId: string, redirectUri: string | undefined) {
  if (redirectUri !== undefined && !(await isRedirectUriAllowed(ctx, serverId, redirectUri))) {
    const server = await getServer(ctx, serverId);
    throw new DomainError('redirect_uri_not_allowed', {
      field: 'redirectUri',
      detail:
        "redirectUri must equal one of this server's allowed redirect URIs, character for character. Add it in the dashboard " +
        `(Servers → ${JSON.stringify(server.name)} → Overview → Allowed redirect URIs) or with \`keyward server allow-redirect\`.`,
    });
  }
}

export async function createFormSession(
  ctx: ServiceContext,
  input: { serverId: string; slug: string; externalUserId: string; redirectUri?: string; expiresIn: number },
): Promise<FormSessionCreated> {
  const { provider } = await requireEnabledProvider(ctx, input.serverId, input.slug, 'static');
  await requireAllowedRedirect(ctx, input.serverId, input.redirectUri);
  const nowDate = ctx.clock.now();
  const token = newToken();
  const id = newId('cfs');
  const createdAt = iso(nowDate);
  const expiresAt = iso(addSeconds(nowDate, input.expiresIn));
  await ctx.store.flows.addFormSession({
    id,
    server_id: input.serverId,
    external_user_id: input.externalUserId,
    provider: input.slug,
    token_digest: sha256Hex(token),
    redirect_uri: input.redirectUri ?? null,
    status: 'pending',
    expires_at: expiresAt,
    created_at: createdAt,
    completed_at: null,
    credential_id: null,
  });
  const { fields } = provider as StaticProvider;
  return {
    id,
    provider: input.slug,
    externalUserId: input.externalUserId,
    status: 'pending',
    url: `${ctx.publicUrl}/connect/${token}`,
    expiresAt,
    createdAt,
    fields: fields.map(({ name, label, secret, required }) => ({ name, label, secret, required })),
  };
}

export type OpenForm =
  | { state: 'unknown' }
  | { state: 'gone' }
  | { state: 'open'; id: string; serverId: string; accountId: string; externalUserId: string; redirectUri: string | null; provider: StaticProvider };

/** What a token opens. Used, cancelled and expired forms all read as `gone`: nothing says whose they were. */
export async function openForm(ctx: ServiceContext, token: string): Promise<OpenForm> {
  if (!isToken(token)) return { state: 'unknown' };
  const session = await ctx.store.flows.formSessionByToken(sha256Hex(token));
  if (!session) return { state: 'unknown' };
  if (session.status !== 'pending' || session.expires_at <= iso(ctx.clock.now())) return { state: 'gone' };
  const found = await findServerProvider(ctx, session.server_id, session.provider);
  if (found?.provider.kind !== 'static') return { state: 'gone' };
  return {
    state: 'open',
    id: session.id,
    serverId: session.server_id,
    accountId: session.account_id,
    externalUserId: session.external_user_id,
    redirectUri: session.redirect_uri,
    provider: found.provider,
  };
}

/** A hint closed by one full stop: a custom provider's hint may already end with one (or with "…)", "?"). */
function asSentenceEnd(hint: string): string {
  return /[.!?]$/.test(hint) ? hint : `${hint}.`;
}

/** Checks one field's value; returns the message to show beside it, or null. */
export function fieldError(field: StaticField, value: string): string | null {
  if (!value) return field.required ? `${field.label} is required.` : null;
  if ([...value].length > MAX_FIELD_LENGTH) return `${field.label} must be at most ${MAX_FIELD_LENGTH} characters.`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is this check's purpose.
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${field.label} must not contain control characters.`;
  if (!isWellFormedText(value)) return `${field.label} holds characters that are not valid text.`;
  if (field.pattern && !new RegExp(field.pattern).test(value)) {
    return field.patternHint
      ? `${field.label} does not look right: it must be ${asSentenceEnd(field.patternHint)}`
      : `${field.label} does not have the expected format.`;
  }
  return null;
}

/**
 * A static provider's fields as a browser posted them (the hosted form, the Connect page), each
 * checked: the values to store, the message beside each field that failed, and the non-secret fields
 * as typed, to fill the form again with.
 */
export function readStaticFields(
  fields: readonly StaticField[],
  posted: (name: string) => string,
): { values: Record<string, string>; errors: Record<string, string>; kept: Record<string, string> } {
  // Without a prototype, a field named like an Object.prototype property is stored like any other.
  const values: Record<string, string> = Object.create(null);
  const errors: Record<string, string> = Object.create(null);
  for (const field of fields) {
    // Pasted keys often bring a stray space or line break along; no key format starts or ends with one.
    const value = posted(field.name).trim();
    const error = fieldError(field, value);
    if (error) errors[field.name] = error;
    else if (value) values[field.name] = value;
  }
  const kept = Object.fromEntries(fields.filter((f) => !f.secret).map((f) => [f.name, posted(f.name)]));
  return { values, errors, kept };
}

/** What came of a submission whose fields passed: stored, the form gone meanwhile, or values the provider refused. */
export type FormSubmission = { completed: boolean } | { completed: false; refusedWithStatus: number };

/**
 * Checks the typed values at the provider where it has a verify request (CONTRACT 8.3), then stores
 * them. The check runs before any transaction opens: the provider may take up to its 10 s. Values the
 * provider refuses (401, 403) are not stored and the form stays open for another try; any other
 * answer stores them, with the check's outcome.
 */
export async function submitForm(ctx: ServiceContext, form: Extract<OpenForm, { state: 'open' }>, values: Record<string, string>): Promise<FormSubmission> {
  const check = await checkValues(ctx, form.provider, values);
  if (check?.outcome === 'rejected') return { completed: false, refusedWithStatus: check.status ?? 401 };
  return completeForm(ctx, form, values, check ? { at: check.at, outcome: check.outcome === 'valid' ? 'valid' : 'unreachable' } : undefined);
}

/**
 * Stores the typed values and uses the form up, in one transaction. The guarded UPDATE is what makes
 * the form single-use: of two simultaneous submissions, only one finds it still pending.
 */
export async function completeForm(
  ctx: ServiceContext,
  form: Extract<OpenForm, { state: 'open' }>,
  values: Record<string, string>,
  lastCheck?: NewCredential['lastCheck'],
): Promise<{ completed: boolean }> {
  const now = iso(ctx.clock.now());
  return ctx.store.transaction(async () => {
    if (!(await ctx.store.flows.useFormSession(form.id, now))) return { completed: false };
    const { credentialId } = await storeCredential(ctx, {
      accountId: form.accountId,
      serverId: form.serverId,
      externalUserId: form.externalUserId,
      provider: form.provider.slug,
      secret: { type: 'static', values },
      actor: `end_user:${form.id}`,
      now,
      origin: { sessionId: form.id },
      lastCheck,
    });
    await ctx.store.flows.linkFormSessionCredential(form.id, credentialId);
    return { completed: true };
  });
}

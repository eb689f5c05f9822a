/**
 * For OAuth suites beyond the one `acme` provider of oauth-tenant.ts: more custom providers on the same
 * authorization server, flows through them, and what Keyward stored of a credential (opened with its vault).
 */
import { CLI_ACTOR } from '../../src/services/context.js';
import { openCredentialSecret } from '../../src/services/credentials/credentials.js';
import { addCustomOAuthProvider } from '../../src/services/providers/custom-providers.js';
import type { CredentialRow } from '../../src/store/schema.js';
import type { OAuthTenant } from './oauth-tenant.js';

export interface StoredOAuthCredential {
  id: string;
  accessToken: string;
  refreshToken: string;
  /** The sealed secret's bytes as hex: equal before and after means storage did not change. */
  sealed: string;
}

/** The member's credential row of `provider`, as stored; throws if there is none. */
export async function credentialRow(o: OAuthTenant, externalUserId: string, provider = 'acme'): Promise<CredentialRow> {
  return o.t.ctx.store.db
    .selectFrom('credentials as c')
    .innerJoin('audience_members as m', 'm.id', 'c.member_id')
    .selectAll('c')
    .where('m.server_id', '=', o.tenant.serverId)
    .where('m.external_user_id', '=', externalUserId)
    .where('c.provider', '=', provider)
    .executeTakeFirstOrThrow();
}

/** The member's stored credential of `provider` (an OAuth one with a refresh token); throws if there is none. */
export async function storedCredential(o: OAuthTenant, externalUserId: string, provider = 'acme'): Promise<StoredOAuthCredential> {
  const row = await credentialRow(o, externalUserId, provider);
  const secret = openCredentialSecret(o.t.ctx, row);
  if (secret.type !== 'oauth2' || !secret.refreshToken) throw new Error(`${externalUserId}'s ${provider} credential has no refresh token`);
  return { id: row.id, accessToken: secret.accessToken, refreshToken: secret.refreshToken, sealed: Buffer.from(row.secret).toString('hex') };
}

/** Another custom provider like `acme` (same authorization server and `basic` client), with its own token and revocation URLs. */
export async function addProviderLikeAcme(o: OAuthTenant, slug: string, urls: { tokenUrl?: string; revocationUrl?: string }): Promise<void> {
  await addCustomOAuthProvider(o.t.ctx, {
    serverId: o.tenant.serverId,
    slug,
    name: slug,
    authorizationUrl: o.as.authorizationUrl,
    tokenUrl: urls.tokenUrl ?? o.as.tokenUrl,
    revocationUrl: urls.revocationUrl,
    clientId: o.as.clients.basic.id,
    clientSecret: o.as.clients.basic.secret,
    scopes: ['api:read'],
    tokenAuth: 'client_secret_basic',
    actor: CLI_ACTOR,
  });
}

/** A whole flow through `provider`, ending on the success page; throws otherwise. */
export async function connectTo(o: OAuthTenant, provider: string, externalUserId: string): Promise<void> {
  const start = await o.t.app.inject({ method: 'POST', url: `/v1/oauth/${provider}/start`, headers: o.headers, payload: { externalUserId } });
  if (start.statusCode !== 201) throw new Error(`start answered ${start.statusCode}: ${start.body}`);
  const callback = await o.callback(await o.as.approve(start.json().authorizationUrl));
  if (callback.statusCode !== 200) throw new Error(`the callback answered ${callback.statusCode}: ${callback.body.slice(0, 300)}`);
}

/** Asking the provider to forget a credential's tokens (RFC 7009), once Keyward has erased them itself. */
import type { CredentialSecret } from '../credentials/credentials.js';
import type { ProviderRevocation } from '../webhooks/webhook-events.js';
import { type OAuthClientSettings, ProviderCallError, revokeToken } from './oauth-client.js';

/**
 * The refresh token first: revoking it ends the grant at most providers (RFC 7009 §2.1 lets them), then
 * the access token, which may outlive it elsewhere. `settings` is null where the provider is no longer
 * enabled on the server: there is no client left to ask with.
 */
export async function revokeAtProvider(settings: OAuthClientSettings | null, secret: CredentialSecret): Promise<ProviderRevocation> {
  if (secret.type === 'static') return 'not_supported';
  if (!settings) return 'failed';
  if (!settings.provider.revocationUrl) return 'not_supported';
  try {
    if (secret.refreshToken) await revokeToken(settings, secret.refreshToken, 'refresh_token');
    await revokeToken(settings, secret.accessToken, 'access_token');
    return 'succeeded';
  } catch (error) {
    if (error instanceof ProviderCallError) return 'failed';
    throw error;
  }
}

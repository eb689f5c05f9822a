/**
 * Asking the provider to forget a credential's tokens, once Keyward has erased them itself: at its
 * RFC 7009 endpoint, or through its REST API where it has none (GitHub: api-revocation.ts).
 */
import type { CredentialSecret } from '../credentials/credentials.js';
import type { ProviderRevocation } from '../webhooks/webhook-events.js';
import { revokeThroughApi } from './api-revocation.js';
import { type OAuthClientSettings, ProviderCallError, revokeToken } from './oauth-client.js';

/**
 * RFC 7009: the refresh token first, since revoking it ends the grant at most providers (§2.1 lets
 * them), then the access token, which may outlive it elsewhere. Through the REST API: the access token
 * only, as GitHub's endpoint takes no other (a GitHub App's refresh token is not sent anywhere). `settings`
 * is null where the provider is no longer enabled on the server: there is no client left to ask with.
 */
export async function revokeAtProvider(settings: OAuthClientSettings | null, secret: CredentialSecret): Promise<ProviderRevocation> {
  if (secret.type === 'static') return 'not_supported';
  if (!settings) return 'failed';
  const { revocationUrl, apiRevocation, api } = settings.provider;
  if (!revocationUrl && !(apiRevocation && api)) return 'not_supported';
  try {
    if (revocationUrl) {
      if (secret.refreshToken) await revokeToken(settings, secret.refreshToken, 'refresh_token');
      await revokeToken(settings, secret.accessToken, 'access_token');
    } else {
      await revokeThroughApi(settings, apiRevocation!, secret.accessToken);
    }
    return 'succeeded';
  } catch (error) {
    if (error instanceof ProviderCallError) return 'failed';
    throw error;
  }
}

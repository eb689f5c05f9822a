/**
 * Revoking a token through a provider's REST API, where it has no RFC 7009 endpoint (GitHub's
 * `DELETE /applications/{client_id}/token`). The URL is built as a proxied call's is
 * (gateway/proxy-target.ts), on the provider's own API base URL, so what may be appended to it is the
 * gateway's judgement; the call goes through the outbound module: the address policy, the pinned
 * lookup, no redirect followed, the size cap and the timeout.
 */
import type { ApiRevocation } from '../../catalog/provider-definition.js';
import { KEYWARD_USER_AGENT, OutboundError } from '../../outbound/outbound-http.js';
import { proxyTarget } from '../gateway/proxy-target.js';
import { type OAuthClientSettings, ProviderCallError } from './oauth-client.js';

/** Asks the provider to revoke the access token; throws a ProviderCallError when it did not say it is gone. */
export async function revokeThroughApi(settings: OAuthClientSettings, revocation: ApiRevocation, accessToken: string): Promise<void> {
  const { api } = settings.provider;
  if (!api) throw new ProviderCallError('unavailable', null, 'the provider has no API to revoke through');
  // The client id is one segment's text: percent-encoded, it cannot add a segment or leave the base URL.
  const rawPath = revocation.path.replaceAll('{clientId}', encodeURIComponent(settings.clientId));
  const target = proxyTarget(api, rawPath, '', undefined, settings.outbound.allowPrivateUrls);
  if ('refused' in target) throw new ProviderCallError('unavailable', null, `the revocation URL cannot be built: ${target.refused}`);
  let status: number;
  try {
    const response = await settings.outbound.fetch(target.url.href, {
      method: revocation.method,
      headers: {
        ...revocation.headers,
        // RFC 7617 Basic with the OAuth client (GitHub: "use the application's client_id and client_secret as the username and password").
        authorization: `Basic ${Buffer.from(`${settings.clientId}:${settings.clientSecret}`, 'utf8').toString('base64')}`,
        'content-type': 'application/json',
        'user-agent': KEYWARD_USER_AGENT,
      },
      body: JSON.stringify({ [revocation.tokenField]: accessToken }),
    });
    status = response.status;
  } catch (error) {
    if (error instanceof OutboundError) throw new ProviderCallError('unavailable', null, error.message);
    throw error;
  }
  // Only a success says the token is gone. GitHub's 404 may mean a token it no longer knows, but also
  // a client id and secret it does not accept (its docs list 204 and 422 alone): not counted as revoked.
  if (status === 200 || status === 204) return;
  throw new ProviderCallError(status >= 500 ? 'unavailable' : 'rejected', null, `the provider answered ${status} to the revocation`);
}

/** Readers of an OAuth credential sent at once, and the refreshes the authorization server saw. */
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { OAuthTenant } from './oauth-tenant.js';

/** `count` reads of the member sent at once to each app; the answers' credentials of `provider`, in order. */
export async function readAtOnce(
  apps: FastifyInstance[],
  o: OAuthTenant,
  externalUserId: string,
  count: number,
  minValiditySeconds: number,
  provider = 'acme',
) {
  const url = `/v1/end-users/${externalUserId}?minValiditySeconds=${minValiditySeconds}`;
  const responses = await Promise.all(apps.flatMap((app) => Array.from({ length: count }, () => app.inject({ method: 'GET', url, headers: o.headers }))));
  for (const response of responses) expect(response.statusCode, response.body).toBe(200);
  return responses.map((r) => r.json().credentials.find((c: { provider: string }) => c.provider === provider));
}

/** The refresh requests (and successful refresh grants) the provider has seen since this was called. */
export function refreshCounts(o: OAuthTenant) {
  const requests = o.as.tokenRequests.refresh_token;
  const grants = o.as.grants.refresh_token;
  return () => ({ requests: o.as.tokenRequests.refresh_token - requests, grants: o.as.grants.refresh_token - grants });
}

export const REFRESH_FAILED = { code: 'refresh_failed', retryable: true, message: expect.stringMatching(/\S/) };

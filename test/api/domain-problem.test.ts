/**
 * The management API's one mapping of a service's refusal: every code the contract lists becomes that
 * Problem with the service's detail, a field becomes a validation error's path only for
 * validation_failed, and a code the contract does not list is no answer of the API at all (the error
 * handler turns it into internal_error). Through the real app, test/api/end-users-writes.test.ts and
 * test/oauth/oauth-start.test.ts see the same refusals reach /v1 with their exact bodies.
 */
import { describe, expect, it } from 'vitest';
import { problemOf } from '../../src/api/domain-problem.js';
import { DOMAIN_ERROR_CODES, DomainError, type DomainErrorCode } from '../../src/services/domain-error.js';
import { ERRORS } from '../../src/web/problem.js';

const CODES = Object.keys(DOMAIN_ERROR_CODES) as DomainErrorCode[];

/** The codes of CONTRACT 2.2 and 8.1 a service decides (the others come from the guard, the framework or the route). */
const CONTRACT_CODES: DomainErrorCode[] = [
  'validation_failed',
  'invalid_cursor',
  'redirect_uri_not_allowed',
  'provider_not_found',
  'end_user_not_found',
  'credential_not_found',
  'key_limit_reached',
  'provider_not_enabled',
  'provider_auth_mismatch',
  'idempotency_key_reused',
  // The gateway's (CONTRACT 8.1).
  'credential_needs_reauth',
  'proxy_not_supported',
  'proxy_target_not_allowed',
  'provider_unavailable',
  'provider_timeout',
];

describe('problemOf', () => {
  it.each(CONTRACT_CODES)('answers %s as the contract Problem of that code, with the service’s detail', (code) => {
    const problem = problemOf(new DomainError(code, { detail: `refused as ${code}` }))!;
    expect(problem).not.toBeNull();
    expect(problem.code).toBe(code);
    expect(problem.status).toBe(ERRORS[code as keyof typeof ERRORS].status);
    expect(problem.detail).toBe(`refused as ${code}`);
    expect(problem.errors).toEqual(code === 'validation_failed' ? [] : undefined);
  });

  it('answers no other code: each is a bug if it reaches /v1', () => {
    const others = CODES.filter((code) => !CONTRACT_CODES.includes(code));
    expect(others.length).toBeGreaterThan(0);
    for (const code of others) expect(problemOf(new DomainError(code, { detail: 'x' })), code).toBeNull();
  });

  it('names a validation_failed field by where it was read, and a field of another code nowhere', () => {
    const refused = new DomainError('validation_failed', { field: 'redirectUri', detail: 'the redirect URI must not have a fragment' });
    expect(problemOf(refused)!.errors).toEqual([{ path: '/body/redirectUri', message: 'the redirect URI must not have a fragment' }]);
    expect(problemOf(refused, 'query')!.errors).toEqual([{ path: '/query/redirectUri', message: 'the redirect URI must not have a fragment' }]);
    const notAllowed = problemOf(new DomainError('redirect_uri_not_allowed', { field: 'redirectUri', detail: 'not on the list' }))!;
    expect(notAllowed.errors).toBeUndefined();
  });

  it('takes no stack trace: a refusal is an answer, not a fault', () => {
    const error = new DomainError('server_not_found', { detail: 'no server srv_x' });
    expect(error.stack?.split('\n')).toEqual(['DomainError: no server srv_x']);
    expect(error.message).toBe('no server srv_x');
  });
});

/**
 * The fifteen steps of CONTRACT 2.1 as data: for each step, requests whose first failing condition is
 * that step (made with the real keys and servers of auth-fixture.ts), and the checks every guard
 * answer must pass. test/api/auth-matrix.test.ts runs it against every /v1 route in the app's route table.
 */
import { connect } from 'node:net';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import type { AuthFixture } from './auth-fixture.js';
import type { MatrixRoute } from './route-table.js';

export const STEPS: Record<number, { status: number; code: string }> = {
  1: { status: 403, code: 'browser_access_forbidden' },
  2: { status: 400, code: 'duplicate_header' },
  3: { status: 401, code: 'account_key_missing' },
  4: { status: 401, code: 'keys_swapped' },
  5: { status: 401, code: 'account_key_malformed' },
  6: { status: 401, code: 'service_key_missing' },
  7: { status: 401, code: 'service_key_malformed' },
  8: { status: 401, code: 'account_key_invalid' },
  9: { status: 401, code: 'account_key_revoked' },
  10: { status: 401, code: 'account_key_expired' },
  11: { status: 401, code: 'service_key_invalid' },
  12: { status: 401, code: 'service_key_revoked' },
  13: { status: 403, code: 'server_access_denied' },
  14: { status: 403, code: 'server_not_business_mode' },
  15: { status: 429, code: 'rate_limited' },
};
export const GUARD_CODES = new Set(Object.values(STEPS).map((s) => s.code));
const INVALID_TOKEN_STEPS = new Set([4, 5, 8, 9, 10]);
export const GENERATED_REQUEST_ID = /^req_[0-9a-f]{32}$/;

const hex = (char: string, upper: boolean) => {
  const code = `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
  return upper ? code.toUpperCase() : code.toLowerCase();
};

/**
 * Other spellings of a route's path that the router decodes to the very same route, so the guard must
 * meet them there too: the `v` of /v1 as `%76`; the first letter of every later segment escaped in
 * lowercase hex; and every character of every segment escaped in uppercase hex. None uses `%2F`, which
 * the router keeps as a slash inside a segment (another path, not another spelling).
 */
export function encodedVariants(route: MatrixRoute): MatrixRoute[] {
  // Only the path is spelled otherwise: a query string (`?provider=…`) is kept as it is.
  const [path = '', query] = route.path.split('?', 2);
  const [, version, ...rest] = path.split('/');
  const search = query === undefined ? '' : `?${query}`;
  const spell = (spelled: string, how: string): MatrixRoute => ({ ...route, name: `${route.name}, spelled ${spelled} (${how})`, path: spelled + search });
  const firstEscaped = (segment: string) => hex(segment[0]!, false) + segment.slice(1);
  const allEscaped = (segment: string) => [...segment].map((c) => hex(c, true)).join('');
  return [
    spell(`/%761/${rest.join('/')}`, '%76'),
    spell(`/${version!.slice(0, 1)}%31/${rest.map(firstEscaped).join('/')}`, 'lowercase hex'),
    spell(`/${[version!, ...rest].map(allEscaped).join('/')}`, 'uppercase hex'),
  ];
}

/** The same key with its last checksum character changed: right shape, wrong CRC-32. */
export function withBadChecksum(key: string): string {
  return key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
}

export const bearer = (key: string) => `Bearer ${key}`;

export type Headers = Record<string, string | string[]>;
export interface GuardRequest {
  method?: 'OPTIONS';
  headers: Headers;
}
export interface GuardCase {
  step: number;
  title: string;
  request(f: AuthFixture): GuardRequest;
}

const both = (f: AuthFixture, accountKey = f.tenant.accountKey, serverKey = f.tenant.serverKey): Headers => ({
  authorization: bearer(accountKey),
  'x-service-key': serverKey,
});

/** One or more requests for each of steps 1–14 whose first failing condition is exactly that step. */
export const GUARD_CASES: GuardCase[] = [
  { step: 1, title: 'an Origin header on an otherwise valid request', request: (f) => ({ headers: { ...both(f), origin: 'https://app.example' } }) },
  { step: 1, title: 'the OPTIONS method', request: (f) => ({ method: 'OPTIONS', headers: both(f) }) },
  {
    step: 2,
    title: 'Authorization sent twice',
    request: (f) => ({ headers: { ...both(f), authorization: [bearer(f.tenant.accountKey), bearer(f.tenant.accountKey)] } }),
  },
  { step: 2, title: 'x-service-key sent twice', request: (f) => ({ headers: { ...both(f), 'x-service-key': [f.tenant.serverKey, f.tenant.serverKey] } }) },
  { step: 3, title: 'no Authorization header', request: (f) => ({ headers: { 'x-service-key': f.tenant.serverKey } }) },
  {
    step: 3,
    title: 'the Basic scheme',
    request: (f) => ({ headers: { ...both(f), authorization: `Basic ${Buffer.from(`${f.tenant.accountKey}:`).toString('base64')}` } }),
  },
  { step: 3, title: 'the key without a scheme', request: (f) => ({ headers: { ...both(f), authorization: f.tenant.accountKey } }) },
  { step: 4, title: "the keys in each other's headers", request: (f) => ({ headers: both(f, f.tenant.serverKey, f.tenant.accountKey) }) },
  { step: 4, title: 'the server key as the Bearer value', request: (f) => ({ headers: both(f, f.tenant.serverKey) }) },
  { step: 4, title: 'an account key in x-service-key', request: (f) => ({ headers: both(f, f.tenant.accountKey, f.neverIssuedAccountKey) }) },
  { step: 5, title: 'an account key with a wrong checksum', request: (f) => ({ headers: both(f, withBadChecksum(f.tenant.accountKey)) }) },
  { step: 5, title: 'a Bearer value of the wrong shape', request: (f) => ({ headers: both(f, 'service_acct_0123456789abcdef') }) },
  { step: 5, title: 'an empty Bearer value', request: (f) => ({ headers: { ...both(f), authorization: 'Bearer' } }) },
  { step: 6, title: 'no x-service-key header', request: (f) => ({ headers: { authorization: bearer(f.tenant.accountKey) } }) },
  { step: 6, title: 'an empty x-service-key', request: (f) => ({ headers: both(f, f.tenant.accountKey, '') }) },
  { step: 7, title: 'a server key with a wrong checksum', request: (f) => ({ headers: both(f, f.tenant.accountKey, withBadChecksum(f.tenant.serverKey)) }) },
  { step: 7, title: 'an x-service-key of the wrong shape', request: (f) => ({ headers: both(f, f.tenant.accountKey, 'service_srv_0123456789abcdef') }) },
  { step: 8, title: 'a well-formed account key never issued', request: (f) => ({ headers: both(f, f.neverIssuedAccountKey) }) },
  { step: 9, title: 'a revoked account key', request: (f) => ({ headers: both(f, f.revokedAccountKey) }) },
  { step: 10, title: 'an account key past its expiresAt', request: (f) => ({ headers: both(f, f.expiredAccountKey) }) },
  { step: 11, title: 'a well-formed server key never issued', request: (f) => ({ headers: both(f, f.tenant.accountKey, f.neverIssuedServerKey) }) },
  { step: 12, title: 'a server key rotated out with no grace', request: (f) => ({ headers: both(f, f.tenant.accountKey, f.rotatedOutServerKey) }) },
  { step: 13, title: 'the server of another account', request: (f) => ({ headers: both(f, f.tenant.accountKey, f.otherAccountServerKey) }) },
  { step: 14, title: 'a personal-mode server', request: (f) => ({ headers: both(f, f.tenant.accountKey, f.personalServerKey) }) },
];

/** Requests failing several conditions at once: the earliest step must win. */
export const PRECEDENCE_CASES: GuardCase[] = [
  { step: 1, title: 'an Origin and no keys at all', request: () => ({ headers: { origin: 'https://app.example' } }) },
  { step: 1, title: 'OPTIONS and no keys at all', request: () => ({ method: 'OPTIONS', headers: {} }) },
  {
    step: 1,
    title: 'an Origin, Authorization twice and swapped keys',
    request: (f) => ({
      headers: { origin: 'https://app.example', authorization: [bearer(f.tenant.serverKey), bearer(f.tenant.serverKey)], 'x-service-key': f.tenant.accountKey },
    }),
  },
  {
    step: 2,
    title: 'Authorization twice and swapped keys',
    request: (f) => ({ headers: { authorization: [bearer(f.tenant.serverKey), bearer(f.tenant.serverKey)], 'x-service-key': f.tenant.accountKey } }),
  },
  { step: 2, title: 'x-service-key twice and no Authorization', request: (f) => ({ headers: { 'x-service-key': [f.tenant.serverKey, f.tenant.serverKey] } }) },
  { step: 3, title: 'no Authorization and an account key in x-service-key', request: (f) => ({ headers: { 'x-service-key': f.tenant.accountKey } }) },
  { step: 4, title: 'the server key as Bearer and no x-service-key', request: (f) => ({ headers: { authorization: bearer(f.tenant.serverKey) } }) },
  {
    step: 4,
    title: 'a malformed Bearer value and an account key in x-service-key',
    request: (f) => ({ headers: both(f, 'service_acct_zz', f.tenant.accountKey) }),
  },
  { step: 5, title: 'a bad checksum and no x-service-key', request: (f) => ({ headers: { authorization: bearer(withBadChecksum(f.tenant.accountKey)) } }) },
  { step: 6, title: 'a revoked account key and no x-service-key', request: (f) => ({ headers: { authorization: bearer(f.revokedAccountKey) } }) },
  {
    step: 7,
    title: 'a never-issued account key and a malformed server key',
    request: (f) => ({ headers: both(f, f.neverIssuedAccountKey, withBadChecksum(f.tenant.serverKey)) }),
  },
  {
    step: 8,
    title: 'a never-issued account key and a personal-mode server',
    request: (f) => ({ headers: both(f, f.neverIssuedAccountKey, f.personalServerKey) }),
  },
  { step: 9, title: 'a revoked account key and a personal-mode server', request: (f) => ({ headers: both(f, f.revokedAccountKey, f.personalServerKey) }) },
  { step: 9, title: 'a key both revoked and expired', request: (f) => ({ headers: both(f, f.revokedAndExpiredAccountKey) }) },
  {
    step: 10,
    title: 'an expired account key and a never-issued server key',
    request: (f) => ({ headers: both(f, f.expiredAccountKey, f.neverIssuedServerKey) }),
  },
  {
    step: 10,
    title: "an expired account key and another account's server",
    request: (f) => ({ headers: both(f, f.expiredAccountKey, f.otherAccountServerKey) }),
  },
  {
    step: 12,
    title: "a rotated-out key of another account's server",
    request: (f) => ({ headers: both(f, f.tenant.accountKey, f.otherAccountRotatedOutServerKey) }),
  },
  { step: 13, title: "another account's personal-mode server", request: (f) => ({ headers: both(f, f.tenant.accountKey, f.otherAccountPersonalServerKey) }) },
];

export function send(app: FastifyInstance, route: MatrixRoute, request: GuardRequest, extra: Partial<InjectOptions> = {}) {
  const method = request.method ?? route.method;
  const payload = method === route.method ? route.body : undefined;
  return app.inject({ method, url: route.path, headers: request.headers, ...(payload ? { payload } : {}), ...extra });
}

/** Every key-like value a request carried: what must never come back. */
export function secretsOf(headers: Headers): string[] {
  const values = Object.entries(headers)
    .filter(([name]) => name === 'authorization' || name === 'x-service-key')
    .flatMap(([, value]) => (Array.isArray(value) ? value : [value]))
    .map((value) => value.replace(/^(bearer|basic)\s+/i, ''));
  // The 64 random hex alone would be an echo too; very short values could match by chance.
  return [...values, ...values.map((v) => v.replace(/^service_(acct|srv)_/, ''))].filter((v) => v.length >= 12);
}

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

export function expectNoEcho(response: Answer, secrets: string[], logs: string[]) {
  const seen = `${response.body}\n${JSON.stringify(response.headers)}\n${logs.join('\n')}`;
  for (const secret of secrets) expect(seen).not.toContain(secret);
}

/** The full contract of a guard refusal at `step`. */
export function expectRefusal(response: Answer, step: number, f: AuthFixture, secrets: string[], logs: string[]) {
  const expected = STEPS[step]!;
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect({ status: response.statusCode, code: body.code }).toEqual(expected);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json(;|$)/);
  expect(body).toMatchObject({ type: `/errors/${expected.code}`, status: expected.status, requestId: response.headers['x-request-id'] });
  expect(typeof body.detail).toBe('string');
  expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
  expect(response.headers['ratelimit-policy']).toBe(`"default";q=${f.rateLimitPerMinute};w=60`);
  if (expected.status === 401) {
    expect(response.headers['www-authenticate']).toBe(
      INVALID_TOKEN_STEPS.has(step) ? 'Bearer realm="keyward", error="invalid_token"' : 'Bearer realm="keyward"',
    );
  } else {
    expect(response.headers['www-authenticate']).toBeUndefined();
  }
  if (step === 15) expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
  else expect(response.headers['retry-after']).toBeUndefined();
  expectNoEcho(response, secrets, logs);
}

/** A request the guard let through: the handler's own answer, never a guard code. */
export function expectPassed(response: Answer, route: MatrixRoute, secrets: string[], logs: string[]) {
  const code = response.headers['content-type']?.toString().includes('json') ? (JSON.parse(response.body) as { code?: string }).code : undefined;
  expect({ status: response.statusCode, code }).toEqual({ status: route.ok.status, code: route.ok.code });
  expect(GUARD_CODES.has(code ?? '')).toBe(false);
  expect(response.headers['www-authenticate']).toBeUndefined();
  expect(response.headers['x-request-id']).toMatch(GENERATED_REQUEST_ID);
  expect(response.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
  expectNoEcho(response, secrets, logs);
}

/** One HTTP/1.1 request over a real socket, for what app.inject only simulates (Node's own header parsing). */
export function rawHttp(port: number, requestLine: string, headerLines: string[], body = ''): Promise<Answer> {
  const head = [requestLine, 'Host: 127.0.0.1', ...headerLines, 'Connection: close', `Content-Length: ${Buffer.byteLength(body)}`];
  return rawExchange(port, `${head.join('\r\n')}\r\n\r\n${body}`);
}

/** Writes `request` as it is (no header added) and reads the one answer until the server closes. */
export function rawExchange(port: number, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const split = data.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = data.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ statusCode: Number(statusLine.split(' ')[1]), headers, body: data.slice(split + 4) });
    });
    socket.write(request);
  });
}

/**
 * The fuzz's hostile input: a seeded generator (FUZZ_SEED replays another run) and what it makes of
 * paths, query strings, headers, JSON and form bodies. Used by fuzz-api.test.ts and fuzz-pages.test.ts.
 */
import type { Tenant } from '../helpers/test-app.js';
import { keys } from '../helpers/test-app.js';

export const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Gen = ReturnType<typeof generator>;

export const ODD_TEXT = [
  '',
  ' ',
  'a',
  'u_42',
  'auth0|u42',
  'caf\u00e9',
  'cafe\u0301',
  '\u{1F600}',
  'alice\ud800',
  'alice\udc00',
  '\udbff\udfff',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u009f',
  '\u2028',
  '\ufeff',
  '\ufffd',
  '<script>alert(1)</script>',
  '"><img src=x>',
  "' OR 1=1 --",
  '%',
  '%zz',
  '%00',
  '../..',
  '/',
  '\\',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'x'.repeat(256),
  'y'.repeat(4097),
  '\u{10FFFF}',
  'null',
  'NaN',
  '-0',
] as const;
const ODD_NUMBERS = [0, -1, 1, 59, 60, 3600, 3601, 86400, 86401, 1e21, -1e21, 2 ** 53 + 1, 0.5, Number.MAX_VALUE, Number.MIN_VALUE] as const;
export const PATH_PIECES = [
  '%zz',
  '%c0%af',
  '%ED%A0%80',
  '%ed%b0%80',
  '%E0%A4%A',
  '%',
  '%25',
  '%2F',
  '%2f',
  '%00',
  '%0A',
  '%20',
  '..',
  '.',
  '',
  ';x=1',
  '%3F',
  '%23',
  'x'.repeat(300),
  'y'.repeat(5000),
  '%F0%9F%98%80',
  'auth0%7Cu42',
  '\u00e9',
  '%FF',
  '%C3',
  '__proto__',
  'constructor',
] as const;
const V1_PATHS = [
  '/v1/oauth/github/start',
  '/v1/oauth/acme/start',
  '/v1/credentials/static/openai/connect',
  '/v1/credentials/static/github/connect',
  '/v1/end-users',
  '/v1/end-users/u_fuzz',
  '/v1/connect-sessions',
  '/v1',
  '/v1/',
];
export const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD'] as const;
export const BODY_FIELDS = [
  'externalUserId',
  'redirectUri',
  'scopes',
  'expiresIn',
  'providers',
  'allowedOrigins',
  'endUser',
  '__proto__',
  'constructor',
  'prototype',
  'extra',
];
const QUERY_NAMES = ['limit', 'cursor', 'provider', 'prefix', 'minValiditySeconds', '__proto__', 'constructor[prototype]', 'notice', 'limit[]', ''];

export function oddValue(g: Gen, depth = 0): unknown {
  switch (g.int(depth > 3 ? 3 : 7)) {
    case 0:
      return g.pick(ODD_TEXT);
    case 1:
      return g.pick(ODD_NUMBERS);
    case 2:
      return g.pick([true, false, null]);
    case 3:
      return Array.from({ length: g.int(4) }, () => oddValue(g, depth + 1));
    case 4:
      return Object.fromEntries(Array.from({ length: g.int(4) }, () => [g.pick(BODY_FIELDS), oddValue(g, depth + 1)]));
    case 5:
      return `${g.pick(ODD_TEXT)}${g.pick(ODD_TEXT)}`;
    default:
      return g.pick(ODD_TEXT).repeat(1 + g.int(3));
  }
}

/** A JSON text, often not quite one: deep nesting, huge numbers, prototype keys written literally. */
export function oddJson(g: Gen, planted: string): string {
  switch (g.int(9)) {
    case 0:
      return `${'['.repeat(2000 + g.int(20000))}${']'.repeat(g.int(2) ? 0 : 2000)}`;
    case 1:
      return `{"externalUserId":"u","expiresIn":${g.pick(['1e400', '123456789012345678901234567890', '-1e400', '1.5', '0x10', 'NaN', 'Infinity'])}}`;
    case 2:
      return `{"__proto__":{"isAdmin":true},"externalUserId":"u_${g.int(9)}"}`;
    case 3:
      return `{"constructor":{"prototype":{"polluted":1}},"externalUserId":"u"}`;
    case 4:
      return `{"externalUserId":"${g.pick(['alice\\ud800', 'alice\\udc00', '\\u0000', 'ok', '\\uDBFF'])}"${g.chance(0.5) ? `,"${planted}":1` : ''}}`;
    case 5:
      return g.pick(['', 'null', '[]', '"x"', '1', '{', '{"a":', '{"externalUserId":"u",}', '\ufeff{}', '{"externalUserId":"u"}{"x":1}']);
    case 6:
      return JSON.stringify({ externalUserId: planted, redirectUri: `https://x.example/${planted}` });
    default:
      return JSON.stringify(oddValue(g) ?? null);
  }
}

export function oddPath(g: Gen, planted: string): string {
  const base = g.pick(V1_PATHS);
  const segments = base.split('/');
  switch (g.int(8)) {
    case 0: // Spell a segment differently: escaped letters, in either hex case.
      return segments.map((s) => (g.chance(0.4) ? [...s].map((c) => (g.chance(0.5) ? `%${c.charCodeAt(0).toString(16)}` : c)).join('') : s)).join('/');
    case 1:
      return `${base}/${g.pick(PATH_PIECES)}`;
    case 2:
      return `/v1/end-users/${g.pick(PATH_PIECES)}${g.pick(PATH_PIECES)}`;
    case 3:
      return `/v1/end-users/${planted}${g.pick(PATH_PIECES)}`;
    case 4:
      return base.replace('/v1', g.pick(['/%761', '/V1', '//v1', '/v1/', '/v%31', '/%76%31', '/./v1', '/v1/..']));
    case 5:
      return `/v1/${g.pick(PATH_PIECES)}/${planted}`;
    default:
      return base;
  }
}

export function oddQuery(g: Gen, planted: string): string {
  if (g.chance(0.4)) return '';
  const pairs = Array.from({ length: 1 + g.int(4) }, () => {
    const name = g.pick(QUERY_NAMES);
    const value = g.chance(0.7) ? encodeText(g.pick(ODD_TEXT)) : g.pick(['%zz', '%ED%A0%80', planted, '1e9', '-5', '101', '', '%']);
    return `${name}=${value}`;
  });
  return `?${pairs.join('&')}`;
}

/** Percent-encodes text where it can be (a lone surrogate cannot be): then raw, as a careless client would. */
export function encodeText(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text;
  }
}

export function oddHeaders(g: Gen, tenant: Tenant, planted: string): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = g.chance(0.5) ? { ...keys(tenant) } : {};
  const extras: [string, () => string | string[]][] = [
    [
      'authorization',
      () => g.pick([`Bearer ${planted}`, `bearer ${planted}x`, 'Bearer', `Basic ${planted}`, 'Bearer service_acct_', `Bearer ${'a'.repeat(5000)}`]),
    ],
    ['x-service-key', () => g.pick([planted, '', tenant.serverKey.toUpperCase(), 'service_srv_zz', [tenant.serverKey, tenant.serverKey]])],
    ['origin', () => g.pick(['https://evil.example', 'null', planted])],
    ['x-request-id', () => g.pick([planted, 'ok-id_1', 'bad id', 'x'.repeat(200), '../../etc'])],
    ['idempotency-key', () => g.pick([planted, 'k-1', '', 'é', 'x'.repeat(300), '\t'])],
    [
      'content-type',
      () =>
        g.pick([
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=latin1',
          'application/xml',
          '',
        ]),
    ],
    ['accept', () => g.pick(['text/html', 'application/problem+json', '*/*', ''])],
    ['x-forwarded-for', () => g.pick(['1.2.3.4', 'garbage', planted])],
    ['cookie', () => g.pick([`keyward_form_csrf=${planted}`, 'keyward_session=x', '=;=;', 'a'.repeat(3000)])],
  ];
  for (const [name, value] of extras) if (g.chance(0.15)) headers[name] = value();
  return headers;
}

/**
 * A form body. Pages give back what a person typed in a plain field when they refuse it (so it need not
 * be typed again): the key is planted only where nothing is given back (secret fields, tokens, junk names).
 */
const NEVER_SHOWN = new Set(['apiKey', 'password', 'clientSecret', 'oauthClientSecret', 'csrf', 'once']);
export function oddForm(g: Gen, names: readonly string[], planted: string, options: { extras: boolean } = { extras: true }): string {
  const params = new URLSearchParams();
  const value = (name: string) => (NEVER_SHOWN.has(name) && g.chance(0.3) ? planted : String(g.pick(ODD_TEXT)).replace(/[\ud800-\udfff]/g, 'x'));
  for (const name of names) {
    if (g.chance(0.8)) params.append(name, value(name));
    // A field sent twice arrives as a list where the handler expects one text.
    if (g.chance(0.1)) params.append(name, value(name));
  }
  // Without extras, only the form's own names: a body its schema may take, so the handler reads it.
  if (!options.extras) return params.toString();
  for (let i = g.int(3); i > 0; i -= 1) params.append(g.pick(['__proto__', 'constructor', 'toString', 'csrf', 'once', 'x']), g.pick(['1', '', planted]));
  let body = params.toString();
  if (g.chance(0.2)) body += g.pick(['&%zz=1', '&a=%ED%A0%80', '&=', '&&', '&b=%']);
  return body;
}

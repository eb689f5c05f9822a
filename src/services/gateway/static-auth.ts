/**
 * How a static provider's stored values are sent to its API (CONTRACT 3, `auth`), for the proxy and
 * the checks of 8.3: `bearer:FIELD` (`Authorization: Bearer {FIELD}`), `header:NAME:TEMPLATE`,
 * `basic:USER_TEMPLATE:PASS_TEMPLATE` or `query:NAME:FIELD`, where a TEMPLATE is text with
 * `{fieldName}` placeholders. Pure: parsed once where a provider is defined (a refusal names what is
 * wrong), applied per call.
 */

export type StaticAuth =
  | { kind: 'bearer'; field: string }
  | { kind: 'header'; name: string; template: string }
  | { kind: 'basic'; user: string; password: string }
  | { kind: 'query'; name: string; field: string };

/** What the call carries for the credential: headers to set (replacing the caller's), query parameters to set. */
export interface InjectedAuth {
  headers: Record<string, string>;
  query: [name: string, value: string][];
}

/** An RFC 9110 token: what a header name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A `{fieldName}` placeholder of a template (auth's, and verify's path: provider-api.ts). */
export const PLACEHOLDER = /\{([^{}]*)\}/g;
const HAS_PLACEHOLDER = /\{[^{}]*\}/;
/**
 * Headers an `auth` may not set: the ones the proxy removes or computes itself (8.1), where a value
 * would be dropped, or would change the framing of the request or its destination.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'cookie',
  'x-service-key',
  'forwarded',
  'proxy-authorization',
  'expect',
]);
/**
 * What a header value may not hold: a control character but tab (it would end or split the header),
 * or anything past U+00FF (HTTP carries bytes; the outbound client refuses such a value outright).
 */
const NOT_IN_A_HEADER = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * Why `spec` is not of an `auth`'s shape at all (CONTRACT 3: `bearer:F`, `header:N:T`, `basic:U:P`,
 * `query:N:F`, each part there), or null: what a CLI flag calls malformed. Whether the fields it names
 * are the provider's, and what its templates hold, parseStaticAuth judges.
 */
export function staticAuthShapeRefusal(spec: string): string | null {
  const [kind = '', ...parts] = spec.split(':');
  const shapes: Record<string, (p: string[]) => boolean> = {
    bearer: (p) => p.length === 1 && p[0] !== '',
    header: (p) => p.length >= 2 && p[0] !== '' && p.slice(1).join(':') !== '',
    basic: (p) => p.length >= 2,
    query: (p) => p.length === 2 && p[0] !== '' && p[1] !== '',
  };
  const fits = Object.hasOwn(shapes, kind) && shapes[kind]!(parts);
  return fits ? null : 'must be bearer:F, header:N:T, basic:U:P or query:N:F';
}

/** The spec parsed, its fields checked against the provider's; or why it cannot be used. */
export function parseStaticAuth(spec: string, fieldNames: readonly string[]): StaticAuth | { refused: string } {
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? '' : spec.slice(colon + 1);
  const known = (field: string) => fieldNames.includes(field);
  const templateRefusal = (template: string): string | null => {
    for (const [, name] of template.matchAll(PLACEHOLDER)) {
      if (!known(name!)) return `{${name}} names no field of the provider (${fieldNames.join(', ')})`;
    }
    if (template.replace(PLACEHOLDER, '').match(/[{}]/)) return 'a { or } that is not part of a {fieldName} placeholder';
    if (NOT_IN_A_HEADER.test(template)) return 'a control character, or a character no header can carry';
    return null;
  };
  switch (kind) {
    case 'bearer':
      return known(rest) ? { kind: 'bearer', field: rest } : { refused: `bearer:FIELD names no field of the provider: "${rest}"` };
    case 'query': {
      const [name = '', field = '', ...extra] = rest.split(':');
      if (name === '' || extra.length > 0 || /[&=#?\s]/.test(name)) return { refused: 'query:NAME:FIELD needs a parameter name and one field' };
      return known(field) ? { kind: 'query', name, field } : { refused: `query:NAME:FIELD names no field of the provider: "${field}"` };
    }
    case 'header': {
      const at = rest.indexOf(':');
      const name = at < 0 ? rest : rest.slice(0, at);
      const template = at < 0 ? '' : rest.slice(at + 1);
      if (!TOKEN.test(name)) return { refused: `header:NAME:TEMPLATE needs a header name: "${name}"` };
      const lower = name.toLowerCase();
      if (RESERVED_HEADERS.has(lower) || lower.startsWith('keyward-') || lower.startsWith('x-forwarded-')) {
        return { refused: `header:NAME:TEMPLATE may not set ${name}` };
      }
      const refusal = templateRefusal(template);
      if (refusal) return { refused: `header:NAME:TEMPLATE: ${refusal}` };
      if (!HAS_PLACEHOLDER.test(template)) return { refused: 'header:NAME:TEMPLATE sends no field: its template has no {fieldName}' };
      return { kind: 'header', name: lower, template };
    }
    case 'basic': {
      // The user part is what comes before the first ":" (a user name cannot hold one, RFC 7617).
      const at = rest.indexOf(':');
      if (at < 0) return { refused: 'basic:USER_TEMPLATE:PASS_TEMPLATE needs a ":" between the user and the password' };
      const user = rest.slice(0, at);
      const password = rest.slice(at + 1);
      const refusal = templateRefusal(user) ?? templateRefusal(password);
      if (refusal) return { refused: `basic:USER_TEMPLATE:PASS_TEMPLATE: ${refusal}` };
      if (!HAS_PLACEHOLDER.test(user + password)) return { refused: 'basic:USER_TEMPLATE:PASS_TEMPLATE sends no field' };
      return { kind: 'basic', user, password };
    }
    default:
      return { refused: `auth must start with bearer:, header:, basic: or query:, not "${kind}"` };
  }
}

/** `{fieldName}` placeholders filled with the stored values (a field with no value: empty). */
export function fillTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(PLACEHOLDER, (_, name: string) => values[name] ?? '');
}

/**
 * What the call carries for these values. A value that would break the request's framing (a control
 * character in a header) is refused: it is the stored credential that is wrong, not the call.
 */
export function injectedAuth(auth: StaticAuth, values: Readonly<Record<string, string>>): InjectedAuth | { refused: string } {
  const header = (name: string, value: string): InjectedAuth | { refused: string } =>
    NOT_IN_A_HEADER.test(value)
      ? { refused: 'a stored value holds a control character, or a character no header can carry' }
      : { headers: { [name]: value }, query: [] };
  switch (auth.kind) {
    case 'bearer':
      return header('authorization', `Bearer ${values[auth.field] ?? ''}`);
    case 'header':
      return header(auth.name, fillTemplate(auth.template, values));
    case 'basic': {
      const user = fillTemplate(auth.user, values);
      if (user.includes(':')) return { refused: 'a stored user name holds a ":", which basic authentication cannot carry' };
      return header('authorization', `Basic ${Buffer.from(`${user}:${fillTemplate(auth.password, values)}`, 'utf8').toString('base64')}`);
    }
    case 'query':
      return { headers: {}, query: [[auth.name, values[auth.field] ?? '']] };
  }
}

/**
 * The query string with the injected parameters set: any the caller sent under the same names are
 * dropped, so that a caller cannot put another value beside (or before) the stored one. The caller's
 * other parameters stay exactly as sent.
 */
export function withQuery(rawQuery: string, injected: InjectedAuth['query']): string {
  if (injected.length === 0) return rawQuery;
  const names = new Set(injected.map(([name]) => name));
  const kept = rawQuery === '' ? [] : rawQuery.split('&').filter((part) => !names.has(queryName(part)));
  for (const [name, value] of injected) kept.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  return kept.join('&');
}

/** A query part's name as a server reads it (form decoding: "+" is a space); undecodable: as sent. */
function queryName(part: string): string {
  const raw = part.split('=', 1)[0]!.replaceAll('+', ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * What a call carries for a static provider's stored values: its `auth` parsed against its fields and
 * filled; or why not (no `auth`, or a value no request can carry). The proxy and the checks alike.
 */
export function staticInjection(
  provider: { fields: readonly { name: string }[]; api?: { auth?: string } },
  values: Readonly<Record<string, string>>,
): InjectedAuth | { refused: string } {
  const spec = provider.api?.auth;
  if (spec === undefined) return { refused: 'the provider does not say how its values are sent' };
  const auth = parseStaticAuth(
    spec,
    provider.fields.map((f) => f.name),
  );
  return 'refused' in auth ? auth : injectedAuth(auth, values);
}

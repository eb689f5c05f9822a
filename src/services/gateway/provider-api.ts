/**
 * A provider's gateway fields checked as a whole (CONTRACT 3 and 8.5): the catalog's (by its test) and,
 * later, a custom provider's (where it is defined). And the `verify` request, `METHOD /path`, filled
 * with a credential's values as a proxied path is judged (proxy-target.ts).
 */
import type { ProviderApi, StaticProviderApi } from '../../catalog/provider-definition.js';
import { baseUrlRefusal, refusePath } from './proxy-target.js';
import { fillTemplate, PLACEHOLDER, parseStaticAuth } from './static-auth.js';

export interface VerifyRequest {
  method: 'GET' | 'HEAD' | 'POST';
  /** The path after the base URL, without its leading "/", with {fieldName} placeholders. */
  pathTemplate: string;
}

/** `METHOD /path`: the shape of a `verify` (CONTRACT 3). */
export const VERIFY = /^(GET|HEAD|POST) \/(\S*)$/;
/** A host name with an optional port; or `*.` and a name of two labels at least (`*.com` would be every .com host). */
const HOST_PATTERN =
  /^([a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|\*\.[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)(:\d{1,5})?$/i;

/** `METHOD /path`, its placeholders naming the provider's fields, its path one a proxied call could take; or why not. */
export function parseVerify(spec: string, fieldNames: readonly string[]): VerifyRequest | { refused: string } {
  const match = VERIFY.exec(spec);
  if (!match) return { refused: `verify must be "GET /path", "HEAD /path" or "POST /path", not "${spec}"` };
  const pathTemplate = match[2]!;
  for (const [, name] of pathTemplate.matchAll(PLACEHOLDER)) {
    if (!fieldNames.includes(name!)) return { refused: `verify's {${name}} names no field of the provider` };
  }
  // Judged with every placeholder filled, as it will be called.
  const refusal = refusePath(fillTemplate(pathTemplate, Object.fromEntries(fieldNames.map((f) => [f, 'x']))));
  if (refusal) return { refused: `verify's path: ${refusal}` };
  return { method: match[1] as VerifyRequest['method'], pathTemplate };
}

/** The verify request's path for these values (each percent-encoded into its place); or why a value cannot go there. */
export function verifyPath(request: VerifyRequest, values: Readonly<Record<string, string>>): { rawPath: string } | { refused: string } {
  const encoded = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, encodeURIComponent(value)]));
  const rawPath = fillTemplate(request.pathTemplate, encoded);
  const refusal = refusePath(rawPath);
  return refusal ? { refused: `a stored value makes the check's path unusable: ${refusal}` } : { rawPath };
}

/** Which of a provider's API fields a refusal concerns, named as the contract names them. */
export type ProviderApiField = 'apiBaseUrl' | 'apiHosts' | 'auth' | 'verify';

/**
 * Why the API fields cannot be used, and which one, or null. `fieldNames` for a static provider (its
 * `auth` and `verify` are checked against them); `allowHttp` (KEYWARD_ALLOW_PRIVATE_URLS) lets the base
 * URL be http. The address policy of section 3 is the caller's to apply to the base URL as well.
 */
export function providerApiRefusal(
  api: ProviderApi | StaticProviderApi,
  fieldNames: readonly string[] | null,
  allowHttp: boolean,
): { field: ProviderApiField; reason: string } | null {
  const refused = (field: ProviderApiField, reason: string) => ({ field, reason });
  const baseRefusal = baseUrlRefusal(api.apiBaseUrl, allowHttp);
  if (baseRefusal) return refused('apiBaseUrl', `the API base URL ${baseRefusal}`);
  for (const host of api.apiHosts ?? []) {
    if (!HOST_PATTERN.test(host)) return refused('apiHosts', `apiHosts: "${host}" is not a host (name[:port], or *.name)`);
  }
  if (fieldNames === null) return 'auth' in api || 'verify' in api ? refused('auth', 'only a static provider has auth and verify') : null;
  if (!('auth' in api) || api.auth === undefined) return refused('auth', 'a static provider with an apiBaseUrl needs auth, how its values are sent');
  const auth = parseStaticAuth(api.auth, fieldNames);
  if ('refused' in auth) return refused('auth', `auth: ${auth.refused}`);
  if (api.verify !== undefined) {
    const verify = parseVerify(api.verify, fieldNames);
    if ('refused' in verify) return refused('verify', verify.refused);
  }
  return null;
}

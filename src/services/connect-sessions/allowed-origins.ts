/**
 * The origins a connect session's page may post its events to (CONTRACT 10): `https://` origins, and
 * `http://localhost:PORT` for development (CONTRACT 10 names the port). An origin is written as a browser
 * serialises one: scheme://host[:port], lower case, no default port, no path, no trailing slash; so
 * what is stored is exactly what the page compares with postMessage's targetOrigin.
 */
import { invalid } from '../domain-error.js';

/** At most this many origins a session (a company's app rarely runs on more than a few). */
export const MAX_ALLOWED_ORIGINS = 10;

const RULE =
  'must be an origin written as scheme://host[:port] with no path, query or trailing slash, in lower case and without a default port: ' +
  'https://app.example.com, or http://localhost:PORT during development';

/** Why `value` is not an allowed origin, or null where it is one. */
function originProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return RULE;
  }
  const httpsOnly = 'must use https:// (http:// is allowed for localhost with a port only)';
  if (url.protocol === 'http:' && (url.hostname !== 'localhost' || url.port === '')) return httpsOnly;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return httpsOnly;
  return url.origin === value ? null : RULE;
}

/** The origins as given, each checked; a bad one is refused with its position (`allowedOrigins/1`) and never repeated back. */
export function checkAllowedOrigins(origins: readonly string[] | undefined): string[] {
  if (origins === undefined) return [];
  if (origins.length > MAX_ALLOWED_ORIGINS) throw invalid('allowedOrigins', `allowedOrigins takes at most ${MAX_ALLOWED_ORIGINS} origins.`);
  origins.forEach((origin, index) => {
    const problem = originProblem(origin);
    if (problem) throw invalid(`allowedOrigins/${index}`, `allowedOrigins[${index}] ${problem}.`);
  });
  return [...new Set(origins)];
}

/**
 * One call to Keyward's /v1 over the global fetch: the keys, JSON in and out, problem documents turned
 * into KeywardError, and retries (every SDK call may be retried: GET and DELETE are idempotent, a
 * PATCH sets fields to the values it carries, and the POSTs always carry an Idempotency-Key, so a
 * retried POST is answered by a replay).
 */
import { KeywardError, SDK_ERROR_CODES } from './keyward-error.js';
import { backoffMs, type RetryPolicy, retryAfterMs, retryableStatus, sleep } from './retry.js';

export interface TransportOptions {
  baseUrl: string;
  accountKey: string;
  serverKey: string;
  retry: RetryPolicy;
  timeoutMs: number;
  fetch: typeof fetch;
}

export interface Call {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Below /v1, path parameters already percent-encoded. */
  path: string;
  /** An array is sent as the parameter repeated (`tag=a:1&tag=b:2`). */
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The query string of the defined values only, with its "?" (empty where none). */
export function queryString(query: Call['query']): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else if (value !== undefined) params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** What an answer that is not a 2xx becomes: Keyward's problem where it sent one, else invalid_response. */
async function errorOf(response: Response): Promise<KeywardError> {
  const requestId = response.headers.get('x-request-id');
  const text = await response.text().catch(() => '');
  try {
    const problem = JSON.parse(text) as Record<string, unknown>;
    if (typeof problem.code === 'string' && typeof problem.detail === 'string') {
      return new KeywardError({
        status: response.status,
        code: problem.code,
        detail: problem.detail,
        requestId: typeof problem.requestId === 'string' ? problem.requestId : requestId,
        title: typeof problem.title === 'string' ? problem.title : undefined,
        type: typeof problem.type === 'string' ? problem.type : undefined,
        errors: Array.isArray(problem.errors) ? (problem.errors as KeywardError['errors']) : undefined,
      });
    }
  } catch {
    // Not JSON: a proxy's page, most likely; described below.
  }
  const type = response.headers.get('content-type') ?? 'no content type';
  return new KeywardError({
    status: response.status,
    code: SDK_ERROR_CODES.invalidResponse,
    detail: `Keyward answered ${response.status} with ${type}, not a problem document.`,
    requestId,
  });
}

function parsed<T>(response: Response, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new KeywardError(
      {
        status: response.status,
        code: SDK_ERROR_CODES.invalidResponse,
        detail: `Keyward answered ${response.status} with a body that is not JSON.`,
        requestId: response.headers.get('x-request-id'),
      },
      { cause: error },
    );
  }
}

/** fetch's own failure (no answer at all) as a KeywardError; never the URL, which may name an end user. */
function failureOf(error: unknown, timeoutMs: number): KeywardError {
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return new KeywardError({ status: null, code: SDK_ERROR_CODES.timeout, detail: `Keyward did not answer within ${timeoutMs} ms.` }, { cause: error });
  }
  const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return new KeywardError({ status: null, code: SDK_ERROR_CODES.network, detail: `The request to Keyward failed: ${reason}.` }, { cause: error });
}

/** A call whose answer is handed back as it streams (the gateway's): its body is the caller's to read. */
export interface OpenCall {
  method: string;
  /** Below /v1, already percent-encoded, with its query string. */
  target: string;
  headers: Record<string, string>;
  body?: BodyInit | null;
}

/**
 * Keyward's own refusals that no provider saw (its guard, its rate limit, a node with every proxy slot
 * taken, the database down): a proxied call refused so may be sent again. A provider's answer, or
 * Keyward's 502/504 about the provider, never is: the provider may have acted on it.
 */
const REFUSED_BEFORE_THE_PROVIDER = new Set(['rate_limited', 'proxy_busy', 'database_unavailable']);

export class Transport {
  readonly #options: TransportOptions;

  constructor(options: TransportOptions) {
    this.#options = options;
  }

  /**
   * One call answered by a provider through Keyward (`keyward-upstream` on the answer): that answer,
   * whatever its status, its body unread. Keyward's own refusals throw KeywardError; those made before
   * any provider saw the call are retried (a body that is a stream only once: it cannot be sent again).
   * The timeout covers the wait for the answer's headers, not the reading of its body.
   */
  async open(call: OpenCall): Promise<Response> {
    const { baseUrl, accountKey, serverKey, retry, timeoutMs } = this.#options;
    const url = `${baseUrl}/v1${call.target}`;
    // Whatever their spelling: the caller's own `Authorization` beside the SDK's would go as one joined value.
    const headers = new Headers(call.headers);
    headers.set('authorization', `Bearer ${accountKey}`);
    headers.set('x-service-key', serverKey);
    const once = call.body instanceof ReadableStream;
    const attempts = once ? 1 : retry.maxAttempts;
    for (let attempt = 1; ; attempt++) {
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(new DOMException('The answer did not start in time.', 'TimeoutError')), timeoutMs);
      let response: Response;
      try {
        // `duplex` lets a stream be sent as the body (fetch's rule for a request body that streams).
        // A provider's 3xx is its answer to pass on, not a place to go: following it would send the
        // server key along to wherever the provider points.
        response = await this.#options.fetch(url, {
          method: call.method,
          headers,
          body: call.body,
          redirect: 'manual',
          signal: timer.signal,
          ...(once ? { duplex: 'half' } : {}),
        } as RequestInit);
      } catch (error) {
        throw failureOf(timer.signal.aborted ? timer.signal.reason : error, timeoutMs);
      } finally {
        clearTimeout(timeout);
      }
      if (response.headers.has('keyward-upstream')) return response;
      const error = await errorOf(response);
      if (!REFUSED_BEFORE_THE_PROVIDER.has(error.code) || attempt >= attempts) throw error;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== null && asked > retry.maxDelayMs) throw error;
      await sleep(asked ?? backoffMs(attempt, retry.maxDelayMs));
    }
  }

  async send<T>(call: Call): Promise<T> {
    const { baseUrl, accountKey, serverKey, retry, timeoutMs } = this.#options;
    const url = `${baseUrl}/v1${call.path}${queryString(call.query)}`;
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${accountKey}`, 'x-service-key': serverKey, ...call.headers };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const init = { method: call.method, headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) };
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      let text = '';
      try {
        response = await this.#options.fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
        // The body is read inside the same timeout and retry: an answer cut off half-way is tried again.
        if (response.ok) text = await response.text();
      } catch (error) {
        const failure = failureOf(error, timeoutMs);
        if (attempt >= retry.maxAttempts) throw failure;
        await sleep(backoffMs(attempt, retry.maxDelayMs));
        continue;
      }
      if (response.ok) return parsed<T>(response, text);
      const error = await errorOf(response);
      if (!retryableStatus(response.status) || attempt >= retry.maxAttempts) throw error;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      // Waiting less than Keyward asked would only be refused again.
      if (asked !== null && asked > retry.maxDelayMs) throw error;
      await sleep(asked ?? backoffMs(attempt, retry.maxDelayMs));
    }
  }
}
